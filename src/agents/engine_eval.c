/* engine_eval.c — evaluating candidates: the baseline policy (each slot's
 * own, engine_slots.c), a new best's second benchmark, the budget and
 * environment rules. */
#include "agents/engine_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENV_FAILS_MAX 3     /* environment failures in a row that end the run */

/* Strategy candidates spend the budget; the baseline, the seed and a
 * person's edits do not, nor an evaluation the environment failed. */
bool engine_counts_for_budget(const cuco_candidate *c)
{
	return c->origin != CUCO_ORIGIN_BASELINE && c->origin != CUCO_ORIGIN_SEED &&
		c->origin != CUCO_ORIGIN_HUMAN;
}

int engine_evaluate(cuco_engine *e, int slot, const char *src, size_t len, const cuco_directive *d,
	cuco_eval_result *res)
{
	cuco_err err = { 0 };
	memset(res, 0, sizeof *res);
	int rc = cuco_eval_candidate_on(e->ev, slot, src, len, d, true, res, &err);
	if (rc != CUCO_OK)
		engine_fail(e, &err);
	return rc;
}

/* A re-measure that failed: the row keeps the last good measurement
 * (readers such as `cuco report` take it as this run's baseline) and the
 * run goes on; the event says what happened. */
static void baseline_glitch(cuco_engine *e, int slot, const cuco_eval_result *res, const char *line)
{
	pthread_mutex_lock(&e->lock);
	double kept = NAN;
	if (slot >= 0 && slot < e->nslots) {
		e->slots[slot].benched = 0;
		e->slots[slot].busy = false;
		kept = e->slots[slot].baseline_us;
	}
	pthread_mutex_unlock(&e->lock);
	engine_event(e, "baseline", e->baseline_id, "re-measure failed at %s: %s%s%s; keeping %.1f us",
		res->failed_stage, res->error_class, line[0] ? ": " : "", line, kept);
}

/* Measure the baseline and make it the reference for what follows. Only
 * the first measurement shows the row as benchmarking: later ones leave
 * it done, so a viewer always finds this run's baseline. */
int engine_measure_baseline(cuco_engine *e, int slot, unsigned flags)
{
	bool first = flags & ENGINE_BASE_FIRST;
	cuco_eval_result res;
	cuco_candidate c;
	cuco_err err = { 0 };
	if (engine_get(e, e->baseline_id, &c, &err) != CUCO_OK) {
		engine_fail(e, &err);
		return err.code;
	}
	cuco_directive d = c.directive;
	if (first)
		engine_set_status(e, e->baseline_id, CUCO_STATUS_BENCHMARKING);
	if (engine_evaluate(e, slot, e->baseline_src, e->baseline_len, &d, &res) != CUCO_OK)
		return CUCO_EENV;
	char line[200];
	engine_first_line(res.excerpt, line, sizeof line);
	if (!res.ok && !first) {
		baseline_glitch(e, slot >= 0 ? slot : res.slot, &res, line);
		return CUCO_OK;
	}
	if (engine_record(e, e->baseline_id, &res, NAN, "baseline", &c) != CUCO_OK)
		return CUCO_EDATA;
	pthread_mutex_lock(&e->lock);
	engine_slot_baseline(e, &res);
	if (res.ok && !e->best_id) {  /* what a candidate must beat to be a best */
		e->best_id = c.id;
		e->best_score = c.score;
	}
	if (!(flags & ENGINE_BASE_QUIET))
		engine_progress(e, &c, "baseline");
	pthread_mutex_unlock(&e->lock);
	if (res.ok)
		return CUCO_OK;
	cuco_errf(&err, res.environment ? CUCO_EENV : CUCO_EDATA, "%s: baseline %s at %s: %s",
		e->wl->name, res.environment ? "cannot run here" : "failed", res.failed_stage,
		line[0] ? line : res.error_class);
	engine_fail(e, &err);
	return err.code;
}

void engine_observe(cuco_engine *e, const cuco_candidate *c)
{
	pthread_mutex_lock(&e->strat_lock);
	e->strat->observe(e->strat_state, c);
	pthread_mutex_unlock(&e->strat_lock);
}

/* Take c as the best if it beats the best so far (under e->lock). */
static bool take_best(cuco_engine *e, const cuco_candidate *c)
{
	if (c->status != CUCO_STATUS_DONE || isnan(c->score))
		return false;
	if (e->best_id && e->best_id != c->id && c->score <= e->best_score)
		return false;
	e->best_id = c->id;
	e->best_score = c->score;
	return true;
}

/* The baseline median of slot s, measured there first when it never was
 * (a slot's first candidate); NAN when it cannot be had. */
