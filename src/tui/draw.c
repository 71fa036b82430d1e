/* draw.c — the drawing helpers every pane uses: UTF-8 text cut to a
 * width, a pane's box and title, scrolling, and wrapping at words. */
#include "tui/screen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

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

tui_result tui_scroll_act(tui_pane *p, tui_action a, int view_h)
{
	int max_top = p->lines > view_h ? p->lines - view_h : 0, was = p->top;
	switch (a) {
	case TUI_ACT_UP: p->top--; break;
	case TUI_ACT_DOWN: p->top++; break;
	case TUI_ACT_PAGE_UP: p->top -= view_h / 2; break;
	case TUI_ACT_PAGE_DOWN: p->top += view_h / 2; break;
	case TUI_ACT_TOP: p->top = 0; break;
	case TUI_ACT_BOTTOM: p->top = max_top; break;
	default: return TUI_IGNORED;
	}
	if (p->top > max_top)
		p->top = max_top;
	if (p->top < 0)
		p->top = 0;
	return TUI_HANDLED | (p->top != was ? TUI_REDRAW : 0);
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
