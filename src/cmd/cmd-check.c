/* cmd-check.c — `cuco check WORKLOAD [--try]`: validate a manifest and its
 * files, printing every problem as "cuco: <file>: <field>: <problem>" on
 * standard error, and warn of a seed blind to most of the directive; with
 * --try, also evaluate the baseline and the seed once as a run's first
 * evaluations do (eval.h, cuco_workload_try). */
#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "eval/eval.h"

static void print_problem(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "cuco: %s\n", line);
}

struct tried {
	const cuco_workload *wl;
	int problems;
};

static void print_finding(cuco_try_what what, cuco_try_kind kind, const char *line, void *arg)
{
	struct tried *t = arg;
	const char *file = what == CUCO_TRY_SEED ? t->wl->seed_file : t->wl->baseline_file;
	t->problems += kind == CUCO_TRY_PROBLEM;
	fprintf(stderr, "cuco: %s/%s: %s%s\n", t->wl->name, file, kind == CUCO_TRY_WARNING ? "warning: " : "",
		line);
}

static int check_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "try", no_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	bool try = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			cmd_print_usage(&cmd_check, "  --try    also build, run and verify the baseline and the seed once, and\n"
				"           benchmark the baseline, as a run's first evaluations do: what a run\n"
				"           would refuse (a defence's verdict on the seed, a wrong answer) and\n"
				"           what would mislead it (one timed sample per run) is said now\n");
			return CUCO_OK;
		}
		if (opt != 't')
			return cmd_bad_option(&cmd_check, longopts, argv);
		try = true;
	}
	if (optind + 1 != argc)
		return cmd_usage_error(&cmd_check, "expected one workload (a name or a folder)");
	const char *name = argv[optind];
	int problems = cuco_workload_check(name, print_problem, NULL);
	if (problems > 0)
		return CUCO_EDATA;
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(name, &wl, &err) != CUCO_OK)
		return cmd_fail(&err);
	char why[768];
	struct tried t = { wl, 0 };
	int rc = CUCO_OK;
	if (try)
		rc = cuco_workload_try(wl, print_finding, &t, &err);
	else if (cuco_seed_blind(wl, why, sizeof why))
		print_finding(CUCO_TRY_SEED, CUCO_TRY_WARNING, why, &t);
	cuco_workload_free(wl);
	if (rc != CUCO_OK)
		return cmd_fail(&err);
	if (t.problems > 0)
		return CUCO_EDATA;
	printf("%s: ok%s\n", name, try ? " (tried once)" : "");
	return CUCO_OK;
}

const cuco_cmd cmd_check = { "check", "WORKLOAD [--try]",
	"validate a workload's manifest and files (--try: evaluate its baseline and seed once as a run\n"
	"       would); one line per problem on standard error, exit 2 when any", check_exec };
