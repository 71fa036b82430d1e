/* pane-tree.c — the lineage tree: one line per candidate, depth-first from
 * the roots with ├─ │ └─ lines, foldable, filterable, sortable, searchable.
 *
 * Its columns fit the width the way htop's do: each has a priority, and
 * when the line is too long the least telling go first (island, latency,
 * the confirmed speedups' intervals, score), then the directive turns
 * into its change from the parent (the one value that tells two siblings
 * apart), then the indentation shrinks, then the origin goes; id, status
 * and speedup always stay. A speedup is confirmed (its interval, or
 * nothing after it when there is no room) or one screening (?), and ~
 * marks one timed against another baseline measurement than the one in
 * the list (cuco_speedup_elsewhere), as cuco ls writes them. */
#include "tui/screen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INDENT 12   /* levels drawn at most; deeper rows sit at the last */
#define MIN_INDENT 3
#define DIR_MAX 60      /* a directive column wider than this is cut */
#define DCACHE 512      /* directives cached */

struct dcache {
	uint64_t id;
	bool ok;
	cuco_directive d;       /* never changes */
	int rounds;             /* the interval's, read again when the summary's moved */
	double lo, hi;
};

/* The tree's own state; the selected id is the app's (every pane shows it). */
typedef struct tree_state {
	size_t cursor;                 /* the selected row */
	struct dcache dcache[DCACHE];  /* directives and intervals by id */
} tree_state;

static tree_state *state(tui_app *app)
{
	return app->panes[TUI_PANE_TREE].state;
}

/* ---- directives, cached by id (a directive never changes) ---------------- */

/* The cache slot of a candidate, read when it holds another one or, for
 * a confirmed row, an older interval (rounds: the summary's, -1 any). */
static struct dcache *cached(tui_app *app, cuco_txn *txn, uint64_t id, int rounds)
{
	struct dcache *e = &state(app)->dcache[id % DCACHE];
	if (e->id != id || (rounds >= 0 && e->ok && e->rounds != rounds)) {
		cuco_candidate *c = cuco_xmalloc(sizeof *c);
		e->id = id;
		e->ok = cuco_cand_get(txn, id, c) == CUCO_OK;
		if (e->ok) {
			e->d = c->directive;
			e->rounds = c->rounds > 255 ? 255 : c->rounds;
			e->lo = c->speedup_lo;
			e->hi = c->speedup_hi;
		}
		free(c);
	}
	return e;
}

static const cuco_directive *directive_of(tui_app *app, cuco_txn *txn, uint64_t id)
{
	struct dcache *e = cached(app, txn, id, -1);
	return e->ok ? &e->d : NULL;
}

/* A row's speedup as cuco ls writes it, compact: "1.24x [1.15–1.33]"
 * (wide) or "1.24x" confirmed, "1.43x?" one screening, "~" after either
 * when timed against another baseline measurement than base_us. */
static void speedup_text(tui_app *app, cuco_txn *txn, const cuco_summary *s, double base_us,
	bool wide, char *buf, size_t size)
{
	if (isnan(s->speedup)) {
		cuco_strlcpy(buf, "-", size);
		return;
	}
	bool base = s->origin == CUCO_ORIGIN_BASELINE;
	const struct dcache *e = wide && s->rounds >= 2 ? cached(app, txn, s->id, s->rounds) : NULL;
	if (e && e->ok)
		cuco_speedup_text(s->speedup, e->lo, e->hi, e->rounds, !app->crt.utf8, buf, size);
	else
		snprintf(buf, size, "%.2fx", s->speedup);
	size_t n = strlen(buf);
	snprintf(buf + n, size - n, "%s%s", !base && s->rounds < 2 ? "?" : "",
		!base && cuco_speedup_elsewhere(s->speedup, s->latency_median_us, base_us) ? "~" : "");
}

struct change {
	char *buf;
	size_t size, len;
	bool abbrev;
};

