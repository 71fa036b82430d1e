/* screen.c — the workbench loop: layout, focus, redraw, dialogs.
 *
 * One UI thread owns the terminal. Each turn it waits in poll() on the
 * keyboard and, in-process, the engine's wake fd; attached from another
 * process it wakes a few times a second to look at the store's last event
 * sequence. The store is read in short read transactions only when that
 * sequence moved, so an idle screen costs nothing and sends nothing: every
 * pane draws into its own window and curses sends only the cells that
 * changed (wnoutrefresh per pane, one doupdate). Dialogs (prompts, help,
 * explanations) keep the same rhythm, so the screen behind them stays live.
 *
 * Two layouts, as tig has: at 120x30 and more, two columns (islands and
 * the tree on the left; phases, detail and diff on the right; the log
 * across the bottom); narrower, the tree above and one pane below it, the
 * one Tab brought there. Below 40x12 the screen says it is too small. */
#include "tui/screen.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define MIN_ROWS 12
#define MIN_COLS 40
#define WIDE_COLS 120          /* two columns from here */
#define WIDE_ROWS 30
#define ATTACHED_POLL_MS 250   /* a viewer in another process polls the store */
#define IN_PROCESS_POLL_MS 1000 /* in-process the wake fd says when; the clock ticks */
#define DIALOG_POLL_MS 250     /* a dialog looks at the store this often */
#define ENGINE_CHECK_S 2.0     /* a viewer asks this often whether the engine lives */
#define SUM_CHUNK 100          /* candidates summed for tokens/cost per turn */
#define FLASH_S 4.0
#define TICK (-2)              /* dialog_key: no key, the screen behind was redrawn */

static const tui_pane_ops *const pane_ops[TUI_PANE_COUNT] = {
	&tui_pane_islands, &tui_pane_tree, &tui_pane_diff, &tui_pane_phases, &tui_pane_detail,
	&tui_pane_log,
};

/* Focus order: the wide layout's, column by column; the narrow one's, the
 * tree and then the panes that take turns below it. */
static const int wide_order[] = { TUI_PANE_ISLANDS, TUI_PANE_TREE, TUI_PANE_PHASES, TUI_PANE_DETAIL,
	TUI_PANE_DIFF, TUI_PANE_LOG };
static const int narrow_order[] = { TUI_PANE_TREE, TUI_PANE_DETAIL, TUI_PANE_DIFF, TUI_PANE_PHASES,
	TUI_PANE_ISLANDS, TUI_PANE_LOG };

static void draw_all(tui_app *app);
static void layout(tui_app *app);
static void keep_selection(tui_app *app);

/* ---- drawing helpers ------------------------------------------------------ */

/* Bytes of s that fit in width columns, and the columns they take. */
static size_t fit_bytes(const char *s, int width, int *cols_out)
{
	mbstate_t ps;
	memset(&ps, 0, sizeof ps);
	int cols = 0;
	size_t bytes = 0, len = strlen(s);
	while (bytes < len && cols < width) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + bytes, len - bytes, &ps);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0)
			break;  /* not UTF-8: what came before */
		int cw = wc == '\t' ? 1 : wcwidth(wc);
		if (cw < 0)
			cw = 1;
		if (cols + cw > width)
			break;
		cols += cw;
		bytes += n;
	}
	*cols_out = cols;
	return bytes;
}

int tui_width(const char *s)
{
	int cols;
	fit_bytes(s, 1 << 20, &cols);
	return cols;
}

int tui_put(WINDOW *w, int y, int x, const char *s, int width)
{
	int cols;
	size_t bytes = fit_bytes(s, width, &cols);
	if (bytes)
		mvwaddnstr(w, y, x, s, (int)bytes);
	return cols;
}

int tui_put_cut(WINDOW *w, int y, int x, const char *s, int width, const char *more)
{
	if (width <= 0)
		return 0;
	int cols;
	size_t bytes = fit_bytes(s, width, &cols);
	if (s[bytes] == '\0')
		return tui_put(w, y, x, s, width);
	bytes = fit_bytes(s, width - 1, &cols);
	if (bytes)
		mvwaddnstr(w, y, x, s, (int)bytes);
	return cols + tui_put(w, y, x + cols, more, 1);
}

int tui_putf(WINDOW *w, int y, int x, int width, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tui_put(w, y, x, buf, width);
}

/* Narrow layout: the panes below the tree name each other in the title,
 * the one shown standing out, so Tab's next stop is in sight. */
