/* pane-islands.c — per island: phase, members, generation, best score and
 * speedup, time since the last improvement, migrations. */
#include "tui/screen.h"

#include <math.h>
#include <stdio.h>

static void ago(char *buf, size_t size, double t)
{
	double s = t > 0 ? cuco_now() - t : NAN;
	if (isnan(s))
		snprintf(buf, size, "-");
	else if (s < 120)
		snprintf(buf, size, "%.0fs ago", s < 0 ? 0 : s);
	else if (s < 7200)
		snprintf(buf, size, "%.0fm ago", s / 60);
	else
		snprintf(buf, size, "%.1fh ago", s / 3600);
}

static void draw(tui_app *app, tui_pane *p)
{
	const tui_model *m = &app->m;
	int view = p->h - 3, w = p->w - 2;
	p->lines = m->nislands;
	if (p->top >= m->nislands)
		p->top = m->nislands ? m->nislands - 1 : 0;
	wattrset(p->win, app->crt.attr[TUI_EL_HEADER]);
	mvwhline(p->win, 1, 1, ' ', w);
	tui_putf(p->win, 1, 1, w, "%4s %-8s %7s %4s %9s %7s %-9s %4s", "isl", "phase", "members", "gen",
		"best", "speedup", "improved", "migr");
	if (!m->nislands) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 2, 2, "no islands (a beam search, or not started)", w - 2);
		return;
	}
	/* p->top is the island under the cursor; the view scrolls to keep it. */
	int first = p->top >= view ? p->top - view + 1 : 0;
	for (int r = 0; r < view && first + r < m->nislands; r++) {
		const cuco_island *isl = &m->islands[first + r];
		char best[16], sp[16], when[16];
		snprintf(best, sizeof best, isnan(isl->best_score) ? "-" : "%.4g", isl->best_score);
		snprintf(sp, sizeof sp, isnan(isl->best_speedup) ? "-" : "%.2fx", isl->best_speedup);
		ago(when, sizeof when, isl->last_improvement);
		bool sel = first + r == p->top && app->focus == TUI_PANE_ISLANDS;
		bool shown = m->filter.island == isl->id;
		wattrset(p->win, sel ? app->crt.attr[TUI_EL_SELECTED]
			: shown ? app->crt.attr[TUI_EL_MARKED] : app->crt.attr[TUI_EL_NORMAL]);
		if (sel)
			mvwhline(p->win, 2 + r, 1, ' ', w);
		tui_putf(p->win, 2 + r, 1, w, "%4d %-8s %7d %4d %9s %7s %-9s %4d", isl->id, isl->phase,
			isl->members, isl->generation, best, sp, when, isl->migrations);
	}
}

static tui_result act(tui_app *app, tui_pane *p, tui_action a)
{
	int n = app->m.nislands, was = p->top;
	switch (a) {
	case TUI_ACT_UP: p->top--; break;
	case TUI_ACT_DOWN: p->top++; break;
	case TUI_ACT_TOP: case TUI_ACT_PAGE_UP: p->top = 0; break;
	case TUI_ACT_BOTTOM: case TUI_ACT_PAGE_DOWN: p->top = n - 1; break;
	case TUI_ACT_FILTER_ISLAND:
		if (n)
			tui_tree_filter_island(app, app->m.filter.island == app->m.islands[p->top].id
				? -2 : app->m.islands[p->top].id);
		return TUI_HANDLED | TUI_REDRAW;
	case TUI_ACT_HINT:
		if (n)
			tui_act_hint(app, app->m.islands[p->top].id);
		return TUI_HANDLED | TUI_REDRAW;
	default:
		return TUI_IGNORED;
	}
	if (p->top >= n)
		p->top = n - 1;
	if (p->top < 0)
		p->top = 0;
	return TUI_HANDLED | (p->top != was ? TUI_REDRAW : 0);
}

static void explain(tui_app *app, cuco_buf *out)
{
	(void)app;
	cuco_buf_printf(out,
		"Islands: the evolutionary search keeps several populations apart so they explore\n"
		"different designs, and now and then migrates a champion between them.\n\n"
		"phase     explore = high temperature, structurally different designs (pipelining,\n"
		"          multi-stream overlap, fusion); exploit = low temperature, fine tuning.\n"
		"members   candidates the island holds now.\n"
		"gen       generations bred so far.\n"
		"best      the island champion's score (higher is better) and speedup over the baseline.\n"
		"improved  when the island last found a new champion: a long time means it stalls.\n"
		"migr      champions received from other islands.\n\n"
		"%s shows only the island under the cursor in the tree; %s sends it a hint.\n",
		tui_key_name(TUI_ACT_FILTER_ISLAND), tui_key_name(TUI_ACT_HINT));
}

const tui_pane_ops tui_pane_islands = {
	.title = "islands", .context = TUI_IN_ISLANDS, .draw = draw, .act = act, .explain = explain,
};