static void add_change(int dim, const char *name, const char *before, const char *after, void *arg)
{
	(void)before;
	struct change *c = arg;
	const char *label = c->abbrev && dim >= 0 ? cuco_dirdim_abbrev((cuco_dirdim)dim) : name;
	int n = snprintf(c->buf + c->len, c->size - c->len, "%s%s=%s", c->len ? " " : "", label,
		*after ? after : "-");
	if (n > 0)
		c->len = c->len + (size_t)n < c->size ? c->len + (size_t)n : c->size - 1;
}

/* A row's directive, in full or as its change from the parent (long
 * names, or the short ones when `abbrev`); roots always in full. */
static void dir_text(tui_app *app, cuco_txn *txn, const cuco_summary *s, bool change, bool abbrev,
	char *buf, size_t size)
{
	const cuco_directive *d = directive_of(app, txn, s->id);
	if (!d) {
		cuco_strlcpy(buf, "?", size);
		return;
	}
	cuco_directive mine = *d;  /* the cache slot may be taken by the parent */
	const cuco_directive *pd = change && s->parents[0] ? directive_of(app, txn, s->parents[0]) : NULL;
	if (!pd) {
		cuco_directive_short(&mine, buf, size);
		return;
	}
	struct change c = { buf, size, 0, abbrev };
	buf[0] = '\0';
	if (cuco_directive_diff(pd, &mine, add_change, &c) == 0)
		cuco_strlcpy(buf, "(source only)", size);
}

/* ---- columns -------------------------------------------------------------- */

enum { C_ID, C_FLAGS, C_TREE, C_ORIGIN, C_DIR, C_SPEEDUP, C_SCORE, C_LATENCY, C_ISLAND, NCOLS };

typedef struct tree_cols {
	int w[NCOLS];        /* 0: not shown */
	bool narrow_speedup; /* confirmed speedups without their interval */
	bool change;         /* the directive column shows the change from the parent */
	bool abbrev;         /* … with short dimension names */
	int indent;          /* tree levels drawn */
} tree_cols;

static int digits(uint64_t v)
{
	int d = 1;
	while (v >= 10)
		v /= 10, d++;
	return d;
}

static int total(const tree_cols *c)
{
	int t = 0;
	for (int i = 0; i < NCOLS; i++)
		t += c->w[i] ? c->w[i] + 1 : 0;
	return t - 1;
}

struct measure {
	tui_app *app;
	size_t first, count;
	double base_us;                /* the baseline in the list */
	int depth;                     /* deepest row shown */
	int full, change, short_change; /* widest directive texts */
	int speedup, narrow_speedup;   /* widest speedup texts, with intervals and without */
};

static int widest(int now, const char *text)
{
	int w = tui_width(text);
	return w > now ? w : now;
}

static void measure(cuco_txn *txn, struct measure *ms)
{
	const tui_model *m = &ms->app->m;
	for (size_t r = ms->first; r < ms->first + ms->count && r < m->nrows; r++) {
		const cuco_summary *s = &m->sums[m->rows[r]];
		char t[256];
		int d = m->depth[m->rows[r]];
		ms->depth = d > ms->depth ? d : ms->depth;
		speedup_text(ms->app, txn, s, ms->base_us, true, t, sizeof t);
		ms->speedup = widest(ms->speedup, t);
		speedup_text(ms->app, txn, s, ms->base_us, false, t, sizeof t);
		ms->narrow_speedup = widest(ms->narrow_speedup, t);
		dir_text(ms->app, txn, s, false, false, t, sizeof t);
		ms->full = (int)strlen(t) > ms->full ? (int)strlen(t) : ms->full;
		dir_text(ms->app, txn, s, true, false, t, sizeof t);
		ms->change = (int)strlen(t) > ms->change ? (int)strlen(t) : ms->change;
		dir_text(ms->app, txn, s, true, true, t, sizeof t);
		ms->short_change = (int)strlen(t) > ms->short_change ? (int)strlen(t) : ms->short_change;
	}
}

