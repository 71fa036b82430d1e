/* cmd-report.c — `cuco report`: what a run found, as text or JSON.
 *
 * The JSON shape is fixed (scripts and tests rely on it):
 * {workload, strategy, candidates: {total, by_status: {…}, by_origin: {…},
 *  by_failure: {…}}, baseline: {id, latency_us},
 *  best: {id, latency_us, speedup: {value, lo, hi, rounds, confidence}, verdict,
 *  host_calls}, noise, tokens: {prompt, completion}, cost_usd}
 * The best is the run's crowned one (docs/trust.md), and its speedup the
 * one stored with it: from paired rounds against the baseline, with its
 * interval, or one measurement (rounds 1, lo and hi null) in a store
 * without crowns. noise is why the run found the machine noisy, or null.
 * by_failure counts failed candidates by failure class (suspect: refused
 * by a defence); host_calls is what the interposer counted in the best's
 * steps, null when nothing was counted. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

struct report {
	char workload[128], strategy[64];
	size_t total;
	size_t by_status[CUCO_STATUS_COUNT];
	size_t by_origin[CUCO_ORIGIN_COUNT];
	size_t by_failure[CUCO_FAIL_COUNT];
	bool best_counted;
	int64_t best_host_calls;
	uint64_t baseline_id, best_id;
	double baseline_us, best_us;
	cuco_candidate best;       /* its record, when best_id */
	char noise[256];
	int64_t tokens_prompt, tokens_completion;
	double cost_usd;
};

/* meta values are JSON: a string, or an object with a "name". */
static void meta_name(cuco_txn *txn, const char *key, char *dst, size_t size)
{
	char *json = NULL;
	if (cuco_meta_get(txn, key, &json) != CUCO_OK)
		return;
	cJSON *j = cJSON_Parse(json);
	const cJSON *name = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "name") : j;
	if (cJSON_IsString(name))
		cuco_strlcpy(dst, name->valuestring, size);
	cJSON_Delete(j);
	free(json);
}

static int tally(const cuco_candidate *c, void *arg)
{
	struct report *r = arg;
	r->tokens_prompt += c->tokens_prompt;
	r->tokens_completion += c->tokens_completion;
	r->cost_usd += c->cost_usd;
	cuco_fail_class f;
	if (c->status == CUCO_STATUS_FAILED && cuco_fail_parse(c->error_class, &f) == CUCO_OK)
		r->by_failure[f]++;
	if (c->id == r->best_id) {
		r->best_counted = c->host_counted;
		r->best_host_calls = c->host_calls;
	}
	return 0;
}

static int report_txn(cuco_txn *txn, void *arg)
{
	struct report *r = arg;
	meta_name(txn, "workload", r->workload, sizeof r->workload);
	meta_name(txn, "strategy", r->strategy, sizeof r->strategy);
	cuco_summary *sums;
	size_t n;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc)
		return rc;
	r->total = n;
	for (size_t i = 0; i < n; i++) {
		if (sums[i].status < CUCO_STATUS_COUNT)
			r->by_status[sums[i].status]++;
		if (sums[i].origin < CUCO_ORIGIN_COUNT)
			r->by_origin[sums[i].origin]++;
		if (sums[i].origin == CUCO_ORIGIN_BASELINE && sums[i].status == CUCO_STATUS_DONE &&
		    isfinite(sums[i].latency_median_us)) {
			r->baseline_id = sums[i].id;
			r->baseline_us = sums[i].latency_median_us;
		}
	}
	free(sums);
	cuco_summary best;
	rc = cuco_best(txn, &best);
	if (rc == CUCO_OK && (rc = cuco_cand_get(txn, best.id, &r->best)) == CUCO_OK) {
		r->best_id = best.id;
		r->best_us = best.latency_median_us;
	} else if (rc != CUCO_ENOTFOUND) {
		return rc;
	}
	char *json = NULL;
	if (cuco_meta_get(txn, "noise", &json) == CUCO_OK) {
		cJSON *j = cJSON_Parse(json);
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "reason");
		if (cJSON_IsString(why))
			cuco_strlcpy(r->noise, why->valuestring, sizeof r->noise);
		cJSON_Delete(j);
		free(json);
	}
	/* Tokens, cost, failure classes and host calls live in the full
	 * records; the walk is linear in the run's size. */
	return cuco_cand_each(txn, 1, tally, r);
}

static cJSON *id_or_null(uint64_t id)
{
	return id ? cJSON_CreateNumber((double)id) : cJSON_CreateNull();
}

