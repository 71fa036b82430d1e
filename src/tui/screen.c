/* screen.c — the workbench loop: layout, focus, redraw, dialogs.
 *
 * One UI thread owns the terminal. Each turn it waits in poll() on the
 * keyboard and, in-process, the engine's wake fd; attached from another
 * process it wakes a few times a second to look at the store's last event
 * sequence. The store is read in short read transactions only when that
 * sequence moved, so an idle screen costs nothing and sends nothing: every
 * pane draws into its own window and curses sends only the cells that
 * changed (wnoutrefresh per pane, one doupdate). */
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

#define MIN_ROWS 24
#define MIN_COLS 80
#define ATTACHED_POLL_MS 250   /* a viewer in another process polls the store */
#define IN_PROCESS_POLL_MS 1000 /* in-process the wake fd says when; the clock ticks */
#define SUM_CHUNK 100          /* candidates summed for tokens/cost per turn */
#define FLASH_S 4.0

static const tui_pane_ops *const pane_ops[TUI_PANE_COUNT] = {
	&tui_pane_islands, &tui_pane_tree, &tui_pane_diff, &tui_pane_phases, &tui_pane_detail,
	&tui_pane_log,
};

/* ---- drawing helpers ------------------------------------------------------ */

int tui_put(WINDOW *w, int y, int x, const char *s, int width)
{
	mbstate_t ps;
	memset(&ps, 0, sizeof ps);
	int cols = 0;
	size_t bytes = 0, len = strlen(s);
	while (bytes < len && cols < width) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + bytes, len - bytes, &ps);
		if (n == (size_t)-1 || n == (size_t)-2) {
			/* Not UTF-8: write what came before and stop. */
			break;
		}
		if (n == 0)
			break;
		int cw = wc == '\t' ? 1 : wcwidth(wc);
		if (cw < 0)
			cw = 1;
		if (cols + cw > width)
			break;
		cols += cw;
		bytes += n;
	}
	if (bytes)
		mvwaddnstr(w, y, x, s, (int)bytes);
	return cols;
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