/* Choose the columns for `width` over the rows in view. */
static tree_cols fit(tui_app *app, cuco_txn *txn, int width, size_t first, size_t count,
	double base_us)
{
	const tui_model *m = &app->m;
	struct measure ms = { app, first, count, base_us, 0, 9, 6, 6, 7, 7 };
	measure(txn, &ms);
	bool tree = m->sort == TUI_SORT_LINEAGE;
	tree_cols c = { 0 };
	c.w[C_ID] = digits(m->n ? m->sums[m->n - 1].id : 1) + 1;
	c.w[C_FLAGS] = 4;
	c.indent = tree ? (ms.depth < MAX_INDENT ? ms.depth : MAX_INDENT) : 0;
	c.w[C_ORIGIN] = 9;
	c.w[C_SCORE] = 7;
	c.w[C_LATENCY] = 8;
	c.w[C_ISLAND] = 3;
	for (;;) {
		c.w[C_TREE] = tree ? 1 + 2 * c.indent : 0;
		c.w[C_DIR] = !c.change ? ms.full : c.abbrev ? ms.short_change : ms.change;
		c.w[C_DIR] = c.w[C_DIR] > DIR_MAX ? DIR_MAX : c.w[C_DIR];
		c.w[C_SPEEDUP] = c.narrow_speedup ? ms.narrow_speedup : ms.speedup;
		if (total(&c) <= width)
			break;
		if (c.w[C_ISLAND]) c.w[C_ISLAND] = 0;
		else if (c.w[C_LATENCY]) c.w[C_LATENCY] = 0;
		else if (!c.narrow_speedup) c.narrow_speedup = true;
		else if (c.w[C_SCORE]) c.w[C_SCORE] = 0;
		else if (!c.change) c.change = true;
		else if (!c.abbrev) c.abbrev = true;
		else if (c.indent > MIN_INDENT) c.indent--;
		else if (c.w[C_ORIGIN]) c.w[C_ORIGIN] = 0;
		else {
			/* The directive takes what is left; its text is cut. */
			c.w[C_DIR] = 0;
			int rest = width - total(&c) - 1;
			c.w[C_DIR] = rest > 1 ? rest : 1;
			break;
		}
	}
	return c;
}

/* ---- drawing -------------------------------------------------------------- */

