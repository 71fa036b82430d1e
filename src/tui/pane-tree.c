/* pane-tree.c — the lineage tree: one line per candidate, depth-first from
 * the roots, foldable, filterable, searchable. */
#include "tui/screen.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INDENT 12  /* deeper lineages stop indenting: the line must still fit */

/* The directive in short for a row: cached by id (a directive never changes). */
static const char *dshort(tui_app *app, cuco_txn *txn, uint64_t id)
{
	struct tui_dcache *e = &app->dcache[id % TUI_DCACHE];
	if (e->id != id) {
		cuco_candidate *c = cuco_xmalloc(sizeof *c);
		e->id = id;
		if (cuco_cand_get(txn, id, c) == CUCO_OK)
			cuco_directive_short(&c->directive, e->text, sizeof e->text);
		else
			cuco_strlcpy(e->text, "?", sizeof e->text);
		free(c);
	}
	return e->text;
}

struct draw_rows {
	tui_app *app;
	tui_pane *p;
	int view;
};

static attr_t row_attr(tui_app *app, const cuco_summary *s)
{
	switch (s->status) {
	case CUCO_STATUS_FAILED: return app->crt.attr[TUI_EL_BAD];
	case CUCO_STATUS_REJECTED: return app->crt.attr[TUI_EL_REJECTED];
	case CUCO_STATUS_DONE: return s->id == app->m.best_id ? app->crt.attr[TUI_EL_GOOD] : app->crt.attr[TUI_EL_NORMAL];
	case CUCO_STATUS_QUEUED: return app->crt.attr[TUI_EL_DIM];
	default: return app->crt.attr[TUI_EL_BUSY];
	}
}

static void draw_row(tui_app *app, tui_pane *p, cuco_txn *txn, int y, size_t row)
{
	const tui_model *m = &app->m;
	size_t i = m->rows[row];
	const cuco_summary *s = &m->sums[i];
	const tui_glyphs *g = app->crt.g;
	int w = p->w - 2, x = 1;
	bool selected = row == app->cursor;
	attr_t base = selected ? app->crt.attr[app->focus == TUI_PANE_TREE ? TUI_EL_SELECTED : TUI_EL_SELECTED_DIM]
		: row_attr(app, s);
	wattrset(p->win, base);
	if (selected)
		mvwhline(p->win, y, 1, ' ', w);
	x += tui_putf(p->win, y, x, w, "%6llu ", (unsigned long long)s->id);
	x += tui_put(p->win, y, x, g->status[s->status < CUCO_STATUS_COUNT ? s->status : 0], 1);
	if (s->pinned && !selected)
		wattrset(p->win, app->crt.attr[TUI_EL_PINNED]);
	x += tui_put(p->win, y, x, s->pinned ? g->pin : " ", 1);
	wattrset(p->win, s->id == app->mark_id && !selected ? app->crt.attr[TUI_EL_MARKED] : base);
	x += tui_put(p->win, y, x, s->id == app->mark_id ? g->mark : " ", 1);
	wattrset(p->win, base);
	x += tui_put(p->win, y, x, " ", 1);
	int depth = m->depth[i] < MAX_INDENT ? m->depth[i] : MAX_INDENT;
	for (int d = 0; d < depth && x < w - 30; d++)
		x += tui_put(p->win, y, x, d + 1 == depth ? g->last : g->blank, 2);
	const char *fold = tui_model_has_children(m, i) ? (m->folded[i] ? g->folded : g->unfolded) : g->leaf;
	x += tui_put(p->win, y, x, fold, 1);
	x += tui_putf(p->win, y, x, w - x, " %-9s ", cuco_origin_name((cuco_origin)s->origin));
	/* Score and speedup sit at the right edge; the directive takes the rest. */
	char nums[32], sc[12], sp[12];
	if (isnan(s->score))
		snprintf(sc, sizeof sc, "-");
	else
		snprintf(sc, sizeof sc, "%.4g", s->score);
	if (isnan(s->speedup))
		snprintf(sp, sizeof sp, "-");
	else
		snprintf(sp, sizeof sp, "%.2fx", s->speedup);
	snprintf(nums, sizeof nums, "%8s %7s", sc, sp);
	int right = w + 1 - (int)strlen(nums);
	if (right > x + 4)
		tui_put(p->win, y, x, dshort(app, txn, s->id), right - x - 1);
	tui_put(p->win, y, right > x ? right : x, nums, w + 1 - (right > x ? right : x));
}

