/* test-gpu-compile.c — one GPU workload (argv[1]) through the evaluator at
 * its tiny size: the manifest passes `cuco check`, and the baseline, the
 * seed and, for cuda-nccl workloads, the seed's GIN variant compile with
 * nvcc. Where no GPU is present (CI) the run stage must then stop on the
 * environment; where enough are (one per rank), baseline and seed must run
 * correctly and the GIN variant either run or report its absence as the
 * environment's. With some GPUs but fewer than the workload's ranks the
 * sources must still compile, and the test then says why it ran nothing
 * and skips (exit 77). It says whether the stages ran in the sandbox.
 * A one-GPU workload's programs, linked with its frame, are then run by
 * hand with a ticket file: the frame must take it (a sealed verdict, the
 * environment's where no GPU is) and remove it, and must not take one from
 * the environment. A refereed one (rmsnorm) takes no ticket: its verdict
 * is its referee's, which the run stage gave; its referee must build. */
#include "eval/eval_int.h"
#include "../eval/util.h"
#include "../../workloads/common/cuco_seal.h"

#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static const char *workload;
static char run_dir[256];
static bool can_run;         /* enough GPUs here: the run stage must pass */
static char why_not[256];    /* when there are GPUs, but too few */

static void print_problem(const char *line, void *arg)
{
	(void)arg;
	print_message("%s\n", line);
}

