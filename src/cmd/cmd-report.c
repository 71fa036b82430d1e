/* cmd-report.c — `cuco report`: what a run found, as text or JSON.
 *
 * The JSON shape is fixed (scripts and tests rely on it):
 * {workload, strategy, candidates: {total, by_status: {…}, by_origin: {…},
 *  by_failure: {…}}, baseline: {id, latency_us, slot},
 *  best: {id, latency_us, speedup: {value, lo, hi, rounds, confidence}, verdict,
 *  host_calls, slot}, revisits: [{id, lapsed, why}], confirmation: {session, state,
 *  contenders, judged, crowned, unjudged: [{id, why}]}, noise, tokens: {prompt, completion},
 *  cost_usd, repairs: {asked, correct},
 *  calls: {total, refused, edits_refused, estimated, unpriced, by_kind: {KIND: totals},
 *          by_model: {MODEL: totals}},
 *  slots: [{name, state, failures, candidates}]}
 * with totals = {calls, tokens_in, tokens_cached, tokens_out, cost_usd}.
 * The best is the run's crowned one (docs/trust.md), and its speedup the
 * one stored with it: from paired rounds against the baseline, with its
 * interval, or one measurement (rounds 1, lo and hi null) in a store
 * without crowns. revisits: every crown looked at again when measured in
 * later paired rounds (lapsed: no longer the best; why: what was found);
 * confirmation: how the last session's confirmation ended (state done,
 * stopped, error or off; each contender it left without a verdict, and
 * why), or null. noise is why the run found the machine noisy, or null.
 * by_failure counts failed candidates by failure class (suspect: refused
 * by a defence); host_calls is what the interposer counted in the best's
 * steps, null when nothing was counted. Tokens and cost are every model
 * call's (the store's call records, refused replies, planners and
 * summaries included); a run made before calls were recorded has only its
 * candidates' counts; calls.edits_refused: of the used calls, those whose
 * reply made a directive-only child though its edits were refused
 * (docs/replies.md), counted apart so that a reply's edits are never
 * taken for applied. repairs: the children of evolve's repair turns
 * (a failed child mended), and of them those correct. slots: where the run's candidates were measured
 * (docs/cluster.md), each slot's state as the engine last wrote it (meta
 * "slots"; "-" for a slot of an earlier session only) and how many
 * candidates it measured last; a slot field is where that record's latest
 * measurement ran. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "strategies/strategies.h"

#define REPORT_MODELS 16  /* models told apart; the rest count as "other" */

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
	size_t by_failure[CUCO_FAIL_COUNT];
	bool best_counted;
	int64_t best_host_calls;
	uint64_t baseline_id, best_id;
	double baseline_us, best_us;
	cuco_candidate best;       /* its record, when best_id */
	char noise[256];
	cmd_verdicts v;            /* the crowns' revisits, the last confirmation */
	int64_t tokens_prompt, tokens_completion;
	double cost_usd;
	size_t repairs, repaired;  /* repair children, and of them the correct */
	cuco_call_totals calls;
	cuco_call_totals by_kind[CUCO_CALL_KIND_COUNT];
	int nmodels;
	struct { char name[64]; cuco_call_totals t; } by_model[REPORT_MODELS];
};

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

/* The slots as the engine left them: meta "slots". */
static void read_slots(cuco_txn *txn, struct report *r)
{
	cuco_meta_slots *s = cuco_xmalloc(sizeof *s);
	cuco_meta_slots_get(txn, s);
	for (int i = 0; i < s->nslots; i++) {
		slot_row *row = slot_of(r, s->slot[i].name);
		if (row && s->slot[i].state[0])
			cuco_strlcpy(row->state, s->slot[i].state, sizeof row->state);
		if (row)
			row->failures = s->slot[i].failures;
	}
	free(s);
}

static int tally(const cuco_candidate *c, void *arg)
{
	struct report *r = arg;
	slot_row *s = c->slot[0] ? slot_of(r, c->slot) : NULL;
	if (s)
		s->candidates++;
	if (c->id == r->baseline_id)
		cuco_strlcpy(r->baseline_slot, c->slot, sizeof r->baseline_slot);
	r->tokens_prompt += c->tokens_prompt;
	r->tokens_completion += c->tokens_completion;
	r->cost_usd += c->cost_usd;
	cuco_fail_class f;
	if (c->status == CUCO_STATUS_FAILED && cuco_fail_parse(c->failure.error_class, &f) == CUCO_OK)
		r->by_failure[f]++;
	if (strncmp(c->note, CUCO_REPAIR_NOTE, strlen(CUCO_REPAIR_NOTE)) == 0) {
		r->repairs++;
		r->repaired += c->status == CUCO_STATUS_DONE;
	}
	if (c->id == r->best_id) {
		cuco_strlcpy(r->best_slot, c->slot, sizeof r->best_slot);
		r->best_counted = c->timing.host_counted;
		r->best_host_calls = c->timing.host_calls;
	}
	return 0;
}