static void draw_tabs(tui_app *app, tui_pane *p, const char *title)
{
	int x = 2, end = p->w - 2;
	for (int k = 1; k < app->norder && x < end; k++) {
		tui_pane *q = &app->panes[app->order[k]];
		bool this = q == p;
		attr_t a = this ? app->crt.attr[TUI_EL_TITLE] | (app->focus == app->order[k] ? A_REVERSE : A_UNDERLINE)
			: app->crt.attr[TUI_EL_DIM];
		wattrset(p->win, a);
		x += tui_putf(p->win, 0, x, end - x, " %s ", this ? title : q->ops->title);
	}
}

void tui_box(tui_app *app, tui_pane *p, const char *title)
{
	bool focused = &app->panes[app->focus] == p;
	attr_t a = app->crt.attr[focused ? TUI_EL_BORDER_FOCUS : TUI_EL_BORDER];
	wattrset(p->win, a);
	if (app->crt.utf8)
		box_set(p->win, WACS_VLINE, WACS_HLINE);  /* Unicode lines, not the terminal's ACS mode */
	else
		wborder(p->win, '|', '|', '-', '-', '+', '+', '+', '+');
	char text[256];
	if (p->ops && p->ops->title_fn && title == p->ops->title)
		p->ops->title_fn(app, text, sizeof text);
	else
		cuco_strlcpy(text, title, sizeof text);
	if (app->narrow && !app->zoom && p->ops && p != &app->panes[TUI_PANE_TREE] && title == p->ops->title)
		draw_tabs(app, p, text);
	else {
		wattrset(p->win, app->crt.attr[TUI_EL_TITLE] | (focused ? A_REVERSE : 0));
		tui_putf(p->win, 0, 2, p->w - 4, " %s ", text);
	}
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
}

bool tui_scroll_act(tui_pane *p, tui_action a, int view_h)
{
	int max_top = p->lines > view_h ? p->lines - view_h : 0;
	switch (a) {
	case TUI_ACT_UP: p->top--; break;
	case TUI_ACT_DOWN: p->top++; break;
	case TUI_ACT_PAGE_UP: p->top -= view_h / 2; break;
	case TUI_ACT_PAGE_DOWN: p->top += view_h / 2; break;
	case TUI_ACT_TOP: p->top = 0; break;
	case TUI_ACT_BOTTOM: p->top = max_top; break;
	default: return false;
	}
	if (p->top > max_top)
		p->top = max_top;
	if (p->top < 0)
		p->top = 0;
	return true;
}

void tui_flash(tui_app *app, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(app->flash, sizeof app->flash, fmt, ap);
	va_end(ap);
	app->flash_until = cuco_mono() + FLASH_S;
}

/* One line's worth of text at the start of s, at most width columns, cut
 * after a space when it can be; returns its bytes. */
static size_t wrap_line(const char *s, size_t len, int width)
{
	int cols;
	size_t fit = fit_bytes(s, width, &cols);
	if (fit >= len)
		return len;
	for (size_t k = fit; k > 0; k--)
		if (s[k] == ' ')
			return k;
	return fit ? fit : 1;
}

void tui_wrap(const char *text, int width, cuco_buf *out)
{
	if (width < 8)
		width = 8;
	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		size_t indent = strspn(s, " ");
		if (indent > len || (int)indent > width / 2)
			indent = 0;
		size_t k = wrap_line(s, len, width);
		cuco_buf_append(out, s, k);
		cuco_buf_puts(out, "\n");
		while (k < len) {
			while (k < len && s[k] == ' ')
				k++;
			if (k == len)
				break;
			size_t n = wrap_line(s + k, len - k, width - (int)indent);
			cuco_buf_printf(out, "%*s", (int)indent, "");
			cuco_buf_append(out, s + k, n);
			cuco_buf_puts(out, "\n");
			k += n;
		}
		s += len + (nl ? 1 : 0);
		if (!nl)
			break;
	}
	cuco_buf_append(out, "", 0);
}

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

static void layout(tui_app *app)
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

static void focus_pane(tui_app *app, int pane)
{
	app->focus = pane;
	if (app->narrow && pane != TUI_PANE_TREE && app->lower != pane) {
		app->lower = pane;
		layout(app);
	} else if (app->zoom)
		layout(app);
}

/* ---- status line and hint bar -------------------------------------------- */

static void fmt_count(char *buf, size_t size, double v)
{
	if (v >= 1e6)
		snprintf(buf, size, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, size, "%.3gk", v / 1e3);
	else
		snprintf(buf, size, "%.0f", v);
}

/* The status line's parts, in the order shown, each with a priority:
 * when the line is too long the lowest go first, so at 80 columns the
 * state, the clock and the best remain. */
enum { SEG_STATE, SEG_WHY, SEG_NOISE, SEG_BEST, SEG_COUNTS, SEG_SLOTS, SEG_WORKLOAD, SEG_USAGE,
	SEG_RUN, NSEG };
