/* engine_pool.c — the workers and their queue: the next job (a due
 * baseline measurement, a stored candidate, a new proposal) and proposals. */
#include "engine/engine_int.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_PROBE_S 15    /* while no model answers, a proposal asks this often */

typedef enum job_kind { JOB_BASELINE, JOB_STORED, JOB_PROPOSE } job_kind;

typedef struct job {
	job_kind kind;
	uint64_t id;      /* JOB_STORED */
	int slot;         /* JOB_BASELINE: the slot whose baseline is due */
	unsigned epoch;   /* JOB_PROPOSE: cancel_epoch when it started */
} job;

/* ---- proposals ------------------------------------------------------------- */

int engine_insert_txn(cuco_txn *txn, void *arg)
{
	engine_insert_arg *a = arg;
	cuco_candidate c = a->c;
	int rc;
	if (a->source && (rc = cuco_source_put(txn, a->source, a->len, c.source_hash)) != CUCO_OK)
		return rc;
	cuco_candidate parent;
	if (c.generation == 0 && c.nparents > 0 && cuco_cand_get(txn, c.parents[0], &parent) == CUCO_OK)
		c.generation = parent.generation + 1;
	c.id = 0;
	cuco_cand_queued(&c);
	c.created = c.updated = 0;
	if ((rc = cuco_cand_put(txn, &c)) != CUCO_OK)
		return rc;
	for (size_t i = 0; i < a->ncalls; i++) {
		cuco_call call = a->calls[i];
		call.candidate = c.id;
		if ((rc = cuco_call_add(txn, &call)) != CUCO_OK)
			return rc;
	}
	cuco_island isl;
	if (c.island >= 0 && cuco_island_get(txn, c.island, &isl) == CUCO_OK) {
		isl.members++;
		isl.generation = c.generation > isl.generation ? c.generation : isl.generation;
		if ((rc = cuco_island_put(txn, &isl)) != CUCO_OK)
			return rc;
	}
	cuco_event ev;
	engine_event_init(&ev, a->event, c.id, a->author);
	char dir[160];
	cuco_directive_short(&c.directive, dir, sizeof dir);
	snprintf(ev.text, sizeof ev.text, "%s %s from #%llu%s%.300s", cuco_origin_name(c.origin), dir,
		(unsigned long long)c.parents[0], a->text[0] ? ": " : "", a->text);
	a->c = c;
	return cuco_event_add(txn, &ev);
}

/* A proposal whose model call gave up after its retries (the server down,
 * overloaded or garbling its replies) is no candidate: the event says so,
 * the budget slot goes back and the next proposal asks again. When no call
 * has been answered for the models' `outage`, the run waits for one
 * instead of ending: a model-down event (the screen shows it) and a line,
 * then one proposal every probe_s, until one is answered (model-back,
 * in model_answered) or a person stops the run. */
static double probe_s(const cuco_engine *e)
{
	return fmin(MODEL_PROBE_S, e->model_outage_s / 2);
}

static void model_failed(cuco_engine *e, const cuco_err *err)
{
	pthread_mutex_lock(&e->lock);
	e->proposed--;
	int fails = ++e->model_fails;
	double silent = cuco_mono() - e->model_ok_at;
	bool down = !e->model_down && silent >= e->model_outage_s;
	e->model_down = e->model_down || down;
	bool waiting = e->model_down;
	pthread_mutex_unlock(&e->lock);
	engine_event(e, CUCO_EVENT_MODEL_ERROR, 0, "%d in a row: %.480s", fails, err->msg);
	if (down) {
		engine_event(e, CUCO_EVENT_MODEL_DOWN, 0, "no model has answered for %.0f s: the run waits, "
			"asking again every %.0f s", silent, probe_s(e));
		cuco_log(CUCO_LOG_WARN, "engine: no model has answered for %.0f s (the last: %s); the "
			"run waits for one, asking again every %.0f s", silent, err->msg, probe_s(e));
	} else if (!waiting) {
		cuco_log(CUCO_LOG_WARN, "engine: a model call gave up (%d in a row); the proposal is "
			"made again: %s", fails, err->msg);
	}
	if (waiting) {
		pthread_mutex_lock(&e->lock);
		double until = cuco_mono() + probe_s(e);
		while (!e->stop && cuco_mono() < until)
			engine_wait(e, POLL_S);
		pthread_mutex_unlock(&e->lock);
	}
}