static cuco_call_totals *model_row(struct report *r, const char *name)
{
	for (int i = 0; i < r->nmodels; i++)
		if (strcmp(r->by_model[i].name, name) == 0)
			return &r->by_model[i].t;
	if (r->nmodels == REPORT_MODELS) {  /* the last row takes the rest */
		cuco_strlcpy(r->by_model[REPORT_MODELS - 1].name, "other", sizeof r->by_model[0].name);
		return &r->by_model[REPORT_MODELS - 1].t;
	}
	cuco_strlcpy(r->by_model[r->nmodels].name, name, sizeof r->by_model[0].name);
	return &r->by_model[r->nmodels++].t;
}

static int tally_call(const cuco_call *c, void *arg)
{
	struct report *r = arg;
	cuco_call_totals_add(&r->calls, c);
	if (c->kind < CUCO_CALL_KIND_COUNT)
		cuco_call_totals_add(&r->by_kind[c->kind], c);
	cuco_call_totals_add(model_row(r, c->model), c);
	return 0;
}

static int report_txn(cuco_txn *txn, void *arg)
{
	struct report *r = arg;
	cuco_meta_workload *wl = cuco_xmalloc(sizeof *wl);
	cuco_meta_strategy strategy;
	cuco_meta_workload_get(txn, wl);
	cuco_meta_strategy_get(txn, &strategy);
	cuco_strlcpy(r->workload, wl->name, sizeof r->workload);
	cuco_strlcpy(r->strategy, strategy.name, sizeof r->strategy);
	free(wl);
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
	cuco_meta_noise_get(txn, r->noise, sizeof r->noise);
	read_slots(txn, r);
	if ((rc = cmd_verdicts_read(txn, &r->v)) != CUCO_OK)
		return rc;
	/* Failure classes, host calls and slots live in the full records; the
	 * walk is linear in the run's size. */
	if ((rc = cuco_cand_each(txn, 1, tally, r)) != CUCO_OK)
		return rc;
	if ((rc = cuco_call_each(txn, 1, tally_call, r)) != CUCO_OK)
		return rc;
	/* Every model call's tokens and cost; a run from before call records
	 * keeps its candidates' counts. */
	if (r->calls.calls > 0) {
		r->tokens_prompt = r->calls.tokens_in;
		r->tokens_completion = r->calls.tokens_out;
		r->cost_usd = r->calls.cost_usd;
	}
	return CUCO_OK;
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

static cJSON *totals_json(const cuco_call_totals *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "calls", (double)t->calls);
	cJSON_AddNumberToObject(o, "tokens_in", (double)t->tokens_in);
	cJSON_AddNumberToObject(o, "tokens_cached", (double)t->tokens_cached);
	cJSON_AddNumberToObject(o, "tokens_out", (double)t->tokens_out);
	cJSON_AddNumberToObject(o, "cost_usd", t->cost_usd);
	return o;
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
	cJSON_AddItemToObject(base, "slot", text_or_null(r->baseline_slot));
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
	cJSON_AddItemToObject(best, "slot", text_or_null(r->best_slot));
	cJSON *rev = cJSON_AddArrayToObject(o, "revisits");
	for (size_t i = 0; i < r->v.nrev; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "id", (double)r->v.rev[i].id);
		cJSON_AddBoolToObject(e, "lapsed", r->v.rev[i].lapsed);
		cJSON_AddStringToObject(e, "why", r->v.rev[i].why);
		cJSON_AddItemToArray(rev, e);
	}
	cJSON_AddItemToObject(o, "confirmation", r->v.have_conf ? cuco_confirmation_to_json(&r->v.conf)
		: cJSON_CreateNull());
	cJSON *tok = cJSON_AddObjectToObject(o, "tokens");
	cJSON_AddNumberToObject(tok, "prompt", (double)r->tokens_prompt);
	cJSON_AddNumberToObject(tok, "completion", (double)r->tokens_completion);
	cJSON_AddNumberToObject(o, "cost_usd", r->cost_usd);
	cJSON *rep = cJSON_AddObjectToObject(o, "repairs");
	cJSON_AddNumberToObject(rep, "asked", (double)r->repairs);
	cJSON_AddNumberToObject(rep, "correct", (double)r->repaired);
	cJSON *calls = cJSON_AddObjectToObject(o, "calls");
	cJSON_AddNumberToObject(calls, "total", (double)r->calls.calls);
	cJSON_AddNumberToObject(calls, "refused", (double)r->calls.refused);
	cJSON_AddNumberToObject(calls, "edits_refused", (double)r->calls.edits_refused);
	cJSON_AddNumberToObject(calls, "estimated", (double)r->calls.estimated);
	cJSON_AddNumberToObject(calls, "unpriced", (double)r->calls.unpriced);
	cJSON *kinds = cJSON_AddObjectToObject(calls, "by_kind");
	for (int i = 0; i < CUCO_CALL_KIND_COUNT; i++)
		if (r->by_kind[i].calls)
			cJSON_AddItemToObject(kinds, cuco_call_kind_name((cuco_call_kind)i),
				totals_json(&r->by_kind[i]));
	cJSON *models = cJSON_AddObjectToObject(calls, "by_model");
	for (int i = 0; i < r->nmodels; i++)
		cJSON_AddItemToObject(models, r->by_model[i].name, totals_json(&r->by_model[i].t));
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

