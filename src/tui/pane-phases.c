/* pane-phases.c — per-phase latency as horizontal bars for the candidate,
 * its parent, the baseline and the best, on one scale.
 *
 * A bar is as long as the measured median latency, and each phase in it
 * is drawn once: compute, the communication compute did not hide
 * (exposed_comm; the hidden part overlaps compute and is not time of its
 * own), sync, host and any other phase, then what the phases do not
 * account for. Every number is the phase as cuco_phases_view shows it, no
 * part larger than its whole (exposed_comm at most comm, a phase at most
 * the latency), and the legend says when one was measured larger. Phases
 * the harness times apart may add up to more than the latency: then they
 * are drawn to the latency and the legend says so. A bar timed against
 * another measurement of the baseline than the one shown is marked: its
 * length does not compare, its speedup does. Every phase has its own fill
 * character, so the bars read without colour. */
#include "tui/screen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ROWS 4
#define LABEL_W 14
#define NUMS_W 16      /* " 800.0us 1.38x" */

typedef struct bar {
	const cuco_candidate *c;
	char label[24];
	bool stale;        /* timed against another baseline measurement */
	int n;             /* its phases as shown (cuco_phases_view) */
	cuco_phase ph[CUCO_MAX_PHASES];
	double measured[CUCO_MAX_PHASES];
} bar;

static double phase_us(const bar *b, const char *name)
{
	for (int i = 0; i < b->n; i++)
		if (strcmp(b->ph[i].name, name) == 0)
			return b->ph[i].us;
	return NAN;
}

/* Whether a phase is drawn: comm only when no exposed_comm says how much of it shows. */
static bool drawn(const bar *b, int i)
{
	const char *name = b->ph[i].name;
	double us = b->ph[i].us;
	if (isnan(us) || us <= 0)
		return false;
	return strcmp(name, "comm") != 0 || isnan(phase_us(b, "exposed_comm"));
}

/* The sum of the phases drawn. */
static double drawn_sum(const bar *b)
{
	double t = 0;
	for (int i = 0; i < b->n; i++)
		if (drawn(b, i))
			t += b->ph[i].us;
	return t;
}

/* The phases named by any of the bars, in first-seen order. */
static int phase_names(const bar *bars, int n, char names[][24])
{
	int count = 0;
	for (int b = 0; b < n; b++)
		for (int i = 0; i < bars[b].n; i++) {
			int k = 0;
			while (k < count && strcmp(names[k], bars[b].ph[i].name) != 0)
				k++;
			if (k == count && count < CUCO_MAX_PHASES)
				cuco_strlcpy(names[count++], bars[b].ph[i].name, 24);
		}
	return count;
}

/* Cells per phase: cumulative rounding keeps the total true to the
 * latency; a phase too short for a cell still gets one, taken from the
 * longest, so every phase is seen and the bar keeps its length. */
static void phase_cells(const bar *b, double lat, double scale, int cells[CUCO_MAX_PHASES])
{
	double sum = drawn_sum(b), fit = sum > lat ? lat / sum : 1, at = 0;
	int done = 0, longest = -1;
	for (int i = 0; i < b->n; i++) {
		cells[i] = 0;
		if (!drawn(b, i))
			continue;
		at += b->ph[i].us * fit;
		int end = (int)lround(at * scale);
		cells[i] = end - done;
		done = end;
		if (longest < 0 || cells[i] > cells[longest])
			longest = i;
	}
	for (int i = 0; i < b->n; i++)
		if (drawn(b, i) && cells[i] == 0 && longest >= 0 && cells[longest] > 1) {
			cells[i] = 1;
			cells[longest]--;
		}
}

static void draw_bar(tui_app *app, tui_pane *p, int y, const bar *b, double scale, int width)
{
	const cuco_candidate *c = b->c;
	const tui_glyphs *g = app->crt.g;
	char num[24], sp[24];
	double lat = c->timing.median_us;
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
	tui_putf(p->win, y, 1, LABEL_W, "%s%s", b->label, b->stale ? "~" : "");
	int x = 1 + LABEL_W;
	if (isnan(lat)) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, y, x, "not timed", width);
		return;
	}
	int len = (int)lround(lat * scale), used = 0, cells[CUCO_MAX_PHASES];
	phase_cells(b, lat, scale, cells);
	for (int i = 0; i < b->n; i++) {
		int slot = tui_phase_slot(b->ph[i].name);
		wattrset(p->win, app->crt.attr[TUI_EL_PHASE_1 + slot]);
		for (int k = 0; k < cells[i] && used < len && used < width; k++, used++)
			x += tui_put(p->win, y, x, g->fill[slot], 1);
	}
	wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
	for (; used < len && used < width; used++)  /* what no phase accounts for */
		x += tui_put(p->win, y, x, g->unaccounted, 1);
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
	tui_putf(p->win, y, 1 + LABEL_W + width + 1, p->w - LABEL_W - width - 3, "%8s %s",
		tui_fmt_us(lat, num, sizeof num), tui_fmt_speedup(c->speedup, sp, sizeof sp));
}

