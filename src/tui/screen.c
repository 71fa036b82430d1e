/* screen.c — the panes' places and the frame drawn from them.
 *
 * Two layouts, as tig has: at 120x30 and more, two columns (islands and
 * the tree on the left; phases, detail and diff on the right; the log
 * across the bottom); narrower, the tree above and one pane below it, the
 * one Tab brought there. Below 40x12 the screen says it is too small.
 * Every pane draws into its own window and curses sends only the cells
 * that changed (wnoutrefresh per pane, one doupdate by the caller). The
 * store is read in short read transactions only when its last event
 * sequence moved, so an idle screen costs nothing and sends nothing. */
#include "tui/screen.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIN_ROWS 12
#define MIN_COLS 40
#define WIDE_COLS 120          /* two columns from here */
#define WIDE_ROWS 30
#define ENGINE_CHECK_S 2.0     /* a viewer asks this often whether the engine lives */

/* Focus order: the wide layout's, column by column; the narrow one's, the
 * tree and then the panes that take turns below it. */
static const int wide_order[] = { TUI_PANE_ISLANDS, TUI_PANE_TREE, TUI_PANE_PHASES, TUI_PANE_DETAIL,
	TUI_PANE_DIFF, TUI_PANE_LOG };
static const int narrow_order[] = { TUI_PANE_TREE, TUI_PANE_DETAIL, TUI_PANE_DIFF, TUI_PANE_PHASES,
	TUI_PANE_ISLANDS, TUI_PANE_LOG };

/* ---- layout --------------------------------------------------------------- */

static void place(tui_pane *p, int y, int x, int h, int w)
{
	p->y = y, p->x = x, p->h = h, p->w = w;
	p->shown = h > 2 && w > 4;
	if (p->win)
		delwin(p->win);
	p->win = p->shown ? newwin(h, w, y, x) : NULL;
}

static void set_order(tui_app *app, const int *order, int n)
{
	memcpy(app->order, order, sizeof(int) * (size_t)n);
	app->norder = n;
}

static void layout_wide(tui_app *app, int top, int bh)
{
	int lh = bh >= 34 ? 8 : 6;
	int ah = bh - lh;
	int lw = app->cols * 3 / 5, rw = app->cols - lw;
	int nisl = app->m.nislands < 1 ? 1 : app->m.nislands > 6 ? 6 : app->m.nislands;
	int ih = nisl + 3;
	int ph = 9;  /* four bars, a legend and its note; zoom shows the table too */
	int dh = (ah - ph) / 2;
	place(&app->panes[TUI_PANE_ISLANDS], top, 0, ih, lw);
	place(&app->panes[TUI_PANE_TREE], top + ih, 0, ah - ih, lw);
	place(&app->panes[TUI_PANE_PHASES], top, lw, ph, rw);
	place(&app->panes[TUI_PANE_DETAIL], top + ph, lw, dh, rw);
	place(&app->panes[TUI_PANE_DIFF], top + ph + dh, lw, ah - ph - dh, rw);
	place(&app->panes[TUI_PANE_LOG], top + ah, 0, lh, app->cols);
}

static void layout_narrow(tui_app *app, int top, int bh)
{
	int th = bh >= 20 ? bh / 2 + 1 : bh / 2;
	place(&app->panes[TUI_PANE_TREE], top, 0, th, app->cols);
	for (int k = 1; k < app->norder; k++) {
		tui_pane *p = &app->panes[app->order[k]];
		place(p, top + th, 0, bh - th, app->cols);
		if (app->order[k] != app->lower) {
			p->shown = false;  /* sized, so its scrolling knows its height */
			delwin(p->win);
			p->win = NULL;
		}
	}
}

