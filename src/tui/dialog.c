/* dialog.c — what asks a person something over the live screen: a line
 * of text (with a small line editor), a question of one key, a scrollable
 * box of text. Each waits for its key the way the loop does, so the
 * screen behind it keeps moving (tui_behind). */
#include "tui/screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIALOG_POLL_MS 250     /* a dialog looks at the store this often */
#define TICK (-2)              /* dialog_key: no key, the screen behind was redrawn */

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
		tui_resized(app);
		return TICK;
	}
	if (ch != ERR)
		return ch;
	tui_behind(app);
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
		tui_putf(box.win, h - 1, 2, w - 4, " %d/%d  %s/%s scroll, %s or Esc close ",
			box.top + 1 < n ? box.top + 1 : n, n, tui_key_name(TUI_ACT_DOWN), tui_key_name(TUI_ACT_UP),
			tui_key_name(TUI_ACT_QUIT));
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
