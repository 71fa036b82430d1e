/* engine.c — the search engine: one driver thread and a pool of workers.
 *
 * The driver measures the baseline and the seed, starts `jobs` workers,
 * applies the store's command queue every POLL_S while they run, and at
 * the end re-times the best few and writes run-end. A worker takes the
 * next job — a due baseline measurement, a stored candidate (a person's
 * edit, or one a killed session left unfinished), or a new proposal from
 * the strategy — evaluates it and records the result.
 *
 * Locks: `lock` guards the engine's state below it and the progress
 * stream; `strat_lock` serialises calls into the strategy. Neither is
 * held during an evaluation, and `lock` is never held while taking
 * `strat_lock`. Store writes are serialised by LMDB itself.
 *
 * The baseline and the seed have one row each per run directory; every
 * measurement of them updates their row (and leaves an event), so the row
 * always holds this session's latest figures and every speedup is a ratio
 * of two medians measured in the same session.
 */
#include "agents/agents.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 16
#define POLL_S 0.2          /* command queue polling while workers run */
#define ENV_FAILS_MAX 3     /* environment failures in a row that end the run */
#define MODEL_FAILS_MAX 5   /* model calls in a row that gave up, ending the run */
#define MAX_COMMANDS 64     /* applied per poll; the rest wait for the next */

/* The strategies `--strategy` can name. */
static const cuco_strategy *const strategies[] = {
	&cuco_strategy_tune,
	&cuco_strategy_evolve,
	&cuco_strategy_beam,
	NULL,
};

typedef enum job_kind { JOB_BASELINE, JOB_STORED, JOB_PROPOSE } job_kind;

typedef struct job {
	job_kind kind;
	uint64_t id;  /* JOB_STORED */
} job;

struct cuco_engine {
	cuco_store *st;
	const cuco_workload *wl;
	cuco_engine_config cfg;
	const cuco_strategy *strat;
	void *strat_state;
	pthread_mutex_t strat_lock;
	cuco_evaluator *ev;
	char *baseline_src, *seed_src;
	size_t baseline_len, seed_len;
	char seed_hash[CUCO_HASH_LEN + 1];
	cuco_directive seed_dir;
	cuco_hardware hw;       /* this machine, as this session found it */
	uint64_t baseline_id, seed_id;
	int wake[2];
	pthread_t driver;
	pthread_t workers[MAX_JOBS];
	int nworkers;
	atomic_bool done;
	atomic_bool stop_calls;  /* a person asked to stop: model calls give up */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool paused, stop, exhausted, baseline_due, baseline_busy;
	int proposed;           /* strategy candidates over the whole run */
	int benched;            /* benchmarks since the last baseline measurement */
	int env_fails;          /* environment failures in a row */
	int model_fails;        /* proposals in a row whose model call gave up */
	int active;             /* workers still running */
	double baseline_us;     /* the latest good baseline median */
	cuco_eval_result baseline_res;  /* and its whole measurement */
	uint64_t best_id;
	double best_score;
	uint64_t *backlog;         /* stored candidates to evaluate before proposing */
	size_t nbacklog, backlog_cap;
	double deadline;        /* cuco_mono() limit; 0 = none */
	const char *end_reason;
	int rc;                 /* what ended the run, with err */
	cuco_err err;
};

/* ---- small helpers ------------------------------------------------------- */

const cuco_strategy *cuco_strategy_find(const char *name)
{
	for (int i = 0; strategies[i]; i++)
		if (strcmp(strategies[i]->name, name) == 0)
			return strategies[i];
	return NULL;
}

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

static void wake(cuco_engine *e)
{
	char b = 1;
	/* A full pipe already says "something happened". */
	if (write(e->wake[1], &b, 1) < 0 && errno != EAGAIN)
		cuco_log(CUCO_LOG_WARN, "engine: wake pipe: %s", strerror(errno));
}

/* End the run with an error (the first one wins). */
static void fail_run(cuco_engine *e, const cuco_err *err)
{
	pthread_mutex_lock(&e->lock);
	if (e->rc == CUCO_OK) {
		e->rc = err->code ? err->code : CUCO_EDATA;
		e->err = *err;
		e->end_reason = "error";
	}
	e->stop = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	/* The caller prints it; the log keeps it with the run. */
	cuco_log(CUCO_LOG_INFO, "engine: the run ends: %s", err->msg);
}

static void first_line(const char *text, char *buf, size_t size)
{
	const char *p = text;
	while (*p == '\n' || *p == ' ')
		p++;
	size_t n = strcspn(p, "\n");
	if (n >= size)
		n = size - 1;
	memmove(buf, p, n);
	buf[n] = '\0';
}

/* Strategy candidates spend the budget; the baseline, the seed and a
 * person's edits do not, nor an evaluation the environment failed. */
static bool counts_for_budget(const cuco_candidate *c)
{
	return c->origin != CUCO_ORIGIN_BASELINE && c->origin != CUCO_ORIGIN_SEED &&
		c->origin != CUCO_ORIGIN_HUMAN;
}

static void event_init(cuco_event *ev, const char *kind, uint64_t cand, const char *author)
{
	memset(ev, 0, sizeof *ev);
	cuco_strlcpy(ev->kind, kind, sizeof ev->kind);
	cuco_strlcpy(ev->author, author ? author : "engine", sizeof ev->author);
	ev->candidate = cand;
}

/* ---- store transactions ------------------------------------------------- */

typedef struct event_arg {
	cuco_event ev;
} event_arg;

static int event_txn(cuco_txn *txn, void *arg)
{
	event_arg *a = arg;
	cuco_event ev = a->ev;  /* a retried txn starts from the same event */
	return cuco_event_add(txn, &ev);
}

