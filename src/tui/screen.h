/* screen.h — the workbench's private interface, shared by the files of
 * src/tui (tui.h is the public one): the application state, the pane
 * operations each pane-*.c fills in, and the helpers they share.
 *
 * The screen is split as htop's is: loop.c runs the loop and dispatches
 * keys (htop's ScreenManager), screen.c lays the panes out and draws the
 * frame, bars.c the status line and the hint bar, dialog.c the dialogs
 * and the line editor, draw.c the drawing helpers, crt.c the terminal
 * (htop's CRT). A pane's act says what it did with an action (htop's
 * HandlerResult) and the loop draws again only when asked. A pane keeps
 * what is only its own in its private state (tig's view->private). The
 * calls go one way, down: loop.c → panes, actions.c → dialog.c → screen.c
 * → focus.c → bars.c → draw.c; screen.c reaches the panes only through
 * their ops, so a dialog's live screen needs no pane. */
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

/* What an act did with an action (htop's HandlerResult), as bits. */
typedef unsigned tui_result;
enum {
	TUI_IGNORED = 0,       /* not this pane's: the screen's own, if any */
	TUI_HANDLED = 1 << 0,  /* taken */
	TUI_REDRAW = 1 << 1,   /* what is shown changed: draw the screen again */
	TUI_RELAYOUT = 1 << 2, /* the panes move: lay them out again, then draw */
};

typedef struct tui_pane_ops {
	const char *title;
	unsigned context;    /* TUI_IN_* bit: which actions the hint bar offers */
	size_t state_size;   /* the pane's private state (tui_pane.state), zeroed */
	void (*draw)(tui_app *app, tui_pane *p);
	/* A pane's own reaction to an action; TUI_IGNORED leaves it to the screen. */
	tui_result (*act)(tui_app *app, tui_pane *p, tui_action a);
	/* A click on row y of the pane (0: its top border); NULL: focus only. */
	tui_result (*click)(tui_app *app, tui_pane *p, int y);
	/* The store moved (the rows were read again): keep the pane's place. */
	void (*reload)(tui_app *app, tui_pane *p);
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
	void *state;          /* the pane's own (ops->state_size bytes) */
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

	uint64_t sel_id;      /* the tree's selection, kept across reloads */
	uint64_t mark_id;
	tui_focus f;
	bool focus_stale;     /* selection, mark or store moved: reread */

	char flash[256];
	double flash_until;
	double engine_checked;  /* when a viewer last asked whether the engine lives */
	time_t dialog_second;   /* the clock a dialog last drew behind it */
	bool search_jump;     /* go to the first match a running search finds */
	bool quit, stop_run;
};

/* ---- screen.c: layout and the frame --------------------------------------- */
/* Place the panes for the terminal's size, the layout and the zoom. */
void tui_layout(tui_app *app);
/* Draw every pane shown, the status line and the hint bar (wnoutrefresh). */
void tui_draw(tui_app *app);
/* Read what the store has new; true when something moved (then as
 * tui_reload). */
bool tui_refresh(tui_app *app);
/* The rows were read again: every pane keeps its place (its reload), the
 * selection's records are read again. */
void tui_reload(tui_app *app);
/* Empty the engine's wake fd. */
void tui_drain(int fd);
/* A dialog's turn without a key: the store looked at, the screen behind
 * drawn again when it moved or the clock ticked. */
void tui_behind(tui_app *app);
/* The terminal was resized: lay out and draw everything again. */
void tui_resized(tui_app *app);

/* ---- bars.c: the status line and the hint bar ---------------------------- */
/* Say something in the hint bar's place for a few seconds. */
void tui_flash(tui_app *app, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The run at a glance on the top line: state, clock, best, counts... */
void tui_draw_status(tui_app *app);
/* The focused pane's keys (or a flash) on the bottom line. */
void tui_draw_hints(tui_app *app);

/* ---- dialog.c: dialogs over the live screen ------------------------------- */
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

/* ---- draw.c: drawing helpers ---------------------------------------------- */
/* Write at most `width` columns of UTF-8 text; returns columns used. */
int tui_put(WINDOW *w, int y, int x, const char *s, int width);
/* The same, ending with `more` (…) when the text had to be cut. */
int tui_put_cut(WINDOW *w, int y, int x, const char *s, int width, const char *more);
/* Columns the UTF-8 text takes. */
int tui_width(const char *s);
int tui_putf(WINDOW *w, int y, int x, int width, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void tui_box(tui_app *app, tui_pane *p, const char *title);
/* Scroll a pane of p->lines lines shown view_h at a time: TUI_IGNORED when
 * the action is not a movement, TUI_REDRAW with it when the view moved. */
tui_result tui_scroll_act(tui_pane *p, tui_action a, int view_h);
/* Wrap text to width columns at spaces: a line too long continues under
 * its own leading indentation. */
void tui_wrap(const char *text, int width, cuco_buf *out);

/* ---- pane-tree.c: the tree's selection, filters and search ---------------- */
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

/* ---- teach.c: short explanations for classrooms ------------------------- */
const char *tui_teach_dim(const tui_model *m, int dim);
const char *tui_teach_phase(const char *phase);
const char *tui_teach_error(const char *error_class);
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
