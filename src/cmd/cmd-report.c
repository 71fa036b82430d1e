/* cmd-report.c — `cuco report`: what a run found, as text or JSON.
 *
 * The JSON shape is fixed (scripts and tests rely on it):
 * {workload, strategy, candidates: {total, by_status: {…}, by_origin: {…}},
 *  baseline: {id, latency_us}, best: {id, latency_us, speedup, paired_baseline_us},
 *  tokens: {prompt, completion}, cost_usd}
 * baseline is the latest finished baseline measurement. The best's speedup
 * is the one stored with it, as `cuco show` prints it: a ratio of the best
 * and a baseline timed side by side (paired_baseline_us, which after a
 * resumed run need not be the latest baseline measurement). */
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
	uint64_t baseline_id, best_id;
	double baseline_us, best_us, best_speedup;
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
	if (rc == CUCO_OK) {
		r->best_id = best.id;
		r->best_us = best.latency_median_us;
		r->best_speedup = best.speedup;
	} else if (rc != CUCO_ENOTFOUND) {
		return rc;
	}
	/* Tokens and cost live in the full records; only LLM runs have any,
	 * and the walk is linear in the run's size. */
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
	cJSON *base = cJSON_AddObjectToObject(o, "baseline");
	cJSON_AddItemToObject(base, "id", id_or_null(r->baseline_id));
	cJSON_AddItemToObject(base, "latency_us", num_or_null(r->baseline_id ? r->baseline_us : NAN));
	cJSON *best = cJSON_AddObjectToObject(o, "best");
	cJSON_AddItemToObject(best, "id", id_or_null(r->best_id));
	cJSON_AddItemToObject(best, "latency_us", num_or_null(r->best_id ? r->best_us : NAN));
	cJSON_AddItemToObject(best, "speedup", num_or_null(r->best_id ? r->best_speedup : NAN));
	cJSON_AddItemToObject(best, "paired_baseline_us",
		num_or_null(r->best_id ? r->best_speedup * r->best_us : NAN));
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
	if (r->baseline_id)
		printf("baseline   #%llu  %.1f us (median, this run)\n", (unsigned long long)r->baseline_id,
			r->baseline_us);
	else
		printf("baseline   not measured yet\n");
	double paired = r->best_speedup * r->best_us;
	if (r->best_id && isfinite(r->best_speedup)) {
		printf("best       #%llu  %.1f us  %.3fx the baseline timed beside it (%.1f us)\n",
			(unsigned long long)r->best_id, r->best_us, r->best_speedup, paired);
		if (r->baseline_id && fabs(paired - r->baseline_us) > 0.05 * r->baseline_us)
			printf("           (timed against an earlier baseline measurement than the one above;"
				" 'cuco run --rebench N' times them side by side again)\n");
	} else if (r->best_id)
		printf("best       #%llu  %.1f us\n", (unsigned long long)r->best_id, r->best_us);
	else
		printf("best       none yet\n");
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
