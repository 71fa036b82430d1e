/* theme.h — colour themes: themes/NAME.theme, plain `element = colour` lines.
 *
 * A theme never touches curses: it maps each screen element to a foreground,
 * a background and attributes, and crt.c turns that into curses pairs for
 * the terminal's colour depth. Keys a file leaves out keep the built-in
 * dark value, so an old theme keeps working when elements are added.
 * `background = dark | light` says which background the colours are for
 * (dark when left out): on 8 colours a grey then becomes white or black.
 */
#ifndef CUCO_TUI_THEME_H
#define CUCO_TUI_THEME_H

#include "core.h"

/* Every element of the screen that has a colour:
 * X(enum, key, dark default, attributes without colour). Without colour
 * (--no-color, $NO_COLOR, a terminal without colours) the last column is
 * used whatever the theme says, so meaning never rests on colour alone. */
#define TUI_ELEMENTS(X) \
	X(NORMAL,      "normal",       "default",             "default") \
	X(BORDER,      "border",       "bright-black",        "default") \
	X(BORDER_FOCUS, "border.focus", "cyan bold",           "bold") \
	X(TITLE,       "title",        "bold",                "bold") \
	X(HEADER,      "header",       "black on cyan",       "underline") \
	X(SELECTED,    "selected",     "black on cyan",       "reverse") \
	X(SELECTED_DIM, "selected.dim", "reverse",             "underline") \
	X(STATUS_LINE, "status",       "white on blue",       "reverse") \
	X(HINTS,       "hints",        "black on white",      "default") \
	X(HINT_KEY,    "hints.key",    "black on cyan bold",  "reverse") \
	X(DIM,         "dim",          "bright-black",        "dim") \
	X(GOOD,        "good",         "green",               "default") \
	X(BAD,         "bad",          "red bold",            "bold") \
	X(BUSY,        "busy",         "cyan",                "default") \
	X(PINNED,      "pinned",       "yellow bold",         "bold") \
	X(REJECTED,    "rejected",     "bright-black",        "dim") \
	X(MARKED,      "marked",       "magenta bold",        "underline") \
	X(DIFF_ADD,    "diff.add",     "green",               "bold") \
	X(DIFF_DEL,    "diff.del",     "red",                 "dim") \
	X(DIFF_HUNK,   "diff.hunk",    "cyan",                "underline") \
	X(PHASE_1,     "phase.compute", "blue",                "default") \
	X(PHASE_2,     "phase.comm",   "green",               "default") \
	X(PHASE_3,     "phase.sync",   "yellow",              "default") \
	X(PHASE_4,     "phase.exposed", "red",                 "default") \
	X(PHASE_5,     "phase.host",   "magenta",             "default") \
	X(PHASE_OTHER, "phase.other",  "white",               "default") \
	X(DIALOG,      "dialog",       "white on black",      "reverse") \
	X(FLASH,       "flash",        "black on yellow",     "reverse") \
	X(MATCH,       "match",        "black on yellow",     "bold underline")

typedef enum tui_element {
#define X(e, key, def, mono) TUI_EL_##e,
	TUI_ELEMENTS(X)
#undef X
	TUI_EL_COUNT
} tui_element;

enum {
	TUI_ATTR_BOLD = 1 << 0,
	TUI_ATTR_REVERSE = 1 << 1,
	TUI_ATTR_UNDERLINE = 1 << 2,
	TUI_ATTR_DIM = 1 << 3,
};

#define TUI_COLOR_DEFAULT (-1)

typedef struct tui_style {
	short fg, bg;     /* 0..255, or TUI_COLOR_DEFAULT */
	unsigned attrs;   /* TUI_ATTR_* */
} tui_style;

typedef struct tui_theme {
	char name[64];
	bool light;       /* `background = light`: drawn over a light background */
	tui_style el[TUI_EL_COUNT];
} tui_theme;

/* The built-in dark theme, the base every file is read over. */
void tui_theme_default(tui_theme *t);
/* The colourless theme: the last column of TUI_ELEMENTS. */
void tui_theme_mono(tui_theme *t);
/* Read theme text over t (unknown keys are errors naming the line). */
int tui_theme_parse(tui_theme *t, const char *text, const char *where, cuco_err *err);
/* Load by name (looked up in the theme folders: core.h, cuco_paths) or
 * by path (anything with a '/' or ending in .theme). */
int tui_theme_load(tui_theme *t, const char *name_or_path, cuco_err *err);

#endif
