/* engine.c — the search engine: one driver thread and a pool of workers.
 *
 * The driver measures the baseline and the seed, starts `jobs` workers,
 * applies the store's command queue every POLL_S while they run, and at
 * the end confirms the best few screens on fresh paired rounds, crowning
 * what passes (engine_trust.c; commands are applied between rounds, so a
 * pause holds it too), and writes run-end. A worker takes the
 * next job — a due baseline measurement, a stored candidate (a person's
 * edit, or one a killed session left unfinished), or a new proposal from
 * the strategy — evaluates it and records the result.
 *
 * The engine's files and its locks: engine_int.h.
 *
 * The baseline and the seed have one row each per run directory. Every
 * measurement of any candidate is appended to its row's measurements
 * (cuco_measure_add) with this session's id; a done row stays done unless
 * a program's own failure is in force (store.h: never the baseline's). Every
 * speedup is a ratio against the baseline measurement in force on the
 * candidate's slot when it was measured (engine_slots.c): this session's,
 * or in a resumed run a recent one of an earlier session on the same slot
 * (engine_setup.c), and a new best is always paired with fresh baseline
 * measurements on one slot.
 */
#include "engine/engine_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cuco_engine_config_init(cuco_engine_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cuco_strlcpy(cfg->strategy, "tune", sizeof cfg->strategy);
	cuco_strlcpy(cfg->tuner, "anneal", sizeof cfg->tuner);
	cfg->seed = 1;
	cfg->jobs = 2;
	cfg->baseline_every = 8;
	cfg->rebench_top = 3;
}

void engine_wake(cuco_engine *e)
{
	char b = 1;
	/* A full pipe already says "something happened". */
	if (write(e->wake[1], &b, 1) < 0 && errno != EAGAIN)
		cuco_log(CUCO_LOG_WARN, "engine: wake pipe: %s", strerror(errno));
}

/* End the run with an error (the first one wins). */
void engine_fail(cuco_engine *e, const cuco_err *err)
{
	pthread_mutex_lock(&e->lock);
	if (e->rc == CUCO_OK) {
		e->rc = err->code ? err->code : CUCO_EDATA;
		e->err = *err;
		e->end_reason = "error";
	}
	e->stop = true;
	engine_calls_off(e);  /* the other workers start no model call now */
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	/* The caller prints it; the log keeps it with the run. */
	cuco_log(CUCO_LOG_INFO, "engine: the run ends: %s", err->msg);
}

bool engine_stopping(cuco_engine *e)
{
	pthread_mutex_lock(&e->lock);
	bool stop = e->stop;
	pthread_mutex_unlock(&e->lock);
	return stop;
}

/* e->lock checks errors, so this thread locking it again is refused
 * (EDEADLK) rather than hanging: that refusal is the answer. Otherwise the
 * lock is had, once any other holder lets go, and given back. */
bool engine_locked(cuco_engine *e)
{
	if (pthread_mutex_lock(&e->lock) == EDEADLK)
		return true;
	pthread_mutex_unlock(&e->lock);
	return false;
}

/* Wait on e->cond (holding e->lock) for at most `seconds`. */
void engine_wait(cuco_engine *e, double seconds)
{
	CUCO_ASSERT(engine_locked(e));
	cuco_cond_wait_s(&e->cond, &e->lock, seconds);
}

void engine_calls_off(cuco_engine *e)
{
	CUCO_ASSERT(engine_locked(e));
	atomic_store(&e->calls_off, true);
	e->cancel_epoch++;
}

/* ---- the driver ---------------------------------------------------------- */

/* The baseline, then the seed when the workload has one, unless a resumed
 * run has them already (engine_setup: a recent baseline measurement serves
 * on). */
static int measure_start(cuco_engine *e)
{
	if (!e->baseline_fresh) {
		int rc = engine_measure_baseline(e, -1, ENGINE_BASE_FIRST);
		if (rc != CUCO_OK)
			return rc;
	}
	if (e->seed_id && !e->seed_done)
		engine_evaluate_stored(e, e->seed_id);
	return e->rc;
}

typedef struct end_arg {
	cuco_confirmation confirmed;
	cuco_event ev;
} end_arg;

static int end_txn(cuco_txn *txn, void *arg)
{
	end_arg *a = arg;
	cuco_event ev = a->ev;  /* a retried txn starts from the same event */
	int rc = cuco_confirmation_put(txn, &a->confirmed);
	return rc == CUCO_OK ? cuco_event_add(txn, &ev) : rc;
}