struct draw_rows {
	tui_app *app;
	tui_pane *p;
	int view;
	double base_us;  /* the baseline in the list: its latest measurement */
	tree_cols c;
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

/* One flag cell: its glyph in its own colour, unless the row is selected. */
static int flag(tui_app *app, WINDOW *w, int y, int x, bool on, const char *glyph, tui_element el,
	attr_t base, bool selected)
{
	wattrset(w, on && !selected ? app->crt.attr[el] : base);
	int n = tui_put(w, y, x, on ? glyph : " ", 1);
	wattrset(w, base);
	return n;
}

static int draw_tree_cell(tui_app *app, WINDOW *w, int y, int x, size_t i, int indent)
{
	const tui_model *m = &app->m;
	const tui_glyphs *g = app->crt.g;
	int depth = m->depth[i], x0 = x;
	int shown = depth < indent ? depth : indent;
	for (int k = 0; k + 1 < shown; k++)
		x += tui_put(w, y, x, k < TUI_TREE_LEVELS - 1 && (m->lines[i] >> k & 1) ? g->vert : g->blank, 2);
	if (shown > 0)
		x += tui_put(w, y, x, m->lines[i] >> 31 ? g->last : g->branch, 2);
	const char *fold = tui_model_has_children(m, i) ? (m->folded[i] ? g->folded : g->unfolded) : g->leaf;
	x += tui_put(w, y, x, fold, 1);
	return x - x0;
}

static void draw_row(struct draw_rows *d, cuco_txn *txn, int y, size_t row)
{
	tui_app *app = d->app;
	tui_pane *p = d->p;
	const tui_model *m = &app->m;
	const tree_cols *c = &d->c;
	size_t i = m->rows[row];
	const cuco_summary *s = &m->sums[i];
	const tui_glyphs *g = app->crt.g;
	WINDOW *w = p->win;
	int end = p->w - 1, x = 1;
	bool selected = row == state(app)->cursor;
	attr_t base = selected ? app->crt.attr[app->focus == TUI_PANE_TREE ? TUI_EL_SELECTED : TUI_EL_SELECTED_DIM]
		: row_attr(app, s);
	wattrset(w, base);
	if (selected)
		mvwhline(w, y, 1, ' ', end - 1);
	/* A search match shows on its id, so the status colours stay readable. */
	if (m->match[i] & 1 && !selected)
		wattrset(w, app->crt.attr[TUI_EL_MATCH]);
	tui_putf(w, y, x, c->w[C_ID], "%*llu", c->w[C_ID], (unsigned long long)s->id);
	wattrset(w, base);
	x += c->w[C_ID] + 1;
	x += tui_put(w, y, x, g->status[s->status < CUCO_STATUS_COUNT ? s->status : 0], 1);
	x += flag(app, w, y, x, s->pinned, g->pin, TUI_EL_PINNED, base, selected);
	x += flag(app, w, y, x, s->id == m->best_id, g->best, TUI_EL_GOOD, base, selected);
	x += flag(app, w, y, x, s->id == app->mark_id, g->mark, TUI_EL_MARKED, base, selected);
	x += 1;
	if (c->w[C_TREE]) {
		draw_tree_cell(app, w, y, x, i, c->indent);
		x += c->w[C_TREE] + 1;
	}
	if (c->w[C_ORIGIN]) {
		tui_put(w, y, x, cuco_origin_name((cuco_origin)s->origin), c->w[C_ORIGIN]);
		x += c->w[C_ORIGIN] + 1;
	}
	char text[256];
	dir_text(app, txn, s, c->change, c->abbrev, text, sizeof text);
	tui_put_cut(w, y, x, text, c->w[C_DIR], app->crt.g->more);
	x += c->w[C_DIR] + 1;
	char num[96];
	speedup_text(app, txn, s, d->base_us, !c->narrow_speedup, num, sizeof num);
	int pad = c->w[C_SPEEDUP] - tui_width(num);
	x += tui_putf(w, y, x, end - x, "%*s%s", pad > 0 ? pad : 0, "", num) + 1;
	if (c->w[C_SCORE] && x < end) {
		snprintf(num, sizeof num, isnan(s->score) ? "-" : "%.4g", s->score);
		x += tui_putf(w, y, x, end - x, "%*s", c->w[C_SCORE], num) + 1;
	}
	if (c->w[C_LATENCY] && x < end)
		x += tui_putf(w, y, x, end - x, "%*s", c->w[C_LATENCY],
			tui_fmt_us(s->latency_median_us, num, sizeof num)) + 1;
	if (c->w[C_ISLAND] && x < end) {
		snprintf(num, sizeof num, s->island < 0 ? "-" : "%d", s->island);
		tui_putf(w, y, x, end - x, "%*s", c->w[C_ISLAND], num);
	}
}

static void draw_header(tui_app *app, tui_pane *p, const tree_cols *c);

/* One read for the whole pane: the rows in view are measured for the
 * columns, then drawn. */
static int draw_txn(cuco_txn *txn, void *arg)
{
	struct draw_rows *d = arg;
	const tui_model *m = &d->app->m;
	d->base_us = NAN;
	for (size_t i = 0; i < m->n; i++)
		if (m->sums[i].origin == CUCO_ORIGIN_BASELINE && isfinite(m->sums[i].latency_median_us))
			d->base_us = m->sums[i].latency_median_us;
	d->c = fit(d->app, txn, d->p->w - 2, (size_t)d->p->top, (size_t)d->view, d->base_us);
	draw_header(d->app, d->p, &d->c);
	for (int r = 0; r < d->view && (size_t)(d->p->top + r) < d->app->m.nrows; r++)
		draw_row(d, txn, 2 + r, (size_t)(d->p->top + r));
	return CUCO_OK;
}

static void draw_header(tui_app *app, tui_pane *p, const tree_cols *c)
{
	WINDOW *w = p->win;
	int x = 1, end = p->w - 1;
	wattrset(w, app->crt.attr[TUI_EL_HEADER]);
	mvwhline(w, 1, 1, ' ', end - 1);
	tui_putf(w, 1, x, end - x, "%*s", c->w[C_ID], "id");
	x += c->w[C_ID] + 1 + c->w[C_FLAGS] + 1;
	if (c->w[C_TREE])
		x += c->w[C_TREE] + 1;
	if (c->w[C_ORIGIN]) {
		tui_put(w, 1, x, "origin", end - x);
		x += c->w[C_ORIGIN] + 1;
	}
	tui_put(w, 1, x, c->change ? "change from parent" : "directive", c->w[C_DIR]);
	x += c->w[C_DIR] + 1;
	static const char *const heads[] = { [C_SPEEDUP] = "speedup", [C_SCORE] = "score",
		[C_LATENCY] = "latency", [C_ISLAND] = "isl" };
	for (int k = C_SPEEDUP; k < NCOLS && x < end; k++)
		if (c->w[k])
			x += tui_putf(w, 1, x, end - x, "%*s", c->w[k], heads[k]) + 1;
}

static void draw(tui_app *app, tui_pane *p)
{
	int view = p->h - 3;  /* box and the column header */
	if (view < 1)
		return;
	/* Keep the cursor on screen. */
	int cursor = (int)state(app)->cursor;
	if (cursor < p->top)
		p->top = cursor;
	if (cursor >= p->top + view)
		p->top = cursor - view + 1;
	if (p->top > 0 && (size_t)p->top + (size_t)view > app->m.nrows)
		p->top = app->m.nrows > (size_t)view ? (int)(app->m.nrows - (size_t)view) : 0;
	struct draw_rows d = { .app = app, .p = p, .view = view };
	cuco_store_read(app->st, draw_txn, &d, NULL);
	if (app->m.nrows == 0) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		if (app->m.n)
			tui_putf(p->win, 2, 2, p->w - 4, "no candidate matches the filter (%s clears it)",
				tui_key_name(TUI_ACT_FILTER_CLEAR));
		else
			tui_put(p->win, 2, 2, "no candidates yet", p->w - 4);
	}
}