static const int seg_prio[NSEG] = { 9, 7, 8, 8, 6, 3, 5, 4, 2 };

static void status_segments(tui_app *app, char seg[NSEG][160])
{
	const tui_model *m = &app->m;
	char num[16], num2[16];
	long el = (long)tui_model_elapsed(m);
	snprintf(seg[SEG_STATE], 160, "%s %02ld:%02ld:%02ld", tui_model_state_text(m), el / 3600,
		el / 60 % 60, el % 60);
	/* "budget reached after 40 strategy candidates" says why in its first words. */
	const char *after = strstr(m->end_text, " after ");
	snprintf(seg[SEG_WHY], 160, "%.*s", after ? (int)(after - m->end_text) : (int)strlen(m->end_text),
		m->end_text);
	if (!m->ended || strcmp(seg[SEG_WHY], tui_model_state_text(m)) == 0)
		seg[SEG_WHY][0] = '\0';
	/* A figure from a noisy machine says so (docs/trust.md). */
	snprintf(seg[SEG_NOISE], 160, "%s", m->noisy ? "NOISY" : "");
	char best[64];
	if (m->best_id && m->best_id != m->baseline_id && !isnan(m->best_speedup)) {
		cuco_speedup_text(m->best_speedup, m->best_lo, m->best_hi, m->best_rounds,
			!app->crt.utf8, best, sizeof best);
		snprintf(seg[SEG_BEST], 160, "best %s #%llu", best, (unsigned long long)m->best_id);
	} else {
		snprintf(seg[SEG_BEST], 160, "best -");  /* nothing crowned: the baseline is the best */
	}
	int busy = m->count[CUCO_STATUS_COMPILING] + m->count[CUCO_STATUS_RUNNING]
		+ m->count[CUCO_STATUS_BENCHMARKING];
	snprintf(seg[SEG_COUNTS], 160, "done %d failed %d queued %d busy %d", m->count[CUCO_STATUS_DONE],
		m->count[CUCO_STATUS_FAILED], m->count[CUCO_STATUS_QUEUED], busy);
	snprintf(seg[SEG_SLOTS], 160, "%s", m->slots);
	snprintf(seg[SEG_WORKLOAD], 160, "%s %s/%s", m->workload[0] ? m->workload : "-",
		m->strategy[0] ? m->strategy : "-", m->nislands ? m->islands[0].phase : "-");
	fmt_count(num, sizeof num, (double)m->tokens);
	fmt_count(num2, sizeof num2, (double)m->budget_tokens);
	int n = snprintf(seg[SEG_USAGE], 160, "tok %s%s%s $%.2f", num, m->budget_tokens ? "/" : "",
		m->budget_tokens ? num2 : "", m->cost_usd);
	if (m->budget_usd > 0 && n > 0 && n < 160)
		snprintf(seg[SEG_USAGE] + n, 160 - (size_t)n, "/$%g", m->budget_usd);
	/* The run's folder, unless it only repeats the workload's name. */
	const char *dir = cuco_store_dir(app->st), *base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	snprintf(seg[SEG_RUN], 160, "%s", m->workload[0] && strstr(base, m->workload) ? "" : base);
}

static void draw_status(tui_app *app)
{
	char seg[NSEG][160];
	status_segments(app, seg);
	/* Most telling first: each part goes in if it still fits. */
	bool keep[NSEG] = { false };
	int used = 0;
	for (int prio = 9; prio >= 0; prio--)
		for (int i = 0; i < NSEG; i++) {
			int w = tui_width(seg[i]) + 2;
			if (seg_prio[i] == prio && seg[i][0] && (used + w <= app->cols || i == SEG_STATE)) {
				keep[i] = true;
				used += w;
			}
		}
	attr_t base = app->crt.attr[TUI_EL_STATUS_LINE];
	attrset(base);
	move(0, 0);
	hline(' ', app->cols);
	int x = 1;
	for (int i = 0; i < NSEG && x < app->cols; i++) {
		if (!keep[i])
			continue;
		/* A run that is not searching says so inverted against the line:
		 * it is news. Inverted, not reverse: a line in reverse already
		 * (monochrome, NO_COLOR) turned normal after it, leaving its gaps
		 * as stray reverse blocks. */
		bool loud = (i == SEG_STATE && (app->m.ended || app->m.paused || app->m.model_down
			|| app->m.state == TUI_RUN_RETIMING)) || i == SEG_NOISE;
		if (loud)
			attrset(base ^ A_REVERSE);
		int w = strcspn(seg[i], " ");
		x += tui_put(stdscr, 0, x, seg[i], i == SEG_STATE ? w : app->cols - x);
		if (loud)
			attrset(base);
		if (i == SEG_STATE)
			x += tui_put(stdscr, 0, x, seg[i] + w, app->cols - x);
		x += 2;
	}
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
}