static int draw_txn(cuco_txn *txn, void *arg)
{
	struct draw_rows *d = arg;
	for (int r = 0; r < d->view && (size_t)(d->p->top + r) < d->app->m.nrows; r++)
		draw_row(d->app, d->p, txn, 2 + r, (size_t)(d->p->top + r));
	return CUCO_OK;
}

static void draw(tui_app *app, tui_pane *p)
{
	int view = p->h - 3;  /* box and the column header */
	if (view < 1)
		return;
	/* Keep the cursor on screen. */
	if ((int)app->cursor < p->top)
		p->top = (int)app->cursor;
	if ((int)app->cursor >= p->top + view)
		p->top = (int)app->cursor - view + 1;
	wattrset(p->win, app->crt.attr[TUI_EL_HEADER]);
	mvwhline(p->win, 1, 1, ' ', p->w - 2);
	tui_putf(p->win, 1, 1, p->w - 2, "%6s st  %-*s", "id", p->w - 30, "origin    directive");
	tui_put(p->win, 1, p->w - 18, "   score speedup", 16);
	if (app->m.nrows == 0) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 2, 2, app->m.n ? "no candidate matches the filter (c clears it)"
			: "no candidates yet", p->w - 4);
		return;
	}
	struct draw_rows d = { app, p, view };
	cuco_store_read(app->st, draw_txn, &d, NULL);
}

static void move_cursor(tui_app *app, long to)
{
	if (app->m.nrows == 0)
		return;
	if (to < 0)
		to = 0;
	if ((size_t)to >= app->m.nrows)
		to = (long)app->m.nrows - 1;
	tui_select_id(app, app->m.sums[app->m.rows[to]].id);
}

/* ---- search ------------------------------------------------------------- */

struct search {
	tui_app *app;
	const char *needle;
	long found;
};

static bool contains(const char *hay, const char *needle)
{
	return strcasestr(hay, needle) != NULL;
}

static int search_txn(cuco_txn *txn, void *arg)
{
	struct search *s = arg;
	const tui_model *m = &s->app->m;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	for (size_t k = 1; k <= m->nrows && s->found < 0; k++) {
		size_t row = (s->app->cursor + k) % m->nrows;
		if (cuco_cand_get(txn, m->sums[m->rows[row]].id, c) != CUCO_OK)
			continue;
		char text[1024], ds[128];
		cuco_directive_short(&c->directive, ds, sizeof ds);
		snprintf(text, sizeof text, "#%llu %s %s %s %s %s %s", (unsigned long long)c->id,
			cuco_origin_name(c->origin), cuco_status_name(c->status), ds, c->note, c->model,
			c->error_class);
		if (contains(text, s->needle))
			s->found = (long)row;
	}
	free(c);
	return CUCO_OK;
}

static void search(tui_app *app, bool ask)
{
	if (ask) {
		char buf[sizeof app->search] = "";
		if (!tui_prompt(app, "search: ", buf, sizeof buf) || !buf[0])
			return;
		cuco_strlcpy(app->search, buf, sizeof app->search);
	}
	if (!app->search[0] || app->m.nrows == 0)
		return;
	struct search s = { app, app->search, -1 };
	cuco_store_read(app->st, search_txn, &s, NULL);
	if (s.found < 0)
		tui_flash(app, "'%s': not found", app->search);
	else
		move_cursor(app, s.found);
}

/* ---- filters ------------------------------------------------------------ */

static void cycle_island(tui_app *app)
{
	tui_filter *f = &app->m.filter;
	/* any → each island → outside islands (-1) → any */
	if (f->island == -2)
		f->island = app->m.nislands ? app->m.islands[0].id : -1;
	else if (f->island == -1)
		f->island = -2;
	else {
		int k = 0;
		while (k < app->m.nislands && app->m.islands[k].id != f->island)
			k++;
		f->island = k + 1 < app->m.nislands ? app->m.islands[k + 1].id : -1;
	}
}

static void filter_changed(tui_app *app)
{
	tui_filter *f = &app->m.filter;
	tui_model_rows(&app->m);
	char isl[16];
	snprintf(isl, sizeof isl, "%d", f->island);
	tui_flash(app, "filter: island %s, status %s, origin %s (%zu shown)",
		f->island == -2 ? "any" : f->island == -1 ? "none" : isl,
		f->status < 0 ? "any" : cuco_status_name((cuco_status)f->status),
		f->origin < 0 ? "any" : cuco_origin_name((cuco_origin)f->origin), app->m.nrows);
	if (app->sel_id && tui_select_id(app, app->sel_id))
		return;
	app->cursor = 0;
	move_cursor(app, 0);
}

