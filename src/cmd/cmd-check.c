/* cmd-check.c — `cuco check WORKLOAD [--try]`: validate a manifest and its
 * files, printing every problem as "cuco: <file>: <field>: <problem>" on
 * standard error, and warn of a seed blind to most of the directive; with
 * --try, also evaluate the baseline and the seed once as a run's first
 * evaluations do (analyze.h, cuco_workload_try). */
#include <stdio.h>

#include "cmd/cmd.h"
#include "analyze/analyze.h"

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

static const cmd_option options[] = {
	{ "try", 0, NULL, 0, "also build, run and verify the baseline and the seed once, and benchmark "
		"the baseline, as a run's first evaluations do: what a run would refuse (a defence's "
		"verdict on the seed, a wrong answer) and what would mislead it (one timed sample per "
		"run) is said now" },
};

static int check_exec(int argc, char **argv)
{
	bool try = false;
	cmd_args a = CMD_ARGS(&cmd_check, argc, argv);
	while (cmd_option_next(&a) >= 0)
		try = true;
	if (!cmd_operands(&a, 1, 1, "expected one workload (a name or a folder)"))
		return a.rc;
	const char *name = a.args[0];
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

const cuco_cmd cmd_check = { "check", "WORKLOAD",
	"validate a workload's manifest and files (--try: evaluate its baseline and seed once as a run\n"
	"       would); one line per problem on standard error, exit 2 when any", check_exec,
	CMD_OPTIONS(options) };
