/* cmd-tui.c — `cuco tui`: attach the workbench screen to a run, which
 * another process (a headless `cuco run`) may be driving. Quitting a viewer
 * never stops the run; several viewers may watch one run at once. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "tui/tui.h"

#define TUI_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_THEME, CMD_OPT_THEME) \
	X(O_NO_COLOR, CMD_OPT_NO_COLOR) \
	X(O_ASCII, CMD_OPT_ASCII)
CMD_TABLE(options, TUI_OPTIONS);

static int tui_exec(int argc, char **argv)
{
	char author[32];
	cmd_author(author, sizeof author);
	char theme_buf[64];
	cmd_config file;
	cmd_config_read(&file);
	cuco_tui_options o = { .theme = cmd_default_theme(&file, theme_buf, sizeof theme_buf),
		.author = author };
	int opt;
	cmd_args a = CMD_ARGS(&cmd_tui, argc, argv);
	while ((opt = cmd_option_next(&a)) >= 0) {
		switch (opt) {
		case O_THEME: o.theme = a.value; break;
		case O_NO_COLOR: o.no_color = true; break;
		case O_ASCII: o.ascii = true; break;
		}
	}
	if (!cmd_operands(&a, 0, 0, NULL))
		return a.rc;
	cuco_store *st;
	int rc = cmd_open_store(a.run, 0, &st);
	if (rc)
		return rc;
	cuco_err err = { 0 };
	rc = cuco_tui_run(st, -1, &o, NULL, &err);
	cuco_store_close(st);
	return rc ? cmd_fail(&err) : CUCO_OK;
}

const cuco_cmd cmd_tui = { "tui", "", "watch and steer a run in the workbench screen", tui_exec,
	CMD_OPTIONS(options) };
