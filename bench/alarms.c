/* bench/alarms.c — false alarms (issue 24): every shipped workload's
 * baseline and seed through one evaluation and then N benchmark rounds
 * (cuco_eval_remeasure, what each round of a confirmation runs), counting
 * every refusal or failure with its one-line reason. An honest program
 * refused is as serious a defect as an attack let through: the target is
 * 0. With --load, a parallel build of cuco (ninja -j NCPU in a scratch
 * folder, started again whenever it ends) runs beside every round.
 *
 *   build/bench/alarms [WORKLOAD...] [--rounds N] [--size S] [--load]
 *
 * Without workloads: every workload of $CUCO_WORKLOADS (else ./workloads)
 * this machine can run (cuco_hardware_fits). Prints a line per program:
 * rounds passed, refused (by class), and the median; then the total.
 * Exit status 1 when anything was refused. */
#include "eval/eval.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ROUNDS 200

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A parallel build of cuco in a scratch folder, again and again, until
 * killed: the load a person's compile puts beside a search. */
static pid_t start_load(void)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	setpgid(0, 0);
	char dir[] = "/tmp/cuco-bench-alarms-XXXXXX";
	if (!mkdtemp(dir))
		_exit(1);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cd '%s' && meson setup b '%s' >/dev/null 2>&1 && while :; do "
		"ninja -C b -j %ld >/dev/null 2>&1; ninja -C b -t clean >/dev/null 2>&1; done", dir,
		CUCO_SOURCE_ROOT, sysconf(_SC_NPROCESSORS_ONLN));
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/* One program: an evaluation, then `rounds` remeasures; 0 refused, or
 * how many were. */
static int program(cuco_evaluator *ev, const cuco_workload *wl, const char *name, const char *file,
	int rounds)
{
	char path[sizeof wl->dir + 160], *src;
	size_t len;
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	if (cuco_read_file(path, 16u << 20, &src, &len, &err) != CUCO_OK) {
		fprintf(stderr, "bench/alarms: %s\n", err.msg);
		return 1;
	}
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_eval_result res;
	double us[MAX_ROUNDS];
	int ok = 0, refused = 0;
	for (int r = 0; r <= rounds; r++) {
		int rc = r == 0 ? cuco_eval_candidate(ev, src, len, &d, true, &res, &err)
			: cuco_eval_remeasure(ev, src, len, &d, &res, &err);
		if (rc != CUCO_OK) {
			fprintf(stderr, "bench/alarms: %s %s: %s\n", wl->name, name, err.msg);
			refused++;
			continue;
		}
		if (res.ok) {
			us[ok++] = res.timing.median_us;
			continue;
		}
		refused++;
		printf("  %s %s round %d: %s (%.*s)\n", wl->name, name, r, res.failure.error_class,
			(int)strcspn(res.failure.excerpt, "\n"), res.failure.excerpt);
	}
	qsort(us, (size_t)ok, sizeof us[0], cmp_double);
	printf("%-22s %-8s %3d of %3d passed, %d refused, median %.1f us\n", wl->name, name, ok,
		rounds + 1, refused, ok ? us[ok / 2] : NAN);
	fflush(stdout);
	free(src);
	return refused;
}

static int workload(const char *name, const char *size, int rounds, const cuco_hardware *hw)
{
	cuco_err err = { 0 };
	cuco_workload *wl;
	if (cuco_workload_load(name, &wl, &err) != CUCO_OK) {
		fprintf(stderr, "bench/alarms: %s\n", err.msg);
		return 1;
	}
	char why[200];
	if (!cuco_hardware_fits(hw, wl, why, sizeof why)) {
		printf("%-22s skipped: %s\n", wl->name, why);
		cuco_workload_free(wl);
		return 0;
	}
	cuco_eval_config cfg = { 0 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "/tmp/cuco-bench-alarms-run-%ld-%s", (long)getpid(),
		wl->name);
	snprintf(cfg.size, sizeof cfg.size, "%s", size);
	cuco_evaluator *ev;
	int refused = 0;
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK) {
		fprintf(stderr, "bench/alarms: %s\n", err.msg);
		refused = 1;
	} else {
		refused += program(ev, wl, "baseline", wl->baseline_file, rounds);
		if (*wl->seed_file && strcmp(wl->seed_file, wl->baseline_file) != 0)
			refused += program(ev, wl, "seed", wl->seed_file, rounds);
		cuco_evaluator_free(ev);
	}
	char rm[1200];
	snprintf(rm, sizeof rm, "rm -rf '%s'", cfg.run_dir);
	if (system(rm) != 0)
		fprintf(stderr, "bench/alarms: could not remove %s\n", cfg.run_dir);
	cuco_workload_free(wl);
	return refused;
}

int main(int argc, char **argv)
{
	int rounds = 10;
	const char *size = "";
	bool load = false;
	char **names = calloc((size_t)argc + 1, sizeof *names);
	size_t n = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
			size = argv[++i];
		else if (strcmp(argv[i], "--load") == 0)
			load = true;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: bench/alarms [WORKLOAD...] [--rounds N] [--size S] [--load]\n");
			return 2;
		} else
			names[n++] = argv[i];
	}
	if (rounds < 1 || rounds >= MAX_ROUNDS) {
		fprintf(stderr, "bench/alarms: --rounds must be 1 to %d\n", MAX_ROUNDS - 1);
		return 2;
	}
	cuco_err err = { 0 };
	if (n == 0 && cuco_workload_list(&names, &n, &err) != CUCO_OK) {
		fprintf(stderr, "bench/alarms: %s\n", err.msg);
		return 2;
	}
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	pid_t loader = load ? start_load() : 0;
	double l[3] = { NAN, NAN, NAN };
	getloadavg(l, 3);
	printf("bench/alarms: %d rounds a program%s; load average %.2f %.2f %.2f on %ld CPUs\n", rounds,
		load ? ", a parallel build beside" : "", l[0], l[1], l[2], sysconf(_SC_NPROCESSORS_ONLN));
	int refused = 0;
	for (size_t i = 0; i < n; i++)
		refused += workload(names[i], size, rounds, &hw);
	if (loader > 0) {
		kill(-loader, SIGTERM);
		waitpid(loader, NULL, 0);
	}
	getloadavg(l, 3);
	printf("bench/alarms: %d refused; load average after %.2f %.2f %.2f\n", refused, l[0], l[1], l[2]);
	return refused ? 1 : 0;
}