/* The bars: the candidate, its parent, the baseline, the best. */
static int gather(const tui_focus *f, bar bars[ROWS])
{
	int n = 0;
	bars[n] = (bar){ .c = &f->cand };
	snprintf(bars[n++].label, sizeof bars[0].label, "#%llu", (unsigned long long)f->cand.id);
	if (f->have_parent) {
		bars[n] = (bar){ .c = &f->parent };
		snprintf(bars[n++].label, sizeof bars[0].label, "parent #%llu", (unsigned long long)f->parent.id);
	}
	if (f->have_base && f->base.id != f->cand.id) {
		bars[n] = (bar){ .c = &f->base };
		snprintf(bars[n++].label, sizeof bars[0].label, "baseline #%llu", (unsigned long long)f->base.id);
	}
	if (f->have_best && f->best.id != f->cand.id && (!f->have_parent || f->best.id != f->parent.id)) {
		bars[n] = (bar){ .c = &f->best };
		snprintf(bars[n++].label, sizeof bars[0].label, "best #%llu", (unsigned long long)f->best.id);
	}
	/* Whatever the candidate's own spread: on a busy machine it is large
	 * for every candidate, and the mark was never drawn. */
	double base = f->have_base ? f->base.timing.median_us : NAN;
	for (int b = 0; b < n; b++) {
		const cuco_candidate *c = bars[b].c;
		bars[b].stale = c->origin != CUCO_ORIGIN_BASELINE &&
			cuco_speedup_elsewhere(c->speedup, c->timing.median_us, base);
		bars[b].n = cuco_phases_view(c, bars[b].ph, bars[b].measured);
	}
	return n;
}

/* The first phase of the bars measured larger than shown, in words
 * ("exposed_comm of #5 measured 9.67ms"); false when none was. */
static bool clipped_text(const bar *bars, int n, char *buf, size_t size)
{
	char num[24];
	for (int b = 0; b < n; b++)
		for (int i = 0; i < bars[b].n; i++)
			if (bars[b].measured[i] > bars[b].ph[i].us) {
				snprintf(buf, size, "%s of #%llu measured %s", bars[b].ph[i].name,
					(unsigned long long)bars[b].c->id, tui_fmt_us(bars[b].measured[i], num, sizeof num));
				return true;
			}
	return false;
}

/* Legend: fill, name and the candidate's time; the comm it hid; the notes. */
static int draw_legend(tui_app *app, tui_pane *p, int y, const bar *bars, int n, char names[][24], int np)
{
	int w = p->w - 2, x = 1;
	char num[24], num2[24];
	for (int k = 0; k < np && y < p->h - 1; k++) {
		char item[256];
		double us = phase_us(&bars[0], names[k]), ex = phase_us(&bars[0], "exposed_comm");
		if (strcmp(names[k], "comm") == 0 && !isnan(ex) && !isnan(us))
			snprintf(item, sizeof item, " comm %s (%s hidden)", tui_fmt_us(us, num, sizeof num),
				tui_fmt_us(us - ex > 0 ? us - ex : 0, num2, sizeof num2));
		else
			snprintf(item, sizeof item, " %s %s", names[k], tui_fmt_us(us, num, sizeof num));
		int need = 1 + tui_width(item) + 1;
		if (x + need > w && x > 1) {
			y++;
			x = 1;
		}
		int slot = tui_phase_slot(names[k]);
		bool comm_hidden = strcmp(names[k], "comm") == 0 && !isnan(ex);
		wattrset(p->win, app->crt.attr[comm_hidden ? TUI_EL_DIM : TUI_EL_PHASE_1 + slot]);
		x += tui_put(p->win, y, x, comm_hidden ? " " : app->crt.g->fill[slot], 1);
		wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
		x += tui_put(p->win, y, x, item, w - x) + 1;
	}
	bool over = false, stale = false;
	for (int b = 0; b < n; b++) {
		over |= drawn_sum(&bars[b]) > bars[b].c->timing.median_us * 1.001;
		stale |= bars[b].stale;
	}
	wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
	if (y + 1 < p->h - 1 && (over || stale)) {
		y++;
		tui_putf(p->win, y, 1, w, "%s%s%s", stale ? "~ paired with another baseline run" : "",
			stale && over ? "; " : "", over ? "phases drawn to the latency" : "");
	}
	char clipped[160];
	if (y + 1 < p->h - 1 && clipped_text(bars, n, clipped, sizeof clipped)) {
		y++;
		tui_putf(p->win, y, 1, w, "shown at most its whole: %s", clipped);
	}
	return y + 1;
}

