/* cmd-init.c — `cuco init NAME --from PROGRAM`: a workload from a user's
 * own host-driven program (analyze.h, cuco_workload_init), each guess said. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "analyze/analyze.h"

#define INIT_OPTIONS(X) \
	X(O_FROM, "from", 0, "PROGRAM", CMD_OPT_NEEDED, "the program (C, C++ or CUDA with main()); it " \
		"becomes the baseline") \
	X(O_BUILD, "build", 0, "CMD", 0, "the build template (default: the family's; docs/workloads.md)") \
	X(O_RUN, "run", 0, "CMD", 0, "the run template (default: {output}, or the harness's arguments)") \
	X(O_RANKS, "ranks", 0, "N", 0, "ranks (default: 2, or 1 for one GPU)") \
	X(O_FAMILY, "family", 0, "F", 0, "cpu-mpi, cuda-nccl or cuda (default: from its includes and " \
		"calls)") \
	X(O_SEED, "seed", 0, "FILE", 0, "your own first device-initiated version, with EVOLVE-BLOCKs: " \
		"the directive tuner starts from it, no model needed (default: none)") \
	X(O_DIR, "dir", 0, "DIR", 0, "the folder to make, ending in NAME (default: workloads/NAME)") \
	X(O_NO_BUILD, "no-build", 0, NULL, 0, "skip building the baseline once")
CMD_TABLE(options, INIT_OPTIONS);

static int init_exec(int argc, char **argv)
{
	cuco_init_spec s = { .family = -1, .trial_build = true };
	int o;
	cmd_args a = CMD_ARGS(&cmd_init, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		const char *v = a.value;
		char *end;
		switch (o) {
		case O_FROM: s.program = v; break;
		case O_BUILD: s.build = v; break;
		case O_RUN: s.run = v; break;
		case O_DIR: s.dir = v; break;
		case O_SEED: s.seed = v; break;
		case O_NO_BUILD: s.trial_build = false; break;
		case O_RANKS:
			s.ranks = (int)strtol(v, &end, 10);
			if (*end || s.ranks < 1 || s.ranks > 4096)
				return cmd_usage_error(&cmd_init, "--ranks %s: expected 1 to 4096", v);
			break;
		case O_FAMILY:
			if ((s.family = cuco_family_parse(v)) < 0)
				return cmd_usage_error(&cmd_init, "--family %s: expected cpu-mpi, cuda-nccl or cuda", v);
			break;
		}
	}
	if (!cmd_operands(&a, 1, 1, "expected one NAME"))
		return a.rc;
	if (!s.program)
		return cmd_usage_error(&cmd_init, "--from PROGRAM is required");
	s.name = a.args[0];
	cuco_buf said = { 0 };
	char dir[1024];
	cuco_err err = { 0 };
	int rc = cuco_workload_init(&s, &said, dir, sizeof dir, &err);
	if (rc != CUCO_OK) {
		cuco_buf_free(&said);
		return cmd_fail(&err);
	}
	printf("%s: made from %s. What cuco guessed (also in %s/context.md):\n%s\n"
		"Next: cuco check %s; cuco analyze %s; cuco run %s%s\n", dir, s.program, dir, said.data,
		s.name, s.name, s.name, s.seed ? "" : " --strategy evolve --llm MODEL");
	cuco_buf_free(&said);
	return CUCO_OK;
}

const cuco_cmd cmd_init = { "init", "NAME", "make a workload from your own host-driven MPI or NCCL program",
	init_exec, CMD_OPTIONS(options) };
