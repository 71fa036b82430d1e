/* cmd-analyze.c — `cuco analyze PROGRAM|WORKLOAD`: the communication
 * analysis the fast path hands the model (eval.h, cuco_program_report),
 * for a person: every host collective and point-to-point call with its
 * buffers, loop, producers, consumers and streams. A workload's baseline
 * is analysed at the workload's size. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "eval/eval.h"

static int analyze_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *size_name = NULL;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 's') {
			size_name = optarg;
		} else if (opt == 'h') {
			cmd_print_usage(&cmd_analyze, "  --size NAME   a workload's size, for the bytes of each call\n");
			return CUCO_OK;
		} else {
			return cmd_usage_error(&cmd_analyze, "unknown option");
		}
	}
	if (optind + 1 != argc)
		return cmd_usage_error(&cmd_analyze, "expected one program (a file) or a workload");
	const char *what = argv[optind];
	cuco_err err = { 0 };
	cuco_workload *wl = NULL;
	char path[2048];
	struct stat sb;
	if (stat(what, &sb) == 0 && S_ISREG(sb.st_mode)) {
		snprintf(path, sizeof path, "%s", what);
	} else {
		int rc = cuco_workload_load(what, &wl, &err);
		if (rc != CUCO_OK) {
			cuco_err why;
			cuco_errf(&why, rc, "%s: no such program file, and as a workload: %.400s", what, err.msg);
			return cmd_fail(&why);
		}
		snprintf(path, sizeof path, "%s/%s", wl->dir, wl->baseline_file);
	}
	if (size_name && (!wl || !cuco_workload_size(wl, size_name))) {
		cuco_workload_free(wl);
		return cmd_usage_error(&cmd_analyze, "--size %s: %s", size_name,
			wl ? "the workload has no such size" : "only a workload has sizes");
	}
	cuco_program *p;
	int rc = cuco_program_read(path, &p, &err);
	if (rc != CUCO_OK) {
		cuco_workload_free(wl);
		return cmd_fail(&err);
	}
	cuco_buf b = { 0 };
	cuco_program_report(p, wl ? cuco_workload_size(wl, size_name) : NULL, wl ? wl->ranks : 2, &b);
	fputs(b.data, stdout);
	cuco_buf_free(&b);
	cuco_program_free(p);
	cuco_workload_free(wl);
	return CUCO_OK;
}

const cuco_cmd cmd_analyze = { "analyze", "[--size NAME] PROGRAM|WORKLOAD",
	"the host communication of a program (or a workload's baseline), as the fast path sees it",
	analyze_exec };
