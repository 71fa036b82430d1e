/* screen.h — the workbench's private interface: the application state the
 * loop (screen.c) owns, the pane operations each pane-*.c fills in, and
 * the helpers they share (drawing, dialogs, actions, explanations). */
#ifndef CUCO_TUI_SCREEN_H
#define CUCO_TUI_SCREEN_H

#include "tui/tui.h"
#include "tui/crt.h"
#include "core.h"
#include "tui/keys.h"
#include "tui/model.h"

#include <time.h>

typedef enum tui_pane_id {
	TUI_PANE_ISLANDS, TUI_PANE_TREE, TUI_PANE_DIFF, TUI_PANE_PHASES, TUI_PANE_DETAIL,
	TUI_PANE_LOG, TUI_PANE_COUNT
} tui_pane_id;

typedef struct tui_app tui_app;
typedef struct tui_pane tui_pane;

typedef struct tui_pane_ops {
	const char *title;
	unsigned context;    /* TUI_IN_* bit: which actions the hint bar offers */
	void (*draw)(tui_app *app, tui_pane *p);
	/* A pane's own reaction to an action; false leaves it to the screen. */
	bool (*act)(tui_app *app, tui_pane *p, tui_action a);
	/* What `t` explains while the pane has focus. */
	void (*explain)(tui_app *app, cuco_buf *out);
	/* The title with what the pane shows now (NULL: the plain title). */
	void (*title_fn)(tui_app *app, char *buf, size_t size);
} tui_pane_ops;

struct tui_pane {
	const tui_pane_ops *ops;
	WINDOW *win;
	int y, x, h, w;       /* outer box */
	int top;              /* first line shown (scrolling panes) */
	int lines;            /* lines of content, for scrolling */
	bool shown;           /* on screen in this layout */
};

/* The selected candidate and its comparisons, read when the selection moves. */
typedef struct tui_focus {
	uint64_t id;
	bool have, have_parent, have_base, have_best, have_other;
	cuco_candidate cand, parent, base, best;
	cuco_candidate other; /* the one the diff compares against */
	uint64_t other_id;    /* what the diff compares against: the mark or the parent */
	char *src, *other_src;
	size_t src_len, other_len;
	cuco_diff diff;
	cuco_buf detail;      /* the detail pane's text, line by line */
} tui_focus;

#define TUI_DCACHE 512
struct tui_dcache {
	uint64_t id;
	bool ok;
	cuco_directive d;       /* never changes */
	int rounds;             /* the interval's, read again when the summary's moved */
	double lo, hi;
};

struct tui_app {
	cuco_store *st;
	int wake_fd;
	const cuco_tui_options *opt;
	char author[32];
	tui_crt crt;
	tui_model m;
	tui_pane panes[TUI_PANE_COUNT];
	int focus;            /* a tui_pane_id */
	bool zoom;
	int rows, cols;
	bool too_small;
	bool narrow;          /* one column: the tree above, one pane below it */
	int lower;            /* narrow: the pane shown below the tree */
	int order[TUI_PANE_COUNT];  /* focus order: the layout's, top to bottom, left to right */
	int norder;

	size_t cursor;        /* tree row */
	uint64_t sel_id;      /* the id under the cursor, kept across reloads */
	uint64_t mark_id;
	tui_focus f;
	bool focus_stale;     /* selection, mark or store moved: reread */

	struct tui_dcache dcache[TUI_DCACHE];  /* directives and intervals by id */
	char flash[256];
	double flash_until;
	double engine_checked;  /* when a viewer last asked whether the engine lives */
	time_t dialog_second;   /* the clock a dialog last drew behind it */
	bool search_jump;     /* go to the first match a running search finds */
	bool quit, stop_run;
};

/* ---- screen.c ---------------------------------------------------------- */
void tui_flash(tui_app *app, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ask for a line of text at the bottom, starting from buf. The text given
 * is selected: the first key typed replaces it, a cursor key keeps it for
 * editing (Left, Right, Home, End, Delete, Backspace, C-u, C-k, C-w).
 * False when cancelled (Esc). The screen stays live behind it. */
bool tui_prompt(tui_app *app, const char *label, char *buf, size_t size);
/* Ask a question answered by one of `keys`; Enter and Esc give 0 (cancel). */
int tui_ask(tui_app *app, const char *question, const char *keys);
/* A scrollable text box over the live screen, closed with q or Esc; lines
 * wrap at words to the box, continuing under their own indentation. */
void tui_popup(tui_app *app, const char *title, const char *text);
/* Wrap text to width columns at spaces: a line too long continues under
 * its own leading indentation. */
void tui_wrap(const char *text, int width, cuco_buf *out);
/* Move the tree cursor to a candidate (unfolding nothing); false if hidden. */
bool tui_select_id(tui_app *app, uint64_t id);

/* ---- draw helpers (screen.c) ------------------------------------------- */
/* Write at most `width` columns of UTF-8 text; returns columns used. */
int tui_put(WINDOW *w, int y, int x, const char *s, int width);
/* The same, ending with `more` (…) when the text had to be cut. */
int tui_put_cut(WINDOW *w, int y, int x, const char *s, int width, const char *more);
/* Columns the UTF-8 text takes. */
int tui_width(const char *s);
int tui_putf(WINDOW *w, int y, int x, int width, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void tui_box(tui_app *app, tui_pane *p, const char *title);
/* Scroll a pane of p->lines lines shown view_h at a time; false when the
 * action is not a movement. */
bool tui_scroll_act(tui_pane *p, tui_action a, int view_h);

/* Show only one island in the tree (-2: all), from the islands pane. */
void tui_tree_filter_island(tui_app *app, int island);
/* Move to the next (dir > 0) or previous match of the search. */
void tui_tree_next_match(tui_app *app, int dir);
#define TUI_SEARCH_CHUNK 2000  /* candidates a search reads per turn of the loop */

/* ---- actions.c: a person's actions (cuco_person_act), and viewing --------- */
void tui_act_pin(tui_app *app);
void tui_act_reject(tui_app *app);   /* or un-reject a rejected candidate */
void tui_act_edit(tui_app *app);
void tui_act_hint(tui_app *app, int island);
void tui_act_pause(tui_app *app);
void tui_act_export(tui_app *app);
void tui_act_source(tui_app *app);   /* the whole source in a popup */
/* The hint bar's word for an action now, NULL to leave it out (an action
 * that cannot be taken: pause on a finished run, hint under the tuner). */
const char *tui_act_label(tui_app *app, tui_action a);

/* ---- teach.c: short explanations for classrooms ------------------------- */
const char *tui_teach_dim(const tui_model *m, int dim);
const char *tui_teach_phase(const char *phase);
const char *tui_teach_error(const char *error_class);
const char *tui_teach_status(cuco_status s);
const char *tui_teach_origin(cuco_origin o);
/* Index of a phase's fill glyph and colour (0..TUI_FILLS-1). */
int tui_phase_slot(const char *phase);

/* ---- focus.c: the selected candidate's records, diff and detail text ----- */
void tui_focus_load(tui_app *app);
void tui_focus_free(tui_focus *f);
/* "12.3us", "1.25ms", "-" for NAN; into buf. */
const char *tui_fmt_us(double us, char *buf, size_t size);
/* "1.38x", "-" for NAN; into buf. */
const char *tui_fmt_speedup(double speedup, char *buf, size_t size);

extern const tui_pane_ops tui_pane_islands, tui_pane_tree, tui_pane_diff, tui_pane_phases,
	tui_pane_detail, tui_pane_log;

#endif