/* A call was answered: the outage clock starts again, and a run that was
 * waiting for a model goes on. */
static void model_answered(cuco_engine *e)
{
	pthread_mutex_lock(&e->lock);
	bool back = e->model_down;
	double silent = cuco_mono() - e->model_ok_at;
	e->model_fails = 0;
	e->model_down = false;
	e->model_ok_at = cuco_mono();
	pthread_mutex_unlock(&e->lock);
	if (back) {
		engine_event(e, CUCO_EVENT_MODEL_BACK, 0, "a model answers again after %.0f s: the run goes on",
			silent);
		cuco_log(CUCO_LOG_WARN, "engine: a model answers again after %.0f s; the run goes on",
			silent);
	}
}

/* Take an evaluation slot for a proposal made while others evaluated,
 * measuring a due baseline first; false when the run is stopping (the
 * candidate stays queued in the store: a resumed run evaluates it). */
static bool take_slot(cuco_engine *e)
{
	pthread_mutex_lock(&e->lock);
	while (!e->stop && e->evaluating >= e->cfg.jobs)
		engine_wait(e, POLL_S);
	bool ok = !e->stop;
	int due = ok ? engine_claim_due(e) : -1;
	e->evaluating += ok;
	pthread_mutex_unlock(&e->lock);
	if (due >= 0)
		engine_measure_baseline(e, due, 0);
	return ok;
}

/* What a proposal that made no candidate leaves behind (under e->lock). */
static void proposal_ended(cuco_engine *e, int rc, const cuco_err *err)
{
	e->proposed--;
	CUCO_ASSERT(e->proposed >= 0);  /* next_job counted this one */
	if (rc == CUCO_ENOTFOUND) {
		e->exhausted = true;
		/* The strategy says why it has nothing left (a spent model budget). */
		if (err->msg[0] && !e->end_reason) {
			cuco_strlcpy(e->end_text, err->msg, sizeof e->end_text);
			e->end_reason = e->end_text;
		}
	}
}

/* A proposal, then its evaluation. Without a lock on the engine while the
 * strategy works: a strategy that calls models lets other proposals, and
 * every result, in while it waits. True when it took an evaluation slot
 * of its own (a strategy with model calls), which the caller gives back. */
static bool propose_and_evaluate(cuco_engine *e, unsigned epoch)
{
	cuco_proposal p;
	cuco_err err = { 0 };
	memset(&p, 0, sizeof p);
	/* What the strategy will have seen: every change counted so far
	 * happened before it is asked. */
	pthread_mutex_lock(&e->lock);
	uint64_t seen = e->strat_seq;
	pthread_mutex_unlock(&e->lock);
	pthread_mutex_lock(&e->strat_lock);
	int rc = e->strat->propose(e->strat_state, &p, &err);
	pthread_mutex_unlock(&e->strat_lock);
	pthread_mutex_lock(&e->lock);
	/* "Nothing now" is asked again after the next change since it was
	 * asked; it is no change itself, or the waiting workers would spin. */
	e->busy = rc == CUCO_EBUSY;
	if (e->busy)
		e->busy_seq = seen;
	else
		e->strat_seq++;
	/* Cut short by a stop, a pause or the time limit (its model call was
	 * cancelled): that, not a failure. */
	bool cancelled = e->cancel_epoch != epoch;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (rc != CUCO_OK) {
		free(p.source);
		free(p.calls);
	}
	if (rc == CUCO_EAGAIN && !cancelled) {
		model_failed(e, &err);
		return false;
	}
	if (rc != CUCO_OK) {
		pthread_mutex_lock(&e->lock);
		proposal_ended(e, rc, &err);
		pthread_mutex_unlock(&e->lock);
		if (rc != CUCO_ENOTFOUND && rc != CUCO_EBUSY && !cancelled)
			engine_fail(e, &err);
		return false;
	}
	model_answered(e);
	engine_insert_arg a = { .c = p.cand, .source = p.source, .len = p.len, .event = CUCO_EVENT_CANDIDATE,
		.calls = p.calls, .ncalls = p.ncalls };
	rc = cuco_store_write(e->st, engine_insert_txn, &a, &err);
	free(p.source);
	free(p.calls);
	if (rc != CUCO_OK) {
		engine_fail(e, &err);
		return false;
	}
	engine_wake(e);
	bool own = e->llm_jobs > 0;
	if (own && !take_slot(e))
		return false;
	engine_evaluate_stored(e, a.c.id);
	return own;
}

