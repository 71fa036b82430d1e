/* test_engine.c — the engine end to end on the toy fixture, with the real
 * evaluator (cc builds a one-rank program whose latency is modelled from
 * its directive, so every speedup is known exactly). */
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "env.h"
#include "store/store.h"
#include "strategies/strategies.h"

#include <cjson/cJSON.h>

typedef struct run {
	char dir[256];
	cuco_store *st;
	cuco_workload *wl;
} run;

typedef struct history {
	cuco_candidate *c;
	size_t n;
	cuco_event *ev;
	size_t nev;
} history;

static void run_open(run *r)
{
	char path[1024];
	cuco_err err = { 0 };
	const char *root = getenv("CUCO_SOURCE_ROOT");
	snprintf(r->dir, sizeof r->dir, "/tmp/cuco-test-engine-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	if (cuco_store_open(r->dir, CUCO_STORE_CREATE, &r->st, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	snprintf(path, sizeof path, "%s/tests/agents/fixtures/toy", root ? root : ".");
	if (cuco_workload_load(path, &r->wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
}

static void run_close(run *r)
{
	char cmd[512];
	cuco_store_close(r->st);
	cuco_workload_free(r->wl);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
}

static cuco_engine_config config(int budget)
{
	cuco_engine_config cfg;
	cuco_engine_config_init(&cfg);
	cfg.budget = budget;
	return cfg;
}

static cuco_engine *start(run *r, const cuco_engine_config *cfg)
{
	cuco_engine *e = NULL;
	cuco_err err = { 0 };
	if (cuco_engine_start(r->st, r->wl, cuco_strategy_find(cfg->strategy), cfg, &e, &err) != CUCO_OK)
		fail_msg("start: %s", err.msg);
	return e;
}

static void session(run *r, const cuco_engine_config *cfg)
{
	cuco_err err = { 0 };
	if (cuco_engine_join(start(r, cfg), &err) != CUCO_OK)
		fail_msg("join: %s", err.msg);
}

static int grab_cand(const cuco_candidate *c, void *arg)
{
	history *h = arg;
	h->c = cuco_xrealloc(h->c, (h->n + 1) * sizeof *h->c);
	h->c[h->n++] = *c;
	return 0;
}

static int grab_event(const cuco_event *ev, void *arg)
{
	history *h = arg;
	h->ev = cuco_xrealloc(h->ev, (h->nev + 1) * sizeof *h->ev);
	h->ev[h->nev++] = *ev;
	return 0;
}

static int history_txn(cuco_txn *txn, void *arg)
{
	history *h = arg;
	int rc = cuco_cand_each(txn, 1, grab_cand, h);
	return rc ? rc : cuco_event_each(txn, 1, grab_event, h);
}

static history read_history(run *r)
{
	history h = { 0 };
	cuco_err err = { 0 };
	if (cuco_store_read(r->st, history_txn, &h, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return h;
}

static void history_free(history *h)
{
	free(h->c);
	free(h->ev);
}

static size_t count_origin(const history *h, cuco_origin o)
{
	size_t n = 0;
	for (size_t i = 0; i < h->n; i++)
		n += h->c[i].origin == o;
	return n;
}

static size_t count_events(const history *h, const char *kind)
{
	size_t n = 0;
	for (size_t i = 0; i < h->nev; i++)
		n += strcmp(h->ev[i].name, kind) == 0;
	return n;
}

static const cuco_candidate *find_cand(const history *h, uint64_t id)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->c[i].id == id)
			return &h->c[i];
	return NULL;
}

/* No two tune candidates share a configuration; none breaks the constraint. */
static void assert_unique_configs(const history *h)
{
	for (size_t i = 0; i < h->n; i++) {
		const cuco_directive *a = &h->c[i].directive;
		if (h->c[i].origin != CUCO_ORIGIN_TUNE)
			continue;
		assert_false(!strcmp(a->backend, "msg") && !strcmp(a->sync, "flag"));
		for (size_t j = 0; j < h->n; j++) {
			const cuco_directive *b = &h->c[j].directive;
			if (j == i || h->c[j].origin == CUCO_ORIGIN_BASELINE)
				continue;
			assert_false(!strcmp(a->backend, b->backend) && !strcmp(a->issuer, b->issuer) &&
				!strcmp(a->placement, b->placement) && !strcmp(a->sync, b->sync) &&
				!strcmp(a->granularity, b->granularity));
		}
	}
}

/* The baseline median a candidate's speedup was computed against. */
static double implied_baseline(const cuco_candidate *c)
{
	return c->speedup * c->timing.median_us;
}

typedef struct meta_arg {
	const char *key;
	char *json;
} meta_arg;

static int meta_txn(cuco_txn *txn, void *arg)
{
	meta_arg *a = arg;
	return cuco_meta_get(txn, a->key, &a->json);
}

/* A meta value of the run, malloc'd. */
static char *meta(run *r, const char *key)
{
	meta_arg a = { .key = key };
	cuco_err err = { 0 };
	if (cuco_store_read(r->st, meta_txn, &a, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return a.json;
}

static void test_search_end_to_end(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	unsetenv("TOY_BASELINE_US");
	unsetenv("TOY_COUNTER");
	cuco_engine_config cfg = config(12);
	cfg.rebench_top = 2;
	session(&r, &cfg);

	history h = read_history(&r);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_BASELINE), 1);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_SEED), 1);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_TUNE), 12);
	assert_unique_configs(&h);
	int failed = 0;
	for (size_t i = 0; i < h.n; i++) {
		const cuco_candidate *c = &h.c[i];
		if (c->origin != CUCO_ORIGIN_TUNE)
			continue;
		assert_int_equal(c->nparents, 1);
		const cuco_candidate *p = find_cand(&h, c->parents[0]);
		assert_non_null(p);
		assert_true(p->origin == CUCO_ORIGIN_SEED || p->origin == CUCO_ORIGIN_TUNE);
		if (c->status == CUCO_STATUS_FAILED) {
			/* Only the deliberately broken corner fails, classified. */
			assert_string_equal(c->directive.backend, "shm");
			assert_string_equal(c->directive.sync, "fence");
			assert_string_equal(c->failure.error_class, "wrong-answer");
			assert_true(isnan(c->score));
			failed++;
			continue;
		}
		assert_int_equal(c->status, CUCO_STATUS_DONE);
		assert_true(fabs(implied_baseline(c) - 1000.0) < 1e-6);
		assert_true(c->score == c->speedup);
	}
	assert_int_equal(count_events(&h, "run-start"), 1);
	assert_int_equal(count_events(&h, "run-end"), 1);
	assert_true(count_events(&h, "best") >= 1);
	/* The last best announced is the store's best, and it beats the seed. */
	uint64_t last_best = 0;
	for (size_t i = 0; i < h.nev; i++)
		if (!strcmp(h.ev[i].name, "best"))
			last_best = h.ev[i].candidate;
	const cuco_candidate *best = find_cand(&h, last_best);
	assert_non_null(best);
	for (size_t i = 0; i < h.n; i++)
		if (h.c[i].status == CUCO_STATUS_DONE)
			assert_true(h.c[i].score <= best->score);
	assert_true(best->speedup > 1.3);
	assert_true(failed < 12);
	history_free(&h);
	char *m = meta(&r, "hardware");
	assert_non_null(strstr(m, "\"cpus\""));
	free(m);
	m = meta(&r, "workload");
	assert_non_null(strstr(m, "\"name\":\"toy\""));
	free(m);
	m = meta(&r, "config");
	assert_non_null(strstr(m, "\"budget\":12"));
	free(m);
	run_close(&r);
}