static void print_row(const char *label, const cuco_call_totals *t)
{
	printf("  %-20s %5lld calls %10lld + %8lld tokens  $%.4f\n", label, (long long)t->calls,
		(long long)t->tokens_in, (long long)t->tokens_out, t->cost_usd);
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
		printf("baseline   #%llu  %.1f us (median, this run)%s%s\n", (unsigned long long)r->baseline_id,
			r->baseline_us, r->baseline_slot[0] ? " on " : "", r->baseline_slot);
	else
		printf("baseline   not measured yet\n");
	char sp[64];
	cuco_speedup_text(r->best.speedup, r->best.speedup_lo, r->best.speedup_hi, r->best.rounds,
		!cuco_utf8_locale(), sp, sizeof sp);
	/* Nothing crowned is a verdict only when the last confirmation judged
	 * a contender, or ended with none to judge. */
	const cuco_confirmation *last = &r->v.conf;
	bool ended = !r->v.have_conf || last->judged > 0 ||
		(last->state == CUCO_CONFIRM_DONE && last->contenders == 0);
	if (r->best_id && r->best_id == r->baseline_id)
		printf("best       %s\n", ended ? "nothing beat the baseline" : "nothing crowned");
	else if (r->best_id && r->baseline_id)
		printf("best       #%llu  %.1f us  %s the baseline%s%s%s%s\n", (unsigned long long)r->best_id,
			r->best_us, sp, r->best.verdict ? ", " : "", cuco_verdict_name(r->best.verdict),
			r->best_slot[0] ? " on " : "", r->best_slot);
	else if (r->best_id)
		printf("best       #%llu  %.1f us\n", (unsigned long long)r->best_id, r->best_us);
	else
		printf("best       none yet\n");
	if (r->best_id && r->best_counted)
		printf("           %lld host communication calls in its steps\n", (long long)r->best_host_calls);
	const cuco_confirmation *cf = &r->v.conf;
	if (r->v.have_conf)
		printf("confirmed  %s: %d contender%s, %d judged, %d crowned (session %llu)\n",
			cuco_confirm_state_name(cf->state), cf->contenders, cf->contenders == 1 ? "" : "s",
			cf->judged, cf->crowned, (unsigned long long)cf->session);
	cmd_verdicts_print(&r->v, 10);
	if (r->noise[0])
		printf("noise      %s\n", r->noise);
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
	if (r->repairs)
		printf("repairs    %zu failed child%s mended, %zu correct\n", r->repairs,
			r->repairs == 1 ? "" : "ren", r->repaired);
	const cuco_call_totals *c = &r->calls;
	if (!c->calls)
		return;
	printf("calls      %lld, %lld refused", (long long)c->calls, (long long)c->refused);
	if (c->edits_refused)
		printf("; %lld made directive-only children from replies with refused edits",
			(long long)c->edits_refused);
	if (c->tokens_cached)
		printf("; %lld prompt tokens cached", (long long)c->tokens_cached);
	if (c->estimated)
		printf("; usage estimated for %lld (the server sent none)", (long long)c->estimated);
	if (c->unpriced)
		printf("; %lld of a model with no known price, counted $0", (long long)c->unpriced);
	printf("\n");
	for (int i = 0; i < CUCO_CALL_KIND_COUNT; i++)
		if (r->by_kind[i].calls)
			print_row(cuco_call_kind_name((cuco_call_kind)i), &r->by_kind[i]);
	for (int i = 0; i < r->nmodels; i++) {
		char label[80];
		snprintf(label, sizeof label, "model %s", r->by_model[i].name);
		print_row(label, &r->by_model[i].t);
	}
}

#define REPORT_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_JSON, "json", 0, NULL, 0, "print one JSON object")
CMD_TABLE(options, REPORT_OPTIONS);

static int report_exec(int argc, char **argv)
{
	bool json = false;
	int rc;
	cmd_args a = CMD_ARGS(&cmd_report, argc, argv);
	while (cmd_option_next(&a) >= 0)
		json = true;  /* --run is the parser's */
	if (!cmd_operands(&a, 0, 0, NULL))
		return a.rc;
	cuco_store *st;
	if ((rc = cmd_open_store(a.run, CUCO_STORE_RDONLY, &st)))
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
	cmd_verdicts_free(&r->v);
	free(r);
	return rc;
}

const cuco_cmd cmd_report = { "report", "",
	"summarise a run: candidates by status, baseline, best and its speedup, tokens, cost", report_exec,
	CMD_OPTIONS(options) };
