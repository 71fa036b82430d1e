/* bench/paired.c — a workload's baseline against its seed (at the seed's
 * default directive, the baseline's own) in paired rounds, as the engine
 * confirms a candidate: each round benchmarks both, in an order drawn at
 * random, and the interval is the engine's (core.h, docs/trust.md). With
 * --aa the baseline is paired with itself, a check of the statistics.
 *
 *   build/bench/paired [WORKLOAD] [--size S] [--rounds N] [--seed N] [--aa]
 *
 * Prints every round, the median phases of each program, the load average
 * before and after, and the intervals at 95 % and at a crown's 99.5 %. */
#include "eval/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROUNDS CUCO_PAIRED_MAX

typedef struct program {
	const char *name;
	char *src;
	size_t len;
	double us[MAX_ROUNDS];
	cuco_eval_result last;
} program;

static uint64_t rng = 1;

static uint64_t next(void)  /* splitmix64 */
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void print_load(const char *when)
{
	double l[3] = { NAN, NAN, NAN };
	getloadavg(l, 3);
	printf("load average %s: %.2f %.2f %.2f on %ld CPUs\n", when, l[0], l[1], l[2],
		sysconf(_SC_NPROCESSORS_ONLN));
}

static int measure(cuco_evaluator *ev, const cuco_directive *d, program *p, int round)
{
	cuco_err err = { 0 };
	if (cuco_eval_remeasure(ev, p->src, p->len, d, &p->last, &err) != CUCO_OK) {
		fprintf(stderr, "bench/paired: %s\n", err.msg);
		return 1;
	}
	if (!p->last.ok) {
		fprintf(stderr, "bench/paired: %s failed at %s: %s\n", p->name, p->last.failure.stage,
			p->last.failure.excerpt);
		return 1;
	}
	p->us[round] = p->last.timing.median_us;
	return 0;
}

static void print_phases(const program *p)
{
	printf("%-9s last round's phases:", p->name);
	for (int i = 0; i < p->last.timing.nphases; i++)
		printf(" %s %.1f us", p->last.timing.phases[i].name, p->last.timing.phases[i].us);
	printf("\n");
}

static void print_interval(const double *ratio, int n, double alpha)
{
	cuco_interval iv;
	char text[64];
	cuco_paired_interval(ratio, n, alpha, &iv);
	cuco_speedup_text(iv.value, iv.lo, iv.hi, iv.rounds, false, text, sizeof text);
	printf("  %s at %.1f %% (asked %.1f %%): %s\n", text, 100 * iv.confidence,
		100 * (1 - 2 * alpha), cuco_verdict_name(cuco_paired_verdict(&iv, alpha, 0.25)));
}

static int read_program(const cuco_workload *wl, const char *file, program *p, cuco_err *err)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	return cuco_read_file(path, 16u << 20, &p->src, &p->len, err);
}

int main(int argc, char **argv)
{
	const char *name = "cpu-gemm-allgather", *size = "";
	int rounds = 30;
	bool aa = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rng = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--aa"))
			aa = true;
		else if (argv[i][0] != '-')
			name = argv[i];
		else {
			fprintf(stderr, "usage: bench/paired [WORKLOAD] [--size S] [--rounds N] [--seed N] [--aa]\n");
			return 1;
		}
	}
	if (rounds < 2 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench/paired: --rounds must be 2..%d\n", MAX_ROUNDS);
		return 1;
	}
	cuco_err err = { 0 };
	cuco_workload *wl = NULL;
	char run_dir[] = "/tmp/cuco-bench-paired-XXXXXX";
	if (cuco_workload_load(name, &wl, &err) != CUCO_OK || !mkdtemp(run_dir)) {
		fprintf(stderr, "bench/paired: %s\n", err.msg[0] ? err.msg : "mkdtemp failed");
		return 1;
	}
	cuco_eval_config cfg = { .jobs = 1 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	snprintf(cfg.size, sizeof cfg.size, "%s", size);
	program a = { .name = "baseline" }, b = { .name = aa ? "baseline" : "seed" };
	cuco_evaluator *ev = NULL;
	int rc = cuco_evaluator_new(wl, &cfg, &ev, &err);
	if (rc == CUCO_OK)
		rc = read_program(wl, wl->baseline_file, &a, &err);
	if (rc == CUCO_OK)
		rc = read_program(wl, aa ? wl->baseline_file : wl->seed_file, &b, &err);
	if (rc != CUCO_OK) {
		fprintf(stderr, "bench/paired: %s\n", err.msg);
		return 1;
	}
	cuco_directive d;
	cuco_directive_default(wl, &d);
	char dir[160];
	cuco_directive_short(&d, dir, sizeof dir);
	printf("%s, size %s: baseline vs %s at %s, %d paired rounds in random order\n", wl->name,
		size[0] ? size : wl->default_size, b.name, dir, rounds);
	print_load("before");
	double ratio[MAX_ROUNDS];
	rc = 0;
	for (int r = 0; r < rounds && rc == 0; r++) {
		bool a_first = next() & 1;
		program *first = a_first ? &a : &b, *second = a_first ? &b : &a;
		rc = measure(ev, &d, first, r) || measure(ev, &d, second, r);
		if (rc == 0) {
			ratio[r] = a.us[r] / b.us[r];
			printf("round %2d  %-8s first  baseline %9.1f us  %-8s %9.1f us  ratio %.3f\n", r + 1,
				first->name, a.us[r], b.name, b.us[r], ratio[r]);
			fflush(stdout);
		}
	}
	print_load("after");
	if (rc == 0) {
		print_phases(&a);
		print_phases(&b);
		printf("%s's speedup over the baseline:\n", b.name);
		print_interval(ratio, rounds, 0.025);
		print_interval(ratio, rounds, 0.0025);
	}
	free(a.src);
	free(b.src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	char rm[128];
	snprintf(rm, sizeof rm, "rm -rf '%s'", run_dir);
	if (system(rm) != 0)
		rc = 1;
	return rc;
}
