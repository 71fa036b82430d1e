/* test_measure.c — measurements are appended, never overwritten: every
 * one is kept with its session and time, an ok one is in force; a failed
 * one of the baseline, or one the environment failed, leaves the earlier
 * one in force, while a program's own failure or refusal is in force
 * whatever passed before (a refused best loses its crown); a done record
 * stays done unless so failed, and a rejected one stays rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util.h"

typedef struct fixture {
	char dir[64];
	cuco_store *st;
	uint64_t id;
} fixture;

static int put_queued(cuco_txn *txn, void *arg)
{
	fixture *f = arg;
	cuco_candidate c;
	memset(&c, 0, sizeof c);
	c.origin = CUCO_ORIGIN_BASELINE;
	c.status = CUCO_STATUS_QUEUED;
	c.score = c.speedup = c.timing.min_us = c.timing.median_us = c.timing.p90_us = NAN;
	c.timing.max_error = c.timing.peak_fraction = c.timing.spread = NAN;
	int rc = cuco_cand_put(txn, &c);
	f->id = c.id;
	return rc;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	tmpdir(f->dir);
	f->st = open_new(f->dir);
	assert_int_equal(cuco_store_write(f->st, put_queued, f, &(cuco_err){ 0 }), CUCO_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	cuco_store_close(f->st);
	rmtree(f->dir);
	free(f);
	return 0;
}

typedef struct add_arg {
	cuco_measurement m;
	cuco_candidate out;
} add_arg;

static int add_txn(cuco_txn *txn, void *arg)
{
	add_arg *a = arg;
	return cuco_measure_add(txn, &a->m, &a->out);
}

/* Add one measurement: ok with a median, or failed at a stage. */
static cuco_candidate add(fixture *f, uint64_t session, bool ok, double median, const char *cls,
	cuco_measurement *as_added)
{
	add_arg a;
	cuco_measurement_init(&a.m, f->id, ok ? "measure" : "re-measure");
	a.m.session = session;
	a.m.ok = ok;
	if (ok) {
		a.m.timing.median_us = median;
		a.m.timing.min_us = median * 0.9;
		a.m.timing.samples = 5;
		a.m.speedup = a.m.score = 1000 / median;
		a.m.timing.nphases = 1;
		strcpy(a.m.timing.phases[0].name, "comm");
		a.m.timing.phases[0].us = median / 2;
	} else {
		strcpy(a.m.failure.stage, "run");
		strcpy(a.m.failure.error_class, cls);
		strcpy(a.m.failure.excerpt, "run: exit status 1");
	}
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(f->st, add_txn, &a, &err), CUCO_OK);
	if (as_added)
		*as_added = a.m;
	return a.out;
}

typedef struct list {
	int n;
	cuco_measurement all[8];
} list;

static int collect(const cuco_measurement *m, void *arg)
{
	list *l = arg;
	if (l->n < 8)
		l->all[l->n] = *m;
	l->n++;
	return 0;
}

typedef struct read_arg {
	uint64_t id;
	list l;
	cuco_candidate c;
	uint32_t count;
} read_arg;

static int read_txn(cuco_txn *txn, void *arg)
{
	read_arg *r = arg;
	memset(&r->l, 0, sizeof r->l);
	int rc = cuco_measure_each(txn, r->id, collect, &r->l);
	if (rc == CUCO_OK)
		rc = cuco_measure_count(txn, r->id, &r->count);
	return rc ? rc : cuco_cand_get(txn, r->id, &r->c);
}

static read_arg reread(fixture *f)
{
	read_arg r = { .id = f->id };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(f->st, read_txn, &r, &err), CUCO_OK);
	return r;
}

typedef struct edit_arg {
	uint64_t id;
	cuco_origin origin;
	cuco_status status;
} edit_arg;

static int edit_txn(cuco_txn *txn, void *arg)
{
	const edit_arg *a = arg;
	cuco_candidate c;
	int rc = cuco_cand_get(txn, a->id, &c);
	if (rc)
		return rc;
	c.origin = a->origin;
	c.status = a->status;
	return cuco_cand_put(txn, &c);
}

