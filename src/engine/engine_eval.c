/* engine_eval.c — evaluating candidates: the screening measurement, the
 * baseline policy (each slot's own, engine_slots.c), the budget and
 * environment rules. */
#include "engine/engine_int.h"

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

/* Evaluate on that slot (-1: the first free one, moving on from one the
 * environment fails); an error of the evaluator ends the run. */
static int engine_evaluate(cuco_engine *e, int slot, const char *src, size_t len, const cuco_directive *d,
	cuco_eval_result *res)
{
	cuco_err err = { 0 };
	memset(res, 0, sizeof *res);
	int rc = cuco_eval_candidate_on(e->ev, slot, src, len, d, true, res, &err);
	if (rc != CUCO_OK)
		engine_fail(e, &err);
	return rc;
}

int engine_remeasure(cuco_engine *e, int slot, const char *src, size_t len,
	const cuco_directive *d, cuco_eval_result *res)
{
	cuco_err err = { 0 };
	memset(res, 0, sizeof *res);
	int rc = cuco_eval_remeasure_on(e->ev, slot, src, len, d, res, &err);
	if (rc != CUCO_OK)
		engine_fail(e, &err);
	return rc;
}

/* Measure the baseline on a slot and make it that slot's reference for
 * what follows there. Every measurement is appended to its row; a row
 * measured before stays done while it is measured again (a viewer always
 * finds the run's baseline), and a failed re-measure leaves the slot's
 * earlier measurement in force: the run goes on against it, the event says
 * what happened. Only the first session's first measurement failing ends
 * the run (ENGINE_BASE_FIRST: nothing could be compared). */
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
	engine_set_status(e, e->baseline_id, CUCO_STATUS_BENCHMARKING);  /* unless done */
	if (engine_evaluate(e, slot, e->baseline_src, e->baseline_len, &d, &res) != CUCO_OK) {
		engine_set_status(e, e->baseline_id, CUCO_STATUS_QUEUED);
		return CUCO_EENV;
	}
	char line[200];
	engine_first_line(res.failure.excerpt, line, sizeof line);
	if (engine_record(e, e->baseline_id, &res, NAN, CUCO_EVENT_BASELINE, &c) != CUCO_OK)
		return CUCO_EDATA;
	bool in_force = c.status == CUCO_STATUS_DONE;  /* an earlier measurement, if res failed */
	pthread_mutex_lock(&e->lock);
	if (!res.ok && res.slot < 0)
		res.slot = slot;  /* no slot was had: the one asked for is free again */
	engine_slot_baseline(e, &res);
	if (res.ok && !e->best_id) {  /* what a candidate must beat to be a best */
		e->best_id = c.id;
		e->best_score = c.score;
	}
	e->baseline_fresh = res.ok || e->baseline_fresh;
	if (!(flags & ENGINE_BASE_QUIET))
		engine_progress(e, &c, res.ok ? "baseline" : "baseline re-measure failed");
	pthread_mutex_unlock(&e->lock);
	if (res.ok)
		engine_noise_baseline(e, &res);
	if (res.ok || (in_force && !first))
		return CUCO_OK;
	cuco_errf(&err, res.environment ? CUCO_EENV : CUCO_EDATA, "%s: baseline %s at %s: %s",
		e->wl->name, res.environment ? "cannot run here" : "failed", res.failure.stage,
		line[0] ? line : res.failure.error_class);
	engine_fail(e, &err);
	return err.code;
}

void engine_observe(cuco_engine *e, const cuco_candidate *c)
{
	pthread_mutex_lock(&e->strat_lock);
	e->strat->observe(e->strat_state, c);
	pthread_mutex_unlock(&e->strat_lock);
	/* A strategy waiting for results (CUCO_EBUSY) may have work now. */
	pthread_mutex_lock(&e->lock);
	e->strat_seq++;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
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
	cuco_failure *f = &res->failure;
	cuco_strlcpy(f->stage, "bench", sizeof f->stage);
	cuco_strlcpy(f->error_class, cuco_fail_name(CUCO_FAIL_ENVIRONMENT), sizeof f->error_class);
	snprintf(f->excerpt, sizeof f->excerpt, "bench: no baseline on slot %s to compare with "
		"(the baseline failed there)", res->slot_name);
}

/* Evaluate a stored candidate: one screening measurement against the
 * latest baseline of the slot it ran on (no ratio mixes two slots). It
 * ranks the candidate for the strategy and may make it a contender; only
 * the confirmation at the end (engine_trust.c), on fresh rounds, can make
 * it the best. */
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
	cuco_eval_result res;
	if (engine_evaluate(e, -1, src, src_len, &c.directive, &res) != CUCO_OK)
		goto unfinished;
	double base = res.ok ? slot_baseline(e, res.slot) : NAN;
	if (res.ok && isnan(base))
		no_baseline(&res);
	if (engine_record(e, id, &res, base, CUCO_EVENT_STATUS, &c) != CUCO_OK)
		goto unfinished;
	engine_observe(e, &c);

	pthread_mutex_lock(&e->lock);
	engine_slot_benched(e, res.slot, res.ok && c.origin != CUCO_ORIGIN_BASELINE);
	if (res.environment && ++e->env_fails >= ENV_FAILS_MAX && e->rc == CUCO_OK) {
		char line[200];
		engine_first_line(c.failure.excerpt[0] ? c.failure.excerpt : c.failure.error_class, line,
			sizeof line);
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
	CUCO_ASSERT(e->proposed >= 0);  /* counted when proposed (next_job) or found stored (engine_setup) */
	engine_progress(e, &c, NULL);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	free(src);
	return;
unfinished:
	/* The evaluator failed, not the candidate (the run ends): nobody is
	 * evaluating it now, and the next session will. */
	engine_set_status(e, id, CUCO_STATUS_QUEUED);
	free(src);
}
