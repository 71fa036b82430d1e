/* pane-phases.c — per-phase latency as horizontal stacked bars for the
 * candidate, its parent, the baseline and the best, on one scale. Every
 * phase has its own fill character, so the bars read without colour. */
#include "tui/screen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ROWS 4
#define LABEL_W 14

typedef struct bar {
	const cuco_candidate *c;
	char label[24];
} bar;

/* The phases named by any of the bars, in first-seen order. */
static int phase_names(const bar *bars, int n, char names[][24])
{
	int count = 0;
	for (int b = 0; b < n; b++)
		for (int i = 0; i < bars[b].c->nphases; i++) {
			int k = 0;
			while (k < count && strcmp(names[k], bars[b].c->phases[i].name) != 0)
				k++;
			if (k == count && count < CUCO_MAX_PHASES)
				cuco_strlcpy(names[count++], bars[b].c->phases[i].name, 24);
		}
	return count;
}

static double phase_us(const cuco_candidate *c, const char *name)
{
	for (int i = 0; i < c->nphases; i++)
		if (strcmp(c->phases[i].name, name) == 0)
			return c->phases[i].us;
	return NAN;
}

static double total(const cuco_candidate *c)
{
	double t = 0;
	for (int i = 0; i < c->nphases; i++)
		t += isnan(c->phases[i].us) ? 0 : c->phases[i].us;
	return t;
}

static void draw_bar(tui_app *app, tui_pane *p, int y, const bar *b, double scale, int width)
{
	char num[24];
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
	tui_put(p->win, y, 1, b->label, LABEL_W);
	int x = 1 + LABEL_W, used = 0;
	double sum = 0;
	for (int i = 0; i < b->c->nphases; i++) {
		double us = b->c->phases[i].us;
		if (isnan(us) || us <= 0)
			continue;
		/* Cumulative rounding keeps the total true; a phase too short
		 * for a cell still gets one, so every phase is seen. */
		int end = (int)lround((sum + us) * scale);
		if (end <= used)
			end = used + 1;
		sum += us;
		int slot = tui_phase_slot(b->c->phases[i].name);
		wattrset(p->win, app->crt.attr[TUI_EL_PHASE_1 + slot]);
		for (; used < end && used < width; used++)
			x += tui_put(p->win, y, x, app->crt.g->fill[slot], 1);
	}
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
	if (b->c->nphases == 0)
		tui_put(p->win, y, x, "no phase times", width);
	else
		tui_putf(p->win, y, 1 + LABEL_W + width + 1, p->w - LABEL_W - width - 3, "%s",
			tui_fmt_us(b->c->latency_median_us, num, sizeof num));
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
	int n = 0;
	bars[n].c = &f->cand;
	snprintf(bars[n++].label, sizeof bars[0].label, "#%llu", (unsigned long long)f->cand.id);
	if (f->have_parent) {
		bars[n].c = &f->parent;
		snprintf(bars[n++].label, sizeof bars[0].label, "parent #%llu", (unsigned long long)f->parent.id);
	}
	if (f->have_base && f->base.id != f->cand.id) {
		bars[n].c = &f->base;
		snprintf(bars[n++].label, sizeof bars[0].label, "baseline #%llu", (unsigned long long)f->base.id);
	}
	if (f->have_best && f->best.id != f->cand.id) {
		bars[n].c = &f->best;
		snprintf(bars[n++].label, sizeof bars[0].label, "best #%llu", (unsigned long long)f->best.id);
	}
	double longest = 0;
	for (int b = 0; b < n; b++)
		longest = fmax(longest, total(bars[b].c));
	int width = w - LABEL_W - 10;
	double scale = longest > 0 ? width / longest : 0;
	for (int b = 0; b < n; b++)
		draw_bar(app, p, 1 + b, &bars[b], scale, width);

	/* Legend: fill, name and the candidate's time; then a table if room. */
	char names[CUCO_MAX_PHASES][24];
	int np = phase_names(bars, n, names);
	int y = 2 + n, x = 1;
	char num[24];
	for (int k = 0; k < np && y < p->h - 1; k++) {
		char item[256];
		snprintf(item, sizeof item, " %s %s", names[k],
			tui_fmt_us(phase_us(&f->cand, names[k]), num, sizeof num));
		int need = 1 + (int)strlen(item) + 1;
		if (x + need > w) {
			y++;
			x = 1;
		}
		int slot = tui_phase_slot(names[k]);
		wattrset(p->win, app->crt.attr[TUI_EL_PHASE_1 + slot]);
		x += tui_put(p->win, y, x, app->crt.g->fill[slot], 1);
		wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
		x += tui_put(p->win, y, x, item, w - x) + 1;
	}
	y += 2;
	if (y + np + 1 >= p->h - 1 || np == 0)
		return;
	wattrset(p->win, app->crt.attr[TUI_EL_HEADER]);
	tui_putf(p->win, y++, 1, w, "%-14s%12s%12s%12s%12s", "phase", bars[0].label,
		n > 1 ? bars[1].label : "", n > 2 ? bars[2].label : "", n > 3 ? bars[3].label : "");
	wattrset(p->win, app->crt.attr[TUI_EL_NORMAL]);
	for (int k = 0; k < np && y < p->h - 1; k++, y++) {
		int x2 = 1 + tui_putf(p->win, y, 1, 14, "%-14s", names[k]);
		for (int b = 0; b < n; b++)
			x2 += tui_putf(p->win, y, x2, 12, "%12s", tui_fmt_us(phase_us(bars[b].c, names[k]), num, sizeof num));
	}
}

static bool act(tui_app *app, tui_pane *p, tui_action a)
{
	(void)app, (void)p, (void)a;
	return false;
}

static void explain(tui_app *app, cuco_buf *out)
{
	const char *known[] = { "compute", "comm", "sync", "exposed_comm", "host" };
	cuco_buf_puts(out, "Per-phase latency, as the harness measured it, one bar per candidate on one\n"
		"scale: the selected candidate, its parent, the baseline and the best. The number\n"
		"after a bar is the measured median latency. Each phase has its own fill:\n\n");
	for (int i = 0; i < 5; i++)
		cuco_buf_printf(out, "  %s %s\n", app->crt.g->fill[i], tui_teach_phase(known[i]));
	cuco_buf_printf(out, "  %s any other phase the workload reports.\n\n", app->crt.g->fill[TUI_FILLS - 1]);
	cuco_buf_puts(out, "Comm and exposed_comm overlap: exposed_comm is the part of comm that compute\n"
		"did not hide, so a well-overlapped kernel shows a long comm bar with a short\n"
		"exposed_comm one, and the stacked bar can be longer than the latency. Co-design wins\n"
		"come from shrinking exposed communication and sync. z (zoom) adds a table of numbers.\n");
}

const tui_pane_ops tui_pane_phases = {
	.title = "phases", .context = TUI_IN_PHASES, .draw = draw, .act = act, .explain = explain,
};
