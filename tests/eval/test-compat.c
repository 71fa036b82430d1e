/* test-compat.c — the compat protocol on output exactly as CUCo's programs
 * print it: a block per rank ("--- RESULTS (Rank N: …) ---", "Time: X ms",
 * "Phase: name = X ms") and rank 0's "Verification: PASS (max error …)";
 * mpirun's --tag-output prefixes; several repetitions; the FAIL form;
 * verdicts per rank; cuco's own phase spelling. The lines are fed to the
 * parser the evaluator streams a stage's output through. */
#include "eval/eval_int.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static cuco_workload wl;

/* The manifest `cuco init` writes for a program printing CUCo's lines. */
static void compat_workload(void)
{
	memset(&wl, 0, sizeof wl);
	cuco_strlcpy(wl.name, "compat", sizeof wl.name);
	wl.protocol = CUCO_PROTO_COMPAT;
	wl.ranks = 2;
	cuco_strlcpy(wl.compat_pass, "Verification: PASS", sizeof wl.compat_pass);
	cuco_strlcpy(wl.compat_time, "^Time: *([0-9.]+) *ms", sizeof wl.compat_time);
	wl.compat_time_scale = 1000;
}

/* Feed a NULL-terminated list of lines; the outcome. */
static eval_outcome parse(const char *const *lines)
{
	eval_parse p;
	cuco_err err = { 0 };
	if (eval_parse_init(&p, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	for (int i = 0; lines[i]; i++)
		eval_parse_line(lines[i], strlen(lines[i]), &p);
	eval_outcome o;
	eval_parse_finish(&p, &o);
	eval_parse_free(&p);
	return o;
}

static double phase(const eval_outcome *o, const char *name)
{
	for (int i = 0; i < o->timing.nphases; i++)
		if (strcmp(o->timing.phases[i].name, name) == 0)
			return o->timing.phases[i].us;
	return NAN;
}

/* ds_v3_moe's best program: one block per rank, rank 0's verdict last. */
static void test_cuco_blocks(void **state)
{
	(void)state;
	const char *const out[] = {
		"DeepSeek-V3 MoE SPARSE Config:",
		"",
		"--- RESULTS (Rank 0: Expert 0, receives 4096 tokens) ---",
		"Time: 1.5000 ms",
		"Phase: dispatch_put = 0.4000 ms",
		"Phase: self_compute = 0.7000 ms",
		"",
		"--- RESULTS (Rank 1: Expert 1, receives 2048 tokens) ---",
		"Time: 2.2500 ms",
		"Phase: dispatch_put = 0.6000 ms",
		"Phase: self_compute = 0.5000 ms",
		"Verification: PASS (max error: 0.000012)",
		NULL,
	};
	eval_outcome o = parse(out);
	assert_true(o.have_result);
	assert_true(o.correct);
	assert_int_equal(o.timing.samples, 1);            /* one run, two ranks: one repetition */
	assert_true(o.timing.median_us == 2250);          /* the slowest rank's */
	assert_true(o.timing.min_us == 2250 && o.max_us == 2250);
	assert_int_equal(o.timing.nphases, 2);
	assert_string_equal(o.timing.phases[0].name, "dispatch_put");
	assert_true(fabs(phase(&o, "dispatch_put") - 600) < 1e-9);
	assert_true(fabs(phase(&o, "self_compute") - 700) < 1e-9);
}

/* Open MPI's --tag-output, ranks interleaved, three repetitions each. */
static void test_tagged_repetitions(void **state)
{
	(void)state;
	const char *const out[] = {
		"[1,1]<stdout>:Time: 2.0 ms",
		"[1,0]<stdout>:Time: 1.0 ms",
		"[1,0]<stdout>:Time: 3.5 ms",
		"[1,1]<stdout>:Time: 3.0 ms",
		"[1,1]<stdout>:Time: 1.5 ms",
		"[1,0]<stdout>:Time: 1.25 ms",
		"[1,0]<stdout>:Verification: PASS",
		NULL,
	};
	eval_outcome o = parse(out);
	assert_true(o.correct);
	assert_int_equal(o.timing.samples, 3);
	assert_true(o.timing.min_us == 1500);     /* max(1.25, 1.5) */
	assert_true(o.timing.median_us == 2000);  /* max(1.0, 2.0) */
	assert_true(o.max_us == 3500);     /* max(3.5, 3.0) */
}

/* A program that names no rank reports for the whole job: every time it
 * prints is a repetition (what the compat fixture prints). */
static void test_unlabelled_repetitions(void **state)
{
	(void)state;
	const char *const out[] = { "Time: 1.5 ms", "Time: 1.25 ms", "Time: 2.0 ms",
		"Phase compute: 0.75 ms", "Phase comm: 500 us", "Verification: PASS", NULL };
	eval_outcome o = parse(out);
	assert_true(o.correct);
	assert_int_equal(o.timing.samples, 3);
	assert_true(o.timing.median_us == 1500);
	assert_int_equal(o.timing.nphases, 2);
	assert_true(phase(&o, "compute") == 750);
	assert_true(phase(&o, "comm") == 500);   /* cuco's spelling, in microseconds */
}

/* Any FAIL is a wrong answer, whatever else passed. */
static void test_fail_anywhere(void **state)
{
	(void)state;
	const char *const out[] = { "--- RESULTS (Rank 0) ---", "Time: 1.0 ms", "Verification: PASS",
		"--- RESULTS (Rank 1) ---", "Time: 1.0 ms", "Verification: FAIL (rank 1, max_err=0.5)",
		NULL };
	eval_outcome o = parse(out);
	assert_true(o.have_result);
	assert_false(o.correct);
	/* An explicit fail string replaces the derived one. */
	cuco_strlcpy(wl.compat_fail, "MISMATCH", sizeof wl.compat_fail);
	const char *const out2[] = { "Time: 1.0 ms", "Verification: FAIL", "Verification: PASS", NULL };
	assert_true(parse(out2).correct);
	const char *const out3[] = { "Time: 1.0 ms", "Rank 1: MISMATCH at 3", "Verification: PASS", NULL };
	assert_false(parse(out3).correct);
	wl.compat_fail[0] = '\0';
}

/* Ranks that print verdicts of their own must each pass. */
static void test_verdict_per_rank(void **state)
{
	(void)state;
	const char *const some[] = {
		"[1,0]<stdout>:Time: 1.0 ms", "[1,1]<stdout>:Time: 1.0 ms", "[1,2]<stdout>:Time: 1.0 ms",
		"[1,0]<stdout>:Verification: PASS", "[1,1]<stdout>:Verification: PASS", NULL };
	assert_false(parse(some).correct);   /* rank 2 timed but never said it passed */
	const char *const all[] = {
		"[1,0]<stdout>:Time: 1.0 ms", "[1,1]<stdout>:Time: 1.0 ms",
		"[1,0]<stdout>:Verification: PASS", "[1,1]<stdout>:Verification: PASS", NULL };
	assert_true(parse(all).correct);
	const char *const none[] = { "Time: 1.0 ms", NULL };
	eval_outcome o = parse(none);
	assert_true(o.have_result);
	assert_false(o.correct);             /* no verdict at all */
	assert_int_equal(o.timing.samples, 1);
}

/* What is not a time or a phase stays a log line. */
static void test_not_results(void **state)
{
	(void)state;
	const char *const out[] = {
		"  Dispatch AlltoAll (padded):  0.4000 ms",
		"  Total Compute: 0.7 ms",
		"Elapsed Time: 9.0 ms",           /* the regex is anchored, as CUCo's is */
		"Phase: bad = abc ms",
		"Phase: unitless = 1.0",
		"Verification: PASS", NULL };
	eval_outcome o = parse(out);
	assert_true(o.correct);
	assert_int_equal(o.timing.samples, 0);
	assert_int_equal(o.timing.nphases, 0);
}

int main(void)
{
	compat_workload();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuco_blocks),
		cmocka_unit_test(test_tagged_repetitions),
		cmocka_unit_test(test_unlabelled_repetitions),
		cmocka_unit_test(test_fail_anywhere),
		cmocka_unit_test(test_verdict_per_rank),
		cmocka_unit_test(test_not_results),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