/* One hint, "key label", from x; returns columns used (0 when it does not fit). */
static int draw_hint(tui_app *app, int y, int x, int end, const tui_binding *b, const char *label)
{
	char key[16];
	cuco_strlcpy(key, b->names, sizeof key);
	char *sp = strchr(key, ' ');
	if (sp && sp != key)
		*sp = '\0';
	int need = (int)strlen(key) + tui_width(label) + 2;
	if (x + need > end)
		return 0;
	attrset(app->crt.attr[TUI_EL_HINT_KEY]);
	int used = tui_put(stdscr, y, x, key, end - x);
	attrset(app->crt.attr[TUI_EL_HINTS]);
	return used + tui_putf(stdscr, y, x + used, end - x - used, " %s ", label);
}

/* The focused pane's keys from the action table, a person's actions first,
 * then ways of looking, then moving; help and quit keep their place at the
 * right end. A hint that does not fit is skipped, a shorter one may. */
static void draw_hints(tui_app *app)
{
	int y = app->rows - 1;
	attrset(app->crt.attr[TUI_EL_HINTS]);
	move(y, 0);
	hline(' ', app->cols);
	if (app->flash[0] && cuco_mono() < app->flash_until) {
		attrset(app->crt.attr[TUI_EL_FLASH]);
		tui_put(stdscr, y, 0, app->flash, app->cols);
	} else {
		const tui_action fixed[] = { TUI_ACT_HELP, TUI_ACT_QUIT };
		int right = app->cols;
		for (int k = 1; k >= 0; k--) {
			const tui_binding *b = tui_binding_of(fixed[k]);
			right -= (int)strcspn(b->names, " ") + (int)strlen(b->label) + 2;
		}
		for (int k = 0, x = right; k < 2; k++)
			x += draw_hint(app, y, x, app->cols, tui_binding_of(fixed[k]), tui_binding_of(fixed[k])->label);
		unsigned ctx = app->panes[app->focus].ops->context;
		int x = 0;
		for (int g = 0; g < TUI_G_COUNT; g++)
			for (int a = 1; a < TUI_ACT_COUNT; a++) {
				const tui_binding *b = tui_binding_of((tui_action)a);
				if (b->group != g || !(b->context & ctx) || a == TUI_ACT_HELP || a == TUI_ACT_QUIT)
					continue;
				const char *label = tui_act_label(app, (tui_action)a);
				if (label)
					x += draw_hint(app, y, x, right - 1, b, label);
			}
	}
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
}

