/* engine_record.c — the engine's store transactions: events, statuses,
 * results, the best, and the progress lines. */
#include "agents/engine_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void engine_first_line(const char *text, char *buf, size_t size)
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

void engine_event_init(cuco_event *ev, const char *kind, uint64_t cand, const char *author)
{
	memset(ev, 0, sizeof *ev);
	cuco_strlcpy(ev->kind, kind, sizeof ev->kind);
	cuco_strlcpy(ev->author, author ? author : "engine", sizeof ev->author);
	ev->candidate = cand;
}

typedef struct event_arg {
	cuco_event ev;
} event_arg;

static int event_txn(cuco_txn *txn, void *arg)
{
	event_arg *a = arg;
	cuco_event ev = a->ev;  /* a retried txn starts from the same event */
	return cuco_event_add(txn, &ev);
}

void engine_event(cuco_engine *e, const char *kind, uint64_t cand, const char *fmt, ...)
{
	event_arg a;
	cuco_err err = { 0 };
	engine_event_init(&a.ev, kind, cand, NULL);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a.ev.text, sizeof a.ev.text, fmt, ap);
	va_end(ap);
	if (cuco_store_write(e->st, event_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: event %s: %s", kind, err.msg);
	engine_wake(e);
}

typedef struct cand_arg {
	cuco_candidate c;
} cand_arg;

static int cand_get_txn(cuco_txn *txn, void *arg)
{
	cand_arg *a = arg;
	return cuco_cand_get(txn, a->c.id, &a->c);
}

int engine_get(cuco_engine *e, uint64_t id, cuco_candidate *out, cuco_err *err)
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

void engine_set_status(cuco_engine *e, uint64_t id, cuco_status status)
{
	status_arg a = { id, status };
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, status_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: #%llu status: %s", (unsigned long long)id, err.msg);
	engine_wake(e);
}

/* ---- recording results ----------------------------------------------------- */

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
	if (r->slot >= 0)
		cuco_strlcpy(c->slot, r->slot_name, sizeof c->slot);
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
		engine_first_line(c->error_excerpt, line, sizeof line);
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
	engine_event_init(&ev, a->kind, c.id, NULL);
	result_text(&c, ev.text, sizeof ev.text);
	a->out = c;
	return cuco_event_add(txn, &ev);
}

int engine_record(cuco_engine *e, uint64_t id, const cuco_eval_result *res, double baseline_us,
	const char *kind, cuco_candidate *out)
{
	record_arg a = { .id = id, .res = res, .baseline_us = baseline_us, .kind = kind };
	cuco_err err = { 0 };
	int rc = cuco_store_write(e->st, record_txn, &a, &err);
	if (rc != CUCO_OK) {
		engine_fail(e, &err);
		return rc;
	}
	engine_wake(e);
	*out = a.out;
	return CUCO_OK;
}

/* One progress line per evaluated candidate, to the progress stream and
 * the run's log; call with e->lock held. */
void engine_progress(cuco_engine *e, const cuco_candidate *c, const char *what)
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
	engine_event_init(&ev, "best", a->c.id, NULL);
	/* The baseline it was measured against: its speedup's numerator. */
	snprintf(ev.text, sizeof ev.text, "new best #%llu: %.3fx the baseline (%.1f us vs %.1f us)",
		(unsigned long long)a->c.id, a->c.speedup, a->c.latency_median_us,
		a->c.speedup * a->c.latency_median_us);
	return cuco_event_add(txn, &ev);
}

void engine_announce_best(cuco_engine *e, const cuco_candidate *c)
{
	best_arg a = { .c = *c };
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, best_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: best #%llu: %s", (unsigned long long)c->id, err.msg);
	engine_wake(e);
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
void engine_refresh_best(cuco_engine *e)
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