static void engine_event(cuco_engine *e, const char *kind, uint64_t cand, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void engine_event(cuco_engine *e, const char *kind, uint64_t cand, const char *fmt, ...)
{
	event_arg a;
	cuco_err err = { 0 };
	event_init(&a.ev, kind, cand, NULL);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a.ev.text, sizeof a.ev.text, fmt, ap);
	va_end(ap);
	if (cuco_store_write(e->st, event_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: event %s: %s", kind, err.msg);
	wake(e);
}

typedef struct cand_arg {
	cuco_candidate c;
} cand_arg;

static int cand_get_txn(cuco_txn *txn, void *arg)
{
	cand_arg *a = arg;
	return cuco_cand_get(txn, a->c.id, &a->c);
}

static int get_candidate(cuco_engine *e, uint64_t id, cuco_candidate *out, cuco_err *err)
{
	cand_arg a = { .c.id = id };
	int rc = cuco_store_read(e->st, cand_get_txn, &a, err);
	if (rc == CUCO_OK)
		*out = a.c;
	return rc;
}

typedef struct status_arg {
	uint64_t id;
	cuco_status status;
} status_arg;

static int status_txn(cuco_txn *txn, void *arg)
{
	status_arg *a = arg;
	cuco_candidate c;
	int rc = cuco_cand_get(txn, a->id, &c);
	if (rc != CUCO_OK || c.status == CUCO_STATUS_REJECTED)
		return rc;
	c.status = a->status;
	return cuco_cand_put(txn, &c);
}

static void set_status(cuco_engine *e, uint64_t id, cuco_status status)
{
	status_arg a = { id, status };
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, status_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: #%llu status: %s", (unsigned long long)id, err.msg);
	wake(e);
}

/* ---- recording results ------------------------------------------------------ */

typedef struct record_arg {
	uint64_t id;
	const cuco_eval_result *res;
	double baseline_us;        /* NAN: this is the baseline itself */
	const char *kind;          /* event kind: status, baseline, rebench */
	cuco_candidate out;        /* the candidate as written */
} record_arg;

static void fill_result(cuco_candidate *c, const cuco_eval_result *r, double baseline_us)
{
	c->failed_stage[0] = c->error_class[0] = c->error_excerpt[0] = '\0';
	if (!r->ok) {
		if (c->status != CUCO_STATUS_REJECTED)
			c->status = CUCO_STATUS_FAILED;
		cuco_strlcpy(c->failed_stage, r->failed_stage, sizeof c->failed_stage);
		cuco_strlcpy(c->error_class, r->error_class, sizeof c->error_class);
		cuco_strlcpy(c->error_excerpt, r->excerpt, sizeof c->error_excerpt);
		c->score = c->speedup = NAN;
		return;
	}
	if (c->status != CUCO_STATUS_REJECTED)
		c->status = CUCO_STATUS_DONE;
	c->latency_min_us = r->latency_min_us;
	c->latency_median_us = r->latency_median_us;
	c->latency_p90_us = r->latency_p90_us;
	c->samples = r->samples;
	c->spread = r->spread;
	c->nphases = r->nphases < CUCO_MAX_PHASES ? r->nphases : CUCO_MAX_PHASES;
	memcpy(c->phases, r->phases, sizeof c->phases);
	c->max_error = r->max_error;
	c->peak_fraction = r->peak_fraction;
	double base = isnan(baseline_us) ? r->latency_median_us : baseline_us;
	c->speedup = r->latency_median_us > 0 ? base / r->latency_median_us : NAN;
	c->score = c->speedup;
}

static void result_text(const cuco_candidate *c, char *buf, size_t size)
{
	if (c->error_class[0]) {
		char line[160];
		first_line(c->error_excerpt, line, sizeof line);
		snprintf(buf, size, "%s at %s: %s%s%s", cuco_status_name(c->status), c->failed_stage,
			c->error_class, line[0] ? ": " : "", line);
		return;
	}
	snprintf(buf, size, "%s %.1f us (spread %.1f%%, %d samples) %.3fx",
		cuco_status_name(c->status), c->latency_median_us, 100 * c->spread, c->samples,
		c->speedup);
}

static int record_txn(cuco_txn *txn, void *arg)
{
	record_arg *a = arg;
	cuco_candidate c;
	int rc = cuco_cand_get(txn, a->id, &c);
	if (rc != CUCO_OK)
		return rc;
	fill_result(&c, a->res, a->baseline_us);
	if ((rc = cuco_cand_put(txn, &c)) != CUCO_OK)
		return rc;
	cuco_event ev;
	event_init(&ev, a->kind, c.id, NULL);
	result_text(&c, ev.text, sizeof ev.text);
	a->out = c;
	return cuco_event_add(txn, &ev);
}

static int record(cuco_engine *e, uint64_t id, const cuco_eval_result *res, double baseline_us,
	const char *kind, cuco_candidate *out)
{
	record_arg a = { .id = id, .res = res, .baseline_us = baseline_us, .kind = kind };
	cuco_err err = { 0 };
	int rc = cuco_store_write(e->st, record_txn, &a, &err);
	if (rc != CUCO_OK) {
		fail_run(e, &err);
		return rc;
	}
	wake(e);
	*out = a.out;
	return CUCO_OK;
}

/* One progress line per evaluated candidate, to the progress stream and
 * the run's log; call with e->lock held. */
static void progress(cuco_engine *e, const cuco_candidate *c, const char *what)
{
	char dir[160], result[256], line[600];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	if (c->status == CUCO_STATUS_DONE || (c->status == CUCO_STATUS_REJECTED && c->samples > 0))
		snprintf(result, sizeof result, "%9.1f us  %6.3fx", c->latency_median_us, c->speedup);
	else
		result_text(c, result, sizeof result);
	char best[64] = "-";
	if (e->best_id)
		snprintf(best, sizeof best, "%.3fx #%llu", e->best_score, (unsigned long long)e->best_id);
	snprintf(line, sizeof line, "#%-4llu %-8s %-34s %s  | best %s%s%s",
		(unsigned long long)c->id, cuco_origin_name(c->origin), dir, result, best,
		what ? "  " : "", what ? what : "");
	cuco_log(CUCO_LOG_INFO, "engine: %s", line);
	if (e->cfg.progress) {
		fprintf(e->cfg.progress, "%s\n", line);
		fflush(e->cfg.progress);
	}
}

/* ---- evaluation ------------------------------------------------------------ */

/* Evaluate with the evaluator; an error of the evaluator itself ends the run. */
static int evaluate(cuco_engine *e, const char *src, size_t len, const cuco_directive *d,
	cuco_eval_result *res)
{
	cuco_err err = { 0 };
	memset(res, 0, sizeof *res);
	int rc = cuco_eval_candidate(e->ev, src, len, d, true, res, &err);
	if (rc != CUCO_OK)
		fail_run(e, &err);
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
enum { BASE_FIRST = 1, BASE_QUIET = 2 };  /* measure_baseline's flags */

static int measure_baseline(cuco_engine *e, unsigned flags)
{
	bool first = flags & BASE_FIRST;
	cuco_eval_result res;
	cuco_candidate c;
	cuco_err err = { 0 };
	if (get_candidate(e, e->baseline_id, &c, &err) != CUCO_OK) {
		fail_run(e, &err);
		return err.code;
	}
	cuco_directive d = c.directive;
	if (first)
		set_status(e, e->baseline_id, CUCO_STATUS_BENCHMARKING);
	if (evaluate(e, e->baseline_src, e->baseline_len, &d, &res) != CUCO_OK)
		return CUCO_EENV;
	char line[200];
	first_line(res.excerpt, line, sizeof line);
	if (!res.ok && !first) {
		baseline_glitch(e, &res, line);
		return CUCO_OK;
	}
	if (record(e, e->baseline_id, &res, NAN, "baseline", &c) != CUCO_OK)
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
	if (!(flags & BASE_QUIET))
		progress(e, &c, "baseline");
	pthread_mutex_unlock(&e->lock);
	if (res.ok)
		return CUCO_OK;
	cuco_errf(&err, res.environment ? CUCO_EENV : CUCO_EDATA, "%s: baseline %s at %s: %s",
		e->wl->name, res.environment ? "cannot run here" : "failed", res.failed_stage,
		line[0] ? line : res.error_class);
	fail_run(e, &err);
	return err.code;
}

static void observe(cuco_engine *e, const cuco_candidate *c)
{
	pthread_mutex_lock(&e->strat_lock);
	e->strat->observe(e->strat_state, c);
	pthread_mutex_unlock(&e->strat_lock);
}

typedef struct best_arg {
	cuco_candidate c;
} best_arg;

static int best_txn(cuco_txn *txn, void *arg)
{
	best_arg *a = arg;
	cuco_island isl;
	if (a->c.island >= 0 && cuco_island_get(txn, a->c.island, &isl) == CUCO_OK) {
		isl.champion = a->c.id;
		isl.best_score = a->c.score;
		isl.best_speedup = a->c.speedup;
		isl.last_improvement = cuco_now();
		int rc = cuco_island_put(txn, &isl);
		if (rc != CUCO_OK)
			return rc;
	}
	cuco_event ev;
	event_init(&ev, "best", a->c.id, NULL);
	/* The baseline it was measured against: its speedup's numerator. */
	snprintf(ev.text, sizeof ev.text, "new best #%llu: %.3fx the baseline (%.1f us vs %.1f us)",
		(unsigned long long)a->c.id, a->c.speedup, a->c.latency_median_us,
		a->c.speedup * a->c.latency_median_us);
	return cuco_event_add(txn, &ev);
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

static void announce_best(cuco_engine *e, const cuco_candidate *c)
{
	best_arg a = { .c = *c };
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, best_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: best #%llu: %s", (unsigned long long)c->id, err.msg);
	wake(e);
}

/* Claim the next baseline measurement for this thread (under e->lock);
 * false when another thread is measuring it already. */
static bool claim_baseline(cuco_engine *e)
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
static void evaluate_stored(cuco_engine *e, uint64_t id)
{
	cuco_candidate c;
	cuco_err err = { 0 };
	if (get_candidate(e, id, &c, &err) != CUCO_OK) {
		fail_run(e, &err);
		return;
	}
	char *src = NULL;
	size_t src_len = 0;
	if (cuco_source_read(e->st, c.source_hash, &src, &src_len, &err) != CUCO_OK) {
		fail_run(e, &err);
		return;
	}
	set_status(e, id, CUCO_STATUS_COMPILING);
	cuco_eval_result res, again;
	if (evaluate(e, src, src_len, &c.directive, &res) != CUCO_OK)
		goto out;

	pthread_mutex_lock(&e->lock);
	double base = e->baseline_us;
	bool contender = res.ok && (!e->best_id || base / res.latency_median_us > e->best_score);
	pthread_mutex_unlock(&e->lock);
	if (contender) {
		set_status(e, id, CUCO_STATUS_BENCHMARKING);
		pthread_mutex_lock(&e->lock);
		/* Unless nothing was benchmarked since the baseline was. */
		bool paired = e->benched > 0 && claim_baseline(e);
		pthread_mutex_unlock(&e->lock);
		if (paired && measure_baseline(e, 0) != CUCO_OK)
			goto out;
		if (evaluate(e, src, src_len, &c.directive, &again) != CUCO_OK)
			goto out;
		if (!again.ok || again.latency_median_us > res.latency_median_us)
			res = again;
		pthread_mutex_lock(&e->lock);
		base = e->baseline_us;
		pthread_mutex_unlock(&e->lock);
	}
	if (record(e, id, &res, base, "status", &c) != CUCO_OK)
		goto out;
	observe(e, &c);

	pthread_mutex_lock(&e->lock);
	bool best = take_best(e, &c);
	if (res.ok && c.origin != CUCO_ORIGIN_BASELINE && ++e->benched >= e->cfg.baseline_every
			&& !e->baseline_busy)
		e->baseline_due = true;
	if (res.environment && ++e->env_fails >= ENV_FAILS_MAX && e->rc == CUCO_OK) {
		char line[200];
		first_line(c.error_excerpt[0] ? c.error_excerpt : c.error_class, line, sizeof line);
		cuco_errf(&e->err, CUCO_EENV, "%s: %d evaluations in a row failed for the environment: %s",
			e->wl->name, e->env_fails, line);
		e->rc = CUCO_EENV;
		e->end_reason = "error";
		e->stop = true;
	} else if (!res.environment) {
		e->env_fails = 0;
	}
	/* Not the candidate's fault: its budget slot goes back. */
	if (res.environment && counts_for_budget(&c))
		e->proposed--;
	progress(e, &c, best ? "new best" : NULL);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (best)
		announce_best(e, &c);
out:
	free(src);
}

/* ---- proposals --------------------------------------------------------------- */

typedef struct insert_arg {
	cuco_candidate c;       /* in: the proposal; out: as stored */
	const char *source;     /* NULL: c.source_hash names it */
	size_t len;
	const char *event;      /* kind of the event to add */
	const char *author;
	char text[512];
} insert_arg;

static int insert_txn(cuco_txn *txn, void *arg)
{
	insert_arg *a = arg;
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
	event_init(&ev, a->event, c.id, a->author);
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
		fail_run(e, &end);
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
			fail_run(e, &err);
		return;
	}
	pthread_mutex_lock(&e->lock);
	e->model_fails = 0;
	pthread_mutex_unlock(&e->lock);
	insert_arg a = { .c = p.cand, .source = p.source, .len = p.len, .event = "candidate" };
	rc = cuco_store_write(e->st, insert_txn, &a, &err);
	free(p.source);
	if (rc != CUCO_OK) {
		fail_run(e, &err);
		return;
	}
	wake(e);
	evaluate_stored(e, a.c.id);
}

/* ---- workers ------------------------------------------------------------------ */

static bool stopping(cuco_engine *e)
{
	pthread_mutex_lock(&e->lock);
	bool stop = e->stop;
	pthread_mutex_unlock(&e->lock);
	return stop;
}

/* Wait on e->cond (holding e->lock) for at most `seconds`. */
static void wait_s(cuco_engine *e, double seconds)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long ns = ts.tv_nsec + (long)(seconds * 1e9);
	ts.tv_sec += ns / 1000000000L;
	ts.tv_nsec = ns % 1000000000L;
	pthread_cond_timedwait(&e->cond, &e->lock, &ts);
}

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
			wait_s(e, POLL_S);
			continue;
		}
		if (e->baseline_due && claim_baseline(e)) {
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
		measure_baseline(e, 0);
		break;
	case JOB_STORED:
		evaluate_stored(e, j->id);
		break;
	case JOB_PROPOSE:
		propose_and_evaluate(e);
		break;
	}
}