void tui_box(tui_app *app, tui_pane *p, const char *title)
{
	bool focused = &app->panes[app->focus] == p;
	attr_t a = app->crt.attr[focused ? TUI_EL_BORDER_FOCUS : TUI_EL_BORDER];
	wattrset(p->win, a);
	if (app->crt.utf8)
		box_set(p->win, WACS_VLINE, WACS_HLINE);  /* Unicode lines, not the terminal's ACS mode */
	else
		wborder(p->win, '|', '|', '-', '-', '+', '+', '+', '+');
	wattrset(p->win, app->crt.attr[TUI_EL_TITLE] | (focused ? A_REVERSE : 0));
	tui_putf(p->win, 0, 2, p->w - 4, " %s ", title);
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

/* ---- layout --------------------------------------------------------------- */

static void place(tui_pane *p, int y, int x, int h, int w)
{
	p->y = y, p->x = x, p->h = h, p->w = w;
	if (p->win)
		delwin(p->win);
	p->win = h > 2 && w > 4 ? newwin(h, w, y, x) : NULL;
}

static void layout(tui_app *app)
{
	getmaxyx(stdscr, app->rows, app->cols);
	app->too_small = app->rows < MIN_ROWS || app->cols < MIN_COLS;
	for (int i = 0; i < TUI_PANE_COUNT; i++)
		place(&app->panes[i], 0, 0, 0, 0);
	if (app->too_small)
		return;
	int top = 1, bh = app->rows - 2;  /* status line above, hint bar below */
	if (app->zoom) {
		place(&app->panes[app->focus], top, 0, bh, app->cols);
		return;
	}
	int lh = bh >= 34 ? 8 : 6;
	int ah = bh - lh;
	int lw = app->cols * 3 / 5, rw = app->cols - lw;
	int nisl = app->m.nislands < 1 ? 1 : app->m.nislands > 6 ? 6 : app->m.nislands;
	int ih = nisl + 3;
	int ph = 8;  /* four bars and a legend; zoom shows the table too */
	int dh = (ah - ph) / 2;
	place(&app->panes[TUI_PANE_ISLANDS], top, 0, ih, lw);
	place(&app->panes[TUI_PANE_TREE], top + ih, 0, ah - ih, lw);
	place(&app->panes[TUI_PANE_PHASES], top, lw, ph, rw);
	place(&app->panes[TUI_PANE_DETAIL], top + ph, lw, dh, rw);
	place(&app->panes[TUI_PANE_DIFF], top + ph + dh, lw, ah - ph - dh, rw);
	place(&app->panes[TUI_PANE_LOG], top + ah, 0, lh, app->cols);
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

static void draw_status(tui_app *app)
{
	const tui_model *m = &app->m;
	char num[16];
	int busy = m->count[CUCO_STATUS_COMPILING] + m->count[CUCO_STATUS_RUNNING]
		+ m->count[CUCO_STATUS_BENCHMARKING];
	long el = m->started > 0 ? (long)(cuco_now() - m->started) : 0;
	const char *dir = cuco_store_dir(app->st), *base = strrchr(dir, '/');
	if (el < 0)
		el = 0;
	/* Most telling first: a narrow terminal cuts the end. */
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, " %s %02ld:%02ld:%02ld%s  %s %s/%s  queued %d busy %d done %d failed %d  best ",
		base && base[1] ? base + 1 : dir, el / 3600, el / 60 % 60, el % 60,
		m->paused ? "  PAUSED" : "", m->workload[0] ? m->workload : "-",
		m->strategy[0] ? m->strategy : "-", m->nislands ? m->islands[0].phase : "-",
		m->count[CUCO_STATUS_QUEUED], busy, m->count[CUCO_STATUS_DONE],
		m->count[CUCO_STATUS_FAILED]);
	if (isnan(m->best_speedup))
		cuco_buf_puts(&b, "-");
	else
		cuco_buf_printf(&b, "%.2fx", m->best_speedup);
	if (m->slots[0])
		cuco_buf_printf(&b, "  %s", m->slots);
	fmt_count(num, sizeof num, (double)m->tokens);
	cuco_buf_printf(&b, "  tok %s", num);
	if (m->budget_tokens) {
		fmt_count(num, sizeof num, (double)m->budget_tokens);
		cuco_buf_printf(&b, "/%s", num);
	}
	cuco_buf_printf(&b, " $%.2f", m->cost_usd);
	if (m->budget_usd > 0)
		cuco_buf_printf(&b, "/$%g", m->budget_usd);
	attrset(app->crt.attr[TUI_EL_STATUS_LINE]);
	move(0, 0);
	hline(' ', app->cols);
	tui_put(stdscr, 0, 0, b.data, app->cols);
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
	cuco_buf_free(&b);
}

/* One hint, "key label", from x; returns columns used (0 when it does not fit). */
static int draw_hint(tui_app *app, int y, int x, int end, const tui_binding *b)
{
	char key[16];
	cuco_strlcpy(key, b->names, sizeof key);
	char *sp = strchr(key, ' ');
	if (sp)
		*sp = '\0';
	int need = (int)strlen(key) + (int)strlen(b->label) + 2;
	if (x + need > end)
		return 0;
	attrset(app->crt.attr[TUI_EL_HINT_KEY]);
	int used = tui_put(stdscr, y, x, key, end - x);
	attrset(app->crt.attr[TUI_EL_HINTS]);
	return used + tui_putf(stdscr, y, x + used, end - x - used, " %s ", b->label);
}

/* The focused pane's keys from the action table; help and quit always
 * keep their place at the right end. */
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
			x += draw_hint(app, y, x, app->cols, tui_binding_of(fixed[k]));
		unsigned ctx = app->panes[app->focus].ops->context;
		for (int a = 1, x = 0, used = 1; a < TUI_ACT_COUNT && used; a++) {
			const tui_binding *b = tui_binding_of((tui_action)a);
			if (b->label && (b->context & ctx) && a != TUI_ACT_HELP && a != TUI_ACT_QUIT)
				x += used = draw_hint(app, y, x, right - 1, b);
		}
	}
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
}

static void draw_too_small(tui_app *app)
{
	erase();
	mvprintw(app->rows / 2 - 1, 0, "terminal too small: %dx%d", app->cols, app->rows);
	mvprintw(app->rows / 2, 0, "cuco needs at least %dx%d; resize, or q to quit", MIN_COLS, MIN_ROWS);
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
		if (!p->win)
			continue;
		werase(p->win);
		p->ops->draw(app, p);
		tui_box(app, p, p->ops->title);
		wnoutrefresh(p->win);
	}
	draw_hints(app);
}

/* ---- dialogs -------------------------------------------------------------- */

/* Wait for a key inside a dialog, still leaving on a termination signal. */
static int dialog_key(void)
{
	timeout(250);
	int ch;
	while ((ch = getch()) == ERR && !tui_crt_interrupted())
		;
	nodelay(stdscr, TRUE);
	return ch == ERR ? 27 : ch;
}