/* The pane's title says what is shown: filters, sort, search. */
static void title(tui_app *app, char *buf, size_t size)
{
	const tui_model *m = &app->m;
	int n = snprintf(buf, size, "lineage %zu/%zu", m->nrows, m->n);
	if (m->sort != TUI_SORT_LINEAGE && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " %s by %s", app->crt.g->sep, tui_sort_name(m->sort));
	if (m->search[0] && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " %s /%s: %zu match%s", app->crt.g->sep, m->search,
			m->nmatch, m->nmatch == 1 ? "" : "es");
	if (m->search[0] && m->searched < m->n && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", searching %zu%%", m->n ? 100 * m->searched / m->n : 0);
}

/* ---- the selection --------------------------------------------------------- */

/* Move the cursor to a candidate (unfolding nothing); false if hidden. */
static bool select_id(tui_app *app, uint64_t id)
{
	long r = tui_model_row_of(&app->m, id);
	if (r < 0)
		return false;
	state(app)->cursor = (size_t)r;
	if (app->sel_id != id) {
		app->sel_id = id;
		app->focus_stale = true;
	}
	return true;
}

/* After a reload: stay on the same candidate if it is still shown, else
 * on the same row. */
static void reload(tui_app *app, tui_pane *p)
{
	(void)p;
	tree_state *t = state(app);
	if (app->sel_id && select_id(app, app->sel_id))
		return;
	if (app->m.nrows == 0) {
		t->cursor = 0;
		app->sel_id = 0;
		app->focus_stale = true;
		return;
	}
	if (t->cursor >= app->m.nrows)
		t->cursor = app->m.nrows - 1;
	select_id(app, app->m.sums[app->m.rows[t->cursor]].id);
}

static void move_cursor(tui_app *app, long to)
{
	if (app->m.nrows == 0)
		return;
	if (to < 0)
		to = 0;
	if ((size_t)to >= app->m.nrows)
		to = (long)app->m.nrows - 1;
	select_id(app, app->m.sums[app->m.rows[to]].id);
}

/* ---- search ------------------------------------------------------------- */

