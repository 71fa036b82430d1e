/* pane-diff.c — the selected candidate against its parent or the marked
 * one: first the directive, dimension by dimension (before → after), then
 * the source as a unified line diff, coloured, scrollable. The tuner's
 * candidates share their parent's source, so for them the directive is
 * the whole change. */
#include "tui/screen.h"

#include <stdio.h>
#include <string.h>

struct dir_lines {
	char (*text)[160];
	int n, max;
	const char *arrow;
};

static void add_dir_line(int dim, const char *name, const char *before, const char *after, void *arg)
{
	struct dir_lines *d = arg;
	if (d->n < d->max)
		snprintf(d->text[d->n++], sizeof d->text[0], "%s %-12s %s %s %s", dim < 0 ? "knob" : "    ", name,
			*before ? before : "-", d->arrow, *after ? after : "-");
}

static void draw_source_line(tui_app *app, tui_pane *p, int y, const cuco_diff_line *l)
{
	static const char marks[] = { '@', ' ', '-', '+' };
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
	tui_put(p->win, y, 1, text, p->w - 2);
}

static void draw(tui_app *app, tui_pane *p)
{
	const tui_focus *f = &app->f;
	int view = p->h - 3, w = p->w - 2;
	wattrset(p->win, app->crt.attr[TUI_EL_HEADER]);
	mvwhline(p->win, 1, 1, ' ', w);
	p->lines = 0;
	if (!f->have) {
		tui_put(p->win, 1, 1, "no candidate selected", w);
		return;
	}
	if (!f->have_other) {
		tui_putf(p->win, 1, 1, w, "#%llu has no parent; %s on another candidate marks one to compare",
			(unsigned long long)f->id, tui_key_name(TUI_ACT_MARK));
		return;
	}
	char dtext[CUCO_DIRDIM_COUNT + CUCO_MAX_KNOBS * 2][160];
	struct dir_lines d = { dtext, 0, (int)(sizeof dtext / sizeof dtext[0]), app->crt.g->arrow };
	cuco_directive_diff(&f->other.directive, &f->cand.directive, add_dir_line, &d);
	bool stored = f->src && f->other_src, same = stored && f->diff.n == 0;
	char src[32], dir[32];
	if (!stored)
		cuco_strlcpy(src, "source not stored", sizeof src);
	else if (same)
		cuco_strlcpy(src, "same source", sizeof src);
	else
		snprintf(src, sizeof src, "source +%d -%d", f->diff.added, f->diff.deleted);
	if (d.n)
		snprintf(dir, sizeof dir, "directive %d", d.n);
	else
		cuco_strlcpy(dir, "same directive", sizeof dir);
	tui_putf(p->win, 1, 1, w, "#%llu vs %s #%llu: %s, %s", (unsigned long long)f->id,
		f->other_id == app->mark_id ? "marked" : "parent", (unsigned long long)f->other_id, dir, src);
	/* The lines: the directive's changes, a gap, the source's. */
	int ndir = d.n ? d.n + 1 : 0;
	p->lines = ndir + (int)f->diff.n + (same ? 1 : 0);
	for (int r = 0; r < view && p->top + r < p->lines; r++) {
		int k = p->top + r;
		if (k < d.n) {
			wattrset(p->win, app->crt.attr[TUI_EL_TITLE]);
			tui_put(p->win, 2 + r, 1, dtext[k], w);
		} else if (k < ndir)
			continue;
		else if (same) {
			wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
			tui_put(p->win, 2 + r, 2, d.n ? "same source: the directive is the change"
				: "the same source and directive", w - 1);
		} else
			draw_source_line(app, p, 2 + r, &f->diff.lines[k - ndir]);
	}
}

static tui_result act(tui_app *app, tui_pane *p, tui_action a)
{
	(void)app;
	return tui_scroll_act(p, a, p->h - 3);
}

static void explain(tui_app *app, cuco_buf *out)
{
	(void)app;
	cuco_buf_printf(out,
		"The diff: what this candidate changed, against its parent or against the candidate "
		"marked with %s.\n\n"
		"First the directive, one dimension or knob a line, as before → after. Then the source as "
		"a unified diff: - lines exist only in the other one, + lines only in this one; @@ lines "
		"say where a hunk starts (-old line,count +new line,count). The directive tuner's "
		"candidates keep their parent's source and change only the directive, so for them the "
		"directive lines are the whole change. `cuco diff A B` prints the same.\n",
		tui_key_name(TUI_ACT_MARK));
}

const tui_pane_ops tui_pane_diff = {
	.title = "diff", .context = TUI_IN_DIFF, .draw = draw, .act = act, .explain = explain,
};
