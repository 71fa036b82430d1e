/* cmd-init.c — `cuco init NAME --from PROGRAM`: a workload from a user's
 * own host-driven program (eval.h, cuco_workload_init), each guess said. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "eval/eval.h"

static const char options[] =
	"  --from PROGRAM   the program (C, C++ or CUDA with main()); it becomes the baseline\n"
	"  --build 'CMD'    the build template (default: the family's; docs/workloads.md)\n"
	"  --run 'CMD'      the run template (default: {output}, or the harness's arguments)\n"
	"  --ranks N        ranks (default: 2, or 1 for one GPU)\n"
	"  --family F       cpu-mpi, cuda-nccl or cuda (default: from its includes and calls)\n"
	"  --seed FILE      your own first device-initiated version, with EVOLVE-BLOCKs: the\n"
	"                   directive tuner starts from it, no model needed (default: none)\n"
	"  --dir DIR        the folder to make, ending in NAME (default: workloads/NAME)\n"
	"  --no-build       skip building the baseline once\n";

static int parse_family(const char *text)
{
	static const char *const names[] = { "cpu-mpi", "cuda-nccl", "cuda" };
	for (int i = 0; i < 3; i++)
		if (strcmp(text, names[i]) == 0)
			return i;
	return -1;
}

static int init_exec(int argc, char **argv)
{
	enum { OPT_FROM = 256, OPT_BUILD, OPT_RUN, OPT_RANKS, OPT_FAMILY, OPT_DIR, OPT_NO_BUILD,
		OPT_SEED };
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, OPT_FROM }, { "build", required_argument, NULL, OPT_BUILD },
		{ "run", required_argument, NULL, OPT_RUN }, { "ranks", required_argument, NULL, OPT_RANKS },
		{ "family", required_argument, NULL, OPT_FAMILY }, { "dir", required_argument, NULL, OPT_DIR },
		{ "no-build", no_argument, NULL, OPT_NO_BUILD }, { "seed", required_argument, NULL, OPT_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	cuco_init_spec s = { .family = -1, .trial_build = true };
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *end;
		switch (opt) {
		case OPT_FROM: s.program = optarg; break;
		case OPT_BUILD: s.build = optarg; break;
		case OPT_RUN: s.run = optarg; break;
		case OPT_DIR: s.dir = optarg; break;
		case OPT_SEED: s.seed = optarg; break;
		case OPT_NO_BUILD: s.trial_build = false; break;
		case OPT_RANKS:
			s.ranks = (int)strtol(optarg, &end, 10);
			if (*end || s.ranks < 1 || s.ranks > 4096)
				return cmd_usage_error(&cmd_init, "--ranks %s: expected 1 to 4096", optarg);
			break;
		case OPT_FAMILY:
			if ((s.family = parse_family(optarg)) < 0)
				return cmd_usage_error(&cmd_init, "--family %s: expected cpu-mpi, cuda-nccl or cuda",
					optarg);
			break;
		case 'h':
			cmd_print_usage(&cmd_init, options);
			return CUCO_OK;
		default:
			return cmd_bad_option(&cmd_init, longopts, argv);
		}
	}
	if (optind + 1 != argc)
		return cmd_usage_error(&cmd_init, "expected one NAME");
	if (!s.program)
		return cmd_usage_error(&cmd_init, "--from PROGRAM is required");
	s.name = argv[optind];
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

const cuco_cmd cmd_init = { "init", "NAME --from PROGRAM [--build CMD] [--run CMD] [--ranks N] "
	"[--family F] [--seed FILE] [--dir DIR] [--no-build]",
	"make a workload from your own host-driven MPI or NCCL program", init_exec };