/* A second session on the same run directory adds no baseline or seed
 * row, repeats no configuration, keeps the total budget, and measures its
 * speedups against its own baseline measurement. */
static int put_meta_txn(cuco_txn *txn, void *arg)
{
	const meta_arg *a = arg;
	return cuco_meta_put(txn, a->key, a->json);
}

/* Between two sessions the machine changed: the second one measures the
 * baseline again before anything else, and every candidate it measures is
 * against that; the seed, measured by the first, is not measured again. */
static void test_resume(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	unsetenv("TOY_COUNTER");
	setenv("TOY_BASELINE_US", "1000", 1);
	cuco_engine_config cfg = config(5);
	cfg.rebench_top = 0;
	session(&r, &cfg);
	history first = read_history(&r);
	uint64_t last_first = first.c[first.n - 1].id;
	history_free(&first);

	meta_arg other = { "hardware", "{\"cpu_model\":\"another machine\"}" };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(r.st, put_meta_txn, &other, &err), CUCO_OK);
	setenv("TOY_BASELINE_US", "2000", 1);
	cfg = config(9);
	cfg.tuner[0] = '\0';
	strcpy(cfg.tuner, "ils");
	cfg.rebench_top = 0;
	session(&r, &cfg);
	unsetenv("TOY_BASELINE_US");

	history h = read_history(&r);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_BASELINE), 1);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_SEED), 1);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_TUNE), 9);
	assert_int_equal(count_events(&h, "run-start"), 2);
	assert_unique_configs(&h);
	for (size_t i = 0; i < h.n; i++) {
		const cuco_candidate *c = &h.c[i];
		if (c->origin == CUCO_ORIGIN_BASELINE)
			assert_true(c->timing.median_us == 2000.0);  /* this session's */
		if (c->status != CUCO_STATUS_DONE || c->origin == CUCO_ORIGIN_BASELINE)
			continue;
		double expect = c->id > last_first ? 2000.0 : 1000.0;
		assert_true(fabs(implied_baseline(c) - expect) < 1e-6);
	}
	history_free(&h);

	/* A third session with the budget spent evaluates nothing new. */
	cfg = config(9);
	cfg.rebench_top = 0;
	session(&r, &cfg);
	h = read_history(&r);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_TUNE), 9);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_BASELINE), 1);
	history_free(&h);
	run_close(&r);
}

/* The last session ended moments ago on this machine: the next goes on
 * with the baseline measured then (nothing already measured is measured
 * again first; tests/faults/test_kill.c shows what that is for) and
 * measures it again after baseline_every benchmarks, counting the first
 * session's, or to pair a would-be best. Every measurement is kept with
 * its session, and the seed is not measured again. */
typedef struct sessions_seen {
	uint64_t first, last;
	int n;
} sessions_seen;

static int baseline_measurement(const cuco_measurement *m, void *arg)
{
	sessions_seen *s = arg;
	assert_true(m->ok);
	if (!s->n++)
		s->first = m->session;
	s->last = m->session;
	return 0;
}

static int seed_measurement(const cuco_measurement *m, void *arg)
{
	(void)m;
	++*(int *)arg;
	return 0;
}

typedef struct lists {
	sessions_seen base;
	int seed;
} lists;

static int read_lists(cuco_txn *txn, void *arg)
{
	lists *l = arg;
	int rc = cuco_measure_each(txn, 1, baseline_measurement, &l->base);
	return rc ? rc : cuco_measure_each(txn, 2, seed_measurement, &l->seed);
}

