/* cmd-check.c — `cuco check WORKLOAD`: validate a manifest and its files,
 * printing every problem as "<file>: <field>: <problem>". */
#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "eval/eval.h"

static void print_problem(const char *line, void *arg)
{
	(void)arg;
	printf("%s\n", line);
}

static int check_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			cmd_print_usage(&cmd_check, "");
			return CUCO_OK;
		}
		return cmd_bad_option(&cmd_check, longopts, argv);
	}
	if (optind + 1 != argc)
		return cmd_usage_error(&cmd_check, "expected one workload (a name or a folder)");
	int problems = cuco_workload_check(argv[optind], print_problem, NULL);
	if (problems > 0)
		return CUCO_EDATA;
	printf("%s: ok\n", argv[optind]);
	return CUCO_OK;
}

const cuco_cmd cmd_check = { "check", "WORKLOAD",
	"validate a workload's manifest and files; one line per problem, exit 2 when any", check_exec };