void tui_layout(tui_app *app)
{
	getmaxyx(stdscr, app->rows, app->cols);
	app->too_small = app->rows < MIN_ROWS || app->cols < MIN_COLS;
	for (int i = 0; i < TUI_PANE_COUNT; i++)
		place(&app->panes[i], 0, 0, 0, 0);
	app->narrow = app->cols < WIDE_COLS || app->rows < WIDE_ROWS;
	if (app->narrow && app->focus != TUI_PANE_TREE)
		app->lower = app->focus;  /* the focused pane stays in sight */
	if (app->narrow)
		set_order(app, narrow_order, TUI_PANE_COUNT);
	else
		set_order(app, wide_order, TUI_PANE_COUNT);
	if (app->too_small)
		return;
	int top = 1, bh = app->rows - 2;  /* status line above, hint bar below */
	if (app->zoom)
		place(&app->panes[app->focus], top, 0, bh, app->cols);
	else if (app->narrow)
		layout_narrow(app, top, bh);
	else
		layout_wide(app, top, bh);
}

/* ---- the frame ------------------------------------------------------------ */

static void draw_too_small(tui_app *app)
{
	erase();
	char text[256];
	snprintf(text, sizeof text, "terminal too small: %dx%d. cuco needs %dx%d; resize, or %s to quit.",
		app->cols, app->rows, MIN_COLS, MIN_ROWS, tui_key_name(TUI_ACT_QUIT));
	cuco_buf b = { 0 };
	tui_wrap(text, app->cols > 1 ? app->cols - 1 : 1, &b);
	int y = 0;
	for (const char *s = b.data; s && *s && y < app->rows; y++) {
		const char *nl = strchr(s, '\n');
		mvaddnstr(y, 0, s, nl ? (int)(nl - s) : -1);
		s = nl ? nl + 1 : s + strlen(s);
	}
	cuco_buf_free(&b);
	wnoutrefresh(stdscr);
}

void tui_draw(tui_app *app)
{
	if (app->too_small) {
		draw_too_small(app);
		return;
	}
	if (app->focus_stale)
		tui_focus_load(app);
	tui_draw_status(app);
	for (int i = 0; i < TUI_PANE_COUNT; i++) {
		tui_pane *p = &app->panes[i];
		if (!p->win || !p->shown)
			continue;
		werase(p->win);
		p->ops->draw(app, p);
		tui_box(app, p, p->ops->title);
		wnoutrefresh(p->win);
	}
	tui_draw_hints(app);
}

/* ---- the store, between keys ---------------------------------------------- */

void tui_reload(tui_app *app)
{
	for (int i = 0; i < TUI_PANE_COUNT; i++)
		if (app->panes[i].ops->reload)
			app->panes[i].ops->reload(app, &app->panes[i]);
	app->focus_stale = true;
}

bool tui_refresh(tui_app *app)
{
	cuco_err err = { 0 };
	bool changed = false;
	int nisl = app->m.nislands;
	if (tui_model_refresh(&app->m, app->st, false, &changed, &err) != CUCO_OK) {
		tui_flash(app, "store: %s", err.msg);
		return changed;
	}
	if (cuco_mono() - app->engine_checked > ENGINE_CHECK_S) {
		app->engine_checked = cuco_mono();
		tui_run_state was = app->m.state;
		tui_model_check_engine(&app->m);
		changed |= was != app->m.state;
	}
	if (!changed)
		return false;
	if (app->m.nislands != nisl && nisl <= 6 && !app->narrow)
		tui_layout(app);  /* the islands pane fits its rows */
	tui_reload(app);
	return true;
}

void tui_drain(int fd)
{
	char buf[256];
	while (read(fd, buf, sizeof buf) > 0)
		;
}

void tui_behind(tui_app *app)
{
	if (app->wake_fd >= 0)
		tui_drain(app->wake_fd);
	if (tui_refresh(app) || time(NULL) != app->dialog_second) {
		app->dialog_second = time(NULL);
		tui_draw(app);
	}
}

void tui_resized(tui_app *app)
{
	tui_layout(app);
	clearok(curscr, TRUE);
	tui_draw(app);
}