static void test_resume_goes_on(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	unsetenv("TOY_COUNTER");
	setenv("TOY_BASELINE_US", "1000", 1);
	cuco_engine_config cfg = config(3);
	cfg.rebench_top = 0;
	cfg.baseline_every = 6;
	cfg.jobs = 1;
	session(&r, &cfg);
	history h = read_history(&r);
	uint64_t last_first = h.c[h.n - 1].id;
	history_free(&h);

	setenv("TOY_BASELINE_US", "1500", 1);  /* what a new measurement says */
	cfg.budget = 9;
	session(&r, &cfg);
	unsetenv("TOY_BASELINE_US");
	h = read_history(&r);
	/* In id order (one job), the implied baseline is the old one until the
	 * second session measured it again, then the new one. */
	double prev = 0;
	int against_new = 0;
	for (size_t k = 0; k < h.n; k++) {
		const cuco_candidate *c = &h.c[k];
		if (c->origin != CUCO_ORIGIN_TUNE || c->status != CUCO_STATUS_DONE)
			continue;
		double b = implied_baseline(c);
		assert_true(fabs(b - 1000.0) < 1e-6 || (c->id > last_first && fabs(b - 1500.0) < 1e-6));
		assert_true(b >= prev - 1e-6);
		prev = b;
		against_new += fabs(b - 1500.0) < 1e-6;
	}
	assert_true(against_new >= 1);
	lists l = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(r.st, read_lists, &l, &err), CUCO_OK);
	assert_true(l.base.n >= 2);
	assert_true(l.base.last > l.base.first);  /* both sessions' measurements kept */
	assert_int_equal(l.seed, 1);
	const cuco_candidate *base = find_cand(&h, 1);
	assert_int_equal(base->status, CUCO_STATUS_DONE);
	assert_true(base->timing.median_us == 1500.0);
	history_free(&h);
	run_close(&r);
}

/* With the baseline drifting (each run of it 10 us slower), every speedup
 * is taken against the latest measurement: the implied baseline of
 * candidates in order never goes back and does move. */
static void test_baseline_remeasured(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	char counter[300];
	snprintf(counter, sizeof counter, "%s/counter", r.dir);
	setenv("TOY_COUNTER", counter, 1);
	unsetenv("TOY_BASELINE_US");
	cuco_engine_config cfg = config(10);
	cfg.jobs = 1;
	cfg.baseline_every = 3;
	cfg.rebench_top = 0;
	cfg.eval.sandbox = CUCO_SANDBOX_OFF;  /* the counter is in the run directory, which it hides */
	session(&r, &cfg);
	unsetenv("TOY_COUNTER");

	history h = read_history(&r);
	assert_true(count_events(&h, "baseline") >= 3);
	double last = 0, first = 0, base_row = 0;
	for (size_t i = 0; i < h.n; i++) {
		const cuco_candidate *c = &h.c[i];
		if (c->origin == CUCO_ORIGIN_BASELINE)
			base_row = c->timing.median_us;
		if (c->status != CUCO_STATUS_DONE || c->origin != CUCO_ORIGIN_TUNE)
			continue;
		double b = implied_baseline(c);
		assert_true(b >= 1000.0 - 1e-6);
		assert_true(b >= last - 1e-6);
		if (first == 0)
			first = b;
		last = b;
	}
	assert_true(last > first);
	assert_true(base_row >= last - 1e-6);
	history_free(&h);
	run_close(&r);
}

/* ---- confirmation and crowns (docs/trust.md) ------------------------------ */

/* The toy's latency at a directive (seed.c's model). */
static double toy_model_us(const cuco_directive *d)
{
	double us = !strcmp(d->backend, "shm") ? 700 : !strcmp(d->backend, "rma") ? 800 : 1000;
	us *= !strcmp(d->issuer, "several") ? 0.9 : 1.0;
	us *= !strcmp(d->placement, "interleave") ? 0.85 : 1.0;
	int ch = atoi(d->granularity);
	return us * (ch == 4 ? 0.8 : ch == 2 ? 0.9 : ch == 8 ? 0.95 : 1.0);
}

/* The candidate the store calls the best. */
static const cuco_candidate *store_best(run *r, const history *h)
{
	char *json = meta(r, "best");
	cJSON *j = cJSON_Parse(json);
	free(json);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "crowned");
	assert_true(cJSON_IsArray(a) && cJSON_GetArraySize(a) >= 1);
	uint64_t id = (uint64_t)cJSON_GetArrayItem(a, cJSON_GetArraySize(a) - 1)->valuedouble;
	cJSON_Delete(j);
	return find_cand(h, id);
}

/* A noisy machine that is the same every run: jitter of `amount`. */
static void jitter(run *r, const char *amount, cuco_engine_config *cfg)
{
	char file[300];
	snprintf(file, sizeof file, "%s/jitter", r->dir);
	setenv("TOY_JITTER_FILE", file, 1);
	setenv("TOY_JITTER", amount, 1);
	cfg->jobs = 1;  /* launches in one order, so draws in one order */
	cfg->eval.sandbox = CUCO_SANDBOX_OFF;  /* the file is in the run directory, which it hides */
}

static void no_jitter(void)
{
	unsetenv("TOY_JITTER");
	unsetenv("TOY_JITTER_FILE");
	unsetenv("TOY_FLAT");
}

/* The best few screens are confirmed on fresh paired rounds on a noisy,
 * drifting toy: a best is crowned with an interval holding its true
 * speedup, and the other contender is judged against it. */
