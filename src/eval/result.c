/* result.c — reading what a candidate says about itself: the native
 * `CUCO_RESULT {json}` line, or the compat protocol (compat.c) for
 * programs written for CUCo's or ShinkaEvolve's harnesses. Lines are seen
 * one at a time as the stage streams, so nothing is re-read from disk. */
#include "eval/eval_int.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_TAG "CUCO_RESULT "

/* Lines that mean the environment, not the candidate, is at fault. */
static const char *const env_markers[] = {
	"There are not enough slots available",
	"ORTE was unable to reliably start",
	"no CUDA-capable device is detected",
	"CUDA driver version is insufficient",
	"CUDA-capable device(s) is/are busy or unavailable",
	NULL,
};

int eval_parse_init(eval_parse *p, const cuco_workload *wl, cuco_err *err)
{
	memset(p, 0, sizeof *p);
	p->wl = wl;
	if (regcomp(&p->signal_re, "exited on signal ([0-9]+)", REG_EXTENDED) != 0)
		return cuco_errf(err, CUCO_EENV, "regcomp failed for a built-in pattern");
	int rc = wl->protocol == CUCO_PROTO_COMPAT ? eval_compat_new(wl, &p->compat, err) : CUCO_OK;
	if (rc != CUCO_OK)
		regfree(&p->signal_re);
	return rc;
}

void eval_parse_free(eval_parse *p)
{
	regfree(&p->signal_re);
	eval_compat_free(p->compat);
	p->compat = NULL;
	free(p->result_line);
	p->result_line = NULL;
}

void eval_parse_line(const char *line, size_t len, void *arg)
{
	(void)len;
	eval_parse *p = arg;
	const char *tag = strstr(line, RESULT_TAG);
	if (tag && !p->result_line)
		p->result_line = cuco_xstrdup(tag + strlen(RESULT_TAG));
	regmatch_t m[2];
	if (!p->rank_signal && regexec(&p->signal_re, line, 2, m, 0) == 0)
		p->rank_signal = atoi(line + m[1].rm_so);
	for (int i = 0; env_markers[i] && !*p->env_problem; i++)
		if (strstr(line, env_markers[i]))
			snprintf(p->env_problem, sizeof p->env_problem, "%s", env_markers[i]);
	if (p->compat)
		eval_compat_line(p->compat, line);
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void native_finish(eval_parse *p, eval_outcome *o)
{
	if (!p->result_line) {
		snprintf(o->protocol_error, sizeof o->protocol_error, "no CUCO_RESULT line in the output");
		return;
	}
	cJSON *root = cJSON_Parse(p->result_line);
	if (!cJSON_IsObject(root)) {
		snprintf(o->protocol_error, sizeof o->protocol_error, "CUCO_RESULT: not a JSON object");
		cJSON_Delete(root);
		return;
	}
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "environment");
	if (cJSON_IsString(env) && *env->valuestring)
		snprintf(o->environment, sizeof o->environment, "%s", env->valuestring);
	const cJSON *correct = cJSON_GetObjectItemCaseSensitive(root, "correct");
	if (!cJSON_IsBool(correct) && !*o->environment) {
		snprintf(o->protocol_error, sizeof o->protocol_error, "CUCO_RESULT: correct: missing or not true/false");
		cJSON_Delete(root);
		return;
	}
	o->have_result = true;
	o->correct = cJSON_IsTrue(correct);
	o->max_error = number(root, "max_error");
	const cJSON *lat = cJSON_GetObjectItemCaseSensitive(root, "latency_us");
	o->min_us = number(lat, "min");
	o->median_us = number(lat, "median");
	o->p90_us = number(lat, "p90");
	o->max_us = number(lat, "max");
	double samples = number(lat, "samples");
	/* A harness may print any number here ("samples": 1.5e61 found by
	 * tests/fuzz/fuzz_result); converting past INT_MAX is undefined. */
	if (!isfinite(samples) || samples <= 0)
		o->samples = 0;
	else
		o->samples = samples < INT_MAX ? (int)samples : INT_MAX;
	const cJSON *phases = cJSON_GetObjectItemCaseSensitive(root, "phases_us"), *it;
	cJSON_ArrayForEach(it, phases) {
		if (o->nphases == CUCO_MAX_PHASES || !cJSON_IsNumber(it))
			continue;
		cuco_phase *ph = &o->phases[o->nphases++];
		cuco_strlcpy(ph->name, it->string, sizeof ph->name);
		ph->us = it->valuedouble;
	}
	o->bytes = number(root, "bytes");
	o->flops = number(root, "flops");
	cJSON_Delete(root);
}

void eval_parse_finish(eval_parse *p, eval_outcome *o)
{
	memset(o, 0, sizeof *o);
	o->max_error = o->min_us = o->median_us = o->p90_us = o->max_us = NAN;
	o->bytes = o->flops = NAN;
	if (p->compat)
		eval_compat_finish(p->compat, o);
	else
		native_finish(p, o);
}
