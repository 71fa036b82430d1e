/* result.c — reading a stage's output: the native verdict, one
 * `CUCO_SEALED <tag> {json}` line from the trusted harness, sealed with the
 * stage's key (trust.c, workloads/common/cuco_seal.h), or the compat
 * protocol (a pass string, a time regex, optional `Phase <name>: <n> ms`
 * lines) for programs written for CUCo's or ShinkaEvolve's harnesses.
 * Under the native protocol a `CUCO_RESULT` line is never believed: the
 * harness prints one only when run by hand, so under the evaluator it is
 * the candidate's own. Lines are seen one at a time as the stage streams,
 * so nothing is re-read from disk. */
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

int eval_compile_time_re(const char *re, regex_t *out, char *why, size_t size)
{
	int rc = regcomp(out, re, REG_EXTENDED);
	if (rc != 0) {
		char msg[96];
		regerror(rc, out, msg, sizeof msg);
		snprintf(why, size, "\"%s\": %s", re, msg);
		return CUCO_EDATA;
	}
	if (out->re_nsub < 1) {
		regfree(out);
		snprintf(why, size, "\"%s\": needs a group around the number, e.g. ([0-9.]+)", re);
		return CUCO_EDATA;
	}
	return CUCO_OK;
}

int eval_parse_init(eval_parse *p, const cuco_workload *wl, cuco_err *err)
{
	memset(p, 0, sizeof *p);
	p->wl = wl;
	if (regcomp(&p->phase_re, "^Phase ([A-Za-z_][A-Za-z0-9_]*): ([-+0-9.eE]+) ms", REG_EXTENDED) != 0
		|| regcomp(&p->signal_re, "exited on signal ([0-9]+)", REG_EXTENDED) != 0)
		return cuco_errf(err, CUCO_EENV, "regcomp failed for a built-in pattern");
	if (wl->protocol == CUCO_PROTO_COMPAT) {
		char why[160];
		if (eval_compile_time_re(wl->compat_time, &p->time_re, why, sizeof why) != CUCO_OK) {
			regfree(&p->phase_re);
			regfree(&p->signal_re);
			return cuco_errf(err, CUCO_EDATA, "protocol.time: %s", why);
		}
		p->have_time_re = true;
	}
	return CUCO_OK;
}

void eval_parse_free(eval_parse *p)
{
	regfree(&p->phase_re);
	regfree(&p->signal_re);
	if (p->have_time_re)
		regfree(&p->time_re);
	free(p->result_line);
	p->result_line = NULL;
}

static void compat_line(eval_parse *p, const char *line)
{
	if (*p->wl->compat_pass && strstr(line, p->wl->compat_pass))
		p->pass_seen = true;
	regmatch_t m[3];
	/* Every match is a sample: a harness may print one time per repetition. */
	for (const char *at = line; p->nsamples < EVAL_MAX_SAMPLES
		&& regexec(&p->time_re, at, 2, m, at == line ? 0 : REG_NOTBOL) == 0;) {
		if (m[1].rm_so >= 0) {
			double v = strtod(at + m[1].rm_so, NULL);
			if (isfinite(v) && v >= 0)
				p->samples[p->nsamples++] = v * p->wl->compat_time_scale;
		}
		if (m[0].rm_eo == 0)
			break;
		at += m[0].rm_eo;
	}
	if (p->nphases < CUCO_MAX_PHASES && regexec(&p->phase_re, line, 3, m, 0) == 0) {
		cuco_phase *ph = &p->phases[p->nphases++];
		int n = (int)(m[1].rm_eo - m[1].rm_so);
		snprintf(ph->name, sizeof ph->name, "%.*s", n, line + m[1].rm_so);
		ph->us = strtod(line + m[2].rm_so, NULL) * 1000.0;
	}
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
	if (p->wl->protocol == CUCO_PROTO_COMPAT)
		compat_line(p, line);
	else
		native_line(p, line);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
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
	const cJSON *correct = cJSON_GetObjectItemCaseSensitive(root, "correct");
	if (!cJSON_IsBool(correct) && !*o->environment) {
		snprintf(o->protocol_error, sizeof o->protocol_error, "the verdict's correct: missing or "
			"not true/false");
		cJSON_Delete(root);
		return false;
	}
	o->have_result = true;
	o->correct = cJSON_IsTrue(correct);
	o->max_error = number(root, "max_error");
	const cJSON *lat = cJSON_GetObjectItemCaseSensitive(root, "latency_us");
	o->min_us = number(lat, "min");
	o->median_us = number(lat, "median");
	o->p90_us = number(lat, "p90");
	o->max_us = number(lat, "max");
	o->samples = (int)count(lat, "samples", 0);
	o->wall_us = number(root, "wall_us");
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
	char seed[24] = "";
	text(root, "seed", seed, sizeof seed);
	if (strlen(seed) != CUCO_SEAL_HEX || cuco_seal_hex(seed, CUCO_SEAL_HEX, &o->seed) != 0)
		o->seed = 0;
	o->ranks = (int)count(root, "ranks", 0);
	o->checks = (int)count(root, "checks", 0);
	o->host_calls = count(root, "host_calls", -1);
	text(root, "host_calls_by", o->host_calls_by, sizeof o->host_calls_by);
	text(root, "why", o->why, sizeof o->why);
	text(root, "suspect", o->suspect, sizeof o->suspect);
	cJSON_Delete(root);
	return true;
}

static void native_finish(eval_parse *p, eval_outcome *o)
{
	if (!p->result_line)
		snprintf(o->protocol_error, sizeof o->protocol_error, "no sealed verdict (%sline) in the "
			"output: the harness never reported", CUCO_SEAL_TAG);
	else
		eval_result_json(p->result_line, o);
}

static void compat_finish(eval_parse *p, eval_outcome *o)
{
	o->have_result = true;
	o->correct = p->pass_seen;
	o->samples = p->nsamples;
	if (p->nsamples > 0) {
		qsort(p->samples, (size_t)p->nsamples, sizeof p->samples[0], cmp_double);
		int n = p->nsamples;
		o->min_us = p->samples[0];
		o->max_us = p->samples[n - 1];
		o->median_us = n % 2 ? p->samples[n / 2] : (p->samples[n / 2 - 1] + p->samples[n / 2]) / 2;
		int k = (int)ceil(0.9 * n) - 1;  /* nearest rank */
		o->p90_us = p->samples[k < 0 ? 0 : k];
	}
	o->nphases = p->nphases;
	memcpy(o->phases, p->phases, sizeof o->phases);
}

void eval_parse_finish(eval_parse *p, eval_outcome *o)
{
	memset(o, 0, sizeof *o);
	o->max_error = o->min_us = o->median_us = o->p90_us = o->max_us = o->wall_us = NAN;
	o->bytes = o->flops = NAN;
	o->host_calls = -1;
	if (p->wl->protocol == CUCO_PROTO_COMPAT)
		compat_finish(p, o);
	else
		native_finish(p, o);
}
