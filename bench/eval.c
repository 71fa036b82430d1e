/* bench/eval.c — the evaluator's own overhead per candidate: wall time of
 * cuco_eval_candidate() outside the children it runs (hashing, templates,
 * the work folder, fork and wait, parsing, clean-up). The candidate is the
 * trivial one-process test workload, so the children cost almost nothing
 * and the build is cached after the first evaluation, as in a search that
 * revisits sources. Target: under 20 ms. Then the same number of
 * remeasures (cuco_eval_remeasure): what one program's run in a round of
 * a paired confirmation costs, against a whole evaluation (docs/trust.md).
 * An optional workload (path or name) replaces the trivial one. */
#include "eval/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EVALS 50

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void summary(const char *what, double *ms, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += ms[i];
	qsort(ms, (size_t)n, sizeof *ms, cmp_double);
	printf("%-34s mean %7.2f ms  median %7.2f ms  max %7.2f ms\n", what, sum / n, ms[n / 2], ms[n - 1]);
}

int main(int argc, char **argv)
{
	const char *wl_path = argc > 1 ? argv[1] : CUCO_SOURCE_ROOT "/tests/eval/fixtures/solo";
	cuco_err err = { 0 };
	cuco_workload *wl = NULL;
	if (cuco_workload_load(wl_path, &wl, &err) != CUCO_OK) {
		fprintf(stderr, "bench/eval: %s\n", err.msg);
		return 1;
	}
	char run_dir[] = "/tmp/cuco-bench-eval-XXXXXX";
	if (!mkdtemp(run_dir)) {
		perror("bench/eval: mkdtemp");
		return 1;
	}
	cuco_eval_config cfg = { .jobs = 1 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	char path[1200], *src = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/%s", wl->dir, wl->seed_file);
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK
		|| cuco_read_file(path, 1 << 20, &src, &len, &err) != CUCO_OK) {
		fprintf(stderr, "bench/eval: %s\n", err.msg);
		return 1;
	}
	cuco_directive dir;
	cuco_directive_default(wl, &dir);
	double overhead[EVALS], total[EVALS], children[EVALS], again[EVALS];
	int rc = 0;
	for (int i = 0; i < 2 * EVALS && rc == 0; i++) {
		cuco_eval_result res;
		double t0 = cuco_mono();
		int erc = i < EVALS ? cuco_eval_candidate(ev, src, len, &dir, true, &res, &err) :
			cuco_eval_remeasure(ev, src, len, &dir, &res, &err);
		if (erc != CUCO_OK || !res.ok) {
			fprintf(stderr, "bench/eval: evaluation %d failed: %s%s\n", i, err.msg, res.excerpt);
			rc = 1;
		}
		double ms = (cuco_mono() - t0) * 1e3;
		if (i >= EVALS) {
			again[i - EVALS] = ms;
			continue;
		}
		total[i] = ms;
		overhead[i] = res.overhead_s * 1e3;
		children[i] = (res.compile_s + res.run_s + res.bench_s) * 1e3;
	}
	if (rc == 0) {
		printf("evaluator overhead, %d evaluations of %s (compile cached after the first):\n", EVALS, wl->name);
		summary("outside the children (target < 20)", overhead, EVALS);
		summary("the children (run + bench)", children, EVALS);
		summary("whole evaluation", total, EVALS);
		summary("a remeasure (a program in a round)", again, EVALS);
	}
	free(src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	char rm[128];
	snprintf(rm, sizeof rm, "rm -rf %s", run_dir);
	if (system(rm) != 0)
		fprintf(stderr, "bench/eval: could not remove %s\n", run_dir);
	return rc;
}