static char *read_source(const cuco_workload *wl, const char *file, size_t *len)
{
	char path[1400], *text = NULL;
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	if (cuco_read_file(path, 1u << 22, &text, len, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return text;
}

/* Evaluate one source with the seed's directive, `backend` overridden when
 * given; compile must pass, and the run must pass or be the environment's
 * (no GPU at all, or no GIN when gin_may_miss). */
static void compiles(cuco_evaluator *ev, const cuco_workload *wl, const char *file, const char *backend)
{
	size_t len;
	char *src = read_source(wl, file, &len);
	cuco_directive dir;
	cuco_directive_default(wl, &dir);
	if (backend)
		assert_int_equal(cuco_directive_set(&dir, "backend", backend), 0);
	cuco_eval_result res;
	cuco_err err = { 0 };
	assert_int_equal(cuco_eval_candidate(ev, src, len, &dir, false, &res, &err), CUCO_OK);
	free(src);
	print_message("%s %s%s: %s %s %.1f s compile\n", wl->name, file, backend ? " (gin)" : "",
		res.ok ? "ok" : res.failure.stage, res.ok ? "" : res.failure.error_class, res.compile_s);
	if (!res.ok && strcmp(res.failure.stage, "compile") == 0)
		fail_msg("%s: %s does not compile:\n%s", wl->name, file, res.failure.excerpt);
	if (res.ok)
		return;
	/* Compiled; the run may only fail on the environment: too few GPUs
	 * here, or (GIN variant) no RDMA NIC. */
	if (!res.environment || (can_run && !backend))
		fail_msg("%s: %s: %s in %s:\n%s", wl->name, file, res.failure.error_class,
			res.failure.stage, res.failure.excerpt);
}

/* The first sealed line of out that t opens, its JSON; NULL when none. */
static const char *sealed_json(const eval_ticket *t, const char *out)
{
	const char *json = NULL;
	for (const char *at = strstr(out, CUCO_SEAL_TAG); at; at = strstr(at + 1, CUCO_SEAL_TAG)) {
		char line[8192];
		snprintf(line, sizeof line, "%.*s", (int)strcspn(at + strlen(CUCO_SEAL_TAG), "\n"),
			at + strlen(CUCO_SEAL_TAG));
		static char kept[8192];
		if (eval_ticket_open(t, line, &json)) {
			snprintf(kept, sizeof kept, "%s", json);
			return kept;
		}
	}
	return NULL;
}

/* One built program (RUN/cache/<hash>) run by hand in a fresh folder:
 * given a ticket file, its frame seals its verdict with that ticket's key
 * and seed, and the file is gone; given the ticket in $CUCO_HARNESS only,
 * nothing is sealed. */
static void frame_takes_ticket(const char *binary)
{
	char dir[256], path[400], cmd[2000], seed[40];
	make_tmpdir(dir, sizeof dir);
	eval_ticket t;
	eval_ticket_new(&t);
	cuco_err err = { 0 };
	assert_int_equal(eval_ticket_file(&t, dir, path, sizeof path, &err), CUCO_OK);
	int status;
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' --warmup 0 --reps 1 2>&1", dir, binary);
	char *out = capture_output(cmd, &status);
	const char *json = sealed_json(&t, out);
	print_message("%s (ticket file): exit %d: %s\n", strrchr(binary, '/') + 1, status, json ? json : out);
	if (!json)
		fail_msg("no verdict sealed with the ticket file's key:\n%s", out);
	snprintf(seed, sizeof seed, "\"seed\": \"%016llx\"", (unsigned long long)t.seed);
	assert_has(json, seed);
	assert_int_not_equal(access(path, F_OK), 0);
	free(out);
	snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' --warmup 0 --reps 1 2>&1", dir, t.env, binary);
	out = capture_output(cmd, &status);
	if (sealed_json(&t, out) || !strstr(out, "CUCO_RESULT "))
		fail_msg("the frame took the ticket from the environment:\n%s", out);
	free(out);
	rm_rf(dir);
}

/* Every program the evaluator built and linked with the frame. */
static void frames_take_tickets(void)
{
	char cache[400], path[700];
	snprintf(cache, sizeof cache, "%s/cache", run_dir);
	struct dirent **files = NULL;
	int n = scandir(cache, &files, NULL, alphasort), programs = 0;
	for (int i = 0; i < n; i++) {
		const char *name = files[i]->d_name;
		size_t hex = 0;
		while (isxdigit((unsigned char)name[hex]))
			hex++;
		snprintf(path, sizeof path, "%s/%s", cache, name);
		if (hex == CUCO_HASH_LEN && !name[hex] && access(path, X_OK) == 0) {
			frame_takes_ticket(path);
			programs++;
		}
		free(files[i]);
	}
	free(files);
	assert_int_equal(programs, 2);  /* the baseline and the seed */
}

static void test_workload(void **state)
{
	(void)state;
	assert_int_equal(cuco_workload_check(workload, print_problem, NULL), 0);
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(workload, &wl, &err), CUCO_OK);
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	can_run = cuco_hardware_fits(&hw, wl, why_not, sizeof why_not);
	if (can_run || hw.ngpus == 0)
		why_not[0] = '\0';
	cuco_eval_config cfg = { .jobs = 1 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	snprintf(cfg.size, sizeof cfg.size, "tiny");
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	bool sandboxed;
	char how[640];
	assert_int_equal(cuco_sandbox_check(cfg.sandbox, &sandboxed, how, sizeof how, &err), CUCO_OK);
	print_message("%s\n", how);
	compiles(ev, wl, wl->baseline_file, NULL);
	compiles(ev, wl, wl->seed_file, NULL);
	if (wl->family == CUCO_FAMILY_CUDA_NCCL)
		compiles(ev, wl, wl->seed_file, "gin");
	if (*wl->frame_file && wl->protocol == CUCO_PROTO_NATIVE)
		frames_take_tickets();
	/* A refereed workload's referee is built where no GPU is too: a run
	 * stage there stops on the environment before it would build one. */
	if (*wl->referee_file) {
		char referee[PATH_MAX];
		if (cuco_evaluator_referee(ev, referee, sizeof referee, &err) != CUCO_OK)
			fail_msg("%s", err.msg);
		print_message("%s: referee built\n", wl->name);
	}
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s WORKLOAD\n", argv[0]);
		return 1;
	}
	workload = argv[1];
	make_tmpdir(run_dir, sizeof run_dir);
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_workload) };
	int failed = cmocka_run_group_tests_name(workload, tests, NULL, NULL);
	rm_rf(run_dir);
	if (!failed && why_not[0]) {
		printf("skip: %s: compiled, not run\n", why_not);
		return 77;
	}
	return failed;
}