void tui_tree_next_match(tui_app *app, int dir)
{
	const tui_model *m = &app->m;
	if (!m->search[0]) {
		tui_flash(app, "no search yet: %s searches", tui_key_name(TUI_ACT_SEARCH));
		return;
	}
	long r = m->nrows ? tui_model_next_match(m, state(app)->cursor, dir) : -1;
	if (r < 0 && m->searched < m->n) {
		app->search_jump = true;  /* to the first match the search finds */
		tui_flash(app, "/%s: searching…", m->search);
		return;
	}
	if (r < 0) {
		tui_flash(app, "/%s: no match shown", m->search);
		return;
	}
	move_cursor(app, r);
	long k = 0;  /* which match this is, for "3 of 17" */
	for (long q = 0; q <= r; q++)
		k += m->match[m->rows[q]] & 1;
	tui_flash(app, "/%s: match %ld of %zu%s (%s next, %s previous)", m->search, k, m->nmatch,
		m->searched < m->n ? " so far" : "", tui_key_name(TUI_ACT_SEARCH_NEXT),
		tui_key_name(TUI_ACT_SEARCH_PREV));
}

static void search(tui_app *app)
{
	char buf[sizeof app->m.search];
	cuco_strlcpy(buf, app->m.search, sizeof buf);
	if (!tui_prompt(app, "search (Enter on empty clears): ", buf, sizeof buf))
		return;
	cuco_err err = { 0 };
	if (tui_model_search(&app->m, app->st, buf, TUI_SEARCH_CHUNK, &err) != CUCO_OK)
		tui_flash(app, "search: %s", err.msg);
	if (buf[0])
		tui_tree_next_match(app, 1);
	else
		tui_flash(app, "search cleared");
}

/* ---- filters and sort ------------------------------------------------------ */

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
	if (app->sel_id && select_id(app, app->sel_id))
		return;
	state(app)->cursor = 0;
	move_cursor(app, 0);
}

void tui_tree_filter_island(tui_app *app, int island)
{
	app->m.filter.island = island;
	filter_changed(app);
}

static void cycle_sort(tui_app *app)
{
	tui_model *m = &app->m;
	m->sort = (tui_sort)((m->sort + 1) % TUI_SORT_COUNT);
	tui_model_rows(m);
	if (!select_id(app, app->sel_id))
		move_cursor(app, 0);
	if (m->sort == TUI_SORT_LINEAGE)
		tui_flash(app, "order: %s (the tree)", tui_sort_name(m->sort));
	else
		tui_flash(app, "order: %s (a flat list; %s again for the next)", tui_sort_name(m->sort),
			tui_key_name(TUI_ACT_SORT));
}