static void test_confirmation_crowns(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	char counter[300];
	snprintf(counter, sizeof counter, "%s/counter", r.dir);
	setenv("TOY_COUNTER", counter, 1);
	unsetenv("TOY_BASELINE_US");
	cuco_engine_config cfg = config(10);
	cfg.rebench_top = 2;
	jitter(&r, "0.2", &cfg);
	session(&r, &cfg);
	unsetenv("TOY_COUNTER");
	no_jitter();

	history h = read_history(&r);
	assert_true(count_events(&h, "best") >= 1);
	assert_int_equal(count_events(&h, "best") + count_events(&h, "confirm"), 2);
	const cuco_candidate *best = store_best(&r, &h), *base = find_cand(&h, 1);
	assert_non_null(best);
	assert_true(best->origin == CUCO_ORIGIN_TUNE);
	assert_int_equal(best->verdict, CUCO_VERDICT_FASTER);
	assert_true(best->rounds >= 9 && best->confidence >= 0.995);
	/* The truth, against the drift's baseline of 1000 us plus 10 us a run:
	 * between 1000 and 1000 + 10 x all runs. */
	double truth = 1000 / toy_model_us(&best->directive), runs = 0;
	for (size_t i = 0; i < h.n; i++)
		runs += h.c[i].timing.samples > 0;
	assert_true(best->speedup_lo > 1 && best->speedup_lo <= best->speedup);
	assert_true(best->speedup <= best->speedup_hi);
	assert_true(best->speedup_lo <= truth * 1.2 && best->speedup_hi >= truth);
	/* Its row holds its median round's measurement, the interval every round. */
	assert_true(best->timing.median_us > 0 && base->timing.median_us >= 1000);
	(void)runs;
	/* The other contender was judged against the best too. */
	for (size_t i = 0; i < h.n; i++)
		if (h.c[i].rounds >= 2 && h.c[i].id != best->id)
			assert_true(h.c[i].verdict != CUCO_VERDICT_NONE);
	assert_string_equal(h.ev[h.nev - 1].name, "run-end");
	history_free(&h);
	run_close(&r);
}

/* 12 candidates of an A/A control on a toy this noisy. */
static history aa_session(run *r, const char *amount, int baseline_every, int rebench)
{
	unsetenv("TOY_COUNTER");
	unsetenv("TOY_BASELINE_US");
	setenv("TOY_FLAT", "1", 1);
	cuco_engine_config cfg = config(12);
	cfg.baseline_every = baseline_every;
	cfg.rebench_top = rebench;
	jitter(r, amount, &cfg);
	session(r, &cfg);
	no_jitter();
	return read_history(r);
}

/* An A/A control on a noisy toy: every candidate is the baseline's program
 * in effect, so however lucky a screen, nothing is crowned. */
static void test_aa_crowns_nothing(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	history h = aa_session(&r, "0.3", 8, 3);
	assert_int_equal(count_events(&h, "best"), 0);
	assert_true(count_events(&h, "confirm") >= 1);  /* some screen looked faster */
	assert_int_equal(store_best(&r, &h)->origin, CUCO_ORIGIN_BASELINE);
	for (size_t i = 0; i < h.n; i++) {
		const cuco_candidate *c = &h.c[i];
		if (c->rounds < 2)
			continue;
		assert_true(c->verdict == CUCO_VERDICT_NOISE || c->verdict == CUCO_VERDICT_INCONCLUSIVE);
		/* Stopped early or not, every interval has the confidence it asked
		 * for — at least the first confirmation's 99.5 % — and holds 1. */
		assert_true(c->confidence >= 0.995 && c->speedup_lo <= 1 && c->speedup_hi >= 1);
	}
	/* 30 % is within max_spread's 50 %: only a loaded machine (the load
	 * average) could make this run noisy, and it would say so once. */
	assert_true(count_events(&h, "noise") <= 1);
	history_free(&h);
	run_close(&r);
}

/* A machine past the workload's max_spread is said to be noisy once, and
 * confirmations take more rounds; an A/A still crowns nothing. The
 * baseline is measured after every candidate, so that it drifts well
 * inside the run's first minute, before the load average is judged. */
static void test_noise_said_once(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	history h = aa_session(&r, "1.5", 1, 2);
	assert_int_equal(count_events(&h, "noise"), 1);
	char *m = meta(&r, "noise");
	assert_non_null(strstr(m, "drifts"));
	free(m);
	assert_int_equal(count_events(&h, "best"), 0);
	for (size_t i = 0; i < h.nev; i++)
		if (!strcmp(h.ev[i].name, "noise"))
			assert_non_null(strstr(h.ev[i].text, "more rounds"));
	history_free(&h);
	run_close(&r);
}

/* ---- crowns measured again (docs/trust.md, "Verdicts") -------------------- */

/* The toy's name for a seed built with this directive ($TOY_ALTER). */
static void toy_key(const cuco_directive *d, char *buf, size_t size)
{
	snprintf(buf, size, "%d %d %d %d %d", !strcmp(d->backend, "msg") ? 1 : !strcmp(d->backend,
		"rma") ? 2 : 3, 1 + !strcmp(d->issuer, "several"), 1 + !strcmp(d->placement, "interleave"),
		1 + !strcmp(d->sync, "flag"), atoi(d->granularity));
}

/* From now on the program `who` reports `factor` times its latency, or a
 * wrong answer when factor is 0. */
static void alter(run *r, const char *who, double factor)
{
	char file[300];
	snprintf(file, sizeof file, "%s/alter", r->dir);
	FILE *f = fopen(file, "a");
	assert_non_null(f);
	fprintf(f, "%s %g\n", who, factor);
	fclose(f);
	setenv("TOY_ALTER", file, 1);
}

static int best_txn(cuco_txn *txn, void *arg)
{
	cuco_summary s;
	int rc = cuco_best(txn, &s);
	*(uint64_t *)arg = s.id;
	return rc;
}

