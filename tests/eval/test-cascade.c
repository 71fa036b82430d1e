/* test-cascade.c — the evaluator end to end on the test workloads: a good
 * candidate through every stage, the build cache, each deliberately broken
 * candidate classified right with nothing left running, single-rank runs
 * without mpirun, the compat protocol, environment failures, and two
 * evaluations at once, two evaluators at once, and one benchmark run per
 * measurement. */
#include "env.h"
#include "eval/eval.h"
#include "util.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static char run_dir[256];

static int setup(void **state)
{
	(void)state;
	make_tmpdir(run_dir, sizeof run_dir);
	unsetenv("CUCO_MPIRUN");
	cuco_env_reread();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	/* Whatever happened, nothing the evaluator started may still run. */
	assert_int_equal(count_processes(run_dir), 0);
	rm_rf(run_dir);
	return 0;
}

/* An evaluator of the workload in folder dir. */
static cuco_evaluator *evaluator_at(const char *dir, cuco_workload **wl)
{
	cuco_err err = { 0 };
	if (cuco_workload_load(dir, wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_eval_config cfg = { .jobs = 2, .max_procs = 64 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(*wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return ev;
}

static cuco_evaluator *evaluator(const char *workload, cuco_workload **wl)
{
	return evaluator_at(fixture(workload), wl);
}

static void evaluate(cuco_evaluator *ev, const cuco_workload *wl, const char *source_rel,
	const cuco_directive *dir, bool bench, cuco_eval_result *res)
{
	size_t len;
	char *src = read_fixture(source_rel, &len);
	cuco_directive def;
	cuco_directive_default(wl, &def);
	cuco_err err = { 0 };
	if (cuco_eval_candidate(ev, src, len, dir ? dir : &def, bench, res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	free(src);
}

static void test_seed_and_cache(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", NULL, true, &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_false(res.cached_build);
	assert_true(res.compile_s > 0 && res.run_s > 0 && res.bench_s > 0);
	assert_int_equal(res.timing.samples, 5);
	assert_true(res.timing.min_us > 0 && res.timing.min_us <= res.timing.median_us);
	assert_true(res.timing.median_us <= res.timing.p90_us);
	assert_true(res.timing.max_error == 0);
	assert_int_equal(res.timing.nphases, 1);
	assert_string_equal(res.timing.phases[0].name, "comm");
	assert_true(res.bytes == 256 * 8 * 2);
	/* 4096 bytes at 100 GB/s take 0.04096 µs at best. */
	assert_true(fabs(res.timing.peak_fraction - 0.04096 / res.timing.median_us) < 1e-9);
	assert_true(res.overhead_s >= 0 && res.overhead_s < 1);

	cuco_eval_result again;
	evaluate(ev, wl, "mini/seed.c", NULL, false, &again);
	assert_true(again.ok);
	assert_true(again.cached_build);
	assert_true(again.compile_s == 0);
	assert_true(isnan(again.timing.peak_fraction) == false);

	/* Another knob value is another source, so another build. */
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_directive_set(&d, "scale", "3");
	evaluate(ev, wl, "mini/seed.c", &d, false, &again);
	assert_true(again.ok);
	assert_false(again.cached_build);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void remeasure(cuco_evaluator *ev, const cuco_workload *wl, const char *source_rel,
	cuco_eval_result *res)
{
	size_t len;
	char *src = read_fixture(source_rel, &len);
	cuco_directive def;
	cuco_directive_default(wl, &def);
	cuco_err err = { 0 };
	if (cuco_eval_remeasure(ev, src, len, &def, res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	free(src);
}

/* A round of a paired comparison benchmarks a cached build without the
 * separate verification, and the benchmark still refuses a wrong answer. */
static void test_remeasure(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	cuco_eval_result res;
	remeasure(ev, wl, "mini/seed.c", &res);  /* not built yet: the whole cascade */
	assert_true(res.ok && !res.cached_build && res.run_s > 0);
	remeasure(ev, wl, "mini/seed.c", &res);
	assert_true(res.ok && res.cached_build);
	assert_true(res.run_s == 0 && res.bench_s > 0 && res.timing.median_us > 0);
	evaluate(ev, wl, "broken/wrong.c", NULL, true, &res);
	assert_string_equal(res.failure.stage, "run");
	/* Its program was evicted with the verdict (cache.c); built alone, it
	 * is in the cache again, never verified. */
	size_t len;
	char *src = read_fixture("broken/wrong.c", &len);
	cuco_directive def;
	cuco_directive_default(wl, &def);
	cuco_err err = { 0 };
	assert_int_equal(cuco_eval_build(ev, src, len, &def, &res, &err), CUCO_OK);
	free(src);
	assert_true(res.ok && !res.cached_build);
	remeasure(ev, wl, "broken/wrong.c", &res);
	assert_true(res.cached_build);
	assert_false(res.ok);
	assert_string_equal(res.failure.stage, "bench");
	assert_string_equal(res.failure.error_class, "wrong-answer");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

typedef struct broken_case {
	const char *file;
	const char *stage;
	const char *error_class;
	int signal;
	const char *excerpt;  /* a part of the excerpt */
} broken_case;

static void test_broken_candidates(void **state)
{
	(void)state;
	static const broken_case cases[] = {
		{ "broken/syntax.c", "compile", "compile-error", 0, "error:" },
		{ "broken/segv.c", "run", "crash", SIGSEGV, "killed by signal 11" },
		{ "broken/wrong.c", "run", "wrong-answer", 0, "max error 0.5" },
		{ "broken/loop.c", "run", "timeout", 0, "endless loop or deadlock" },
		{ "broken/deadlock.c", "run", "timeout", 0, "endless loop or deadlock" },
		{ "broken/forkloop.c", "run", "crash", SIGKILL, "more than 64 processes" },
		{ "broken/noresult.c", "run", "protocol", 0, "no sealed verdict" },
		{ "broken/instant.c", "bench", "protocol", 0, "latency_us.median 1e-300 is not a time" },
	};
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const broken_case *c = &cases[i];
		cuco_eval_result res;
		double t0 = cuco_mono();
		evaluate(ev, wl, c->file, NULL, true, &res);
		if (res.ok || strcmp(res.failure.error_class, c->error_class) != 0
			|| strcmp(res.failure.stage, c->stage) != 0)
			fail_msg("%s: got %s/%s, want %s/%s: %s", c->file, res.failure.stage,
				res.failure.error_class, c->stage, c->error_class, res.failure.excerpt);
		assert_false(res.environment);
		assert_int_equal(res.signal, c->signal);
		if (!strstr(res.failure.excerpt, c->excerpt))
			fail_msg("%s: excerpt lacks \"%s\": %s", c->file, c->excerpt, res.failure.excerpt);
		assert_true(cuco_mono() - t0 < 10);
		assert_int_equal(count_processes(run_dir), 0);
	}
	cuco_eval_result res;
	evaluate(ev, wl, "broken/wrong.c", NULL, false, &res);
	assert_true(res.timing.max_error == 0.5);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_chatty_candidate_passes(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "broken/chatty.c", NULL, false, &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_true(res.timing.median_us == 10);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_bad_directive(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_directive_set(&d, "granularity", "3");
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", &d, false, &res);
	assert_false(res.ok);
	assert_string_equal(res.failure.error_class, "compile-error");
	assert_string_equal(res.failure.excerpt, "directive: granularity: \"3\" is outside the design space");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_single_rank_without_mpirun(void **state)
{
	(void)state;
	/* No launcher at all: a one-rank program must not need one. */
	setenv("CUCO_MPIRUN", "/nonexistent/mpirun", 1);
	cuco_env_reread();
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("solo", &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "solo/solo.c", NULL, true, &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 3);
	assert_true(res.timing.median_us == 6);
	assert_true(isnan(res.timing.peak_fraction));
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_missing_mpirun_is_environment(void **state)
{
	(void)state;
	setenv("CUCO_MPIRUN", "/nonexistent/mpirun", 1);
	cuco_env_reread();
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", NULL, true, &res);
	assert_false(res.ok);
	assert_true(res.environment);
	assert_string_equal(res.failure.error_class, "environment");
	assert_string_equal(res.failure.stage, "run");
	assert_non_null(strstr(res.failure.excerpt, "/nonexistent/mpirun not found"));
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_missing_compiler_is_environment(void **state)
{
	(void)state;
	setenv("CUCO_MPICC", "/nonexistent/mpicc", 1);
	cuco_env_reread();
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	unsetenv("CUCO_MPICC");
	cuco_env_reread();
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", NULL, true, &res);
	assert_true(res.environment);
	assert_string_equal(res.failure.stage, "compile");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* Copy fixtures/<name>'s files to base/<name> (dir), with the sources'
 * root (the seal's headers) found from there as from the fixtures. */
static void copy_fixture(const char *base, const char *name, char *dir, size_t size)
{
	snprintf(dir, size, "%s/%s", base, name);
	mkdir(dir, 0755);
	char from[600], path[1200];
	snprintf(from, sizeof from, "%s", fixture(name));
	struct dirent **files = NULL;
	int n = scandir(from, &files, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char rel[700], *text;
		size_t len;
		snprintf(rel, sizeof rel, "%s/%s", name, files[i]->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, files[i]->d_name);
		if (files[i]->d_name[0] != '.' && (text = read_fixture(rel, &len))) {
			cuco_buf out = { 0 };
			char *inc = strstr(text, "{workload}/../../../..");
			cuco_buf_append(&out, text, inc ? (size_t)(inc - text) : len);
			if (inc) {
				cuco_buf_puts(&out, getenv("CUCO_SOURCE_ROOT"));
				cuco_buf_puts(&out, inc + strlen("{workload}/../../../.."));
			}
			cuco_write_file(path, out.data, out.len, NULL);
			cuco_buf_free(&out);
			free(text);
		}
		free(files[i]);
	}
	free(files);
}

static void test_gpu_absent_is_environment(void **state)
{
	(void)state;
	if (access("/dev/nvidiactl", F_OK) == 0)
		skip();  /* a GPU is here: the absence cannot be tested */
	/* The solo workload, declared as a CUDA one. */
	char dir[512], path[600];
	copy_fixture(run_dir, "solo", dir, sizeof dir);
	size_t len;
	snprintf(path, sizeof path, "%s/workload.json", dir);
	char *text = NULL;
	assert_int_equal(cuco_read_file(path, 1 << 20, &text, &len, NULL), CUCO_OK);
	char *family = strstr(text, "\"cpu-mpi\"");
	memcpy(family, "\"cuda\"   ", 9);
	cuco_write_file(path, text, len, NULL);
	free(text);
	text = read_fixture("solo/solo.c", &len);
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(dir, &wl, &err), CUCO_OK);
	assert_int_equal(wl->family, CUCO_FAMILY_CUDA);
	cuco_eval_config cfg = { .jobs = 1 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	setenv("CUCO_NVCC", "cc", 1);
	cuco_env_reread();
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_OK);
	unsetenv("CUCO_NVCC");
	cuco_env_reread();
	cuco_eval_result res;
	cuco_directive d;
	cuco_directive_default(wl, &d);
	assert_int_equal(cuco_eval_candidate(ev, text, len, &d, false, &res, &err), CUCO_OK);
	free(text);
	assert_true(res.environment);
	assert_string_equal(res.failure.excerpt, "run: no GPU: /dev/nvidiactl is missing");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* A framed native program (fixtures/framed, one process): run_stage
 * writes the ticket into the stage's folder, the frame takes it before
 * the program's code runs, and then the key is in no file and no
 * environment of the stage's processes or their ancestors; the frame's
 * verdict says so, sealed, through run and benchmark. */
static void test_framed_ticket(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("framed", &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "framed/prog.c", NULL, true, &res);
	if (!res.ok)
		fail_msg("%s %s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 3);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* How many files of the run's cache start with prefix. */
static int cached(const char *prefix)
{
	char cache[300];
	snprintf(cache, sizeof cache, "%s/cache", run_dir);
	struct dirent **files = NULL;
	int n = scandir(cache, &files, NULL, alphasort), found = 0;
	for (int i = 0; i < n; i++) {
		found += strncmp(files[i]->d_name, prefix, strlen(prefix)) == 0;
		free(files[i]);
	}
	free(files);
	return found;
}

/* A frame's cached object follows the headers it includes from its
 * extras' folders (gpu-common's, for the one-GPU frames), .cuh ones too:
 * one edited there, the next evaluator builds the frame again. */
static void test_frame_cache_key(void **state)
{
	(void)state;
	/* Outside the run folder, which a build's sandbox hides. */
	char base[256], dir[512], shared[512], path[600];
	make_tmpdir(base, sizeof base);
	copy_fixture(base, "framed", dir, sizeof dir);
	copy_fixture(base, "framed-shared", shared, sizeof shared);
	size_t len;
	char *prog = read_fixture("framed/prog.c", &len);
	cuco_buf sources[2] = { { 0 } };
	for (int round = 0; round < 2; round++) {  /* two programs: the second is not in the cache */
		cuco_buf_printf(&sources[round], "/* round %d */\n", round);
		cuco_buf_append(&sources[round], prog, len);
	}
	free(prog);
	for (int round = 0; round < 2; round++) {
		cuco_workload *wl = NULL;
		cuco_err err = { 0 };
		cuco_evaluator *ev = evaluator_at(dir, &wl);
		cuco_directive d;
		cuco_directive_default(wl, &d);
		cuco_eval_result res;
		if (cuco_eval_candidate(ev, sources[round].data, sources[round].len, &d, false, &res, &err) != CUCO_OK)
			fail_msg("%s", err.msg);
		cuco_buf_free(&sources[round]);
		if (!res.ok)
			fail_msg("%s %s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
		cuco_evaluator_free(ev);
		cuco_workload_free(wl);
		assert_int_equal(cached("frame-"), round + 1);
		snprintf(path, sizeof path, "%s/value.cuh", shared);
		cuco_write_file(path, "#define FRAME_VALUE 2\n", 22, NULL);
	}
	rm_rf(base);
}

static void test_compat_protocol(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("compat", &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "compat/prog.c", NULL, true, &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 3);
	assert_true(res.timing.min_us == 1250);
	assert_true(res.timing.median_us == 1500);
	assert_true(res.timing.p90_us == 2000);
	assert_true(fabs(res.timing.spread - 0.6) < 1e-12);
	assert_int_equal(res.timing.nphases, 2);
	assert_string_equal(res.timing.phases[0].name, "compute");
	assert_true(res.timing.phases[0].us == 750);
	assert_string_equal(res.timing.phases[1].name, "comm");

	size_t len;
	char *src = read_fixture("compat/prog.c", &len);
	cuco_buf b = { 0 };
	cuco_buf_puts(&b, "#define FAIL_VERIFY 1\n");
	cuco_buf_append(&b, src, len);
	free(src);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_err err = { 0 };
	assert_int_equal(cuco_eval_candidate(ev, b.data, b.len, &d, true, &res, &err), CUCO_OK);
	cuco_buf_free(&b);
	assert_false(res.ok);
	assert_string_equal(res.failure.error_class, "wrong-answer");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

typedef struct parallel_arg {
	cuco_evaluator *ev;
	const cuco_workload *wl;
	const char *scale;       /* mini's knob; NULL: the workload's own seed */
	cuco_eval_result res;
} parallel_arg;

static void *evaluate_thread(void *p)
{
	parallel_arg *a = p;
	cuco_directive d;
	cuco_directive_default(a->wl, &d);
	if (a->scale)
		cuco_directive_set(&d, "scale", a->scale);
	evaluate(a->ev, a->wl, a->scale ? "mini/seed.c" : "sleepy/sleepy.c", &d, true, &a->res);
	return NULL;
}

static void test_parallel_evaluations(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator("mini", &wl);
	parallel_arg a[2] = { { ev, wl, "2", { 0 } }, { ev, wl, "4", { 0 } } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, evaluate_thread, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++)
		if (!a[i].res.ok)
			fail_msg("%s: %s", a[i].res.failure.error_class, a[i].res.failure.excerpt);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* A benchmark is one run, however wide its spread: re-running a noisy
 * one and keeping the steadiest gave noisy programs more draws (and a
 * paired round's arms unequal chances). sleepy at size "three" sleeps 3 s
 * per start, so three runs could not fit in 7.5 s and one does. */
static void test_one_benchmark_run(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_err err = { 0 };
	if (cuco_workload_load(fixture("sleepy"), &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	wl->max_spread = 0;  /* every run is past it */
	cuco_eval_config cfg = { .jobs = 1, .max_procs = 64 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	snprintf(cfg.size, sizeof cfg.size, "three");
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_eval_result res;
	evaluate(ev, wl, "sleepy/sleepy.c", NULL, true, &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_true(res.timing.spread > 0);
	if (!(res.bench_s >= 3 && res.bench_s < 7.5))
		fail_msg("the benchmark took %.1f s: not one run of a 3 s program", res.bench_s);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* Two evaluators in one process, at once: each stage has a control group
 * of its own. They once numbered their stages' groups each from 0, so a
 * stage of one joined the other's group, and the end of the short stage
 * (whatever is left in its group is killed) killed the long one. */
static void test_two_evaluators(void **state)
{
	(void)state;
	cuco_workload *wl[2];
	cuco_evaluator *ev[2] = { evaluator("sleepy", &wl[0]), evaluator("mini", &wl[1]) };
	parallel_arg a[2] = { { ev[0], wl[0], NULL, { 0 } }, { ev[1], wl[1], "2", { 0 } } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, evaluate_thread, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		if (!a[i].res.ok)
			fail_msg("%s: %s: %s", wl[i]->name, a[i].res.failure.error_class,
				a[i].res.failure.excerpt);
		cuco_evaluator_free(ev[i]);
		cuco_workload_free(wl[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seed_and_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remeasure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_candidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chatty_candidate_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_directive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_single_rank_without_mpirun, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_mpirun_is_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_compiler_is_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_absent_is_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_framed_ticket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_cache_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compat_protocol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parallel_evaluations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_evaluators, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_benchmark_run, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
