/* crt.h — the terminal: curses setup and teardown, colours from a theme
 * for 256, 8 or no colours, glyph tables (UTF-8 or ASCII), restoring the
 * terminal on exit, crash and signals. Only the UI thread calls these. */
#ifndef CUCO_TUI_CRT_H
#define CUCO_TUI_CRT_H

#include "core.h"
#include "store/store.h"
#include "tui/theme.h"

#include <curses.h>
#include <signal.h>
#include <stdbool.h>

#define TUI_FILLS 6  /* phase fill characters: 5 known phases and "other" */

typedef struct tui_glyphs {
	const char *branch, *last, *vert, *blank;  /* tree lines, two columns each */
	const char *folded, *unfolded, *leaf;
	const char *pin, *mark, *best;
	const char *more;   /* ends text cut to fit */
	const char *arrow;  /* before → after */
	const char *sep;    /* between the parts of a title */
	const char *status[CUCO_STATUS_COUNT];
	const char *fill[TUI_FILLS];
	const char *unaccounted;  /* a bar's time no phase accounts for */
} tui_glyphs;

typedef struct tui_crt {
	bool color;            /* colours in use */
	bool utf8;
	int colors;            /* what the terminal offers */
	attr_t attr[TUI_EL_COUNT];
	const tui_glyphs *g;
} tui_crt;

/* Set up the terminal. The theme is loaded before curses starts, so its
 * errors come back as an ordinary cuco_err. */
int tui_crt_init(tui_crt *c, const char *theme, bool no_color, bool ascii, cuco_err *err);
void tui_crt_done(void);
/* Leave curses for a child program (the editor) and come back. */
void tui_crt_suspend(void);
void tui_crt_resume(void);
/* Set by SIGTERM/SIGHUP/SIGINT: the loop leaves cleanly. */
bool tui_crt_interrupted(void);

#endif
