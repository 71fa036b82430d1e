/* test-gpu-deadlock.c — on a machine with two GPUs: the fixture whose rank 1
 * never arrives at an LSA barrier is killed at the run limit and classified
 * as a timeout, with no process left behind; the same program with every
 * rank arriving runs. Skips (exit 77) where fewer GPUs are visible. */
#include "eval/eval.h"
#include "../eval/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static char run_dir[256];

static void run_file(const char *which, cuco_eval_result *res)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/gpu/gpu-deadlock", getenv("CUCO_SOURCE_ROOT"));
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(dir, &wl, &err), CUCO_OK);
	cuco_eval_config cfg = { .jobs = 1 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_OK);
	char path[1400], *src = NULL;
	size_t len;
	snprintf(path, sizeof path, "%s/%s", dir, strcmp(which, "seed") == 0 ? wl->seed_file : wl->baseline_file);
	assert_int_equal(cuco_read_file(path, 1u << 20, &src, &len, &err), CUCO_OK);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	assert_int_equal(cuco_eval_candidate(ev, src, len, &d, false, res, &err), CUCO_OK);
	free(src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_barrier_everyone_meets(void **state)
{
	(void)state;
	cuco_eval_result res;
	run_file("baseline", &res);
	if (!res.ok)
		fail_msg("%s %s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
}

static void test_missing_rank_is_a_deadlock(void **state)
{
	(void)state;
	cuco_eval_result res;
	run_file("seed", &res);
	assert_false(res.ok);
	assert_string_equal(res.failure.stage, "run");
	assert_string_equal(res.failure.error_class, "timeout");
	assert_int_equal(count_processes(run_dir), 0);
}

int main(void)
{
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	if (hw.ngpus < 2) {
		printf("skip: the deadlock fixture needs 2 GPUs and %d %s visible\n", hw.ngpus, hw.ngpus == 1 ? "is" : "are");
		return 77;
	}
	make_tmpdir(run_dir, sizeof run_dir);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_barrier_everyone_meets),
		cmocka_unit_test(test_missing_rank_is_a_deadlock),
	};
	int failed = cmocka_run_group_tests_name("gpu-deadlock", tests, NULL, NULL);
	rm_rf(run_dir);
	return failed;
}
