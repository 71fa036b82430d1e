/* cmd-report.c — `cuco report`: what a run found, as text or JSON.
 *
 * The JSON shape is fixed (scripts and tests rely on it):
 * {workload, strategy, candidates: {total, by_status: {…}, by_origin: {…}},
 *  baseline: {id, latency_us, slot}, best: {id, latency_us, speedup, slot},
 *  tokens: {prompt, completion}, cost_usd,
 *  slots: [{name, state, failures, candidates}]}
 * speedup is the baseline's median latency over the best's, both measured
 * in this run: the baseline is the latest finished baseline measurement.
 * slots: where the run's candidates were measured (docs/cluster.md), each
 * slot's state as the engine last wrote it (meta "slots"; "-" for a slot
 * of an earlier session only) and how many candidates it measured last. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

typedef struct slot_row {
	char name[64], state[16];
	int failures;
	size_t candidates;
} slot_row;

struct report {
	char workload[128], strategy[64];
	char baseline_slot[64], best_slot[64];
	slot_row slots[CUCO_MAX_SLOTS];
	int nslots;
	size_t total;
	size_t by_status[CUCO_STATUS_COUNT];
	size_t by_origin[CUCO_ORIGIN_COUNT];
	uint64_t baseline_id, best_id;
	double baseline_us, best_us;
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

static slot_row *slot_of(struct report *r, const char *name)
{
	for (int i = 0; i < r->nslots; i++)
		if (strcmp(r->slots[i].name, name) == 0)
			return &r->slots[i];
	if (r->nslots == CUCO_MAX_SLOTS)
		return NULL;
	slot_row *s = &r->slots[r->nslots++];
	cuco_strlcpy(s->name, name, sizeof s->name);
	cuco_strlcpy(s->state, "-", sizeof s->state);
	return s;
}

/* The slots as the engine left them: meta "slots" (engine_slots.c). */
static void read_slots(cuco_txn *txn, struct report *r)
{
	char *json = NULL;
	if (cuco_meta_get(txn, "slots", &json) != CUCO_OK)
		return;
	cJSON *j = cJSON_Parse(json);
	free(json);
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, "slots")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "name");
		const cJSON *state = cJSON_GetObjectItemCaseSensitive(s, "state");
		const cJSON *fails = cJSON_GetObjectItemCaseSensitive(s, "failures");
		slot_row *row = cJSON_IsString(name) ? slot_of(r, name->valuestring) : NULL;
		if (row && cJSON_IsString(state))
			cuco_strlcpy(row->state, state->valuestring, sizeof row->state);
		if (row && cJSON_IsNumber(fails) && fails->valuedouble >= 0 && fails->valuedouble < 1e6)
			row->failures = (int)fails->valuedouble;
	}
	cJSON_Delete(j);
}

static int tally(const cuco_candidate *c, void *arg)
{
	struct report *r = arg;
	slot_row *s = c->slot[0] ? slot_of(r, c->slot) : NULL;
	if (s)
		s->candidates++;
	if (c->id == r->baseline_id)
		cuco_strlcpy(r->baseline_slot, c->slot, sizeof r->baseline_slot);
	if (c->id == r->best_id)
		cuco_strlcpy(r->best_slot, c->slot, sizeof r->best_slot);
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
	} else if (rc != CUCO_ENOTFOUND) {
		return rc;
	}
	read_slots(txn, r);
	/* Tokens, cost and slots live in the full records; the walk is linear
	 * in the run's size. */
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

static cJSON *text_or_null(const char *s)
{
	return *s ? cJSON_CreateString(s) : cJSON_CreateNull();
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
	cJSON_AddItemToObject(base, "slot", text_or_null(r->baseline_slot));
	cJSON *best = cJSON_AddObjectToObject(o, "best");
	cJSON_AddItemToObject(best, "id", id_or_null(r->best_id));
	cJSON_AddItemToObject(best, "latency_us", num_or_null(r->best_id ? r->best_us : NAN));
	double speedup = (r->best_id && r->baseline_id) ? r->baseline_us / r->best_us : NAN;
	cJSON_AddItemToObject(best, "speedup", num_or_null(speedup));
	cJSON_AddItemToObject(best, "slot", text_or_null(r->best_slot));
	cJSON *tok = cJSON_AddObjectToObject(o, "tokens");
	cJSON_AddNumberToObject(tok, "prompt", (double)r->tokens_prompt);
	cJSON_AddNumberToObject(tok, "completion", (double)r->tokens_completion);
	cJSON_AddNumberToObject(o, "cost_usd", r->cost_usd);
	cJSON *slots = cJSON_AddArrayToObject(o, "slots");
	for (int i = 0; i < r->nslots; i++) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", r->slots[i].name);
		cJSON_AddStringToObject(s, "state", r->slots[i].state);
		cJSON_AddNumberToObject(s, "failures", r->slots[i].failures);
		cJSON_AddNumberToObject(s, "candidates", (double)r->slots[i].candidates);
		cJSON_AddItemToArray(slots, s);
	}
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
		printf("baseline   #%llu  %.1f us (median, this run)%s%s\n", (unsigned long long)r->baseline_id,
			r->baseline_us, r->baseline_slot[0] ? " on " : "", r->baseline_slot);
	else
		printf("baseline   not measured yet\n");
	if (r->best_id && r->baseline_id)
		printf("best       #%llu  %.1f us  %.3fx the baseline%s%s\n", (unsigned long long)r->best_id,
			r->best_us, r->baseline_us / r->best_us, r->best_slot[0] ? " on " : "", r->best_slot);
	else if (r->best_id)
		printf("best       #%llu  %.1f us\n", (unsigned long long)r->best_id, r->best_us);
	else
		printf("best       none yet\n");
	for (int i = 0; i < r->nslots; i++) {
		const slot_row *s = &r->slots[i];
		printf("%-10s %s  %s, %zu candidate%s measured", i ? "" : "slots", s->name, s->state,
			s->candidates, s->candidates == 1 ? "" : "s");
		if (s->failures)
			printf(", %d environment failure%s in a row", s->failures, s->failures == 1 ? "" : "s");
		printf("\n");
	}
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