/* Write the record with another origin and status (CUCO_STATUS_COUNT:
 * its own), as no measurement would; the store's answer. */
static int edit(fixture *f, cuco_origin origin, cuco_status status, cuco_err *err)
{
	read_arg r = reread(f);
	edit_arg a = { f->id, origin, status == CUCO_STATUS_COUNT ? r.c.status : status };
	return cuco_store_write(f->st, edit_txn, &a, err);
}

/* First measured, then re-measured twice across sessions (one failure in
 * between): three measurements kept, the record done throughout and
 * showing the last good one. */
static void test_appended_and_in_force(void **state)
{
	fixture *f = *state;
	cuco_measurement first;
	cuco_candidate c = add(f, 3, true, 1000, NULL, &first);
	assert_int_equal(first.seq, 1);
	assert_true(first.time > 0);
	assert_int_equal(c.status, CUCO_STATUS_DONE);
	assert_true(c.timing.median_us == 1000);

	c = add(f, 9, false, 0, "crash", NULL);
	assert_int_equal(c.status, CUCO_STATUS_DONE);  /* a failed re-measure: the earlier stays */
	assert_true(c.timing.median_us == 1000);
	assert_string_equal(c.failure.error_class, "");
	assert_true(c.score == 1);

	c = add(f, 9, true, 800, NULL, NULL);
	assert_int_equal(c.status, CUCO_STATUS_DONE);
	assert_true(c.timing.median_us == 800);
	assert_true(c.score == 1000.0 / 800);
	assert_int_equal(c.timing.nphases, 1);
	assert_true(c.timing.phases[0].us == 400);

	read_arg r = reread(f);
	assert_int_equal(r.l.n, 3);
	assert_int_equal(r.count, 3);
	assert_int_equal(r.l.all[0].seq, 1);
	assert_int_equal(r.l.all[0].session, 3);
	assert_true(r.l.all[0].ok);
	assert_true(r.l.all[0].timing.median_us == 1000);
	assert_int_equal(r.l.all[1].seq, 2);
	assert_int_equal(r.l.all[1].session, 9);
	assert_false(r.l.all[1].ok);
	assert_string_equal(r.l.all[1].failure.error_class, "crash");
	assert_string_equal(r.l.all[1].failure.excerpt, "run: exit status 1");
	assert_true(isnan(r.l.all[1].timing.median_us));
	assert_int_equal(r.l.all[2].seq, 3);
	assert_true(r.l.all[2].timing.median_us == 800);
	assert_true(r.l.all[2].time >= r.l.all[0].time);
	assert_int_equal(r.c.status, CUCO_STATUS_DONE);
}

/* Never measured well: a failure fails the record; a later success
 * makes it done. */
static void test_failed_without_one_in_force(void **state)
{
	fixture *f = *state;
	cuco_candidate c = add(f, 1, false, 0, "timeout", NULL);
	assert_int_equal(c.status, CUCO_STATUS_FAILED);
	assert_string_equal(c.failure.stage, "run");
	assert_string_equal(c.failure.error_class, "timeout");
	assert_true(isnan(c.score));
	c = add(f, 2, true, 500, NULL, NULL);
	assert_int_equal(c.status, CUCO_STATUS_DONE);
	assert_string_equal(c.failure.error_class, "");
	assert_int_equal(reread(f).l.n, 2);
}

/* A person's reject outlives any measurement. */
static void test_rejected_stays_rejected(void **state)
{
	fixture *f = *state;
	add(f, 1, true, 700, NULL, NULL);
	/* The baseline cannot be rejected: a strategy's candidate. */
	assert_int_equal(edit(f, CUCO_ORIGIN_TUNE, CUCO_STATUS_REJECTED, &(cuco_err){ 0 }), CUCO_OK);
	cuco_candidate c = add(f, 2, true, 600, NULL, NULL);
	assert_int_equal(c.status, CUCO_STATUS_REJECTED);
	assert_true(c.timing.median_us == 600);
	c = add(f, 3, false, 0, "crash", NULL);
	assert_int_equal(c.status, CUCO_STATUS_REJECTED);
	assert_string_equal(c.failure.error_class, "crash");  /* a program's failure is in force */
	assert_true(isnan(c.timing.median_us));
}