bool tui_prompt(tui_app *app, const char *label, char *buf, size_t size)
{
	size_t len = strlen(buf);
	int y = app->rows - 1;
	curs_set(1);
	for (;;) {
		attrset(app->crt.attr[TUI_EL_DIALOG]);
		move(y, 0);
		hline(' ', app->cols);
		int x = tui_put(stdscr, y, 0, label, app->cols);
		int room = app->cols - x - 1;
		const char *shown = buf + (len > (size_t)room && room > 0 ? len - (size_t)room : 0);
		x += tui_put(stdscr, y, x, shown, room > 0 ? room : 0);
		move(y, x);
		refresh();
		int ch = dialog_key();
		if (ch == 27) {
			curs_set(0);
			return false;
		}
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
			break;
		if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && len > 0) {
			/* Drop a whole UTF-8 sequence. */
			do
				len--;
			while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80);
			buf[len] = '\0';
		} else if (ch == TUI_CTRL('u')) {
			len = 0;
			buf[0] = '\0';
		} else if (ch >= 32 && ch < 256 && ch != 127 && len + 1 < size) {
			buf[len++] = (char)ch;
			buf[len] = '\0';
		}
	}
	curs_set(0);
	attrset(A_NORMAL);
	return true;
}

int tui_ask(tui_app *app, const char *question, const char *keys)
{
	int y = app->rows - 1;
	attrset(app->crt.attr[TUI_EL_DIALOG]);
	move(y, 0);
	hline(' ', app->cols);
	tui_put(stdscr, y, 0, question, app->cols);
	attrset(A_NORMAL);
	refresh();
	int ch = dialog_key();
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
	char *copy = cuco_xstrdup(text), **lines = NULL;
	int n = split(copy, &lines);
	int h = app->rows - 4, w = app->cols - 8;
	tui_pane box = { 0 };
	box.win = newwin(h, w, 2, 4);
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
		wrefresh(box.win);
		int ch = dialog_key();
		tui_action a = tui_key_action(ch);
		if (ch == 27 || a == TUI_ACT_QUIT || a == TUI_ACT_HELP || a == TUI_ACT_EXPLAIN
			|| a == TUI_ACT_TOGGLE || ch == KEY_RESIZE)
			break;
		tui_scroll_act(&box, a, h - 2);
	}
	delwin(box.win);
	free(lines);
	free(copy);
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
		"Every human action is stored as a command for the engine and an event with\n"
		"your name; confirmations default to cancel (Enter or Esc cancels).\n");
	tui_popup(app, "help", b.data);
	cuco_buf_free(&b);
}

static void quit(tui_app *app)
{
	if (!app->opt->in_process) {
		app->quit = true;  /* a viewer never stops a detached run */
		return;
	}
	int ch = tui_ask(app, "Quit: y = stop the search and quit, n = quit and leave it running, "
		"Enter/Esc = stay", "yn");
	if (ch == 'y' || ch == 'n') {
		app->stop_run = ch == 'y';
		app->quit = true;
	}
}

static void global_action(tui_app *app, tui_action a)
{
	switch (a) {
	case TUI_ACT_FOCUS_NEXT:
	case TUI_ACT_FOCUS_PREV:
		app->focus = (app->focus + (a == TUI_ACT_FOCUS_NEXT ? 1 : TUI_PANE_COUNT - 1)) % TUI_PANE_COUNT;
		if (app->zoom)
			layout(app);
		break;
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
		if (!p->win || ev.y < p->y || ev.y >= p->y + p->h || ev.x < p->x || ev.x >= p->x + p->w)
			continue;
		app->focus = i;
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
	/* Keys typed ahead act on what the cursor is on now, not on the last frame. */
	if (app->focus_stale)
		tui_focus_load(app);
	tui_pane *p = &app->panes[app->focus];
	if (!p->ops->act(app, p, a))
		global_action(app, a);
}

/* ---- the loop ------------------------------------------------------------- */

static void refresh_model(tui_app *app, bool force, bool *changed)
{
	cuco_err err = { 0 };
	int nisl = app->m.nislands;
	if (tui_model_refresh(&app->m, app->st, force, changed, &err) != CUCO_OK) {
		tui_flash(app, "store: %s", err.msg);
		return;
	}
	if (!*changed)
		return;
	if (app->m.nislands != nisl && nisl <= 6)
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

		bool summing = app->m.n && app->m.summed_upto < app->m.sums[app->m.n - 1].id;
		struct pollfd pfd[2] = { { STDIN_FILENO, POLLIN, 0 }, { app->wake_fd, POLLIN, 0 } };
		int wait = summing ? 0 : app->wake_fd >= 0 ? IN_PROCESS_POLL_MS : ATTACHED_POLL_MS;
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
		if (summing) {
			tui_model_sum_step(&app->m, app->st, SUM_CHUNK);
			if (!dirty)
				draw_status(app);
		}
	}
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
	tui_model_init(&app->m);
	int rc = tui_model_refresh(&app->m, st, true, NULL, err);
	if (rc == CUCO_OK)
		rc = tui_crt_init(&app->crt, opt->theme, opt->no_color, opt->ascii, err);
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