static void *worker_main(void *arg)
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

/* ---- commands --------------------------------------------------------------- */

typedef struct pending_arg {
	cuco_command cmds[MAX_COMMANDS];
	int n;
} pending_arg;

#define PENDING_FULL (-1)  /* stops the walk; not an error code */

static int pending_one(const cuco_command *cmd, void *arg)
{
	pending_arg *a = arg;
	a->cmds[a->n++] = *cmd;
	return a->n == MAX_COMMANDS ? PENDING_FULL : 0;
}

static int pending_txn(cuco_txn *txn, void *arg)
{
	pending_arg *a = arg;
	a->n = 0;
	int rc = cuco_command_each_pending(txn, pending_one, a);
	return rc == PENDING_FULL ? CUCO_OK : rc;
}

typedef struct apply_arg {
	cuco_engine *e;
	const cuco_command *cmd;
	bool paused, stop;          /* state after the command */
	bool applied;               /* changed a candidate or the state */
	cuco_candidate c;           /* the candidate it touched or created */
	char result[256];
} apply_arg;

static int apply_mark(cuco_txn *txn, apply_arg *a)
{
	const cuco_command *cmd = a->cmd;
	int rc = cuco_cand_get(txn, cmd->candidate, &a->c);
	if (rc == CUCO_ENOTFOUND) {
		snprintf(a->result, sizeof a->result, "refused: no candidate #%llu",
			(unsigned long long)cmd->candidate);
		return CUCO_OK;
	}
	if (rc != CUCO_OK)
		return rc;
	switch (cmd->kind) {
	case CUCO_CMD_PIN:
	case CUCO_CMD_UNPIN:
		a->c.pinned = cmd->kind == CUCO_CMD_PIN;
		snprintf(a->result, sizeof a->result, "%s #%llu", a->c.pinned ? "pinned" : "unpinned",
			(unsigned long long)a->c.id);
		break;
	case CUCO_CMD_REJECT:
		if (a->c.origin == CUCO_ORIGIN_BASELINE) {
			snprintf(a->result, sizeof a->result,
				"refused: #%llu is the baseline, the reference of every speedup",
				(unsigned long long)a->c.id);
			return CUCO_OK;
		}
		a->c.status = CUCO_STATUS_REJECTED;
		cuco_strlcpy(a->c.reject_reason, cmd->text, sizeof a->c.reject_reason);
		snprintf(a->result, sizeof a->result, "rejected #%llu; never a parent again",
			(unsigned long long)a->c.id);
		break;
	default:
		return cuco_txn_fail(txn, CUCO_EDATA, "command %llu: not a mark",
			(unsigned long long)cmd->seq);
	}
	a->applied = true;
	return cuco_cand_put(txn, &a->c);
}