/* How the session's confirmation ended (meta "confirmation", what the
 * summary reads) and the run-end event, in one write. */
static void run_end(cuco_engine *e)
{
	end_arg *a = cuco_xcalloc(1, sizeof *a);
	engine_confirm_outcome(e, &a->confirmed);
	pthread_mutex_lock(&e->lock);
	engine_event_init(&a->ev, CUCO_EVENT_RUN_END, e->best_id, NULL);
	const char *why = e->end_reason ? e->end_reason : "finished";
	snprintf(a->ev.text, sizeof a->ev.text, "%s after %d strategy candidates%s%.400s", why,
		e->proposed, e->rc ? ": " : "", e->rc ? e->err.msg : "");
	/* A reason the strategy gave (it has nothing left, its model budget
	 * is spent) is news: said where the progress goes. */
	if (e->cfg.progress && why == e->end_text) {
		fprintf(e->cfg.progress, "the search ends: %s\n", why);
		fflush(e->cfg.progress);
	}
	pthread_mutex_unlock(&e->lock);
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, end_txn, a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: run-end: %s", err.msg);
	free(a);
	engine_wake(e);
}

static void *driver_main(void *arg)
{
	cuco_engine *e = arg;
	if (measure_start(e) == CUCO_OK) {
		pthread_mutex_lock(&e->lock);
		e->active = 0;
		/* An evaluation slot each, and one per proposal that may wait on a
		 * model meanwhile. */
		for (int i = 0; i < e->cfg.jobs + e->llm_jobs; i++)
			if (pthread_create(&e->workers[i], NULL, engine_worker, e) == 0)
				e->active = ++e->nworkers;
		while (e->active > 0) {
			pthread_mutex_unlock(&e->lock);
			engine_poll_commands(e);
			pthread_mutex_lock(&e->lock);
			if (e->active > 0)
				engine_wait(e, POLL_S);
		}
		pthread_mutex_unlock(&e->lock);
		for (int i = 0; i < e->nworkers; i++)
			pthread_join(e->workers[i], NULL);
		/* The re-timing applies commands between its rounds (a pause holds
		 * it, a stop ends it). */
		if (!engine_stopping(e))
			engine_confirm(e);
	}
	run_end(e);
	atomic_store(&e->done, true);
	engine_wake(e);
	return NULL;
}

/* ---- the public API ------------------------------------------------------ */