static int add_to_missing(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_measurement m;
	cuco_measurement_init(&m, 4242, "measure");
	return cuco_measure_add(txn, &m, NULL);
}

/* Measurements of one candidate never show in another's list, and a
 * measurement of no candidate is refused. */
static void test_lists_apart(void **state)
{
	fixture *f = *state;
	uint64_t first = f->id;
	add(f, 1, true, 100, NULL, NULL);
	assert_int_equal(cuco_store_write(f->st, put_queued, f, &(cuco_err){ 0 }), CUCO_OK);
	assert_int_not_equal(f->id, first);
	add(f, 1, true, 200, NULL, NULL);
	add(f, 1, true, 300, NULL, NULL);
	read_arg r = reread(f);
	assert_int_equal(r.l.n, 2);
	assert_true(r.l.all[0].timing.median_us == 200);
	f->id = first;
	assert_int_equal(reread(f).l.n, 1);
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(f->st, add_to_missing, NULL, &err), CUCO_ENOTFOUND);
}

/* Nothing takes a done record's status back, whatever writes it. */
static void test_done_stays_done(void **state)
{
	fixture *f = *state;
	add(f, 1, true, 900, NULL, NULL);
	cuco_err err = { 0 };
	assert_int_equal(edit(f, CUCO_ORIGIN_BASELINE, CUCO_STATUS_COMPILING, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "done, it cannot become compiling"));
	assert_int_equal(reread(f).c.status, CUCO_STATUS_DONE);
}

/* A program (not the baseline) passes, then fails or is refused when
 * measured again: that failure is in force, the record failed with its
 * reason and no numbers; the earlier measurement stays in the list. The
 * environment's failure is not the program's: the earlier one stays. */
static void test_program_failure_in_force(void **state)
{
	fixture *f = *state;
	assert_int_equal(edit(f, CUCO_ORIGIN_TUNE, CUCO_STATUS_COUNT, &(cuco_err){ 0 }), CUCO_OK);
	add(f, 1, true, 700, NULL, NULL);
	cuco_candidate c = add(f, 1, false, 0, "environment", NULL);
	assert_int_equal(c.status, CUCO_STATUS_DONE);
	assert_true(c.timing.median_us == 700);
	assert_string_equal(c.failure.error_class, "");
	c = add(f, 2, false, 0, "suspect", NULL);
	assert_int_equal(c.status, CUCO_STATUS_FAILED);
	assert_string_equal(c.failure.error_class, "suspect");
	assert_string_equal(c.failure.stage, "run");
	assert_string_equal(c.failure.excerpt, "run: exit status 1");
	assert_true(isnan(c.timing.median_us) && isnan(c.speedup) && isnan(c.score));
	read_arg r = reread(f);
	assert_int_equal(r.l.n, 3);
	assert_true(r.l.all[0].ok && r.l.all[0].timing.median_us == 700);
	assert_int_equal(r.c.status, CUCO_STATUS_FAILED);
	/* Passing again puts it back. */
	c = add(f, 3, true, 650, NULL, NULL);
	assert_int_equal(c.status, CUCO_STATUS_DONE);
	assert_string_equal(c.failure.error_class, "");
}

typedef struct crown_arg {
	fixture *f;
	uint64_t base, best;
} crown_arg;

static int crown_txn(cuco_txn *txn, void *arg)
{
	crown_arg *a = arg;
	int rc = cuco_crown(txn, a->base);
	return rc ? rc : cuco_crown(txn, a->f->id);
}

static int best_txn(cuco_txn *txn, void *arg)
{
	crown_arg *a = arg;
	cuco_summary s;
	int rc = cuco_best(txn, &s);
	a->best = s.id;
	return rc;
}

/* A crowned best refused when measured again is no longer the best: the
 * crown steps down to the baseline in every view that asks cuco_best. */