static int apply_edit(cuco_txn *txn, apply_arg *a)
{
	const cuco_command *cmd = a->cmd;
	cuco_candidate parent;
	int rc = cuco_cand_get(txn, cmd->candidate, &parent);
	if (rc == CUCO_ENOTFOUND) {
		snprintf(a->result, sizeof a->result, "refused: no candidate #%llu",
			(unsigned long long)cmd->candidate);
		return CUCO_OK;
	}
	char *text = NULL;
	size_t len = 0;
	if (rc == CUCO_OK && (rc = cuco_source_get(txn, cmd->source_hash, &text, &len)) == CUCO_ENOTFOUND) {
		snprintf(a->result, sizeof a->result, "refused: no stored source %s", cmd->source_hash);
		return CUCO_OK;
	}
	free(text);
	if (rc != CUCO_OK)
		return rc;
	insert_arg ins = { .event = "edit", .author = cmd->author };
	ins.c.origin = CUCO_ORIGIN_HUMAN;
	ins.c.nparents = 1;
	ins.c.parents[0] = parent.id;
	ins.c.island = parent.island >= 0 ? parent.island : 0;
	ins.c.directive = parent.directive;
	cuco_strlcpy(ins.c.source_hash, cmd->source_hash, sizeof ins.c.source_hash);
	snprintf(ins.c.note, sizeof ins.c.note, "edited by %s", cmd->author);
	cuco_strlcpy(ins.text, cmd->text, sizeof ins.text);
	if ((rc = insert_txn(txn, &ins)) != CUCO_OK)
		return rc;
	a->c = ins.c;
	a->applied = true;
	snprintf(a->result, sizeof a->result, "queued #%llu, an edit of #%llu",
		(unsigned long long)a->c.id, (unsigned long long)parent.id);
	return CUCO_OK;
}

static int apply_txn(cuco_txn *txn, void *arg)
{
	apply_arg *a = arg;
	const cuco_command *cmd = a->cmd;
	int rc = CUCO_OK;
	a->applied = false;
	a->result[0] = '\0';
	memset(&a->c, 0, sizeof a->c);
	switch (cmd->kind) {
	case CUCO_CMD_PIN:
	case CUCO_CMD_UNPIN:
	case CUCO_CMD_REJECT:
		rc = apply_mark(txn, a);
		break;
	case CUCO_CMD_EDIT:
		rc = apply_edit(txn, a);
		break;
	case CUCO_CMD_PAUSE:
	case CUCO_CMD_RESUME: {
		bool want = cmd->kind == CUCO_CMD_PAUSE;
		a->applied = a->paused != want;
		snprintf(a->result, sizeof a->result, "%s%s", a->applied ? "" : "already ",
			want ? "paused: evaluations in flight finish, none start" : "resumed");
		a->paused = want;
		break;
	}
	case CUCO_CMD_STOP:
		a->stop = a->applied = true;
		cuco_strlcpy(a->result, "stopping after the evaluations in flight", sizeof a->result);
		break;
	case CUCO_CMD_HINT:
		a->applied = a->e->strat->hint != NULL;
		if (a->applied && cmd->island < 0)
			cuco_strlcpy(a->result, "kept for every island's next prompts", sizeof a->result);
		else if (a->applied)
			snprintf(a->result, sizeof a->result, "kept for island %d's next prompts", cmd->island);
		else
			snprintf(a->result, sizeof a->result, "noted; strategy %s writes no prompts",
				a->e->strat->name);
		break;
	default:
		snprintf(a->result, sizeof a->result, "refused: unknown command kind %d", (int)cmd->kind);
	}
	if (rc != CUCO_OK)
		return rc;
	if ((rc = cuco_command_ack(txn, cmd->seq, a->result)) != CUCO_OK)
		return rc;
	cuco_event ev;
	event_init(&ev, cuco_command_name(cmd->kind), a->c.id ? a->c.id : cmd->candidate, cmd->author);
	if (cmd->kind == CUCO_CMD_HINT || (cmd->kind == CUCO_CMD_REJECT && cmd->text[0]))
		snprintf(ev.text, sizeof ev.text, "%.200s: %.300s", a->result, cmd->text);
	else
		cuco_strlcpy(ev.text, a->result, sizeof ev.text);
	return cuco_event_add(txn, &ev);
}

