/* engine_eval.c — evaluating candidates: the baseline policy, a new
 * best's second benchmark, the budget and environment rules. */
#include "agents/engine_int.h"

#include <math.h>
#include <pthread.h>
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

/* Evaluate with the evaluator; an error of the evaluator itself ends the run. */
int engine_evaluate(cuco_engine *e, const char *src, size_t len, const cuco_directive *d,
	cuco_eval_result *res)
{
	cuco_err err = { 0 };
	memset(res, 0, sizeof *res);
	int rc = cuco_eval_candidate(e->ev, src, len, d, true, res, &err);
	if (rc != CUCO_OK)
		engine_fail(e, &err);
	return rc;
}

/* A re-measure that failed: the row keeps the last good measurement
 * (readers such as `cuco report` take it as this run's baseline) and the
 * run goes on; the event says what happened. */
static void baseline_glitch(cuco_engine *e, const cuco_eval_result *res, const char *line)
{
	pthread_mutex_lock(&e->lock);
	e->benched = 0;
	e->baseline_busy = false;
	double kept = e->baseline_us;
	pthread_mutex_unlock(&e->lock);
	engine_event(e, "baseline", e->baseline_id, "re-measure failed at %s: %s%s%s; keeping %.1f us",
		res->failed_stage, res->error_class, line[0] ? ": " : "", line, kept);
}

/* Measure the baseline and make it the reference for what follows. Only
 * the first measurement shows the row as benchmarking: later ones leave
 * it done, so a viewer always finds this run's baseline. */
int engine_measure_baseline(cuco_engine *e, unsigned flags)
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
	if (engine_evaluate(e, e->baseline_src, e->baseline_len, &d, &res) != CUCO_OK)
		return CUCO_EENV;
	char line[200];
	engine_first_line(res.excerpt, line, sizeof line);
	if (!res.ok && !first) {
		baseline_glitch(e, &res, line);
		return CUCO_OK;
	}
	if (engine_record(e, e->baseline_id, &res, NAN, "baseline", &c) != CUCO_OK)
		return CUCO_EDATA;
	pthread_mutex_lock(&e->lock);
	if (res.ok) {
		e->baseline_us = res.latency_median_us;
		e->baseline_res = res;
		if (!e->best_id) {  /* what a candidate must beat to be a best */
			e->best_id = c.id;
			e->best_score = c.score;
		}
	}
	e->benched = 0;
	e->baseline_busy = false;
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

/* Claim the next baseline measurement for this thread (under e->lock);
 * false when another thread is measuring it already. */
bool engine_claim_baseline(cuco_engine *e)
{
	if (e->baseline_busy)
		return false;
	e->baseline_busy = true;
	e->baseline_due = false;
	return true;
}

/* Evaluate a stored candidate. A result that would be a new best is
 * benchmarked again right after a fresh baseline measurement, and the
 * slower of its two medians is kept: neither one lucky timing nor a
 * baseline measured while the machine was busier is ever announced. */
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
	if (engine_evaluate(e, src, src_len, &c.directive, &res) != CUCO_OK)
		goto out;

	pthread_mutex_lock(&e->lock);
	double base = e->baseline_us;
	bool contender = res.ok && (!e->best_id || base / res.latency_median_us > e->best_score);
	pthread_mutex_unlock(&e->lock);
	if (contender) {
		engine_set_status(e, id, CUCO_STATUS_BENCHMARKING);
		pthread_mutex_lock(&e->lock);
		/* Unless nothing was benchmarked since the baseline was. */
		bool paired = e->benched > 0 && engine_claim_baseline(e);
		pthread_mutex_unlock(&e->lock);
		if (paired && engine_measure_baseline(e, 0) != CUCO_OK)
			goto out;
		if (engine_evaluate(e, src, src_len, &c.directive, &again) != CUCO_OK)
			goto out;
		if (!again.ok || again.latency_median_us > res.latency_median_us)
			res = again;
		pthread_mutex_lock(&e->lock);
		base = e->baseline_us;
		pthread_mutex_unlock(&e->lock);
	}
	if (engine_record(e, id, &res, base, "status", &c) != CUCO_OK)
		goto out;
	engine_observe(e, &c);

	pthread_mutex_lock(&e->lock);
	bool best = take_best(e, &c);
	if (res.ok && c.origin != CUCO_ORIGIN_BASELINE && ++e->benched >= e->cfg.baseline_every
			&& !e->baseline_busy)
		e->baseline_due = true;
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