static void next_failure(tui_app *app)
{
	const tui_model *m = &app->m;
	for (size_t k = 1; k <= m->nrows; k++) {
		size_t row = (state(app)->cursor + k) % m->nrows;
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
	else if (!select_id(app, id))
		tui_flash(app, "%s #%llu is hidden by a fold or filter", what, (unsigned long long)id);
}

static void toggle(tui_app *app)
{
	tui_model *m = &app->m;
	long i = tui_model_find(m, app->sel_id);
	if (m->sort != TUI_SORT_LINEAGE)
		tui_flash(app, "folds belong to the tree: %s back to lineage order", tui_key_name(TUI_ACT_SORT));
	else if (i >= 0 && tui_model_has_children(m, (size_t)i)) {
		m->folded[i] = !m->folded[i];
		tui_model_rows(m);
		select_id(app, app->sel_id);
	}
}

/* Every action the tree takes redraws: most move the cursor or flash. */
static tui_result act(tui_app *app, tui_pane *p, tui_action a)
{
	int view = p->h - 3;
	long cur = (long)state(app)->cursor;
	tui_model *m = &app->m;
	switch (a) {
	case TUI_ACT_UP: move_cursor(app, cur - 1); break;
	case TUI_ACT_DOWN: move_cursor(app, cur + 1); break;
	case TUI_ACT_PAGE_UP: move_cursor(app, cur - view / 2); break;
	case TUI_ACT_PAGE_DOWN: move_cursor(app, cur + view / 2); break;
	case TUI_ACT_TOP: move_cursor(app, 0); break;
	case TUI_ACT_BOTTOM: move_cursor(app, (long)m->nrows - 1); break;
	case TUI_ACT_TOGGLE: toggle(app); break;
	case TUI_ACT_PARENT:
		jump(app, app->f.have && app->f.cand.nparents ? app->f.cand.parents[0] : 0, "parent");
		break;
	case TUI_ACT_BEST: jump(app, m->best_id, "best candidate"); break;
	case TUI_ACT_NEXT_FAIL: next_failure(app); break;
	case TUI_ACT_SEARCH: search(app); break;
	case TUI_ACT_SEARCH_NEXT: tui_tree_next_match(app, 1); break;
	case TUI_ACT_SEARCH_PREV: tui_tree_next_match(app, -1); break;
	case TUI_ACT_SORT: cycle_sort(app); break;
	case TUI_ACT_FILTER_ISLAND: cycle_island(app); filter_changed(app); break;
	case TUI_ACT_FILTER_STATUS:
		m->filter.status = tui_model_next_status(m, m->filter.status);
		filter_changed(app);
		break;
	case TUI_ACT_FILTER_ORIGIN:
		m->filter.origin = tui_model_next_origin(m, m->filter.origin);
		filter_changed(app);
		break;
	case TUI_ACT_FILTER_CLEAR:
		m->filter = (tui_filter){ -2, -1, -1 };
		filter_changed(app);
		break;
	default:
		return TUI_IGNORED;
	}
	return TUI_HANDLED | TUI_REDRAW;
}

/* A click selects the row under it (the box's top and the column header
 * come first). */
static tui_result click(tui_app *app, tui_pane *p, int y)
{
	long row = p->top + (y - 2);
	if (row >= 0 && (size_t)row < app->m.nrows)
		select_id(app, app->m.sums[app->m.rows[row]].id);
	return TUI_REDRAW;
}

static void explain(tui_app *app, cuco_buf *out)
{
	const tui_glyphs *g = app->crt.g;
	cuco_buf_puts(out, "The lineage tree: every candidate under its parent, oldest first.\n\n"
		"Status glyphs:\n");
	for (int s = 0; s < CUCO_STATUS_COUNT; s++)
		cuco_buf_printf(out, "  %s  %-13s %s\n", g->status[s], cuco_status_name((cuco_status)s),
			cuco_status_help((cuco_status)s));
	cuco_buf_printf(out, "\nMarks after the status: %s pinned (kept as a parent), %s the best, "
		"%s marked for the diff. %s folded subtree, %s unfolded (%s toggles).\n\nOrigins:\n",
		g->pin, g->best, g->mark, g->folded, g->unfolded, tui_key_name(TUI_ACT_TOGGLE));
	for (int o = 0; o < CUCO_ORIGIN_COUNT; o++)
		cuco_buf_printf(out, "  %-10s %s\n", cuco_origin_name((cuco_origin)o),
			cuco_origin_help((cuco_origin)o));
	cuco_buf_printf(out, "\nThe directive column is backend/issuer/placement/sync/granularity, then "
		"free knobs. When the pane is too narrow for it, it shows each candidate's change from "
		"its parent instead (\"gran=16\": the granularity became 16; \"(source only)\": the same "
		"directive, a change in the code); %s on the detail pane explains each dimension. "
		"Columns that do not fit go in this order: island, latency, the intervals, score, then "
		"the origin.\n"
		"Speedup: the baseline's median latency over this one's, measured in the same run. "
		"Confirmed on fresh rounds paired with the baseline, it shows its interval (1.24x "
		"[1.15-1.33]; only a confirmation crowns a best); one screening measurement shows ? "
		"(1.43x?). ~ after it: timed against another measurement of the baseline than the one "
		"in the list, so its latency does not compare with the baseline's; its speedup does. "
		"Score: higher is better.\n\n"
		"%s orders the list by speedup, latency or age instead of lineage; %s searches, %s and %s "
		"step through the matches (their ids are highlighted, the title counts them).\n",
		tui_key_name(TUI_ACT_EXPLAIN), tui_key_name(TUI_ACT_SORT), tui_key_name(TUI_ACT_SEARCH),
		tui_key_name(TUI_ACT_SEARCH_NEXT), tui_key_name(TUI_ACT_SEARCH_PREV));
}

const tui_pane_ops tui_pane_tree = {
	.title = "lineage", .context = TUI_IN_TREE, .state_size = sizeof(tree_state), .draw = draw,
	.act = act, .click = click, .reload = reload, .explain = explain, .title_fn = title,
};