typedef struct best_find_arg {
	cuco_summary s;
	bool found;
} best_find_arg;

static int best_find_txn(cuco_txn *txn, void *arg)
{
	best_find_arg *a = arg;
	int rc = cuco_best(txn, &a->s);
	a->found = rc == CUCO_OK;
	return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
}

/* After a reject the best may have to step down to the next one. */
static void refresh_best(cuco_engine *e)
{
	best_find_arg a = { 0 };
	cuco_err err = { 0 };
	if (cuco_store_read(e->st, best_find_txn, &a, &err) != CUCO_OK)
		return;
	pthread_mutex_lock(&e->lock);
	e->best_id = a.found ? a.s.id : 0;
	e->best_score = a.found ? a.s.score : NAN;
	pthread_mutex_unlock(&e->lock);
}

static void apply_command(cuco_engine *e, const cuco_command *cmd)
{
	apply_arg a = { .e = e, .cmd = cmd };
	cuco_err err = { 0 };
	pthread_mutex_lock(&e->lock);
	a.paused = e->paused;
	pthread_mutex_unlock(&e->lock);
	if (cuco_store_write(e->st, apply_txn, &a, &err) != CUCO_OK) {
		cuco_log(CUCO_LOG_WARN, "engine: command %llu: %s", (unsigned long long)cmd->seq, err.msg);
		return;
	}
	wake(e);
	cuco_log(CUCO_LOG_INFO, "engine: %s by %s: %s", cuco_command_name(cmd->kind), cmd->author,
		a.result);
	pthread_mutex_lock(&e->lock);
	if (e->cfg.progress) {
		fprintf(e->cfg.progress, "%s by %s: %s\n", cuco_command_name(cmd->kind), cmd->author,
			a.result);
		fflush(e->cfg.progress);
	}
	pthread_mutex_unlock(&e->lock);
	if (!a.applied)
		return;
	if (cmd->kind == CUCO_CMD_REJECT) {
		observe(e, &a.c);
		refresh_best(e);
	}
	if (cmd->kind == CUCO_CMD_HINT) {
		pthread_mutex_lock(&e->strat_lock);
		e->strat->hint(e->strat_state, cmd->island, cmd->text);
		pthread_mutex_unlock(&e->strat_lock);
	}
	pthread_mutex_lock(&e->lock);
	e->paused = a.paused;
	if (a.stop) {
		e->stop = true;
		if (!e->end_reason)
			e->end_reason = "stopped";
	}
	if (cmd->kind == CUCO_CMD_EDIT) {
		if (e->nbacklog == e->backlog_cap) {
			e->backlog_cap = e->backlog_cap ? 2 * e->backlog_cap : 8;
			e->backlog = cuco_xrealloc(e->backlog, e->backlog_cap * sizeof *e->backlog);
		}
		e->backlog[e->nbacklog++] = a.c.id;
	}
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void poll_commands(cuco_engine *e)
{
	pending_arg *a = cuco_xmalloc(sizeof *a);
	cuco_err err = { 0 };
	if (cuco_store_read(e->st, pending_txn, a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: command queue: %s", err.msg);
	else
		for (int i = 0; i < a->n; i++)
			apply_command(e, &a->cmds[i]);
	free(a);
}

/* ---- the driver ------------------------------------------------------------------ */

#define REBENCH_MAX 64
#define RETIME_ROUNDS 5  /* paired (baseline, candidate) rounds per re-timing */

typedef struct top_arg {
	const uint64_t *skip;   /* already re-timed in this pass */
	int nskip;
	cuco_summary best;      /* out: the best other one; id 0 when none */
} top_arg;

static int top_txn(cuco_txn *txn, void *arg)
{
	top_arg *a = arg;
	cuco_summary *sums = NULL;
	size_t n = 0;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	memset(&a->best, 0, sizeof a->best);
	for (size_t i = 0; i < n; i++) {
		const cuco_summary *s = &sums[i];
		bool skip = s->status != CUCO_STATUS_DONE || s->origin == CUCO_ORIGIN_BASELINE ||
			isnan(s->score) || (a->best.id && s->score <= a->best.score);
		for (int k = 0; k < a->nskip && !skip; k++)
			skip = a->skip[k] == s->id;
		if (!skip)
			a->best = *s;
	}
	free(sums);
	return CUCO_OK;
}

/* The round whose ratio baseline/candidate is the median (the lower
 * middle one of an even count). */
static int median_round(const cuco_eval_result *base, const cuco_eval_result *cand, int n)
{
	int order[RETIME_ROUNDS];
	double ratio[RETIME_ROUNDS];
	for (int i = 0; i < n; i++) {
		ratio[i] = base[i].latency_median_us / cand[i].latency_median_us;
		int k = i;
		for (; k > 0 && ratio[order[k - 1]] > ratio[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	return order[(n - 1) / 2];
}

/* A baseline and a candidate measurement taken side by side. */
typedef struct pair {
	cuco_eval_result base, cand;
	bool have;
} pair;

/* Write a pair to the baseline row and the candidate's row, the baseline
 * first; false when the run must end. */
static bool record_pair(cuco_engine *e, uint64_t id, const pair *p, cuco_candidate *c)
{
	cuco_candidate b;
	if (record(e, e->baseline_id, &p->base, NAN, "baseline", &b) != CUCO_OK ||
			record(e, id, &p->cand, p->base.latency_median_us, "rebench", c) != CUCO_OK)
		return false;
	pthread_mutex_lock(&e->lock);
	e->baseline_us = p->base.latency_median_us;
	e->baseline_res = p->base;
	pthread_mutex_unlock(&e->lock);
	return true;
}

/* Re-time a candidate in `rounds` (at most RETIME_ROUNDS) rounds of
 * (baseline, candidate) — the first round's baseline is the latest
 * measurement when *fresh — and keep the round with the median ratio: both
 * rows get that round's figures, so a load spike during one round moves
 * neither. A candidate that fails now is recorded failed. False when the
 * run must end. */
static bool paired_retime(cuco_engine *e, uint64_t id, int rounds, bool *fresh, pair *out)
{
	cuco_candidate c;
	cuco_err err = { 0 };
	if (get_candidate(e, id, &c, &err) != CUCO_OK)
		return true;
	char *src = NULL;
	size_t src_len = 0;
	if (cuco_source_read(e->st, c.source_hash, &src, &src_len, &err) != CUCO_OK)
		return true;
	cuco_eval_result base[RETIME_ROUNDS], cand[RETIME_ROUNDS];
	double was = c.speedup;
	bool ok = true, failed = false;
	int n = 0;
	while (n < rounds && !failed) {
		if (!*fresh && measure_baseline(e, BASE_QUIET) != CUCO_OK) {
			ok = false;
			break;
		}
		*fresh = false;
		pthread_mutex_lock(&e->lock);
		base[n] = e->baseline_res;
		pthread_mutex_unlock(&e->lock);
		if (evaluate(e, src, src_len, &c.directive, &cand[n]) != CUCO_OK) {
			ok = false;
			break;
		}
		failed = !cand[n].ok;
		n += !failed;
	}
	free(src);
	const char *what = "re-timed";
	if (failed) {
		if (record(e, id, &cand[n], NAN, "rebench", &c) != CUCO_OK)
			return false;
		what = "failed when re-timed";
	} else if (n > 0) {
		int m = median_round(base, cand, n);
		*out = (pair){ .base = base[m], .cand = cand[m], .have = true };
		if (!record_pair(e, id, out, &c))
			return false;
	} else {
		return ok;
	}
	char line[128];
	if (failed)
		snprintf(line, sizeof line, "%s (was %.3fx)", what, was);
	else
		snprintf(line, sizeof line, "%s against %.1f us (was %.3fx; %d paired round%s)",
			what, c.speedup * c.latency_median_us, was, n, n == 1 ? "" : "s, the median kept");
	pthread_mutex_lock(&e->lock);
	progress(e, &c, line);
	pthread_mutex_unlock(&e->lock);
	return ok;
}

/* The best by stored score (under no lock); 0 when none. */
static uint64_t current_best(cuco_engine *e, cuco_candidate *out)
{
	cuco_err err = { 0 };
	refresh_best(e);
	pthread_mutex_lock(&e->lock);
	uint64_t id = e->best_id;
	pthread_mutex_unlock(&e->lock);
	return id && get_candidate(e, id, out, &err) == CUCO_OK ? id : 0;
}

/* Re-time the best few, each in rounds paired with baseline measurements
 * (paired_retime), as the load of a shared machine drifts. Scores drift
 * too, so it goes on past the first N, one round each, until the best
 * score left belongs to a candidate re-timed here. It ends by writing the best's pair again,
 * so the baseline row and the best row, which `cuco report` divides, hold
 * measurements taken side by side. */
static void rebench_top(cuco_engine *e)
{
	int want = e->cfg.rebench_top < REBENCH_MAX ? e->cfg.rebench_top : REBENCH_MAX;
	uint64_t done[REBENCH_MAX], last = 0;
	pair *pairs = cuco_xcalloc(REBENCH_MAX, sizeof *pairs);
	double top = -INFINITY;
	cuco_err err = { 0 };
	cuco_candidate c;
	int n = 0;
	pthread_mutex_lock(&e->lock);
	bool fresh = e->benched == 0;  /* the baseline was measured after the last benchmark */
	uint64_t before = e->best_id;
	pthread_mutex_unlock(&e->lock);

	while (n < REBENCH_MAX && !stopping(e)) {  /* the pass over the top */
		top_arg a = { .skip = done, .nskip = n };
		if (want <= 0 || cuco_store_read(e->st, top_txn, &a, &err) != CUCO_OK || !a.best.id ||
				(n >= want && a.best.score <= top))
			break;
		int rounds = n < want ? RETIME_ROUNDS : 1;
		if (!paired_retime(e, a.best.id, rounds, &fresh, &pairs[n]))
			goto out;
		/* One round may only bring a score down: one that would lead
		 * gets the full rounds, like the first N. */
		if (rounds < RETIME_ROUNDS && get_candidate(e, a.best.id, &c, &err) == CUCO_OK &&
				c.score > top && !paired_retime(e, a.best.id, RETIME_ROUNDS, &fresh, &pairs[n]))
			goto out;
		done[n++] = last = a.best.id;
		if (get_candidate(e, last, &c, &err) == CUCO_OK && c.score > top)
			top = c.score;
	}
	uint64_t best_id = current_best(e, &c);
	for (int i = 0; i < n; i++)  /* end on the best's pair */
		if (done[i] == best_id && best_id != last && pairs[i].have &&
				!record_pair(e, best_id, &pairs[i], &c))
			goto out;
	if (best_id && (best_id != before || c.origin != CUCO_ORIGIN_BASELINE))
		announce_best(e, &c);
out:
	free(pairs);
}

static int measure_start(cuco_engine *e)
{
	int rc = measure_baseline(e, BASE_FIRST);
	if (rc != CUCO_OK)
		return rc;
	evaluate_stored(e, e->seed_id);
	return e->rc;
}

static void *driver_main(void *arg)
{
	cuco_engine *e = arg;
	if (measure_start(e) == CUCO_OK) {
		pthread_mutex_lock(&e->lock);
		e->active = 0;
		for (int i = 0; i < e->cfg.jobs; i++)
			if (pthread_create(&e->workers[i], NULL, worker_main, e) == 0)
				e->active = ++e->nworkers;
		while (e->active > 0) {
			pthread_mutex_unlock(&e->lock);
			poll_commands(e);
			pthread_mutex_lock(&e->lock);
			if (e->active > 0)
				wait_s(e, POLL_S);
		}
		pthread_mutex_unlock(&e->lock);
		for (int i = 0; i < e->nworkers; i++)
			pthread_join(e->workers[i], NULL);
		/* Commands queued from here on wait for the next session. */
		if (!stopping(e))
			rebench_top(e);
	}
	pthread_mutex_lock(&e->lock);
	const char *why = e->end_reason ? e->end_reason : "finished";
	char msg[sizeof e->err.msg];
	cuco_strlcpy(msg, e->rc ? e->err.msg : "", sizeof msg);
	int proposed = e->proposed;
	pthread_mutex_unlock(&e->lock);
	engine_event(e, "run-end", e->best_id, "%s after %d strategy candidates%s%s", why, proposed,
		msg[0] ? ": " : "", msg);
	atomic_store(&e->done, true);
	wake(e);
	return NULL;
}

/* ---- start ------------------------------------------------------------------------- */

/* The workload name of a stored meta value (object with "name"). */
static bool same_workload(const char *json, const char *name)
{
	cJSON *j = cJSON_Parse(json);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "name");
	bool same = cJSON_IsString(n) && strcmp(n->valuestring, name) == 0;
	cJSON_Delete(j);
	return same;
}

typedef struct setup_arg {
	cuco_engine *e;
	char *config_json;
	char *workload_json;
	char *hardware_json;
	char *resumed_from;          /* workload stored in meta, when resuming */
	char baseline_hash[CUCO_HASH_LEN + 1];
	uint64_t baseline_id, seed_id;
	int proposed;
	uint64_t *backlog;
	size_t nbacklog;
	bool resumed;
} setup_arg;

static int setup_scan(const cuco_candidate *c, void *arg)
{
	setup_arg *a = arg;
	if (c->origin == CUCO_ORIGIN_BASELINE && strcmp(c->source_hash, a->baseline_hash) == 0)
		a->baseline_id = c->id;
	else if (c->origin == CUCO_ORIGIN_SEED && strcmp(c->source_hash, a->e->seed_hash) == 0)
		a->seed_id = c->id;
	else if (counts_for_budget(c) && strcmp(c->error_class, "environment") != 0)
		a->proposed++;
	/* Left unfinished by a session that was killed: evaluate it again. */
	if (c->status < CUCO_STATUS_DONE && c->origin != CUCO_ORIGIN_BASELINE &&
			c->origin != CUCO_ORIGIN_SEED) {
		a->backlog = cuco_xrealloc(a->backlog, (a->nbacklog + 1) * sizeof *a->backlog);
		a->backlog[a->nbacklog++] = c->id;
	}
	return 0;
}

static int put_root(cuco_txn *txn, cuco_origin origin, const char *text, size_t len,
	const cuco_directive *d, int island, uint64_t parent, uint64_t *id)
{
	cuco_candidate c;
	memset(&c, 0, sizeof c);
	c.origin = origin;
	c.island = island;
	c.directive = *d;
	c.nparents = parent ? 1 : 0;
	c.parents[0] = parent;
	c.status = CUCO_STATUS_QUEUED;
	c.score = c.speedup = c.latency_median_us = c.latency_min_us = c.latency_p90_us = NAN;
	c.max_error = c.peak_fraction = NAN;
	snprintf(c.note, sizeof c.note, "the workload's %s",
		origin == CUCO_ORIGIN_BASELINE ? "host-orchestrated baseline" : "seed");
	int rc = cuco_source_put(txn, text, len, c.source_hash);
	if (rc == CUCO_OK)
		rc = cuco_cand_put(txn, &c);
	if (rc != CUCO_OK)
		return rc;
	*id = c.id;
	cuco_event ev;
	event_init(&ev, "candidate", c.id, NULL);
	snprintf(ev.text, sizeof ev.text, "%s added", cuco_origin_name(origin));
	return cuco_event_add(txn, &ev);
}

static int setup_txn(cuco_txn *txn, void *arg)
{
	setup_arg *a = arg;
	cuco_engine *e = a->e;
	free(a->backlog);
	a->backlog = NULL;
	a->nbacklog = 0;
	a->proposed = 0;
	a->baseline_id = a->seed_id = 0;
	free(a->resumed_from);
	a->resumed_from = NULL;
	int rc = cuco_meta_get(txn, "workload", &a->resumed_from);
	if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
		return rc;
	a->resumed = rc == CUCO_OK;
	if (a->resumed && !same_workload(a->resumed_from, e->wl->name))
		return cuco_txn_fail(txn, CUCO_EUSAGE, "%s: holds a run of another workload (%s), not %s",
			cuco_store_dir(e->st), a->resumed_from, e->wl->name);
	if ((rc = cuco_cand_each(txn, 1, setup_scan, a)) != CUCO_OK)
		return rc;
	if ((rc = cuco_meta_put(txn, "workload", a->workload_json)) != CUCO_OK ||
			(rc = cuco_meta_put(txn, "config", a->config_json)) != CUCO_OK)
		return rc;
	cJSON *s = cJSON_CreateString(e->strat->name);
	char *strategy = cJSON_PrintUnformatted(s);
	cJSON_Delete(s);
	rc = cuco_meta_put(txn, "strategy", strategy);
	free(strategy);
	if (rc != CUCO_OK || (rc = cuco_meta_put(txn, "hardware", a->hardware_json)) != CUCO_OK)
		return rc;
	cuco_island isl;
	if ((rc = cuco_island_get(txn, 0, &isl)) == CUCO_ENOTFOUND) {
		memset(&isl, 0, sizeof isl);
		cuco_strlcpy(isl.phase, "explore", sizeof isl.phase);
		isl.best_score = isl.best_speedup = NAN;
		rc = cuco_island_put(txn, &isl);
	}
	if (rc != CUCO_OK)
		return rc;
	cuco_directive base_dir;
	cuco_directive_default(e->wl, &base_dir);
	if (!a->baseline_id && (rc = put_root(txn, CUCO_ORIGIN_BASELINE, e->baseline_src,
			e->baseline_len, &base_dir, -1, 0, &a->baseline_id)) != CUCO_OK)
		return rc;
	if (!a->seed_id && (rc = put_root(txn, CUCO_ORIGIN_SEED, e->seed_src, e->seed_len,
			&e->seed_dir, 0, a->baseline_id, &a->seed_id)) != CUCO_OK)
		return rc;
	cuco_event ev;
	event_init(&ev, "run-start", 0, NULL);
	snprintf(ev.text, sizeof ev.text, "%s %s: strategy %s, tuner %s, budget %d, jobs %d",
		a->resumed ? "resumed" : "started", e->wl->name, e->strat->name, e->cfg.tuner,
		e->cfg.budget, e->cfg.jobs);
	return cuco_event_add(txn, &ev);
}

static char *config_json(const cuco_engine_config *cfg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "strategy", cfg->strategy);
	cJSON_AddStringToObject(o, "tuner", cfg->tuner);
	cJSON_AddNumberToObject(o, "budget", cfg->budget);
	cJSON_AddNumberToObject(o, "minutes", cfg->minutes);
	cJSON_AddStringToObject(o, "size", cfg->size);
	cJSON_AddNumberToObject(o, "seed", (double)cfg->seed);
	cJSON_AddNumberToObject(o, "jobs", cfg->jobs);
	cJSON_AddNumberToObject(o, "baseline_every", cfg->baseline_every);
	cJSON_AddNumberToObject(o, "rebench_top", cfg->rebench_top);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static char *workload_json(const cuco_workload *wl, const char *size)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", wl->name);
	cJSON_AddStringToObject(o, "dir", wl->dir);
	cJSON_AddStringToObject(o, "size", size[0] ? size : wl->default_size);
	cJSON_AddNumberToObject(o, "ranks", wl->ranks);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static int read_workload_file(const cuco_workload *wl, const char *file, char **text, size_t *len,
	cuco_err *err)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	return cuco_read_file(path, 16u << 20, text, len, err);
}

static void engine_free(cuco_engine *e)
{
	if (e->strat_state)
		e->strat->free(e->strat_state);
	cuco_evaluator_free(e->ev);
	free(e->baseline_src);
	free(e->seed_src);
	free(e->backlog);
	for (int i = 0; i < 2; i++)
		if (e->wake[i] >= 0)
			close(e->wake[i]);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->strat_lock);
	pthread_cond_destroy(&e->cond);
	free(e);
}

static int engine_setup(cuco_engine *e, cuco_err *err)
{
	int rc;
	if ((rc = read_workload_file(e->wl, e->wl->baseline_file, &e->baseline_src,
			&e->baseline_len, err)) != CUCO_OK ||
			(rc = read_workload_file(e->wl, e->wl->seed_file, &e->seed_src, &e->seed_len,
			err)) != CUCO_OK)
		return rc;
	cuco_source_hash(e->seed_src, e->seed_len, e->seed_hash);
	cuco_directive_default(e->wl, &e->seed_dir);
	if (pipe2(e->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		return cuco_errf(err, CUCO_EENV, "engine: pipe: %s", strerror(errno));

	cJSON *hw = cuco_hardware_to_json(&e->hw);
	setup_arg a = { .e = e, .config_json = config_json(&e->cfg),
		.workload_json = workload_json(e->wl, e->cfg.size),
		.hardware_json = cJSON_PrintUnformatted(hw) };
	cJSON_Delete(hw);
	cuco_source_hash(e->baseline_src, e->baseline_len, a.baseline_hash);
	rc = cuco_store_write(e->st, setup_txn, &a, err);
	free(a.config_json);
	free(a.workload_json);
	free(a.hardware_json);
	free(a.resumed_from);
	e->baseline_id = a.baseline_id;
	e->seed_id = a.seed_id;
	e->proposed = a.proposed;
	e->backlog = a.backlog;
	e->nbacklog = e->backlog_cap = a.nbacklog;
	return rc;
}

typedef struct replay_arg {
	cuco_engine *e;
} replay_arg;

static int replay_one(const cuco_candidate *c, void *arg)
{
	cuco_engine *e = ((replay_arg *)arg)->e;
	e->strat->observe(e->strat_state, c);
	return 0;
}

/* A person's hint outlives the session that took it: hints an earlier
 * session acknowledged go back into the strategy (pending ones are applied
 * by the command loop as usual). */
static int replay_hint(const cuco_command *cmd, void *arg)
{
	cuco_engine *e = ((replay_arg *)arg)->e;
	if (cmd->kind == CUCO_CMD_HINT && cmd->acked && e->strat->hint)
		e->strat->hint(e->strat_state, cmd->island, cmd->text);
	return 0;
}

static int replay_txn(cuco_txn *txn, void *arg)
{
	int rc = cuco_cand_each(txn, 1, replay_one, arg);
	return rc == CUCO_OK ? cuco_command_each(txn, replay_hint, arg) : rc;
}

int cuco_engine_start(cuco_store *st, const cuco_workload *wl, const cuco_engine_config *cfg,
	cuco_engine **out, cuco_err *err)
{
	const cuco_strategy *strat = cuco_strategy_find(cfg->strategy);
	if (!strat)
		return cuco_errf(err, CUCO_EUSAGE, "--strategy %s: unknown strategy", cfg->strategy);
	if (cfg->jobs < 1 || cfg->jobs > MAX_JOBS)
		return cuco_errf(err, CUCO_EUSAGE, "--jobs %d: must be 1 to %d", cfg->jobs, MAX_JOBS);
	if (cfg->size[0] && !cuco_workload_size(wl, cfg->size))
		return cuco_errf(err, CUCO_EUSAGE, "--size %s: %s has no such size", cfg->size, wl->name);

	cuco_engine *e = cuco_xcalloc(1, sizeof *e);
	e->st = st;
	e->wl = wl;
	e->cfg = *cfg;
	if (e->cfg.baseline_every < 1)
		e->cfg.baseline_every = 8;
	e->strat = strat;
	e->wake[0] = e->wake[1] = -1;
	e->best_score = NAN;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->strat_lock, NULL);
	pthread_cond_init(&e->cond, NULL);

	cuco_hardware_detect(&e->hw);
	cuco_eval_config ec = cfg->eval;
	/* A GPU's datasheet peaks, for the fraction of peak, unless given. */
	if (wl->family != CUCO_FAMILY_CPU_MPI && e->hw.ngpus > 0 && !ec.peak_bandwidth_gbs &&
			!ec.peak_gflops) {
		ec.peak_bandwidth_gbs = e->hw.hbm_gbs;
		ec.peak_gflops = e->hw.tensor_tflops * 1000;
	}
	/* Absolute: the evaluator's stages run in their own directories. */
	char abs[PATH_MAX];
	if (!ec.run_dir[0])
		cuco_strlcpy(ec.run_dir, realpath(cuco_store_dir(st), abs) ? abs : cuco_store_dir(st),
			sizeof ec.run_dir);
	if (!ec.size[0])
		cuco_strlcpy(ec.size, cfg->size, sizeof ec.size);
	if (!ec.jobs)
		ec.jobs = cfg->jobs;
	int rc = engine_setup(e, err);
	if (rc == CUCO_OK)
		rc = cuco_evaluator_new(wl, &ec, &e->ev, err);
	cuco_strategy_env env = { .st = st, .wl = wl, .cfg = &e->cfg, .baseline_id = e->baseline_id,
		.seed_id = e->seed_id, .seed_directive = &e->seed_dir, .seed_hash = e->seed_hash,
		.stop = &e->stop_calls };
	if (rc == CUCO_OK)
		rc = strat->init(&env, &e->strat_state, err);
	replay_arg ra = { e };
	if (rc == CUCO_OK)
		rc = cuco_store_read(st, replay_txn, &ra, err);
	if (rc == CUCO_OK) {
		refresh_best(e);
		if (cfg->minutes > 0)
			e->deadline = cuco_mono() + cfg->minutes * 60;
		if (pthread_create(&e->driver, NULL, driver_main, e) != 0)
			rc = cuco_errf(err, CUCO_EENV, "engine: cannot start a thread");
	}
	if (rc != CUCO_OK) {
		engine_free(e);
		return rc;
	}
	wake(e);
	*out = e;
	return CUCO_OK;
}

int cuco_engine_wake_fd(const cuco_engine *e)
{
	return e->wake[0];
}

void cuco_engine_request_stop(cuco_engine *e)
{
	atomic_store(&e->stop_calls, true);  /* a model call in flight gives up now */
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	if (!e->end_reason)
		e->end_reason = "stopped";
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
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