void tui_tree_filter_island(tui_app *app, int island)
{
	app->m.filter.island = island;
	filter_changed(app);
}

static void next_failure(tui_app *app)
{
	const tui_model *m = &app->m;
	for (size_t k = 1; k <= m->nrows; k++) {
		size_t row = (app->cursor + k) % m->nrows;
		if (m->sums[m->rows[row]].status == CUCO_STATUS_FAILED) {
			move_cursor(app, (long)row);
			return;
		}
	}
	tui_flash(app, "no failed candidate shown");
}

static void jump(tui_app *app, uint64_t id, const char *what)
{
	if (!id)
		tui_flash(app, "no %s", what);
	else if (!tui_select_id(app, id))
		tui_flash(app, "%s #%llu is hidden by a fold or filter", what, (unsigned long long)id);
}

static bool act(tui_app *app, tui_pane *p, tui_action a)
{
	int view = p->h - 3;
	long cur = (long)app->cursor;
	tui_model *m = &app->m;
	switch (a) {
	case TUI_ACT_UP: move_cursor(app, cur - 1); return true;
	case TUI_ACT_DOWN: move_cursor(app, cur + 1); return true;
	case TUI_ACT_PAGE_UP: move_cursor(app, cur - view / 2); return true;
	case TUI_ACT_PAGE_DOWN: move_cursor(app, cur + view / 2); return true;
	case TUI_ACT_TOP: move_cursor(app, 0); return true;
	case TUI_ACT_BOTTOM: move_cursor(app, (long)m->nrows - 1); return true;
	case TUI_ACT_TOGGLE: {
		long i = tui_model_find(m, app->sel_id);
		if (i >= 0 && tui_model_has_children(m, (size_t)i)) {
			m->folded[i] = !m->folded[i];
			tui_model_rows(m);
			tui_select_id(app, app->sel_id);
		}
		return true;
	}
	case TUI_ACT_PARENT:
		jump(app, app->f.have && app->f.cand.nparents ? app->f.cand.parents[0] : 0, "parent");
		return true;
	case TUI_ACT_BEST: jump(app, m->best_id, "best candidate"); return true;
	case TUI_ACT_NEXT_FAIL: next_failure(app); return true;
	case TUI_ACT_SEARCH: search(app, true); return true;
	case TUI_ACT_SEARCH_NEXT: search(app, false); return true;
	case TUI_ACT_FILTER_ISLAND: cycle_island(app); filter_changed(app); return true;
	case TUI_ACT_FILTER_STATUS:
		m->filter.status = m->filter.status + 1 >= CUCO_STATUS_COUNT ? -1 : m->filter.status + 1;
		filter_changed(app);
		return true;
	case TUI_ACT_FILTER_ORIGIN:
		m->filter.origin = m->filter.origin + 1 >= CUCO_ORIGIN_COUNT ? -1 : m->filter.origin + 1;
		filter_changed(app);
		return true;
	case TUI_ACT_FILTER_CLEAR:
		m->filter = (tui_filter){ -2, -1, -1 };
		filter_changed(app);
		return true;
	default:
		return false;
	}
}

static void explain(tui_app *app, cuco_buf *out)
{
	const tui_glyphs *g = app->crt.g;
	cuco_buf_puts(out, "The lineage tree: every candidate under its parent, oldest first.\n\n"
		"Status glyphs:\n");
	for (int s = 0; s < CUCO_STATUS_COUNT; s++)
		cuco_buf_printf(out, "  %s  %-13s %s\n", g->status[s], cuco_status_name((cuco_status)s),
			tui_teach_status((cuco_status)s));
	cuco_buf_printf(out, "\nMarks: %s pinned (kept as a parent), %s marked for the diff.\n"
		"%s folded subtree, %s unfolded (Enter toggles).\n\nOrigins:\n",
		g->pin, g->mark, g->folded, g->unfolded);
	for (int o = 0; o < CUCO_ORIGIN_COUNT; o++)
		cuco_buf_printf(out, "  %-10s %s\n", cuco_origin_name((cuco_origin)o),
			tui_teach_origin((cuco_origin)o));
	cuco_buf_puts(out, "\nThe directive column is backend/issuer/placement/sync/granularity;\n"
		"t on the detail pane explains each dimension. Score: higher is better.\n"
		"Speedup: the baseline's median latency over this one's, measured in the same run.\n");
}

const tui_pane_ops tui_pane_tree = {
	.title = "lineage", .context = TUI_IN_TREE, .draw = draw, .act = act, .explain = explain,
};