static double slot_baseline(cuco_engine *e, int s)
{
	pthread_mutex_lock(&e->lock);
	double base = s >= 0 && s < e->nslots ? e->slots[s].baseline_us : NAN;
	bool claimed = s >= 0 && isnan(base) && engine_claim_baseline(e, s);
	pthread_mutex_unlock(&e->lock);
	if (claimed && engine_measure_baseline(e, s, 0) != CUCO_OK)
		return NAN;
	pthread_mutex_lock(&e->lock);
	/* Another thread may have been measuring it: wait for its end. */
	while (s >= 0 && s < e->nslots && isnan(e->slots[s].baseline_us) && e->slots[s].busy && !e->stop)
		engine_wait(e, POLL_S);
	base = s >= 0 && s < e->nslots ? e->slots[s].baseline_us : NAN;
	pthread_mutex_unlock(&e->lock);
	return base;
}

/* A candidate measured on a slot where the baseline cannot be: no speedup
 * can be had there, which is the environment's failure, not the
 * candidate's. */
static void no_baseline(cuco_eval_result *res)
{
	res->ok = false;
	res->environment = true;
	cuco_strlcpy(res->failed_stage, "bench", sizeof res->failed_stage);
	cuco_strlcpy(res->error_class, cuco_fail_name(CUCO_FAIL_ENVIRONMENT), sizeof res->error_class);
	snprintf(res->excerpt, sizeof res->excerpt, "bench: no baseline on slot %s to compare with "
		"(the baseline failed there)", res->slot_name);
}

/* Evaluate a stored candidate. A result that would be a new best is
 * benchmarked again right after a fresh baseline measurement on the same
 * slot, and the slower of its two medians is kept: neither one lucky
 * timing nor a baseline measured while the machine was busier is ever
 * announced. Every speedup divides the baseline of the candidate's slot. */
void engine_evaluate_stored(cuco_engine *e, uint64_t id)
{
	cuco_candidate c;
	cuco_err err = { 0 };
	if (engine_get(e, id, &c, &err) != CUCO_OK) {
		engine_fail(e, &err);
		return;
	}
	char *src = NULL;
	size_t src_len = 0;
	if (cuco_source_read(e->st, c.source_hash, &src, &src_len, &err) != CUCO_OK) {
		engine_fail(e, &err);
		return;
	}
	engine_set_status(e, id, CUCO_STATUS_COMPILING);
	cuco_eval_result res, again;
	if (engine_evaluate(e, -1, src, src_len, &c.directive, &res) != CUCO_OK)
		goto out;
	int slot = res.slot;
	double base = res.ok ? slot_baseline(e, slot) : NAN;
	if (res.ok && isnan(base))
		no_baseline(&res);

	pthread_mutex_lock(&e->lock);
	bool contender = res.ok && (!e->best_id || base / res.latency_median_us > e->best_score);
	pthread_mutex_unlock(&e->lock);
	if (contender) {
		engine_set_status(e, id, CUCO_STATUS_BENCHMARKING);
		pthread_mutex_lock(&e->lock);
		/* Unless no other candidate was measured there since the baseline. */
		bool paired = !e->slots[slot].fresh && engine_claim_baseline(e, slot);
		pthread_mutex_unlock(&e->lock);
		if (paired && engine_measure_baseline(e, slot, 0) != CUCO_OK)
			goto out;
		if (engine_evaluate(e, slot, src, src_len, &c.directive, &again) != CUCO_OK)
			goto out;
		if (!again.ok || again.latency_median_us > res.latency_median_us)
			res = again;
		pthread_mutex_lock(&e->lock);
		base = e->slots[slot].baseline_us;
		pthread_mutex_unlock(&e->lock);
	}
	if (engine_record(e, id, &res, base, "status", &c) != CUCO_OK)
		goto out;
	engine_observe(e, &c);

	pthread_mutex_lock(&e->lock);
	bool best = take_best(e, &c);
	engine_slot_benched(e, res.slot, res.ok && c.origin != CUCO_ORIGIN_BASELINE);
	if (res.environment && ++e->env_fails >= ENV_FAILS_MAX && e->rc == CUCO_OK) {
		char line[200];
		engine_first_line(c.error_excerpt[0] ? c.error_excerpt : c.error_class, line, sizeof line);
		cuco_errf(&e->err, CUCO_EENV, "%s: %d evaluations in a row failed for the environment: %s",
			e->wl->name, e->env_fails, line);
		e->rc = CUCO_EENV;
		e->end_reason = "error";
		e->stop = true;
	} else if (!res.environment) {
		e->env_fails = 0;
	}
	/* Not the candidate's fault: its budget slot goes back. */
	if (res.environment && engine_counts_for_budget(&c))
		e->proposed--;
	engine_progress(e, &c, best ? "new best" : NULL);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (best)
		engine_announce_best(e, &c);
out:
	free(src);
}
