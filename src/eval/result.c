/* result.c — reading a stage's output: the native verdict, one
 * `CUCO_SEALED <tag> {json}` line from the trusted harness, sealed with the
 * stage's key (trust.c, workloads/common/cuco_seal.h), or the compat
 * protocol (compat.c) for programs written for CUCo's or ShinkaEvolve's
 * harnesses. Under the native protocol a `CUCO_RESULT` line is never
 * believed: the harness prints one only when run by hand, so under the
 * evaluator it is the candidate's own. Compat programs are the user's own
 * and stay unsealed. Lines are seen one at a time as the stage streams, so
 * nothing is re-read from disk. */
#include "eval/eval_int.h"
#include "../../workloads/common/cuco_seal.h"

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

/* A native line: the sealed verdict, or a claim that is not believed. */
static void native_line(eval_parse *p, const char *line)
{
	const char *sealed = strstr(line, CUCO_SEAL_TAG), *json;
	if (sealed) {
		if (!p->ticket || !eval_ticket_open(p->ticket, sealed + strlen(CUCO_SEAL_TAG), &json)) {
			if (!*p->forged)
				snprintf(p->forged, sizeof p->forged, "a %sline whose seal is not this run's",
					CUCO_SEAL_TAG);
		} else if (p->result_line) {
			if (!*p->forged)
				snprintf(p->forged, sizeof p->forged, "a second sealed verdict (the harness prints "
					"one)");
		} else {
			p->result_line = cuco_xstrdup(json);
		}
	} else if (strstr(line, RESULT_TAG) && !*p->forged) {
		snprintf(p->forged, sizeof p->forged, "the program printed a %sline of its own (the "
			"harness's verdict is sealed)", RESULT_TAG);
	}
}

void eval_parse_line(const char *line, size_t len, void *arg)
{
	(void)len;
	eval_parse *p = arg;
	regmatch_t m[2];
	if (!p->rank_signal && regexec(&p->signal_re, line, 2, m, 0) == 0)
		p->rank_signal = atoi(line + m[1].rm_so);
	for (int i = 0; env_markers[i] && !*p->env_problem; i++)
		if (strstr(line, env_markers[i]))
			snprintf(p->env_problem, sizeof p->env_problem, "%s", env_markers[i]);
	if (p->compat)
		eval_compat_line(p->compat, line);
	else if (p->wl->protocol == CUCO_PROTO_NATIVE)
		native_line(p, line);  /* a refereed program's output is only for people */
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void text(const cJSON *obj, const char *key, char *out, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsString(v))
		cuco_strlcpy(out, v->valuestring, size);
}

/* A count the harness printed: any number may arrive ("samples": 1.5e61
 * found by tests/fuzz/fuzz_result); converting past INT_MAX is undefined. */
static long count(const cJSON *obj, const char *key, long none)
{
	double v = number(obj, key);
	if (!isfinite(v) || v < 0)
		return none;
	return v < INT_MAX ? (long)v : INT_MAX;
}

bool eval_result_json(const char *json, eval_outcome *o)
{
	cJSON *root = cJSON_Parse(json);
	if (!cJSON_IsObject(root)) {
		snprintf(o->protocol_error, sizeof o->protocol_error, "the verdict is not a JSON object");
		cJSON_Delete(root);
		return false;
	}
	text(root, "environment", o->environment, sizeof o->environment);
	char incomplete[256] = "";
	text(root, "incomplete", incomplete, sizeof incomplete);
	o->started = !*incomplete || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "attached"));
	if (*incomplete) {
		/* The referee's word that the stage ended before its verdict. */
		snprintf(o->protocol_error, sizeof o->protocol_error, "referee: %s", incomplete);
		cJSON_Delete(root);
		return false;
	}
	const cJSON *correct = cJSON_GetObjectItemCaseSensitive(root, "correct");
	if (!cJSON_IsBool(correct) && !*o->environment) {
		snprintf(o->protocol_error, sizeof o->protocol_error, "the verdict's correct: missing or "
			"not true/false");
		cJSON_Delete(root);
		return false;
	}
	o->have_result = true;
	o->correct = cJSON_IsTrue(correct);
	o->timing.max_error = number(root, "max_error");
	const cJSON *lat = cJSON_GetObjectItemCaseSensitive(root, "latency_us");
	o->timing.min_us = number(lat, "min");
	o->timing.median_us = number(lat, "median");
	o->timing.p90_us = number(lat, "p90");
	o->max_us = number(lat, "max");
	o->timing.samples = (int)count(lat, "samples", 0);
	o->wall_us = number(root, "wall_us");
	const cJSON *phases = cJSON_GetObjectItemCaseSensitive(root, "phases_us"), *it;
	cJSON_ArrayForEach(it, phases) {
		if (o->timing.nphases == CUCO_MAX_PHASES || !cJSON_IsNumber(it))
			continue;
		cuco_phase *ph = &o->timing.phases[o->timing.nphases++];
		cuco_strlcpy(ph->name, it->string, sizeof ph->name);
		ph->us = it->valuedouble;
	}
	o->bytes = number(root, "bytes");
	o->flops = number(root, "flops");
	char seed[24] = "";
	text(root, "seed", seed, sizeof seed);
	if (strlen(seed) != CUCO_SEAL_HEX || cuco_seal_hex(seed, CUCO_SEAL_HEX, &o->seed) != 0)
		o->seed = 0;
	o->ranks = (int)count(root, "ranks", 0);
	o->checks = (int)count(root, "checks", 0);
	o->timing.host_calls = count(root, "host_calls", -1);
	o->timing.host_counted = o->timing.host_calls >= 0;
	text(root, "host_calls_by", o->host_calls_by, sizeof o->host_calls_by);
	text(root, "why", o->why, sizeof o->why);
	text(root, "suspect", o->suspect, sizeof o->suspect);
	cJSON_Delete(root);
	return true;
}

static void native_finish(eval_parse *p, eval_outcome *o)
{
	if (p->wl->protocol == CUCO_PROTO_REFEREE && !p->result_line)
		snprintf(o->protocol_error, sizeof o->protocol_error, "referee: %s", p->referee_why);
	else if (!p->result_line)
		snprintf(o->protocol_error, sizeof o->protocol_error, "no sealed verdict (%sline) in the "
			"output: the harness never reported", CUCO_SEAL_TAG);
	else
		eval_result_json(p->result_line, o);
}

void eval_parse_finish(eval_parse *p, eval_outcome *o)
{
	memset(o, 0, sizeof *o);
	cuco_timing_init(&o->timing);
	o->max_us = o->wall_us = o->bytes = o->flops = NAN;
	if (p->compat)
		eval_compat_finish(p->compat, o);
	else
		native_finish(p, o);
}
