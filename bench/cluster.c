/* bench/cluster.c — evaluations per minute of a search on 1 and on 2
 * Slurm slots (bench/results/cluster.md).
 *
 *   build/bench/cluster [MINUTES [SIZE]]   (default 3 minutes per configuration,
 *                                          size "three": 3 s of sleep per start)
 *
 * It starts the tests' private Slurm cluster (tests/eval/daemons.c: two
 * slurmd nodes on this machine, fresh ports, its own folder), then runs
 * `cuco run tests/eval/fixtures/sleepy --runner slurm` for MINUTES with
 * [runner] slots = 1, then slots = 2, and counts the run and benchmark
 * holds the slots did (meta "slots"): one per evaluation of a candidate,
 * the baseline and the seed included. The sleepy workload sleeps at every
 * start of its program (size "one": 1 s, "three": 3 s), so an evaluation
 * costs mostly its two stages' sleeps, not CPU: what is measured is
 * whether cuco keeps two slots busy, not how fast this machine computes.
 * Each stage is a Slurm job of its own (no allocation), as from a login
 * node. Exit 77 when Slurm cannot start here. */
#include "daemons.h"
#include "store/store.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct figure {
	int slots;
	double holds, minutes, load_before, load_after;
	int status;
} figure;

static int holds_txn(cuco_txn *txn, void *arg)
{
	double *holds = arg;
	char *json = NULL;
	if (cuco_meta_get(txn, "slots", &json) != CUCO_OK)
		return CUCO_OK;
	cJSON *j = cJSON_Parse(json);
	free(json);
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, "slots")) {
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(s, "holds");
		if (cJSON_IsNumber(h))
			*holds += h->valuedouble;
	}
	cJSON_Delete(j);
	return CUCO_OK;
}

static double load_now(void)
{
	double l[1] = { -1 };
	return getloadavg(l, 1) == 1 ? l[0] : -1;
}

static void measure(figure *f, double minutes, const char *size)
{
	char dir[256], conf[128], cmd[2048], run[300];
	make_tmpdir(dir, sizeof dir);
	snprintf(conf, sizeof conf, "[runner]\npartition = cuco\nslots = %d\n", f->slots);
	config_home(dir, conf);
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(cmd, sizeof cmd, "XDG_CONFIG_HOME='%s' timeout %.0f '%s' run '%s/tests/eval/fixtures/sleepy' "
		"--size %s --runner slurm --budget 0 --minutes %g --rebench 0 --headless --run '%s' "
		">'%s/out.txt' 2>&1", dir, minutes * 60 + 300, CUCO_BIN, CUCO_SOURCE_ROOT, size, minutes, run,
		dir);
	f->load_before = load_now();
	double t0 = cuco_mono();
	f->status = system(cmd);
	f->minutes = (cuco_mono() - t0) / 60;
	f->load_after = load_now();
	cuco_store *st;
	cuco_err err = { 0 };
	if (cuco_store_open(run, CUCO_STORE_RDONLY, &st, &err) == CUCO_OK) {
		cuco_store_read(st, holds_txn, &f->holds, &err);
		cuco_store_close(st);
	}
	if (f->status != 0) {
		snprintf(cmd, sizeof cmd, "tail -n 20 '%s/out.txt' >&2", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench/cluster: no output kept\n");
	}
	rm_rf(dir);
}

int main(int argc, char **argv)
{
	double minutes = argc > 1 ? atof(argv[1]) : 3;
	const char *size = argc > 2 ? argv[2] : "three";
	if (!(minutes > 0) || strspn(size, "abcdefghijklmnopqrstuvwxyz") != strlen(size)) {
		fprintf(stderr, "usage: bench/cluster [MINUTES per configuration [SIZE of tests/eval/fixtures/sleepy]]\n");
		return 1;
	}
	slurm cluster;
	const char *why = slurm_start(&cluster);
	if (why) {
		fprintf(stderr, "bench/cluster: %s\n", why);
		slurm_stop(&cluster);
		return 77;
	}
	int status;
	char *version = capture_output("srun --version", &status);
	char date[64];
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	figure f[2] = { { .slots = 1 }, { .slots = 2 } };
	for (int i = 0; i < 2; i++)
		measure(&f[i], minutes, size);
	slurm_stop(&cluster);
	printf("bench/cluster %s, %s, sleepy workload size %s, %g min each\n", date, cuco_trim(version),
		size, minutes);
	printf("%-6s %12s %10s %14s %22s\n", "slots", "evaluations", "minutes", "per minute", "load (1 min) before/after");
	for (int i = 0; i < 2; i++)
		printf("%-6d %12.0f %10.2f %14.1f %14.2f / %.2f%s\n", f[i].slots, f[i].holds, f[i].minutes,
			f[i].holds / f[i].minutes, f[i].load_before, f[i].load_after,
			f[i].status ? "  (the run failed: see above)" : "");
	double r1 = f[0].holds / f[0].minutes, r2 = f[1].holds / f[1].minutes;
	printf("ratio 2 slots / 1 slot: %.2f\n", r1 > 0 ? r2 / r1 : 0);
	free(version);
	return f[0].status || f[1].status;
}
