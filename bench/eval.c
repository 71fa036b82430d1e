/* bench/eval.c — the evaluator's own overhead per candidate: wall time of
 * cuco_eval_candidate() outside the children it runs (hashing, templates,
 * the work folder, fork and wait, parsing, clean-up). The candidate is the
 * trivial one-process test workload, so the children cost almost nothing
 * and the build is cached after the first evaluation, as in a search that
 * revisits sources. Target: under 20 ms. Then the same number of
 * remeasures (cuco_eval_remeasure): what one program's run in a round of
 * a paired confirmation costs, against a whole evaluation (docs/trust.md).
 * The trust rows then time the defences' own work per candidate outside
 * the children (trust_rows). An optional workload (path or name) replaces
 * the trivial one. */
#include "eval/eval.h"
#include "eval/eval_int.h"
#include "../workloads/common/cuco_seal.h"

#include <dirent.h>

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

/* A built program in the run's cache (not the interposer), into path. */
static bool built_program(const char *run_dir, char *path, size_t size)
{
	char cache[1100];
	snprintf(cache, sizeof cache, "%s/cache", run_dir);
	DIR *d = opendir(cache);
	struct dirent *e;
	bool found = false;
	while (d && !found && (e = readdir(d)))
		if (e->d_name[0] != '.' && strncmp(e->d_name, "cuco-count", 10) != 0) {
			snprintf(path, size, "%s/%s", cache, e->d_name);
			found = true;
		}
	if (d)
		closedir(d);
	return found;
}

/* What the defences cost per candidate outside the children (trust.c,
 * elf.c, docs/workloads.md "Trust"): the source scan, the built program's
 * symbols and the host-call rules, one ticket and the seal check of one
 * verdict. The harness's own checks run inside the children: they are in
 * the children's row. */
static void trust_rows(const cuco_workload *wl, const cuco_directive *dir, const char *src, size_t len,
	const char *run_dir)
{
	enum { N = 200 };
	double scan[N], elf[N], seal[N];
	char why[400], binary[1400];
	bool have_binary = built_program(run_dir, binary, sizeof binary);
	eval_known known = { 0 };  /* read once, as the evaluator does when it opens */
	eval_known_read(&known, wl);
	const char *json = "{\"correct\": true, \"max_error\": 1.4e-06, \"latency_us\": {\"min\": 9100.2, "
		"\"median\": 9400.7, \"p90\": 9800.1, \"max\": 9900.3, \"samples\": 15}, \"phases_us\": "
		"{\"compute\": 5000.1, \"comm\": 3000.2, \"sync\": 10.0, \"exposed_comm\": 4000.3}, \"bytes\": "
		"16777216, \"flops\": 67108864, \"seed\": \"9c2e61d0a4b37f15\", \"ranks\": 2, \"checks\": 5, "
		"\"host_calls\": 28, \"host_calls_by\": \"MPI_Isend=14 MPI_Irecv=14\"}";
	for (int i = 0; i < N; i++) {
		double t0 = cuco_mono();
		eval_trust tr;
		eval_trust_scan(src, len, &known, why, sizeof why);
		eval_trust_rules(wl, dir, src, len, &tr);
		double t1 = cuco_mono();
		eval_elf e;
		cuco_err err = { 0 };
		if (have_binary && eval_elf_read(binary, &e, &err) == CUCO_OK) {
			eval_trust_binary(wl, &tr, &e, why, sizeof why);
			eval_elf_free(&e);
		}
		double t2 = cuco_mono();
		eval_ticket t;
		eval_ticket_new(&t);
		char line[1200];
		const char *got;
		snprintf(line, sizeof line, "%016llx %s",
			(unsigned long long)cuco_seal(t.k0, t.k1, json, strlen(json)), json);
		if (!eval_ticket_open(&t, line, &got))
			fprintf(stderr, "bench/eval: the seal did not check\n");
		double t3 = cuco_mono();
		scan[i] = (t1 - t0) * 1e3;
		elf[i] = (t2 - t1) * 1e3;
		seal[i] = (t3 - t2) * 1e3;
	}
	eval_known_free(&known);
	char what[96];
	printf("trust, %d times each (outside the children):\n", N);
	snprintf(what, sizeof what, "source scan + claim (%zu bytes)", len);
	summary(what, scan, N);
	summary(have_binary ? "ELF symbols + host-call rules" : "ELF (no built program found)", elf, N);
	summary("ticket + seal check of a verdict", seal, N);
}