int cuco_engine_start(cuco_store *st, const cuco_workload *wl, const cuco_strategy *strat,
	const cuco_engine_config *cfg, cuco_engine **out, cuco_err *err)
{
	if (!strat)
		return cuco_errf(err, CUCO_EUSAGE, "--strategy %s: unknown strategy", cfg->strategy);
	if (cfg->jobs < 1 || cfg->jobs > MAX_JOBS)
		return cuco_errf(err, CUCO_EUSAGE, "--jobs %d: must be 1 to %d", cfg->jobs, MAX_JOBS);
	if (cfg->llm_jobs < 0 || cfg->llm_jobs > MAX_LLM_JOBS)
		return cuco_errf(err, CUCO_EUSAGE, "--llm-jobs %d: must be 1 to %d", cfg->llm_jobs,
			MAX_LLM_JOBS);
	if (cfg->size[0] && !cuco_workload_size(wl, cfg->size))
		return cuco_errf(err, CUCO_EUSAGE, "--size %s: %s has no such size", cfg->size, wl->name);

	int lock;
	if (engine_lock(st, cfg, &lock, err) != CUCO_OK)
		return err->code;
	cuco_engine *e = cuco_xcalloc(1, sizeof *e);
	e->run_lock = lock;
	e->st = st;
	e->wl = wl;
	e->cfg = *cfg;
	if (e->cfg.baseline_every < 1)
		e->cfg.baseline_every = 8;
	e->strat = strat;
	e->wake[0] = e->wake[1] = -1;
	e->best_score = e->best_lo = e->best_hi = NAN;
	e->rng = cfg->seed ^ 0x7275737421ull;  /* the rounds' order, apart from the strategy's draws */
	engine_noise_start(e);
	pthread_mutexattr_t check;  /* its owner known: engine_locked */
	pthread_mutexattr_init(&check);
	pthread_mutexattr_settype(&check, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&e->lock, &check);
	pthread_mutexattr_destroy(&check);
	pthread_mutex_init(&e->strat_lock, NULL);
	cuco_cond_init(&e->cond);

	e->hw = *cuco_hardware_get();
	cuco_eval_config ec = cfg->eval;
	/* The peaks of this machine and workload, unless the configuration
	 * gives them. */
	if (ec.peak_bandwidth_gbs || ec.peak_gflops)
		e->peak = (cuco_peak){ ec.peak_bandwidth_gbs ? ec.peak_bandwidth_gbs : wl->peak_bandwidth_gbs,
			ec.peak_gflops ? ec.peak_gflops : wl->peak_gflops, "the configuration's peaks" };
	else
		cuco_hardware_peak(&e->hw, wl, &e->peak);
	ec.peak_bandwidth_gbs = e->peak.bandwidth_gbs;
	ec.peak_gflops = e->peak.gflops;
	/* Absolute: the evaluator's stages run in their own directories. */
	char abs[PATH_MAX];
	if (!ec.run_dir[0])
		cuco_strlcpy(ec.run_dir, realpath(cuco_store_dir(st), abs) ? abs : cuco_store_dir(st),
			sizeof ec.run_dir);
	if (!ec.size[0])
		cuco_strlcpy(ec.size, cfg->size, sizeof ec.size);
	if (!ec.jobs)
		ec.jobs = cfg->jobs;
	ec.slot_changed = engine_slot_changed;
	ec.slot_changed_arg = e;
	int rc = engine_setup(e, err);
	if (rc == CUCO_OK)
		rc = cuco_evaluator_new(wl, &ec, &e->ev, err);
	if (rc == CUCO_OK)
		engine_slots_init(e);
	engine_port_init(e);
	cuco_strategy_env env = { .port = &e->port, .wl = wl, .cfg = &e->cfg, .baseline_id = e->baseline_id,
		.seed_id = e->seed_id, .seed_directive = &e->seed_dir, .seed_hash = e->seed_hash,
		.lock = &e->strat_lock, .calls_off = &e->calls_off,
		.model_outage_s = &e->model_outage_s, .hw = &e->hw };
	e->model_outage_s = 300;
	if (rc == CUCO_OK)
		rc = strat->init(&env, &e->strat_state, err);
	if (rc == CUCO_OK && strat->concurrency) {
		int n = strat->concurrency(e->strat_state);
		e->llm_jobs = n < 0 ? 0 : n > MAX_LLM_JOBS ? MAX_LLM_JOBS : n;
	}
	if (rc == CUCO_OK)
		rc = engine_replay(e, err);
	if (rc == CUCO_OK) {
		engine_refresh_best(e);
		if (cfg->minutes > 0)
			e->deadline = cuco_mono() + cfg->minutes * 60;
		e->model_ok_at = cuco_mono();
		if (pthread_create(&e->driver, NULL, driver_main, e) != 0)
			rc = cuco_errf(err, CUCO_EENV, "engine: cannot start a thread");
	}
	if (rc != CUCO_OK) {
		engine_free(e);
		return rc;
	}
	engine_wake(e);
	*out = e;
	return CUCO_OK;
}

int cuco_engine_wake_fd(const cuco_engine *e)
{
	return e->wake[0];
}

void cuco_engine_request_stop(cuco_engine *e)
{
	pthread_mutex_lock(&e->lock);
	engine_calls_off(e);  /* a model call in flight gives up now */
	e->stop = true;
	e->interrupted = true;
	if (!e->end_reason)
		e->end_reason = "stopped";
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

void cuco_engine_set_progress(cuco_engine *e, FILE *progress)
{
	pthread_mutex_lock(&e->lock);  /* every progress line is written under it */
	e->cfg.progress = progress;
	pthread_mutex_unlock(&e->lock);
}

bool cuco_engine_interrupted(cuco_engine *e)
{
	pthread_mutex_lock(&e->lock);
	bool yes = e->interrupted;
	pthread_mutex_unlock(&e->lock);
	return yes;
}

bool cuco_engine_done(const cuco_engine *e)
{
	return atomic_load(&e->done);
}

int cuco_engine_join(cuco_engine *e, cuco_err *err)
{
	pthread_join(e->driver, NULL);
	int rc = e->rc;
	if (rc != CUCO_OK && err)
		*err = e->err;
	engine_free(e);
	return rc;
}
