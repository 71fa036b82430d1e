/* main.c — `cuco`: find the command and run it. */
#include "cmd/cmd.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Where the manual is: installed, `man cuco` finds it (man finds
 * PREFIX/share/man from PREFIX/bin on the PATH); in a build from the
 * source tree, man -l reads it there. */
static void print_manual(void)
{
	const cuco_paths *p = cuco_paths_get();
	if (p->manual_installed)
		printf("Manual: man cuco (or man -l %s).\n", p->manual);
	else if (p->manual[0])
		printf("Manual: man -l %s\n(not installed: 'meson install' puts it where 'man cuco' finds it).\n",
			p->manual);
	else
		printf("Manual: docs/cuco.1 in cuco's source.\n");
}

static void print_help(void)
{
	printf("usage: cuco [--version] [--help] COMMAND [ARGS]\n\n"
	       "A terminal workbench where agents and a cascade evaluator search for\n"
	       "kernels that overlap computation with communication.\n\ncommands:\n");
	for (int i = 0; cuco_commands[i]; i++)
		printf("  %-10s %s\n", cuco_commands[i]->name, cuco_commands[i]->summary);
	printf("\n'cuco COMMAND --help' describes one command. Exit codes: 0 ok, 1 usage,\n"
	       "2 bad input or data, 3 environment missing, 4 a run stopped before its end.\n");
	print_manual();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_help();
		return CUCO_EUSAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		print_help();
		return CUCO_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("cuco %s (store schema %d)\n", CUCO_VERSION, CUCO_SCHEMA_VERSION);
		return CUCO_OK;
	}
	/* Past the file-size limit (ulimit -f) a write then fails with EFBIG,
	 * which is reported naming the file, instead of SIGXFSZ killing cuco
	 * mid-run. Stages reset every signal before they exec. */
	signal(SIGXFSZ, SIG_IGN);
	const cuco_cmd *cmd = cmd_find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "cuco: %s: unknown command (see 'cuco --help')\n", argv[1]);
		return CUCO_EUSAGE;
	}
	return cmd->exec(argc - 1, argv + 1);
}