/* ---- workers ---------------------------------------------------------------- */

static bool budget_left(const cuco_engine *e)
{
	return e->cfg.budget <= 0 || e->proposed < e->cfg.budget;
}

/* Whether a worker may start a proposal now (under e->lock). A strategy
 * that calls models gets its concurrency in proposals at once, from the
 * model call to the end of the evaluation, each taking an evaluation slot
 * only once it has a candidate (so one at a time is the serial search of
 * old); one that does not proposes for a free slot only, so it never runs
 * ahead of its results. A strategy that said "nothing now" is asked again
 * once a result has landed or another proposal has ended. */
static bool may_propose(const cuco_engine *e)
{
	if (e->busy && e->busy_seq == e->strat_seq)
		return false;
	if (e->llm_jobs == 0)
		return e->evaluating < e->cfg.jobs;
	return e->proposing < e->llm_jobs;
}

/* The next job, or false when this worker should end (under e->lock). */
static bool next_job(cuco_engine *e, job *j)
{
	for (;;) {
		if (e->stop)
			return false;
		if (e->deadline > 0 && cuco_mono() >= e->deadline) {
			if (!e->end_reason)
				e->end_reason = "time limit";
			engine_calls_off(e);
			return false;
		}
		if (e->paused) {
			engine_wait(e, POLL_S);
			continue;
		}
		bool slot = e->evaluating < e->cfg.jobs;
		if (slot && (j->slot = engine_claim_due(e)) >= 0) {
			j->kind = JOB_BASELINE;
			e->evaluating++;
			return true;
		}
		if (slot && e->nbacklog > 0) {
			j->kind = JOB_STORED;
			j->id = e->backlog[0];
			memmove(e->backlog, e->backlog + 1, --e->nbacklog * sizeof *e->backlog);
			e->evaluating++;
			return true;
		}
		if (e->exhausted || !budget_left(e)) {
			if (!e->end_reason)
				e->end_reason = e->exhausted ? "design space exhausted" : "budget reached";
			return false;
		}
		if (!may_propose(e)) {
			engine_wait(e, POLL_S);
			continue;
		}
		e->proposed++;
		e->proposing++;
		/* Without model calls the proposing worker evaluates at once. */
		e->evaluating += e->llm_jobs == 0;
		j->kind = JOB_PROPOSE;
		j->epoch = e->cancel_epoch;
		return true;
	}
}

/* Run a job; whether it held an evaluation slot, to give back. */
static bool run_job(cuco_engine *e, const job *j)
{
	switch (j->kind) {
	case JOB_BASELINE:
		engine_measure_baseline(e, j->slot, 0);
		return true;
	case JOB_STORED:
		engine_evaluate_stored(e, j->id);
		return true;
	case JOB_PROPOSE:
		return propose_and_evaluate(e, j->epoch) || e->llm_jobs == 0;
	}
	return false;
}

void *engine_worker(void *arg)
{
	cuco_engine *e = arg;
	job j;
	pthread_mutex_lock(&e->lock);
	while (next_job(e, &j)) {
		pthread_mutex_unlock(&e->lock);
		bool slot = run_job(e, &j);
		pthread_mutex_lock(&e->lock);
		e->evaluating -= slot;
		e->proposing -= j.kind == JOB_PROPOSE;
		/* Each job gave back what next_job or take_slot took for it. */
		CUCO_ASSERT(e->evaluating >= 0 && e->evaluating <= e->cfg.jobs && e->proposing >= 0);
		pthread_cond_broadcast(&e->cond);
	}
	e->active--;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return NULL;
}
