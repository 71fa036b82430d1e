/* fuzz_manifest — the workload loader and checker on arbitrary
 * workload.json text: every input is either loaded or refused with a
 * one-line error naming the field; nothing crashes. The manifest lives in
 * a scratch folder with a seed and a baseline so file checks pass too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"

static char dir[64];

static void count_problem(const char *line, void *arg)
{
	if (strchr(line, '\n'))
		abort();  /* every problem is one line */
	(*(int *)arg)++;
}

static const char *const scratch_files[] = { "seed.c", "baseline.c", "workload.json" };

/* The scratch folder goes with the process (replay runs in every test run). */
static void remove_scratch(void)
{
	char path[128];
	for (size_t i = 0; i < sizeof scratch_files / sizeof scratch_files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, scratch_files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	if (!dir[0]) {
		strcpy(dir, "/tmp/cuco-fuzz-manifest-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_scratch);
		snprintf(path, sizeof path, "%s/seed.c", dir);
		cuco_write_file(path, "int main(void){return 0;}\n", 26, NULL);
		snprintf(path, sizeof path, "%s/baseline.c", dir);
		cuco_write_file(path, "int main(void){return 0;}\n", 26, NULL);
	}
	snprintf(path, sizeof path, "%s/workload.json", dir);
	if (cuco_write_file(path, (const char *)data, size, NULL) != CUCO_OK)
		return 0;
	cuco_workload *wl = NULL;
	cuco_err err;
	if (cuco_workload_load(dir, &wl, &err) == CUCO_OK) {
		cuco_directive d;
		cuco_directive_default(wl, &d);
		cuco_directive_valid(wl, &d, &err);
		double bytes, flops;
		cuco_workload_peak(wl, cuco_workload_size(wl, NULL), &bytes, &flops, &err);
		cuco_workload_free(wl);
	} else if (strchr(err.msg, '\n')) {
		abort();
	}
	int problems = 0;
	cuco_workload_check(dir, count_problem, &problems);
	return 0;
}