static void test_refused_best_steps_down(void **state)
{
	fixture *f = *state;
	crown_arg a = { .f = f, .base = f->id };
	add(f, 1, true, 1000, NULL, NULL);  /* the baseline */
	assert_int_equal(cuco_store_write(f->st, put_queued, f, &(cuco_err){ 0 }), CUCO_OK);
	assert_int_equal(edit(f, CUCO_ORIGIN_TUNE, CUCO_STATUS_COUNT, &(cuco_err){ 0 }), CUCO_OK);
	add(f, 1, true, 700, NULL, NULL);
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(f->st, crown_txn, &a, &err), CUCO_OK);
	assert_int_equal(cuco_store_read(f->st, best_txn, &a, &err), CUCO_OK);
	assert_int_equal(a.best, f->id);
	add(f, 2, false, 0, "suspect", NULL);
	assert_int_equal(cuco_store_read(f->st, best_txn, &a, &err), CUCO_OK);
	assert_int_equal(a.best, a.base);
}

/* No view shows a part larger than its whole, on the phases each family's
 * harness reports: cpu-mpi's (workloads/common/cuco_harness.h: exposed_comm
 * is the step's time outside compute, 9.67 ms beside a comm of 9.6 us on a
 * busy machine), cuda-nccl's (gpu-common/cuco_gpu.h: compute and comm each
 * timed alone, exposed_comm the latency beyond compute alone), cuda's (one
 * "kernel" phase) and a compat program's own phase lines. */
static void test_phases_view(void **state)
{
	(void)state;
	static const struct {
		const char *family;
		double lat;
		int n;
		cuco_phase ph[4];
		double shown[4];
	} cases[] = {
		{ "cpu-mpi", 10200, 4, { { "compute", 500 }, { "comm", 9.6 }, { "sync", 3 },
			{ "exposed_comm", 9670 } }, { 500, 9.6, 3, 9.6 } },
		{ "cpu-mpi, quiet", 900, 4, { { "compute", 700 }, { "comm", 300 }, { "sync", 10 },
			{ "exposed_comm", 180 } }, { 700, 300, 10, 180 } },
		{ "cuda-nccl, compute alone past the overlapped latency", 1000, 3, { { "compute", 1200 },
			{ "comm", 300 }, { "exposed_comm", 0 } }, { 1000, 300, 0 } },
		{ "cuda-nccl, contention", 1150, 3, { { "compute", 700 }, { "comm", 300 },
			{ "exposed_comm", 450 } }, { 700, 300, 300 } },
		{ "cuda", 250, 1, { { "kernel", 250 } }, { 250 } },
		{ "compat", 1500, 2, { { "dispatch_put", 1200 }, { "wait", 2000 } }, { 1200, 1500 } },
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		cuco_candidate *c = calloc(1, sizeof *c);
		c->timing.median_us = cases[k].lat;
		c->timing.nphases = cases[k].n;
		memcpy(c->timing.phases, cases[k].ph, sizeof cases[k].ph);
		cuco_phase shown[CUCO_MAX_PHASES];
		double measured[CUCO_MAX_PHASES];
		assert_int_equal(cuco_phases_view(c, shown, measured), cases[k].n);
		double comm = NAN;
		for (int i = 0; i < cases[k].n; i++)
			if (strcmp(shown[i].name, "comm") == 0)
				comm = shown[i].us;
		for (int i = 0; i < cases[k].n; i++) {
			if (shown[i].us != cases[k].shown[i] || measured[i] != cases[k].ph[i].us)
				fail_msg("%s: %s shown %g (want %g), measured %g", cases[k].family, shown[i].name,
					shown[i].us, cases[k].shown[i], measured[i]);
			assert_true(shown[i].us <= cases[k].lat);
			if (strcmp(shown[i].name, "exposed_comm") == 0)
				assert_true(shown[i].us <= comm);
		}
		free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_appended_and_in_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_without_one_in_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejected_stays_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lists_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_done_stays_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_failure_in_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_best_steps_down, setup, teardown),
		cmocka_unit_test(test_phases_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
