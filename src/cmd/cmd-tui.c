/* cmd-tui.c — `cuco tui`: attach the workbench screen to a run, which
 * another process (a headless `cuco run`) may be driving. Quitting a viewer
 * never stops the run; several viewers may watch one run at once. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "tui/tui.h"

static const char tui_options[] =
	"  --run DIR        the run directory (default $CUCO_RUN, else runs/latest)\n"
	"  --theme NAME     dark (default), light, monochrome, high-contrast, or a\n"
	"                   path to a .theme file (default $CUCO_THEME, else the config's\n"
	"                   [screen] theme)\n"
	"  --no-color       attributes only (also when $NO_COLOR is set)\n"
	"  --ascii          ASCII lines and glyphs instead of UTF-8\n";

static int tui_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' }, { "theme", required_argument, NULL, 't' },
		{ "no-color", no_argument, NULL, 'n' }, { "ascii", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	char author[32];
	cmd_author(author, sizeof author);
	char theme_buf[64];
	cmd_config file;
	cmd_config_read(&file);
	cuco_tui_options o = { .theme = cmd_default_theme(&file, theme_buf, sizeof theme_buf),
		.author = author };
	const char *run = NULL;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 't': o.theme = optarg; break;
		case 'n': o.no_color = true; break;
		case 'a': o.ascii = true; break;
		case 'h': cmd_print_usage(&cmd_tui, tui_options); return CUCO_OK;
		default: return cmd_bad_option(&cmd_tui, longopts, argv);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_tui, "unexpected argument '%s'", argv[optind]);
	cuco_store *st;
	int rc = cmd_open_store(cmd_run_dir(run), 0, &st);
	if (rc)
		return rc;
	cuco_err err = { 0 };
	rc = cuco_tui_run(st, -1, &o, NULL, &err);
	cuco_store_close(st);
	return rc ? cmd_fail(&err) : CUCO_OK;
}

const cuco_cmd cmd_tui = { "tui", "[--run DIR] [--theme NAME] [--no-color] [--ascii]",
	"watch and steer a run in the workbench screen", tui_exec };