static void draw_too_small(tui_app *app)
{
	erase();
	char text[256];
	snprintf(text, sizeof text, "terminal too small: %dx%d. cuco needs %dx%d; resize, or q to quit.",
		app->cols, app->rows, MIN_COLS, MIN_ROWS);
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

static void draw_all(tui_app *app)
{
	if (app->too_small) {
		draw_too_small(app);
		return;
	}
	if (app->focus_stale)
		tui_focus_load(app);
	draw_status(app);
	for (int i = 0; i < TUI_PANE_COUNT; i++) {
		tui_pane *p = &app->panes[i];
		if (!p->win || !p->shown)
			continue;
		werase(p->win);
		p->ops->draw(app, p);
		tui_box(app, p, p->ops->title);
		wnoutrefresh(p->win);
	}
	draw_hints(app);
}

/* ---- the store, between keys ---------------------------------------------- */

static void refresh_model(tui_app *app, bool force, bool *changed)
{
	cuco_err err = { 0 };
	int nisl = app->m.nislands;
	if (tui_model_refresh(&app->m, app->st, force, changed, &err) != CUCO_OK) {
		tui_flash(app, "store: %s", err.msg);
		return;
	}
	if (cuco_mono() - app->engine_checked > ENGINE_CHECK_S) {
		app->engine_checked = cuco_mono();
		tui_run_state was = app->m.state;
		tui_model_check_engine(&app->m);
		*changed |= was != app->m.state;
	}
	if (!*changed)
		return;
	if (app->m.nislands != nisl && nisl <= 6 && !app->narrow)
		layout(app);  /* the islands pane fits its rows */
	keep_selection(app);
	app->focus_stale = true;
}

static void drain(int fd)
{
	char buf[256];
	while (read(fd, buf, sizeof buf) > 0)
		;
}

/* ---- dialogs -------------------------------------------------------------- */

/* Wait for a key inside a dialog, still leaving on a termination signal.
 * Every DIALOG_POLL_MS without one, the store is looked at and the screen
 * behind redrawn when it moved (or the clock ticked): then TICK, and the
 * dialog draws itself again over it. A resize lays the screen out again. */
static int dialog_key(tui_app *app)
{
	timeout(DIALOG_POLL_MS);
	int ch = getch();
	nodelay(stdscr, TRUE);
	if (tui_crt_interrupted())
		return 27;
	if (ch == KEY_RESIZE) {
		layout(app);
		clearok(curscr, TRUE);
		draw_all(app);
		return TICK;
	}
	if (ch != ERR)
		return ch;
	if (app->wake_fd >= 0)
		drain(app->wake_fd);
	bool changed = false;
	refresh_model(app, false, &changed);
	if (changed || time(NULL) != app->dialog_second) {
		app->dialog_second = time(NULL);
		draw_all(app);
	}
	return TICK;
}

/* What is typed into a prompt: a line of UTF-8 text and a cursor in it. */
typedef struct line_edit {
	char *buf;
	size_t size, len, at;
	bool fresh;  /* the text given is selected: typing replaces it */
} line_edit;

static size_t utf8_prev(const char *s, size_t at)
{
	do
		at--;
	while (at > 0 && ((unsigned char)s[at] & 0xC0) == 0x80);
	return at;
}

static size_t utf8_next(const char *s, size_t len, size_t at)
{
	do
		at++;
	while (at < len && ((unsigned char)s[at] & 0xC0) == 0x80);
	return at;
}

static void edit_delete(line_edit *e, size_t from, size_t to)
{
	memmove(e->buf + from, e->buf + to, e->len - to + 1);
	e->len -= to - from;
	e->at = from;
}

/* One key into the line; false when the key is not an edit. */
static bool edit_key(line_edit *e, int ch)
{
	bool typed = ch >= 32 && ch < 256 && ch != 127;
	if (e->fresh && (typed || ch == KEY_BACKSPACE || ch == 127 || ch == 8 || ch == KEY_DC))
		edit_delete(e, 0, e->len);  /* replace the selected default */
	e->fresh = false;
	if (typed) {
		if (e->len + 1 >= e->size)
			return true;
		memmove(e->buf + e->at + 1, e->buf + e->at, e->len - e->at + 1);
		e->buf[e->at++] = (char)ch;
		e->len++;
		return true;
	}
	switch (ch) {
	case KEY_LEFT: if (e->at) e->at = utf8_prev(e->buf, e->at); return true;
	case KEY_RIGHT: if (e->at < e->len) e->at = utf8_next(e->buf, e->len, e->at); return true;
	case KEY_HOME: case TUI_CTRL('a'): e->at = 0; return true;
	case KEY_END: case TUI_CTRL('e'): e->at = e->len; return true;
	case KEY_BACKSPACE: case 127: case 8:
		if (e->at)
			edit_delete(e, utf8_prev(e->buf, e->at), e->at);
		return true;
	case KEY_DC:
		if (e->at < e->len)
			edit_delete(e, e->at, utf8_next(e->buf, e->len, e->at));
		return true;
	case TUI_CTRL('u'): edit_delete(e, 0, e->at); return true;
	case TUI_CTRL('k'): e->buf[e->at] = '\0', e->len = e->at; return true;
	case TUI_CTRL('w'): {
		size_t k = e->at;
		while (k && e->buf[k - 1] == ' ')
			k--;
		while (k && e->buf[k - 1] != ' ')
			k--;
		edit_delete(e, k, e->at);
		return true;
	}
	default: return false;
	}
}

static void draw_prompt(tui_app *app, const char *label, const line_edit *e)
{
	int y = app->rows - 1;
	attrset(app->crt.attr[TUI_EL_DIALOG]);
	move(y, 0);
	hline(' ', app->cols);
	int x = tui_put(stdscr, y, 0, label, app->cols - 8 > 0 ? app->cols - 8 : app->cols);
	int room = app->cols - x - 1;
	/* Scroll the text so the cursor stays in sight. */
	size_t from = 0;
	char before[1024];
	while (from < e->at) {
		snprintf(before, sizeof before, "%.*s", (int)(e->at - from), e->buf + from);
		if (tui_width(before) < room)
			break;
		from = utf8_next(e->buf, e->len, from);
	}
	attrset(app->crt.attr[TUI_EL_DIALOG] | (e->fresh ? A_REVERSE : 0));
	snprintf(before, sizeof before, "%.*s", (int)(e->at - from), e->buf + from);
	int cx = x + tui_width(before);
	tui_put(stdscr, y, x, e->buf + from, room > 0 ? room : 0);
	attrset(A_NORMAL);
	move(y, cx < app->cols ? cx : app->cols - 1);
	wnoutrefresh(stdscr);
	doupdate();
}

bool tui_prompt(tui_app *app, const char *label, char *buf, size_t size)
{
	line_edit e = { buf, size, strlen(buf), strlen(buf), buf[0] != '\0' };
	curs_set(1);
	leaveok(stdscr, FALSE);
	bool ok = false;
	for (;;) {
		draw_prompt(app, label, &e);
		int ch = dialog_key(app);
		if (ch == TICK)
			continue;
		if (ch == 27)
			break;
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
			ok = true;
			break;
		}
		edit_key(&e, ch);
	}
	curs_set(0);
	leaveok(stdscr, TRUE);
	attrset(A_NORMAL);
	return ok;
}

