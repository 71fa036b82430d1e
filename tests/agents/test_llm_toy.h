/* test_llm_toy.h — the "toy" workload that the reply and prompt tests
 * share: written into a fresh temporary folder and loaded from there. */
#ifndef CUCO_TEST_LLM_TOY_H
#define CUCO_TEST_LLM_TOY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strategies/strategies.h"

static const char toy_manifest[] =
	"{\"name\": \"toy\", \"title\": \"Toy all-gather\", \"description\": \"Gather then multiply.\",\n"
	" \"family\": \"cpu-mpi\", \"ranks\": 2,\n"
	" \"sizes\": {\"default\": \"small\", \"small\": {\"N\": 4}},\n"
	" \"files\": {\"baseline\": \"baseline.c\", \"seed\": \"seed.c\"},\n"
	" \"compiler\": \"cc\",\n"
	" \"build\": \"{compiler} -o {output} {source} {defines}\", \"run\": \"{output}\",\n"
	" \"design_space\": {\n"
	"  \"backend\": {\"values\": [\"msg\", \"rma\", \"shm\"], \"define\": \"B\", \"help\": \"how bytes move\"},\n"
	"  \"issuer\": {\"values\": [\"one\", \"several\"], \"define\": \"I\"},\n"
	"  \"placement\": {\"values\": [\"after\", \"interleave\"], \"define\": \"P\"},\n"
	"  \"sync\": {\"values\": [\"fence\", \"flag\", \"pscw\"], \"define\": \"S\"},\n"
	"  \"granularity\": {\"int\": {\"min\": 1, \"max\": 64, \"pow2\": true}, \"define\": \"G\"},\n"
	"  \"knobs\": {\"tile\": {\"values\": [\"32\", \"64\"], \"define\": \"T\"}}},\n"
	" \"constraints\": [{\"forbid\": {\"backend\": [\"msg\"], \"sync\": [\"pscw\"]},\n"
	"                  \"why\": \"PSCW is an RMA epoch\"}],\n"
	" \"tolerance\": 0.001, \"limits\": {\"compile_s\": 10, \"run_s\": 10, \"bench_s\": 10},\n"
	" \"bench\": {\"warmup\": 1, \"reps\": 3, \"max_spread\": 0.5},\n"
	" \"context\": [\"notes.md\"]}\n";

/* Make TOP (a mkdtemp template, changed in place)/toy and load it. */
static inline int toy_workload_make(char *top, cuco_workload **wl)
{
	static const char *const files[][2] = {
		{ "workload.json", toy_manifest },
		{ "baseline.c", "int main(void) { return 0; }\n" },
		{ "seed.c", "int main(void) { return 0; }\n" },
		{ "notes.md", "MPI_Win_allocate_shared gives a window every rank can load from.\n" },
	};
	char dir[256], path[320];
	if (!mkdtemp(top))
		return -1;
	snprintf(dir, sizeof dir, "%s/toy", top);  /* a workload's folder carries its name */
	if (mkdir(dir, 0700) != 0)
		return -1;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		if (cuco_write_file(path, files[i][1], strlen(files[i][1]), NULL) != CUCO_OK)
			return -1;
	}
	cuco_err err = { 0 };
	if (cuco_workload_load(dir, wl, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static inline int toy_workload_remove(const char *top, cuco_workload *wl)
{
	cuco_workload_free(wl);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
	return system(cmd);
}

#endif
