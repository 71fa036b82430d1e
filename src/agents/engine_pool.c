/* engine_pool.c — the workers and their queue: the next job (a due
 * baseline measurement, a stored candidate, a new proposal) and proposals. */
#include "agents/engine_int.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_FAILS_MAX 5   /* model calls in a row that gave up, ending the run */

typedef enum job_kind { JOB_BASELINE, JOB_STORED, JOB_PROPOSE } job_kind;

typedef struct job {
	job_kind kind;
	uint64_t id;  /* JOB_STORED */
	int slot;     /* JOB_BASELINE: the slot whose baseline is due */
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
	c.status = CUCO_STATUS_QUEUED;
	c.score = c.speedup = c.latency_median_us = c.latency_min_us = c.latency_p90_us = NAN;
	c.max_error = c.peak_fraction = NAN;
	c.created = c.updated = 0;
	if ((rc = cuco_cand_put(txn, &c)) != CUCO_OK)
		return rc;
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
 * the budget slot goes back and the next proposal asks again. Only a
 * server that stays down through MODEL_FAILS_MAX calls ends the run. */
static void model_failed(cuco_engine *e, const cuco_err *err)
{
	pthread_mutex_lock(&e->lock);
	e->proposed--;
	int fails = ++e->model_fails;
	pthread_mutex_unlock(&e->lock);
	engine_event(e, "model-error", 0, "%d in a row: %.480s", fails, err->msg);
	if (fails >= MODEL_FAILS_MAX) {
		cuco_err end;
		cuco_errf(&end, CUCO_EENV, "%d model calls in a row gave up; the last: %.400s", fails,
			err->msg);
		engine_fail(e, &end);
		return;
	}
	cuco_log(CUCO_LOG_WARN, "engine: a model call gave up (%d in a row); the proposal is made "
		"again: %s", fails, err->msg);
}

static void propose_and_evaluate(cuco_engine *e)
{
	cuco_proposal p;
	cuco_err err = { 0 };
	memset(&p, 0, sizeof p);
	pthread_mutex_lock(&e->strat_lock);
	int rc = e->strat->propose(e->strat_state, &p, &err);
	pthread_mutex_unlock(&e->strat_lock);
	if (rc == CUCO_EAGAIN && !atomic_load(&e->stop_calls)) {
		free(p.source);
		model_failed(e, &err);
		return;
	}
	if (rc != CUCO_OK) {
		free(p.source);
		pthread_mutex_lock(&e->lock);
		e->proposed--;
		if (rc == CUCO_ENOTFOUND)
			e->exhausted = true;
		pthread_mutex_unlock(&e->lock);
		/* A proposal cut short because a person stopped the run (its
		 * model call was cancelled) is the stop, not a failure. */
		if (rc != CUCO_ENOTFOUND && !atomic_load(&e->stop_calls))
			engine_fail(e, &err);
		return;
	}
	pthread_mutex_lock(&e->lock);
	e->model_fails = 0;
	pthread_mutex_unlock(&e->lock);
	engine_insert_arg a = { .c = p.cand, .source = p.source, .len = p.len, .event = "candidate" };
	rc = cuco_store_write(e->st, engine_insert_txn, &a, &err);
	free(p.source);
	if (rc != CUCO_OK) {
		engine_fail(e, &err);
		return;
	}
	engine_wake(e);
	engine_evaluate_stored(e, a.c.id);
}

/* ---- workers ---------------------------------------------------------------- */

static bool budget_left(const cuco_engine *e)
{
	return e->cfg.budget <= 0 || e->proposed < e->cfg.budget;
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
			return false;
		}
		if (e->paused) {
			engine_wait(e, POLL_S);
			continue;
		}
		if ((j->slot = engine_claim_due(e)) >= 0) {
			j->kind = JOB_BASELINE;
			return true;
		}
		if (e->nbacklog > 0) {
			j->kind = JOB_STORED;
			j->id = e->backlog[0];
			memmove(e->backlog, e->backlog + 1, --e->nbacklog * sizeof *e->backlog);
			return true;
		}
		if (e->exhausted || !budget_left(e)) {
			if (!e->end_reason)
				e->end_reason = e->exhausted ? "design space exhausted" : "budget reached";
			return false;
		}
		e->proposed++;
		j->kind = JOB_PROPOSE;
		return true;
	}
}

static void run_job(cuco_engine *e, const job *j)
{
	switch (j->kind) {
	case JOB_BASELINE:
		engine_measure_baseline(e, j->slot, 0);
		break;
	case JOB_STORED:
		engine_evaluate_stored(e, j->id);
		break;
	case JOB_PROPOSE:
		propose_and_evaluate(e);
		break;
	}
}

void *engine_worker(void *arg)
{
	cuco_engine *e = arg;
	job j;
	pthread_mutex_lock(&e->lock);
	while (next_job(e, &j)) {
		pthread_mutex_unlock(&e->lock);
		run_job(e, &j);
		pthread_mutex_lock(&e->lock);
	}
	e->active--;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return NULL;
}