int tui_ask(tui_app *app, const char *question, const char *keys)
{
	int y = app->rows - 1, ch;
	do {
		attrset(app->crt.attr[TUI_EL_DIALOG]);
		move(y, 0);
		hline(' ', app->cols);
		tui_put_cut(stdscr, y, 0, question, app->cols, app->crt.g->more);
		attrset(A_NORMAL);
		wnoutrefresh(stdscr);
		doupdate();
	} while ((ch = dialog_key(app)) == TICK);
	return ch > 0 && ch < 256 && ch != '\n' && ch != '\r' && strchr(keys, ch) ? ch : 0;
}

/* Split text into lines in place; returns the count. */
static int split(char *text, char ***lines)
{
	int n = 0, cap = 64;
	*lines = cuco_xmalloc(sizeof(char *) * (size_t)cap);
	for (char *s = text, *nl; s && *s; s = nl) {
		nl = strchr(s, '\n');
		if (nl)
			*nl++ = '\0';
		if (n == cap) {
			cap *= 2;
			*lines = cuco_xrealloc(*lines, sizeof(char *) * (size_t)cap);
		}
		(*lines)[n++] = s;
	}
	return n;
}

void tui_popup(tui_app *app, const char *title, const char *text)
{
	if (app->too_small)
		return;
	int h = app->rows - 4 > 5 ? app->rows - 4 : app->rows, w = app->cols - 8 > 30 ? app->cols - 8 : app->cols;
	cuco_buf wrapped = { 0 };
	tui_wrap(text, w - 4, &wrapped);
	char **lines = NULL;
	int n = split(wrapped.data, &lines);
	tui_pane box = { 0 };
	box.win = newwin(h, w, (app->rows - h) / 2, (app->cols - w) / 2);
	box.h = h, box.w = w, box.lines = n;
	keypad(box.win, TRUE);
	for (;;) {
		wattrset(box.win, app->crt.attr[TUI_EL_NORMAL]);
		werase(box.win);
		for (int i = 0; i < h - 2 && box.top + i < n; i++)
			tui_put(box.win, 1 + i, 2, lines[box.top + i], w - 4);
		tui_box(app, &box, title);
		wattrset(box.win, app->crt.attr[TUI_EL_DIM]);
		tui_putf(box.win, h - 1, 2, w - 4, " %d/%d  j/k scroll, q or Esc close ",
			box.top + 1 < n ? box.top + 1 : n, n);
		touchwin(box.win);
		wnoutrefresh(box.win);
		doupdate();
		int ch = dialog_key(app);
		if (ch == TICK) {
			if (app->too_small || app->rows < h || app->cols < w)
				break;
			continue;
		}
		tui_action a = tui_key_action(ch);
		if (ch == 27 || a == TUI_ACT_QUIT || a == TUI_ACT_HELP || a == TUI_ACT_EXPLAIN
			|| a == TUI_ACT_TOGGLE || a == TUI_ACT_SOURCE)
			break;
		tui_scroll_act(&box, a, h - 2);
	}
	delwin(box.win);
	free(lines);
	cuco_buf_free(&wrapped);
	touchwin(stdscr);
	for (int i = 0; i < TUI_PANE_COUNT; i++)
		if (app->panes[i].win)
			touchwin(app->panes[i].win);
}

/* ---- selection ------------------------------------------------------------ */

bool tui_select_id(tui_app *app, uint64_t id)
{
	long r = tui_model_row_of(&app->m, id);
	if (r < 0)
		return false;
	app->cursor = (size_t)r;
	if (app->sel_id != id) {
		app->sel_id = id;
		app->focus_stale = true;
	}
	return true;
}

/* After a reload or a filter change: stay on the same candidate if it is
 * still shown, else on the same row. */
static void keep_selection(tui_app *app)
{
	if (app->sel_id && tui_select_id(app, app->sel_id))
		return;
	if (app->m.nrows == 0) {
		app->cursor = 0;
		app->sel_id = 0;
		app->focus_stale = true;
		return;
	}
	if (app->cursor >= app->m.nrows)
		app->cursor = app->m.nrows - 1;
	tui_select_id(app, app->m.sums[app->m.rows[app->cursor]].id);
}

