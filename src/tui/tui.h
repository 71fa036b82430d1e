/* tui.h — the workbench screen.
 *
 * One UI thread owns the terminal; it reads the store in short read
 * transactions and writes only commands and events (pin, reject, edit,
 * hint, pause). It is woken by wake_fd (readable whenever the engine
 * appended events, in-process) or, attached from another process
 * (wake_fd < 0), polls the store's last event sequence a few times a
 * second. It never runs an evaluation or a model call itself.
 */
#ifndef CUCO_TUI_H
#define CUCO_TUI_H

#include "core.h"
#include "store/store.h"

#include <stdbool.h>

typedef struct cuco_tui_options {
	const char *theme;   /* name in themes/ or a path; NULL = config or "dark" */
	bool no_color;       /* --no-color or $NO_COLOR */
	bool ascii;          /* ASCII line drawing instead of UTF-8 */
	bool in_process;     /* the engine runs in this process: quitting asks */
	const char *author;  /* who signs human actions: $USER@host (cmd_author) */
} cuco_tui_options;

/* Whether a theme (a name or a path) loads: what `cuco run --theme` checks
 * before a search starts, so a typo is a usage error and not a run
 * without its screen. */
int cuco_tui_theme_check(const char *theme, cuco_err *err);

/* Run the screen until the user quits. With in_process, *stop_run says
 * whether the user chose to stop the search (quitting asks first). */
int cuco_tui_run(cuco_store *st, int wake_fd, const cuco_tui_options *opt,
	bool *stop_run, cuco_err *err);

#endif