static cJSON *num_or_null(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static void print_json(const struct report *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "workload", r->workload[0] ? cJSON_CreateString(r->workload) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "strategy", r->strategy[0] ? cJSON_CreateString(r->strategy) : cJSON_CreateNull());
	cJSON *cands = cJSON_AddObjectToObject(o, "candidates");
	cJSON_AddNumberToObject(cands, "total", (double)r->total);
	cJSON *bs = cJSON_AddObjectToObject(cands, "by_status");
	for (int i = 0; i < CUCO_STATUS_COUNT; i++)
		cJSON_AddNumberToObject(bs, cuco_status_name((cuco_status)i), (double)r->by_status[i]);
	cJSON *bo = cJSON_AddObjectToObject(cands, "by_origin");
	for (int i = 0; i < CUCO_ORIGIN_COUNT; i++)
		cJSON_AddNumberToObject(bo, cuco_origin_name((cuco_origin)i), (double)r->by_origin[i]);
	cJSON *bf = cJSON_AddObjectToObject(cands, "by_failure");
	for (int i = 0; i < CUCO_FAIL_COUNT; i++)
		cJSON_AddNumberToObject(bf, cuco_fail_name((cuco_fail_class)i), (double)r->by_failure[i]);
	cJSON *base = cJSON_AddObjectToObject(o, "baseline");
	cJSON_AddItemToObject(base, "id", id_or_null(r->baseline_id));
	cJSON_AddItemToObject(base, "latency_us", num_or_null(r->baseline_id ? r->baseline_us : NAN));
	cJSON *best = cJSON_AddObjectToObject(o, "best");
	cJSON_AddItemToObject(best, "id", id_or_null(r->best_id));
	cJSON_AddItemToObject(best, "latency_us", num_or_null(r->best_id ? r->best_us : NAN));
	const cuco_candidate *b = &r->best;
	bool ci = r->best_id && b->rounds >= 2;
	cJSON *sp = cJSON_AddObjectToObject(best, "speedup");
	cJSON_AddItemToObject(sp, "value", num_or_null(r->best_id ? b->speedup : NAN));
	cJSON_AddItemToObject(sp, "lo", num_or_null(ci ? b->speedup_lo : NAN));
	cJSON_AddItemToObject(sp, "hi", num_or_null(ci ? b->speedup_hi : NAN));
	cJSON_AddNumberToObject(sp, "rounds", r->best_id ? b->rounds : 0);
	cJSON_AddItemToObject(sp, "confidence", num_or_null(ci ? b->confidence : NAN));
	cJSON_AddStringToObject(best, "verdict", r->best_id ? cuco_verdict_name(b->verdict) : "");
	cJSON_AddItemToObject(o, "noise", r->noise[0] ? cJSON_CreateString(r->noise) : cJSON_CreateNull());
	cJSON_AddItemToObject(best, "host_calls", num_or_null(r->best_counted ? (double)r->best_host_calls : NAN));
	cJSON *tok = cJSON_AddObjectToObject(o, "tokens");
	cJSON_AddNumberToObject(tok, "prompt", (double)r->tokens_prompt);
	cJSON_AddNumberToObject(tok, "completion", (double)r->tokens_completion);
	cJSON_AddNumberToObject(o, "cost_usd", r->cost_usd);
	char *text = cJSON_Print(o);
	puts(text);
	free(text);
	cJSON_Delete(o);
}

static void print_text(const struct report *r)
{
	printf("workload   %s\nstrategy   %s\ncandidates %zu:", r->workload[0] ? r->workload : "-",
		r->strategy[0] ? r->strategy : "-", r->total);
	for (int i = 0; i < CUCO_STATUS_COUNT; i++)
		if (r->by_status[i])
			printf(" %s %zu", cuco_status_name((cuco_status)i), r->by_status[i]);
	printf("\n");
	if (r->by_status[CUCO_STATUS_FAILED]) {
		printf("failures  ");
		for (int i = 0; i < CUCO_FAIL_COUNT; i++)
			if (r->by_failure[i])
				printf(" %s %zu", cuco_fail_name((cuco_fail_class)i), r->by_failure[i]);
		printf("\n");
	}
	if (r->baseline_id)
		printf("baseline   #%llu  %.1f us (median, this run)\n", (unsigned long long)r->baseline_id,
			r->baseline_us);
	else
		printf("baseline   not measured yet\n");
	char sp[64];
	cuco_speedup_text(r->best.speedup, r->best.speedup_lo, r->best.speedup_hi, r->best.rounds,
		!cuco_utf8_locale(), sp, sizeof sp);
	if (r->best_id && r->best_id == r->baseline_id)
		printf("best       nothing beat the baseline\n");
	else if (r->best_id && r->baseline_id)
		printf("best       #%llu  %.1f us  %s the baseline%s%s\n", (unsigned long long)r->best_id,
			r->best_us, sp, r->best.verdict ? ", " : "", cuco_verdict_name(r->best.verdict));
	else if (r->best_id)
		printf("best       #%llu  %.1f us\n", (unsigned long long)r->best_id, r->best_us);
	else
		printf("best       none yet\n");
	if (r->noise[0])
		printf("noise      %s\n", r->noise);
	if (r->best_id && r->best_counted)
		printf("           %lld host communication calls in its steps\n", (long long)r->best_host_calls);
	if (r->tokens_prompt || r->tokens_completion)
		printf("tokens     %lld prompt + %lld completion, $%.4f\n", (long long)r->tokens_prompt,
			(long long)r->tokens_completion, r->cost_usd);
}

static int report_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *run = NULL;
	bool json = false;
	int opt, rc;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 'j': json = true; break;
		case 'h':
			cmd_print_usage(&cmd_report, "  --run DIR   the run directory\n  --json      print one JSON object\n");
			return CUCO_OK;
		default: return cmd_usage_error(&cmd_report, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_report, "unexpected argument '%s'", argv[optind]);
	cuco_store *st;
	if ((rc = cmd_open_store(cmd_run_dir(run), CUCO_STORE_RDONLY, &st)))
		return rc;
	struct report *r = cuco_xcalloc(1, sizeof *r);
	cuco_err err = { 0 };
	rc = cuco_store_read(st, report_txn, r, &err);
	cuco_store_close(st);
	if (rc)
		rc = cmd_fail(&err);
	else if (json)
		print_json(r);
	else
		print_text(r);
	free(r);
	return rc;
}

const cuco_cmd cmd_report = { "report", "[--run DIR] [--json]",
	"summarise a run: candidates by status, baseline, best and its speedup, tokens, cost", report_exec };
