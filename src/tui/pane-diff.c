/* pane-diff.c — the selected candidate against its parent or the marked
 * one: a unified line diff, coloured, scrollable. */
#include "tui/screen.h"

#include <stdio.h>

static void draw(tui_app *app, tui_pane *p)
{
	const tui_focus *f = &app->f;
	int view = p->h - 3, w = p->w - 2;
	wattrset(p->win, app->crt.attr[TUI_EL_HEADER]);
	mvwhline(p->win, 1, 1, ' ', w);
	p->lines = (int)f->diff.n;
	if (!f->have) {
		tui_put(p->win, 1, 1, "no candidate selected", w);
		return;
	}
	if (!f->have_other) {
		tui_putf(p->win, 1, 1, w, "#%llu has no parent; m on another candidate marks one to compare",
			(unsigned long long)f->id);
		return;
	}
	tui_putf(p->win, 1, 1, w, "#%llu against %s #%llu: +%d -%d", (unsigned long long)f->id,
		f->other_id == app->mark_id ? "marked" : "parent", (unsigned long long)f->other_id,
		f->diff.added, f->diff.deleted);
	if (!f->src || !f->other_src) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 2, 2, "source not in the store", w - 2);
		return;
	}
	if (f->diff.n == 0) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 2, 2, "identical sources (a directive-only change)", w - 2);
		return;
	}
	static const char marks[] = { '@', ' ', '-', '+' };
	for (int r = 0; r < view && p->top + r < p->lines; r++) {
		const cuco_diff_line *l = &f->diff.lines[p->top + r];
		tui_element el = l->kind == CUCO_DIFF_ADD ? TUI_EL_DIFF_ADD : l->kind == CUCO_DIFF_DEL
			? TUI_EL_DIFF_DEL : l->kind == CUCO_DIFF_HUNK ? TUI_EL_DIFF_HUNK : TUI_EL_NORMAL;
		wattrset(p->win, app->crt.attr[el]);
		char text[512];
		if (l->kind == CUCO_DIFF_HUNK)
			snprintf(text, sizeof text, "%.*s", l->len, l->text);
		else
			snprintf(text, sizeof text, "%c%.*s", marks[l->kind], l->len, l->text);
		/* Tabs would let curses jump past the pane's edge. */
		for (char *c = text; *c; c++)
			if (*c == '\t')
				*c = ' ';
		tui_put(p->win, 2 + r, 1, text, w);
	}
}

static bool act(tui_app *app, tui_pane *p, tui_action a)
{
	(void)app;
	return tui_scroll_act(p, a, p->h - 3);
}

static void explain(tui_app *app, cuco_buf *out)
{
	(void)app;
	cuco_buf_puts(out,
		"The diff: what this candidate changed in the source, as a unified diff.\n\n"
		"It compares against the parent, or against the candidate marked with m.\n"
		"- lines exist only in the other one, + lines only in this one; @@ lines say\n"
		"where a hunk starts (-old line,count +new line,count). Identical sources mean\n"
		"the change was in the directive only (the tuner's moves): see the detail pane.\n");
}

const tui_pane_ops tui_pane_diff = {
	.title = "diff", .context = TUI_IN_DIFF, .draw = draw, .act = act, .explain = explain,
};