/* ---- keys ----------------------------------------------------------------- */

static void explain(tui_app *app)
{
	cuco_buf b = { 0 };
	const tui_pane_ops *ops = app->panes[app->focus].ops;
	ops->explain(app, &b);
	tui_popup(app, "explain", b.data ? b.data : "");
	cuco_buf_free(&b);
}

static void help(tui_app *app)
{
	cuco_buf b = { 0 };
	cuco_buf_puts(&b, "Keys (the same table drives the keys, this help and the hint bar):\n\n");
	tui_keys_help(&b);
	cuco_buf_puts(&b, "\nMouse: click focuses a pane and selects a row; the wheel scrolls.\n"
		"Every action of yours is stored with your name, on the candidate at once and as a "
		"command for the engine, which applies it and says so in the log; confirmations "
		"default to cancel (Enter or Esc cancels).\n");
	tui_popup(app, "help", b.data);
	cuco_buf_free(&b);
}

static void quit(tui_app *app)
{
	/* A viewer never stops a detached run; a run that ended has nothing to stop. */
	if (!app->opt->in_process || !tui_model_engine_live(&app->m)) {
		app->quit = true;
		return;
	}
	int ch = tui_ask(app, "Quit: y stops the search, n leaves it running, Esc stays", "yn");
	if (ch == 'y' || ch == 'n') {
		app->stop_run = ch == 'y';
		app->quit = true;
	}
}

static void cycle_focus(tui_app *app, int dir)
{
	int k = 0;
	while (k < app->norder && app->order[k] != app->focus)
		k++;
	k = (k + (dir > 0 ? 1 : app->norder - 1)) % app->norder;
	focus_pane(app, app->order[k]);
}

static void global_action(tui_app *app, tui_action a)
{
	switch (a) {
	case TUI_ACT_FOCUS_NEXT: cycle_focus(app, 1); break;
	case TUI_ACT_FOCUS_PREV: cycle_focus(app, -1); break;
	case TUI_ACT_ZOOM:
		app->zoom = !app->zoom;
		layout(app);
		break;
	case TUI_ACT_PIN: tui_act_pin(app); break;
	case TUI_ACT_REJECT: tui_act_reject(app); break;
	case TUI_ACT_EDIT: tui_act_edit(app); break;
	case TUI_ACT_HINT: tui_act_hint(app, app->f.have ? app->f.cand.island : -1); break;
	case TUI_ACT_PAUSE: tui_act_pause(app); break;
	case TUI_ACT_EXPORT: tui_act_export(app); break;
	case TUI_ACT_SOURCE: tui_act_source(app); break;
	case TUI_ACT_MARK:
		if (!app->sel_id)
			break;
		app->mark_id = app->mark_id == app->sel_id ? 0 : app->sel_id;
		app->focus_stale = true;
		if (app->mark_id)
			tui_flash(app, "marked #%llu: the diff now compares against it (m again to clear)",
				(unsigned long long)app->mark_id);
		break;
	case TUI_ACT_EXPLAIN: explain(app); break;
	case TUI_ACT_HELP: help(app); break;
	case TUI_ACT_REDRAW: clearok(curscr, TRUE); break;
	case TUI_ACT_QUIT: quit(app); break;
	default: break;
	}
}

static void mouse(tui_app *app)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	for (int i = 0; i < TUI_PANE_COUNT; i++) {
		tui_pane *p = &app->panes[i];
		if (!p->win || !p->shown || ev.y < p->y || ev.y >= p->y + p->h || ev.x < p->x ||
				ev.x >= p->x + p->w)
			continue;
		focus_pane(app, i);
		tui_action a = ev.bstate & BUTTON4_PRESSED ? TUI_ACT_UP
			: ev.bstate & BUTTON5_PRESSED ? TUI_ACT_DOWN : TUI_ACT_NONE;
		if (a != TUI_ACT_NONE)
			for (int k = 0; k < 3; k++)
				p->ops->act(app, p, a);
		else if (i == TUI_PANE_TREE) {
			/* Row 0 inside the box is the column header. */
			long row = p->top + (ev.y - p->y - 2);
			if (row >= 0 && (size_t)row < app->m.nrows)
				tui_select_id(app, app->m.sums[app->m.rows[row]].id);
		}
		return;
	}
}

