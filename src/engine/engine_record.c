/* engine_record.c — the engine's store transactions: events, statuses,
 * results, the best, and the progress lines. */
#include "engine/engine_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RESULT_MAX 640      /* a result in words: a refusal's reason whole */

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

void engine_event_init(cuco_event *ev, cuco_event_kind kind, uint64_t cand, const char *author)
{
	memset(ev, 0, sizeof *ev);
	ev->kind = kind;
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

void engine_event(cuco_engine *e, cuco_event_kind kind, uint64_t cand, const char *fmt, ...)
{
	event_arg a;
	cuco_err err = { 0 };
	engine_event_init(&a.ev, kind, cand, NULL);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a.ev.text, sizeof a.ev.text, fmt, ap);
	va_end(ap);
	if (cuco_store_write(e->st, event_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: event %s: %s", cuco_event_kind_name(kind), err.msg);
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

/* Only a record being evaluated moves: a done one stays done while it is
 * measured again (a viewer always finds its figures), and a rejected one
 * stays rejected. */
static int status_txn(cuco_txn *txn, void *arg)
{
	status_arg *a = arg;
	cuco_candidate c;
	int rc = cuco_cand_get(txn, a->id, &c);
	if (rc != CUCO_OK || c.status == CUCO_STATUS_REJECTED || c.status == CUCO_STATUS_DONE)
		return rc;
	c.status = a->status;
	return cuco_cand_put(txn, &c);
}

void engine_set_status(cuco_engine *e, uint64_t id, cuco_status status)
{
	/* The engine moves a record only while it is evaluated; where it ends
	 * (done, failed) comes with its measurement (cuco_measure_add). */
	CUCO_ASSERT(status < CUCO_STATUS_DONE);
	status_arg a = { id, status };
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, status_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: #%llu status: %s", (unsigned long long)id, err.msg);
	engine_wake(e);
}

/* ---- recording results ----------------------------------------------------- */

typedef struct record_arg {
	uint64_t id;
	cuco_measurement m;        /* the result as a measurement */
	cuco_event_kind kind;      /* status, baseline or confirm */
	cuco_candidate out;        /* the candidate as written */
} record_arg;

void engine_measurement_of(const cuco_engine *e, uint64_t id, const cuco_eval_result *r,
	double baseline_us, const char *kind, cuco_measurement *m)
{
	cuco_measurement_init(m, id, kind);
	m->session = e->session;
	m->ok = r->ok;
	if (r->slot >= 0)
		cuco_strlcpy(m->slot, r->slot_name, sizeof m->slot);
	if (!r->ok) {
		m->failure = r->failure;
		m->timing = cuco_timing_failed(&r->timing);
		return;
	}
	m->timing = r->timing;
	m->baseline_us = isnan(baseline_us) ? r->timing.median_us : baseline_us;
	m->speedup = r->timing.median_us > 0 ? m->baseline_us / r->timing.median_us : NAN;
	m->score = m->speedup;
}

static void speedup_text(const cuco_candidate *c, char *buf, size_t size)
{
	cuco_speedup_text(c->speedup, c->speedup_lo, c->speedup_hi, c->rounds, !cuco_utf8_locale(),
		buf, size);
}

/* A failure's reason whole (a refusal names its defence), or the numbers. */
static void result_text(const cuco_candidate *c, char *buf, size_t size)
{
	if (c->failure.error_class[0]) {
		char line[RESULT_MAX - 16];
		cuco_failure_line(&c->failure, line, sizeof line);
		snprintf(buf, size, "failed at %s", line);
		return;
	}
	char sp[64];
	speedup_text(c, sp, sizeof sp);
	snprintf(buf, size, "%s %.1f us (spread %.1f%%, %d samples) %s", cuco_status_name(c->status),
		c->timing.median_us, 100 * c->timing.spread, c->timing.samples, sp);
}

/* The measurement is appended; the store's rule says which is in force
 * (a failed re-measure of the baseline, or one the environment failed,
 * leaves the earlier one). The event tells this measurement, whatever the
 * record shows. */
static int record_txn(cuco_txn *txn, void *arg)
{
	record_arg *a = arg;
	cuco_measurement m = a->m;  /* a retried txn appends it once */
	int rc = cuco_measure_add(txn, &m, &a->out);
	if (rc != CUCO_OK)
		return rc;
	cuco_candidate shown = a->out;
	bool kept = !m.ok && !shown.failure.error_class[0];  /* the earlier one stays in force */
	if (kept)
		shown.failure = m.failure;
	cuco_event ev;
	engine_event_init(&ev, a->kind, shown.id, NULL);
	result_text(&shown, ev.text, sizeof ev.text);
	if (kept)
		snprintf(ev.text + strlen(ev.text), sizeof ev.text - strlen(ev.text),
			"; the measurement of %.1f us stays in force", shown.timing.median_us);
	return cuco_event_add(txn, &ev);
}

int engine_record(cuco_engine *e, uint64_t id, const cuco_eval_result *res, double baseline_us,
	cuco_event_kind kind, cuco_candidate *out)
{
	record_arg a = { .id = id, .kind = kind };
	engine_measurement_of(e, id, res, baseline_us,
		kind == CUCO_EVENT_STATUS ? "measure" : cuco_event_kind_name(kind), &a.m);
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
	CUCO_ASSERT(engine_locked(e));  /* e->best_* and the stream's line order */
	char dir[160], result[RESULT_MAX], line[RESULT_MAX + 1024], sp[64];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	speedup_text(c, sp, sizeof sp);
	if (c->status == CUCO_STATUS_DONE || (c->status == CUCO_STATUS_REJECTED && c->timing.samples > 0))
		snprintf(result, sizeof result, "%9.1f us  %6s", c->timing.median_us, sp);
	else
		result_text(c, result, sizeof result);
	char best[96] = "-";
	if (e->best_id && e->best_id != e->baseline_id) {
		cuco_speedup_text(e->best_score, e->best_lo, e->best_hi, e->best_rounds,
			!cuco_utf8_locale(), sp, sizeof sp);
		snprintf(best, sizeof best, "%s #%llu", sp, (unsigned long long)e->best_id);
	}
	snprintf(line, sizeof line, "#%-4llu %-8s %-34s %s  | best %s%s%s",
		(unsigned long long)c->id, cuco_origin_name(c->origin), dir, result, best,
		what ? "  " : "", what ? what : "");
	cuco_log(CUCO_LOG_INFO, "engine: %s", line);
	if (e->cfg.progress) {
		fprintf(e->cfg.progress, "%s\n", line);
		fflush(e->cfg.progress);
	}
}

int engine_crown_txn(cuco_txn *txn, const cuco_candidate *c, const char *text)
{
	int rc = cuco_crown(txn, c->id);
	cuco_island isl;
	if (rc == CUCO_OK && c->island >= 0 && cuco_island_get(txn, c->island, &isl) == CUCO_OK) {
		isl.champion = c->id;
		isl.best_score = c->score;
		isl.best_speedup = c->speedup;
		isl.last_improvement = cuco_now();
		rc = cuco_island_put(txn, &isl);
	}
	if (rc != CUCO_OK)
		return rc;
	cuco_event ev;
	engine_event_init(&ev, CUCO_EVENT_BEST, c->id, NULL);
	snprintf(ev.text, sizeof ev.text, "#%llu %.480s", (unsigned long long)c->id, text);
	return cuco_event_add(txn, &ev);
}

typedef struct best_find_arg {
	cuco_candidate c;
	bool found;
} best_find_arg;

static int best_find_txn(cuco_txn *txn, void *arg)
{
	best_find_arg *a = arg;
	cuco_summary s;
	int rc = cuco_best(txn, &s);
	if (rc == CUCO_OK)
		rc = cuco_cand_get(txn, s.id, &a->c);
	a->found = rc == CUCO_OK;
	return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
}

/* After a crown, or a reject that makes the best step down. */
void engine_refresh_best(cuco_engine *e)
{
	best_find_arg a = { 0 };
	cuco_err err = { 0 };
	if (cuco_store_read(e->st, best_find_txn, &a, &err) != CUCO_OK)
		return;
	pthread_mutex_lock(&e->lock);
	e->best_id = a.found ? a.c.id : 0;
	e->best_score = a.found ? a.c.speedup : NAN;
	e->best_lo = a.found ? a.c.speedup_lo : NAN;
	e->best_hi = a.found ? a.c.speedup_hi : NAN;
	e->best_rounds = a.found ? a.c.rounds : 0;
	pthread_mutex_unlock(&e->lock);
}