/* Compile a workload's file to an object at obj with its build; false
 * when it does not build. */
static bool object_of(const cuco_workload *wl, const char *file, const char *obj)
{
	char source[1400], compiler[512];
	snprintf(source, sizeof source, "%s/%s", wl->dir, file);
	cuco_workload_compiler(wl, cuco_env_get(), compiler, sizeof compiler);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	eval_vars v = { .wl = wl, .size = cuco_workload_size(wl, ""), .dir = &d, .compiler = compiler,
		.source = source, .output = obj };
	cuco_argv cmd = { 0 };
	cuco_buf line = { 0 };
	bool ok = eval_expand(wl->build_cmd, &v, &cmd, NULL) == CUCO_OK;
	cuco_argv_join(cmd.v, &line);
	cuco_buf_puts(&line, " >/dev/null 2>&1");
	ok = ok && system(line.data) == 0;
	cuco_argv_free(&cmd);
	cuco_buf_free(&line);
	return ok;
}

/* A framed workload's object check (objcheck.c): the rules once, then a
 * check of the seed's object, which it rewrites, so each time on a fresh
 * copy (the copy is timed apart and left out). */
static void objcheck_rows(const cuco_workload *wl, const char *run_dir)
{
	enum { N = 20 };
	char frame[1200], obj[1200], copy[1300], cp[2700], why[512];
	snprintf(frame, sizeof frame, "%s/frame.o", run_dir);
	snprintf(obj, sizeof obj, "%s/seed.o", run_dir);
	snprintf(copy, sizeof copy, "%s/seed-copy.o", run_dir);
	snprintf(cp, sizeof cp, "cp '%s' '%s'", obj, copy);
	if (!object_of(wl, wl->frame_file, frame) || !object_of(wl, wl->seed_file, obj)) {
		printf("object check: the frame or the seed does not build here\n");
		return;
	}
	char *frames[] = { frame, NULL };
	eval_objspec spec = { .family = wl->family, .entries = "cuco_setup cuco_step cuco_teardown cuco_mpi_thread",
		.frame = frames, .mpicc = "mpicc" };
	eval_objrules *rules = NULL;
	cuco_err err = { 0 };
	double t0 = cuco_mono();
	if (eval_objrules_new(&spec, &rules, &err) != CUCO_OK) {
		printf("object check: %s\n", err.msg);
		return;
	}
	double made = (cuco_mono() - t0) * 1e3, ms[N];
	for (int i = 0; i < N; i++) {
		if (system(cp) != 0)
			break;
		double t1 = cuco_mono();
		bool unlinkable;
		if (eval_objcheck(copy, rules, why, sizeof why, &unlinkable, &err) != CUCO_OK || *why)
			printf("object check: %s%s\n", err.msg, why);
		ms[i] = (cuco_mono() - t1) * 1e3;
	}
	printf("object check, the rules once: %.1f ms; the seed's object, %d times:\n", made, N);
	summary("check (objdump, objcopy)", ms, N);
	eval_objrules_free(rules);
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
			fprintf(stderr, "bench/eval: evaluation %d failed: %s%s\n", i, err.msg,
				res.failure.excerpt);
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
	if (rc == 0)
		trust_rows(wl, &dir, src, len, run_dir);
	if (rc == 0 && *wl->frame_file)
		objcheck_rows(wl, run_dir);
	free(src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	char rm[128];
	snprintf(rm, sizeof rm, "rm -rf %s", run_dir);
	if (system(rm) != 0)
		fprintf(stderr, "bench/eval: could not remove %s\n", run_dir);
	return rc;
}