static void key(tui_app *app, int ch)
{
	if (ch == KEY_RESIZE) {
		layout(app);
		clearok(curscr, TRUE);
		return;
	}
	if (app->too_small) {
		if (ch == 'q')
			app->quit = true;
		return;
	}
	if (ch == KEY_MOUSE) {
		mouse(app);
		return;
	}
	tui_action a = tui_key_action(ch);
	if (a == TUI_ACT_NONE)
		return;
	app->search_jump = false;  /* a person moving on does not want to be moved */
	/* Keys typed ahead act on what the cursor is on now, not on the last frame. */
	if (app->focus_stale)
		tui_focus_load(app);
	tui_pane *p = &app->panes[app->focus];
	if (!p->ops->act(app, p, a))
		global_action(app, a);
}

/* ---- the loop ------------------------------------------------------------- */

static void loop(tui_app *app)
{
	bool dirty = true;
	time_t shown_second = 0;
	while (!app->quit && !tui_crt_interrupted()) {
		time_t now = time(NULL);
		bool flash_over = app->flash[0] && cuco_mono() >= app->flash_until;
		if (flash_over)
			app->flash[0] = '\0';
		if (dirty || app->focus_stale)
			draw_all(app);
		else if (!app->too_small && (now != shown_second || flash_over)) {
			/* Only the clock (or a flash ending) changed. */
			draw_status(app);
			draw_hints(app);
		}
		shown_second = now;
		doupdate();
		dirty = false;

		bool summing = tui_model_summing(&app->m);
		bool searching = app->m.search[0] && app->m.searched < app->m.n;
		struct pollfd pfd[2] = { { STDIN_FILENO, POLLIN, 0 }, { app->wake_fd, POLLIN, 0 } };
		int wait = summing || searching ? 0 : app->wake_fd >= 0 ? IN_PROCESS_POLL_MS : ATTACHED_POLL_MS;
		int rc = poll(pfd, app->wake_fd >= 0 ? 2 : 1, wait);
		if (rc < 0 && errno != EINTR)
			break;
		int ch;
		while ((ch = getch()) != ERR && !app->quit) {
			key(app, ch);
			dirty = true;
		}
		bool woke = app->wake_fd >= 0 && rc > 0 && (pfd[1].revents & POLLIN);
		if (woke)
			drain(app->wake_fd);
		if (app->wake_fd < 0 || woke || rc == 0) {
			bool changed = false;
			refresh_model(app, false, &changed);
			dirty |= changed;
		}
		if (searching) {
			tui_model_search_step(&app->m, app->st, TUI_SEARCH_CHUNK);
			if (app->search_jump && (app->m.nmatch || app->m.searched >= app->m.n)) {
				app->search_jump = false;
				tui_tree_next_match(app, 1);
			}
			dirty = true;
		} else if (summing) {
			tui_model_sum_step(&app->m, app->st, SUM_CHUNK);
			if (!dirty)
				draw_status(app);
		}
	}
}

int cuco_tui_theme_check(const char *theme, cuco_err *err)
{
	tui_theme t;
	return theme ? tui_theme_load(&t, theme, err) : CUCO_OK;
}

int cuco_tui_run(cuco_store *st, int wake_fd, const cuco_tui_options *opt,
	bool *stop_run, cuco_err *err)
{
	tui_app *app = cuco_xcalloc(1, sizeof *app);
	app->st = st;
	app->wake_fd = wake_fd;
	app->opt = opt;
	cuco_strlcpy(app->author, opt->author && *opt->author ? opt->author : "user", sizeof app->author);
	for (int i = 0; i < TUI_PANE_COUNT; i++)
		app->panes[i].ops = pane_ops[i];
	app->panes[TUI_PANE_LOG].top = -1;  /* follow new events */
	app->focus = TUI_PANE_TREE;
	app->lower = TUI_PANE_DETAIL;
	tui_model_init(&app->m, opt->in_process);
	int rc = tui_model_refresh(&app->m, st, true, NULL, err);
	if (rc == CUCO_OK) {
		tui_model_check_engine(&app->m);
		rc = tui_crt_init(&app->crt, opt->theme, opt->no_color, opt->ascii, err);
	}
	if (rc == CUCO_OK) {
		cuco_log_quiet(true);  /* stderr belongs to curses now */
		nodelay(stdscr, TRUE);
		layout(app);
		keep_selection(app);
		loop(app);
		for (int i = 0; i < TUI_PANE_COUNT; i++)
			if (app->panes[i].win)
				delwin(app->panes[i].win);
		tui_crt_done();
		cuco_log_quiet(false);
	}
	/* SIGTERM/SIGHUP/SIGINT during an in-process run stop the search too. */
	if (stop_run)
		*stop_run = app->stop_run || (opt->in_process && tui_crt_interrupted());
	tui_focus_free(&app->f);
	tui_model_free(&app->m);
	free(app);
	return rc;
}