static void draw_table(tui_app *app, tui_pane *p, int y, const bar *bars, int n, char names[][24], int np)
{
	int w = p->w - 2;
	char num[24];
	if (y + np + 1 >= p->h - 1 || np == 0)
		return;
	wattrset(p->win, app->crt.attr[TUI_EL_HEADER]);
	tui_putf(p->win, y++, 1, w, "%-14s%12s%12s%12s%12s", "phase", bars[0].label,
		n > 1 ? bars[1].label : "", n > 2 ? bars[2].label : "", n > 3 ? bars[3].label : "");
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
	for (int k = 0; k < np && y < p->h - 1; k++, y++) {
		int x2 = 1 + tui_putf(p->win, y, 1, 14, "%-14s", names[k]);
		for (int b = 0; b < n; b++)
			x2 += tui_putf(p->win, y, x2, 12, "%12s", tui_fmt_us(phase_us(&bars[b], names[k]), num, sizeof num));
	}
}

static void draw(tui_app *app, tui_pane *p)
{
	const tui_focus *f = &app->f;
	int w = p->w - 2;
	if (!f->have) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 1, 2, "no candidate selected", w - 2);
		return;
	}
	bar bars[ROWS];
	int n = gather(f, bars);
	double longest = 0;
	for (int b = 0; b < n; b++)
		if (isfinite(bars[b].c->timing.median_us))
			longest = fmax(longest, bars[b].c->timing.median_us);
	int width = w - LABEL_W - NUMS_W;
	if (width < 4)
		width = 4;
	double scale = longest > 0 ? width / longest : 0;
	for (int b = 0; b < n && 1 + b < p->h - 1; b++)
		draw_bar(app, p, 1 + b, &bars[b], scale, width);
	char names[CUCO_MAX_PHASES][24];
	int np = phase_names(bars, n, names);
	int y = draw_legend(app, p, 1 + n, bars, n, names, np);
	draw_table(app, p, y + 1, bars, n, names, np);
}

static tui_result act(tui_app *app, tui_pane *p, tui_action a)
{
	(void)app, (void)p, (void)a;
	return TUI_IGNORED;
}

static void explain(tui_app *app, cuco_buf *out)
{
	const char *known[] = { "compute", "comm", "sync", "exposed_comm", "host" };
	const tui_glyphs *g = app->crt.g;
	cuco_buf_puts(out, "Per-phase latency, as the harness measured it: one bar each for the selected "
		"candidate, its parent, the baseline and the best, on one scale. A bar is as long as the "
		"measured median latency (the number after it, then the speedup). Each phase has its own "
		"fill:\n\n");
	for (int i = 0; i < 5; i++)
		cuco_buf_printf(out, "  %s %s\n", g->fill[i], tui_teach_phase(known[i]));
	cuco_buf_printf(out, "  %s any other phase the workload reports.\n", g->fill[TUI_FILLS - 1]);
	cuco_buf_printf(out, "  %s time no phase accounts for.\n\n", g->unaccounted);
	cuco_buf_printf(out, "Each phase is drawn once. exposed_comm is the part of comm that compute did "
		"not hide; the hidden rest runs during compute, so it is no time of its own and the bar "
		"leaves it out (the legend gives comm and how much of it was hidden). No part is shown "
		"larger than its whole: exposed_comm, measured as the time outside compute, is shown at "
		"most comm (the rest is waiting), and a phase at most the latency; the legend says when "
		"one was measured larger. Phases timed apart can add up to more than the latency; the "
		"bar is then drawn to the latency and the legend says so.\n\n"
		"~ after a label: that candidate was timed against another measurement of the baseline "
		"than the one shown (the machine's load moved in between), so its bar's length does not "
		"compare with the baseline's; its speedup, a ratio of one paired measurement, does.\n\n"
		"Co-design wins come from shrinking exposed communication and sync. %s (zoom) adds a table "
		"of numbers.\n", tui_key_name(TUI_ACT_ZOOM));
}

const tui_pane_ops tui_pane_phases = {
	.title = "phases", .context = TUI_IN_PHASES, .draw = draw, .act = act, .explain = explain,
};