/* The best in every view's words: cuco_best. */
static uint64_t best_now(run *r)
{
	uint64_t id = 0;
	cuco_err err = { 0 };
	if (cuco_store_read(r->st, best_txn, &id, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return id;
}

typedef struct revisits {
	cuco_revisit *r;
	size_t n;
} revisits;

static int revisits_txn(cuco_txn *txn, void *arg)
{
	revisits *v = arg;
	free(v->r);
	return cuco_crown_revisits(txn, &v->r, &v->n);
}

static revisits read_revisits(run *r)
{
	revisits v = { 0 };
	cuco_err err = { 0 };
	if (cuco_store_read(r->st, revisits_txn, &v, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return v;
}

static int island_txn(cuco_txn *txn, void *arg)
{
	return cuco_island_get(txn, 0, arg);
}

/* A session on the exact toy (every round alike) that crowns a best, and
 * that best's record. */
static cuco_candidate crowning_session(run *r, int budget)
{
	unsetenv("TOY_COUNTER");
	unsetenv("TOY_BASELINE_US");
	unsetenv("TOY_ALTER");
	no_jitter();
	cuco_engine_config cfg = config(budget);
	cfg.rebench_top = 1;
	cfg.jobs = 1;
	cfg.eval.sandbox = CUCO_SANDBOX_OFF;  /* $TOY_ALTER is in the run directory, which it hides */
	session(r, &cfg);
	history h = read_history(r);
	const cuco_candidate *best = find_cand(&h, best_now(r));
	assert_non_null(best);
	assert_int_equal(best->origin, CUCO_ORIGIN_TUNE);
	assert_int_equal(best->verdict, CUCO_VERDICT_FASTER);
	assert_int_equal(best->nratios, best->rounds);  /* the rounds behind its interval */
	cuco_candidate c = *best;
	history_free(&h);
	return c;
}

/* Later rounds that measure the best exactly as its own did (the exact
 * toy) leave its crown alone: estimates of one ratio taken in logs differ
 * by rounding, which is no evidence. */
static void test_same_rounds_no_revisit(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	unsetenv("TOY_COUNTER");
	unsetenv("TOY_BASELINE_US");
	unsetenv("TOY_ALTER");
	no_jitter();
	cuco_engine_config cfg = config(3);
	cfg.jobs = 1;
	session(&r, &cfg);
	history h = read_history(&r);
	assert_int_equal(count_events(&h, "best"), 1);
	assert_true(count_events(&h, "confirm") >= 1);  /* a contender paired with the best */
	assert_int_equal(count_events(&h, "revisit") + count_events(&h, "lapse"), 0);
	history_free(&h);
	run_close(&r);
}

/* A later session whose confirmation pairs a contender with the best. */
static history later_session(run *r, int budget, FILE *progress)
{
	cuco_engine_config cfg = config(budget);
	cfg.rebench_top = 1;
	cfg.jobs = 1;
	cfg.eval.sandbox = CUCO_SANDBOX_OFF;
	cfg.progress = progress;
	session(r, &cfg);
	return read_history(r);
}

/* A best that fails when measured again in a later confirmation loses its
 * crown in the store, not only in the log: cuco_best steps down to the
 * baseline, the record is failed with its reason, the revisit says why. */
static void test_refused_best_lapses(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	cuco_candidate best = crowning_session(&r, 6);
	char key[64];
	toy_key(&best.directive, key, sizeof key);
	alter(&r, key, 0);
	FILE *progress = tmpfile();
	history h = later_session(&r, 9, progress);
	unsetenv("TOY_ALTER");
	const cuco_candidate *was = find_cand(&h, best.id);
	assert_int_equal(was->status, CUCO_STATUS_FAILED);
	assert_string_equal(was->failure.error_class, "wrong-answer");
	assert_int_equal(best_now(&r), 1);  /* the baseline again */
	revisits v = read_revisits(&r);
	assert_int_equal(v.n, 1);
	assert_true(v.r[0].id == best.id && v.r[0].lapsed);
	assert_non_null(strstr(v.r[0].why, "wrong-answer"));
	assert_non_null(strstr(v.r[0].why, "its crown lapses"));
	assert_int_equal(count_events(&h, "lapse"), 1);
	cuco_island isl;  /* nor is it its island's champion */
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(r.st, island_txn, &isl, &err), CUCO_OK);
	assert_true(isl.champion != best.id && isnan(isl.best_speedup));
	/* The contender's line says why it has no verdict. */
	char out[16384] = "";
	rewind(progress);
	size_t got = fread(out, 1, sizeof out - 1, progress);
	out[got] = '\0';
	fclose(progress);
	assert_non_null(strstr(out, "no verdict: the best, #"));
	assert_non_null(strstr(out, "wrong-answer"));
	free(v.r);
	history_free(&h);
	run_close(&r);
}

/* Later paired rounds that put the best outside the interval it was
 * crowned with make the crown revisited on all its rounds: slowed four
 * times it lapses (and the contender that beats it is crowned); slowed a
 * little it stands, with the wider interval of all its rounds. */
static void test_crown_revisited(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	cuco_candidate first = crowning_session(&r, 6);
	char key[64];
	toy_key(&first.directive, key, sizeof key);
	alter(&r, key, 4);
	history h = later_session(&r, 9, NULL);
	revisits v = read_revisits(&r);
	assert_int_equal(v.n, 1);
	assert_true(v.r[0].id == first.id && v.r[0].lapsed);
	assert_non_null(strstr(v.r[0].why, "outside"));
	const cuco_candidate *was = find_cand(&h, first.id);
	assert_int_equal(was->status, CUCO_STATUS_DONE);
	assert_true(was->rounds > first.rounds && was->nratios == was->rounds);
	assert_int_not_equal(was->verdict, CUCO_VERDICT_FASTER);
	uint64_t second = best_now(&r);
	assert_true(second != first.id && second != 1);  /* the contender, crowned */
	assert_int_equal(count_events(&h, "lapse"), 1);
	cuco_candidate crowned = *find_cand(&h, second);
	history_free(&h);
	free(v.r);

	toy_key(&crowned.directive, key, sizeof key);
	alter(&r, key, 1.1);
	h = later_session(&r, 12, NULL);
	unsetenv("TOY_ALTER");
	v = read_revisits(&r);
	assert_int_equal(v.n, 2);
	assert_true(v.r[1].id == second && !v.r[1].lapsed);
	assert_non_null(strstr(v.r[1].why, "its crown stands"));
	was = find_cand(&h, second);
	assert_int_equal(was->status, CUCO_STATUS_DONE);
	assert_int_equal(was->verdict, CUCO_VERDICT_FASTER);
	assert_true(was->rounds > crowned.rounds && was->nratios == was->rounds);
	/* All its rounds: the crown's and the slower later ones. */
	assert_true(was->speedup_lo < crowned.speedup_lo && was->speedup_lo > 1);
	assert_true(was->speedup_hi >= crowned.speedup_hi * 0.999);
	assert_int_equal(count_events(&h, "revisit"), 1);
	assert_int_not_equal(best_now(&r), first.id);
	history_free(&h);
	free(v.r);
	run_close(&r);
}

static int confirmation_txn(cuco_txn *txn, void *arg)
{
	return cuco_confirmation_get(txn, arg);
}

/* How the last session's confirmation ended (meta "confirmation"). */
static cuco_confirmation read_confirmation(run *r)
{
	cuco_confirmation c;
	cuco_err err = { 0 };
	if (cuco_store_read(r->st, confirmation_txn, &c, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return c;
}

static int last_failure(const cuco_measurement *m, void *arg)
{
	if (!m->ok)
		cuco_failure_line(&m->failure, arg, 400);
	return 0;
}

static int failure_txn(cuco_txn *txn, void *arg)
{
	return cuco_measure_each(txn, 1, last_failure, arg);
}

/* A confirmation that ends because the baseline failed says so, with the
 * failure's reason, on its line, in its event and in meta "confirmation";
 * it is never counted as judged. The baseline keeps its row. */
static void test_confirmation_baseline_fails(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	unsetenv("TOY_COUNTER");
	unsetenv("TOY_BASELINE_US");
	no_jitter();
	cuco_engine_config cfg = config(6);
	cfg.rebench_top = 0;
	cfg.jobs = 1;
	cfg.eval.sandbox = CUCO_SANDBOX_OFF;
	session(&r, &cfg);
	assert_int_equal(read_confirmation(&r).state, CUCO_CONFIRM_OFF);
	alter(&r, "baseline", 0);
	FILE *progress = tmpfile();
	cfg.rebench_top = 2;
	cfg.progress = progress;
	char log[300];
	snprintf(log, sizeof log, "%s/cuco.log", r.dir);
	cuco_err err = { 0 };
	assert_int_equal(cuco_log_open(log, &err), CUCO_OK);
	session(&r, &cfg);
	cuco_log_close();
	unsetenv("TOY_ALTER");
	cuco_confirmation c = read_confirmation(&r);
	assert_int_equal(c.state, CUCO_CONFIRM_DONE);
	assert_int_equal(c.contenders, 2);
	assert_int_equal(c.judged, 0);
	assert_int_equal(c.nunjudged, 2);
	char reason[400] = "";
	assert_int_equal(cuco_store_read(r.st, failure_txn, reason, &err), CUCO_OK);
	assert_non_null(strstr(reason, "wrong-answer: "));
	/* The stage it failed at may differ (a round of a build the cache
	 * evicted for its failure runs the whole cascade): the failure's class
	 * and words are what must agree. */
	const char *words = strstr(reason, "wrong-answer: ");
	char want[512];
	snprintf(want, sizeof want, "the baseline failed in round 1 at ");
	if (!strstr(c.unjudged[0].why, want) || !strstr(c.unjudged[0].why, words))
		fail_msg("want \"%s... %s\" in \"%s\"", want, words, c.unjudged[0].why);
	char out[16384] = "";
	rewind(progress);
	out[fread(out, 1, sizeof out - 1, progress)] = '\0';
	fclose(progress);
	snprintf(want, sizeof want, "no verdict: %s", c.unjudged[0].why);
	assert_non_null(strstr(out, want));
	char *logged = NULL;  /* the run's log too */
	size_t len = 0;
	assert_int_equal(cuco_read_file(log, 1 << 20, &logged, &len, &err), CUCO_OK);
	assert_non_null(strstr(logged, want));
	free(logged);
	history h = read_history(&r);
	size_t said = 0;
	for (size_t i = 0; i < h.nev; i++)
		said += !strcmp(h.ev[i].name, "confirm") && strstr(h.ev[i].text, "the baseline failed in round 1 at ")
			&& strstr(h.ev[i].text, words);
	assert_int_equal(said, 2);
	assert_int_equal(count_events(&h, "best"), 0);
	const cuco_candidate *base = find_cand(&h, 1);
	assert_int_equal(base->status, CUCO_STATUS_DONE);  /* its earlier measurement in force */
	assert_true(base->timing.median_us == 1000);
	history_free(&h);
	run_close(&r);
}

/* ---- the command queue ---------------------------------------------------- */

typedef struct queue_arg {
	cuco_command cmd;
	const char *source;
} queue_arg;

static int queue_txn(cuco_txn *txn, void *arg)
{
	queue_arg *a = arg;
	cuco_command cmd = a->cmd;
	if (a->source) {
		int rc = cuco_source_put(txn, a->source, strlen(a->source), cmd.source_hash);
		if (rc)
			return rc;
	}
	return cuco_command_add(txn, &cmd);
}

static void queue(run *r, cuco_command_kind kind, uint64_t cand, const char *text,
	const char *source)
{
	queue_arg a = { .cmd = { .kind = kind, .candidate = cand, .island = -1 }, .source = source };
	cuco_err err = { 0 };
	strcpy(a.cmd.author, "tester@here");
	if (text)
		cuco_strlcpy(a.cmd.text, text, sizeof a.cmd.text);
	if (cuco_store_write(r->st, queue_txn, &a, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
}

typedef struct cmd_list {
	cuco_command c[16];
	int n;
} cmd_list;

static int grab_cmd(cuco_txn *txn, void *arg)
{
	cmd_list *l = arg;
	l->n = 0;
	for (uint64_t seq = 1; l->n < 16 && cuco_command_get(txn, seq, &l->c[l->n]) == CUCO_OK; seq++)
		l->n++;
	return CUCO_OK;
}

static cmd_list read_commands(run *r)
{
	cmd_list l;
	cuco_err err = { 0 };
	if (cuco_store_read(r->st, grab_cmd, &l, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return l;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static size_t unfinished(const history *h)
{
	size_t n = 0;
	for (size_t i = 0; i < h->n; i++)
		n += h->c[i].status < CUCO_STATUS_DONE;
	return n;
}

static void test_commands(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	unsetenv("TOY_BASELINE_US");
	unsetenv("TOY_COUNTER");
	cuco_engine_config cfg = config(3);
	cfg.rebench_top = 0;
	session(&r, &cfg);  /* #1 baseline, #2 seed, #3.. tune */

	queue(&r, CUCO_CMD_PIN, 2, NULL, NULL);
	queue(&r, CUCO_CMD_REJECT, 3, "reads past the window", NULL);
	queue(&r, CUCO_CMD_PIN, 3, NULL, NULL);  /* the store's rule: not a rejected one */
	queue(&r, CUCO_CMD_REJECT, 1, "no", NULL);
	queue(&r, CUCO_CMD_HINT, 0, "try rma", NULL);
	queue(&r, CUCO_CMD_PAUSE, 0, NULL, NULL);
	cfg = config(10);
	cfg.jobs = 1;
	cfg.rebench_top = 0;
	cuco_engine *e = start(&r, &cfg);

	/* Wait for the pause to be applied and the evaluation in flight to
	 * end; then nothing new may start. */
	cmd_list l;
	for (int i = 0; i < 200; i++, sleep_ms(50)) {
		l = read_commands(&r);
		if (l.n == 6 && l.c[5].acked)
			break;
	}
	assert_true(l.c[5].acked);
	history h = { 0 };
	for (int i = 0; i < 200; i++, sleep_ms(50)) {
		history_free(&h);
		h = read_history(&r);
		if (unfinished(&h) == 0)
			break;
	}
	size_t paused_at = h.n;
	history_free(&h);
	sleep_ms(700);
	h = read_history(&r);
	assert_int_equal(h.n, paused_at);
	assert_false(cuco_engine_done(e));
	history_free(&h);

	char *seed = NULL;
	size_t len = 0;
	char path[1200];
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%.1000s/%.128s", r.wl->dir, r.wl->seed_file);
	assert_int_equal(cuco_read_file(path, 1 << 20, &seed, &len, &err), CUCO_OK);
	char *edited = cuco_xmalloc(len + 64);
	/* A comment alone would be refused as a repeat: the edit adds a name. */
	snprintf(edited, len + 64, "%s/* edited by hand */\nenum { HAND_EDITED = 1 };\n", seed);
	queue(&r, CUCO_CMD_EDIT, 2, "a comment", edited);
	queue(&r, CUCO_CMD_RESUME, 0, NULL, NULL);
	if (cuco_engine_join(e, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	free(seed);
	free(edited);

	l = read_commands(&r);
	assert_int_equal(l.n, 8);
	for (int i = 0; i < l.n; i++)
		assert_true(l.c[i].acked);
	assert_string_equal(l.c[0].ack_result, "pinned #2");
	assert_non_null(strstr(l.c[1].ack_result, "rejected #3"));
	assert_non_null(strstr(l.c[2].ack_result, "refused: candidate 3: rejected candidates cannot be pinned"));
	assert_non_null(strstr(l.c[3].ack_result, "refused"));
	assert_non_null(strstr(l.c[3].ack_result, "baseline"));
	assert_non_null(strstr(l.c[4].ack_result, "writes no prompts"));
	assert_non_null(strstr(l.c[6].ack_result, "queued #"));

	h = read_history(&r);
	assert_true(find_cand(&h, 2)->pinned);
	assert_int_equal(find_cand(&h, 3)->status, CUCO_STATUS_REJECTED);
	assert_false(find_cand(&h, 3)->pinned);
	assert_string_equal(find_cand(&h, 3)->reject_reason, "reads past the window");
	assert_int_equal(find_cand(&h, 1)->status, CUCO_STATUS_DONE);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_TUNE), 10);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_HUMAN), 1);
	for (size_t i = 0; i < h.n; i++) {
		const cuco_candidate *c = &h.c[i];
		if (c->created > l.c[1].ack_time)
			assert_true(c->nparents == 0 || c->parents[0] != 3);
		if (c->origin == CUCO_ORIGIN_HUMAN) {
			assert_int_equal(c->parents[0], 2);
			assert_int_equal(c->status, CUCO_STATUS_DONE);
			assert_true(fabs(c->speedup - 1.0) < 1e-9);
		}
	}
	assert_true(count_events(&h, "pin") >= 1 && count_events(&h, "edit") >= 1 &&
		count_events(&h, "pause") >= 1 && count_events(&h, "resume") >= 1);
	history_free(&h);
	run_close(&r);
}

/* The baseline's runs so far, as the toy counts them in $TOY_COUNTER. */
static long runs_counted(const char *file)
{
	struct stat st;
	return stat(file, &st) == 0 ? (long)st.st_size : 0;
}

/* The end-of-run confirmation says so before its first round, and a pause
 * holds it between rounds until a resume. The strategy's meta says whether
 * hints reach it. */
static void test_retime_pause(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	char counter[300];
	snprintf(counter, sizeof counter, "%s/counter", r.dir);
	setenv("TOY_COUNTER", counter, 1);  /* each round runs the baseline once */
	unsetenv("TOY_BASELINE_US");
	cuco_engine_config cfg = config(10);
	cfg.rebench_top = 1;
	cfg.jobs = 1;
	cfg.eval.sandbox = CUCO_SANDBOX_OFF;  /* the counter is in the run directory, which it hides */
	cuco_engine *e = start(&r, &cfg);
	history h = { 0 };
	for (int i = 0; i < 1200 && !count_events(&h, "retime"); i++, sleep_ms(50)) {
		history_free(&h);
		h = read_history(&r);
	}
	assert_int_equal(count_events(&h, "retime"), 1);
	history_free(&h);
	queue(&r, CUCO_CMD_PAUSE, 0, NULL, NULL);
	cmd_list l = { .n = 0 };
	for (int i = 0; i < 1200 && !(l.n == 1 && l.c[0].acked) && !cuco_engine_done(e); i++, sleep_ms(50))
		l = read_commands(&r);
	assert_true(l.n == 1 && l.c[0].acked);
	assert_non_null(strstr(l.c[0].ack_result, "paused"));
	/* Held: no round starts while paused. */
	long held = runs_counted(counter);
	sleep_ms(800);
	assert_int_equal(runs_counted(counter), held);
	assert_false(cuco_engine_done(e));
	queue(&r, CUCO_CMD_RESUME, 0, NULL, NULL);
	cuco_err err = { 0 };
	if (cuco_engine_join(e, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	unsetenv("TOY_COUNTER");
	assert_true(runs_counted(counter) > held);  /* the rounds went on after the resume */
	h = read_history(&r);
	size_t retime = 0, confirm = 0;
	for (size_t i = 0; i < h.nev; i++) {
		if (!retime && strcmp(h.ev[i].name, "retime") == 0)
			retime = i + 1;
		if (retime && !confirm && (strcmp(h.ev[i].name, "confirm") == 0 ||
				strcmp(h.ev[i].name, "best") == 0))
			confirm = i + 1;
	}
	assert_true(retime && confirm);  /* said, and then the verdict */
	assert_string_equal(h.ev[h.nev - 1].name, "run-end");
	history_free(&h);
	char *strategy = meta(&r, "strategy");
	assert_string_equal(strategy, "{\"name\":\"tune\",\"hints\":false}");
	free(strategy);
	run_close(&r);
}

static void test_stop(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	cuco_engine_config cfg = config(0);  /* no budget: only a stop ends it */
	cuco_engine *e = start(&r, &cfg);
	struct pollfd wake = { .fd = cuco_engine_wake_fd(e), .events = POLLIN };
	assert_int_equal(poll(&wake, 1, 10000), 1);  /* run-start, at least */
	char drain[64];
	assert_true(read(wake.fd, drain, sizeof drain) > 0);
	cuco_engine_request_stop(e);
	cuco_err err = { 0 };
	assert_int_equal(cuco_engine_join(e, &err), CUCO_OK);
	history h = read_history(&r);
	assert_true(count_origin(&h, CUCO_ORIGIN_TUNE) < 80);
	assert_int_equal(unfinished(&h), 0);
	assert_non_null(strstr(h.ev[h.nev - 1].text, "stopped"));
	history_free(&h);
	cuco_confirmation c = read_confirmation(&r);  /* for the summary: no verdict */
	assert_int_equal(c.state, CUCO_CONFIRM_STOPPED);
	assert_int_equal(c.contenders, 0);
	run_close(&r);
}

/* A baseline that cannot run here ends the run at once with EENV. */
static void test_baseline_environment(void **state)
{
	(void)state;
	run r;
	run_open(&r);
	cuco_strlcpy(r.wl->compiler, "/nonexistent/cc", sizeof r.wl->compiler);
	cuco_engine_config cfg = config(4);
	cuco_err err = { 0 };
	assert_int_equal(cuco_engine_join(start(&r, &cfg), &err), CUCO_EENV);
	assert_non_null(strstr(err.msg, "baseline"));
	assert_null(strchr(err.msg, '\n'));
	history h = read_history(&r);
	assert_int_equal(count_origin(&h, CUCO_ORIGIN_TUNE), 0);
	history_free(&h);
	run_close(&r);
}

int main(void)
{
	/* The toy's programs read these; stages get only what is asked for. */
	setenv("CUCO_PASS_ENV", "TOY_BASELINE_US TOY_COUNTER TOY_JITTER TOY_JITTER_FILE TOY_FLAT "
		"TOY_ALTER", 1);
	cuco_env_reread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search_end_to_end),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_resume_goes_on),
		cmocka_unit_test(test_baseline_remeasured),
		cmocka_unit_test(test_confirmation_crowns),
		cmocka_unit_test(test_aa_crowns_nothing),
		cmocka_unit_test(test_noise_said_once),
		cmocka_unit_test(test_same_rounds_no_revisit),
		cmocka_unit_test(test_refused_best_lapses),
		cmocka_unit_test(test_crown_revisited),
		cmocka_unit_test(test_confirmation_baseline_fails),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_retime_pause),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_baseline_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
