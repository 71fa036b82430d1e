/* bars.c — the two lines around the panes: the status line above (the
 * run at a glance, its parts dropped by priority when the line is short)
 * and the hint bar below (the focused pane's keys from the action table,
 * or a flash saying what an action did). */
#include "tui/screen.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define FLASH_S 4.0

void tui_flash(tui_app *app, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(app->flash, sizeof app->flash, fmt, ap);
	va_end(ap);
	app->flash_until = cuco_mono() + FLASH_S;
}

static void fmt_count(char *buf, size_t size, double v)
{
	if (v >= 1e6)
		snprintf(buf, size, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, size, "%.3gk", v / 1e3);
	else
		snprintf(buf, size, "%.0f", v);
}

/* The status line's parts, in the order shown, each with a priority:
 * when the line is too long the lowest go first, so at 80 columns the
 * state, the clock and the best remain. */
enum { SEG_STATE, SEG_WHY, SEG_NOISE, SEG_BEST, SEG_COUNTS, SEG_SLOTS, SEG_WORKLOAD, SEG_USAGE,
	SEG_RUN, NSEG };
static const int seg_prio[NSEG] = { 9, 7, 8, 8, 6, 3, 5, 4, 2 };

static void status_segments(tui_app *app, char seg[NSEG][160])
{
	const tui_model *m = &app->m;
	char num[16], num2[16];
	long el = (long)tui_model_elapsed(m);
	snprintf(seg[SEG_STATE], 160, "%s %02ld:%02ld:%02ld", tui_model_state_text(m), el / 3600,
		el / 60 % 60, el % 60);
	/* "budget reached after 40 strategy candidates" says why in its first words. */
	const char *after = strstr(m->end_text, " after ");
	snprintf(seg[SEG_WHY], 160, "%.*s", after ? (int)(after - m->end_text) : (int)strlen(m->end_text),
		m->end_text);
	if (!m->ended || strcmp(seg[SEG_WHY], tui_model_state_text(m)) == 0)
		seg[SEG_WHY][0] = '\0';
	/* A figure from a noisy machine says so (docs/trust.md). */
	snprintf(seg[SEG_NOISE], 160, "%s", m->noisy ? "NOISY" : "");
	char best[64];
	if (m->best_id && m->best_id != m->baseline_id && !isnan(m->best_speedup)) {
		cuco_speedup_text(m->best_speedup, m->best_lo, m->best_hi, m->best_rounds,
			!app->crt.utf8, best, sizeof best);
		snprintf(seg[SEG_BEST], 160, "best %s #%llu", best, (unsigned long long)m->best_id);
	} else {
		snprintf(seg[SEG_BEST], 160, "best -");  /* nothing crowned: the baseline is the best */
	}
	int busy = m->count[CUCO_STATUS_COMPILING] + m->count[CUCO_STATUS_RUNNING]
		+ m->count[CUCO_STATUS_BENCHMARKING];
	snprintf(seg[SEG_COUNTS], 160, "done %d failed %d queued %d busy %d", m->count[CUCO_STATUS_DONE],
		m->count[CUCO_STATUS_FAILED], m->count[CUCO_STATUS_QUEUED], busy);
	snprintf(seg[SEG_SLOTS], 160, "%s", m->slots);
	snprintf(seg[SEG_WORKLOAD], 160, "%s %s/%s", m->workload[0] ? m->workload : "-",
		m->strategy[0] ? m->strategy : "-", m->nislands ? m->islands[0].phase : "-");
	fmt_count(num, sizeof num, (double)m->tokens);
	fmt_count(num2, sizeof num2, (double)m->budget_tokens);
	int n = snprintf(seg[SEG_USAGE], 160, "tok %s%s%s $%.2f", num, m->budget_tokens ? "/" : "",
		m->budget_tokens ? num2 : "", m->cost_usd);
	if (m->budget_usd > 0 && n > 0 && n < 160)
		snprintf(seg[SEG_USAGE] + n, 160 - (size_t)n, "/$%g", m->budget_usd);
	/* The run's folder, unless it only repeats the workload's name. */
	const char *dir = cuco_store_dir(app->st), *base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	snprintf(seg[SEG_RUN], 160, "%s", m->workload[0] && strstr(base, m->workload) ? "" : base);
}

void tui_draw_status(tui_app *app)
{
	char seg[NSEG][160];
	status_segments(app, seg);
	/* Most telling first: each part goes in if it still fits. */
	bool keep[NSEG] = { false };
	int used = 0;
	for (int prio = 9; prio >= 0; prio--)
		for (int i = 0; i < NSEG; i++) {
			int w = tui_width(seg[i]) + 2;
			if (seg_prio[i] == prio && seg[i][0] && (used + w <= app->cols || i == SEG_STATE)) {
				keep[i] = true;
				used += w;
			}
		}
	attr_t base = app->crt.attr[TUI_EL_STATUS_LINE];
	attrset(base);
	move(0, 0);
	hline(' ', app->cols);
	int x = 1;
	for (int i = 0; i < NSEG && x < app->cols; i++) {
		if (!keep[i])
			continue;
		/* A run that is not searching says so inverted against the line:
		 * it is news. Inverted, not reverse: a line in reverse already
		 * (monochrome, NO_COLOR) turned normal after it, leaving its gaps
		 * as stray reverse blocks. */
		bool loud = (i == SEG_STATE && (app->m.ended || app->m.paused || app->m.model_down
			|| app->m.state == TUI_RUN_RETIMING)) || i == SEG_NOISE;
		if (loud)
			attrset(base ^ A_REVERSE);
		int w = strcspn(seg[i], " ");
		x += tui_put(stdscr, 0, x, seg[i], i == SEG_STATE ? w : app->cols - x);
		if (loud)
			attrset(base);
		if (i == SEG_STATE)
			x += tui_put(stdscr, 0, x, seg[i] + w, app->cols - x);
		x += 2;
	}
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
}

/* The hint bar's word for an action now, NULL to leave it out (an action
 * that cannot be taken: pause on a finished run, hint under the tuner). */
static const char *hint_word(tui_app *app, tui_action a)
{
	const tui_focus *f = &app->f;
	bool cand = f->have && app->sel_id;
	switch (a) {
	case TUI_ACT_PAUSE:
		return !tui_model_engine_live(&app->m) ? NULL : app->m.paused ? "resume" : "pause";
	case TUI_ACT_REJECT:
		if (cand && f->cand.status == CUCO_STATUS_REJECTED)
			return "un-reject";
		return cand && f->cand.origin == CUCO_ORIGIN_BASELINE ? NULL : "reject";
	case TUI_ACT_PIN:
		if (cand && f->cand.status == CUCO_STATUS_REJECTED)
			return NULL;
		return cand && f->cand.pinned ? "unpin" : "pin";
	case TUI_ACT_HINT:
		return app->m.hints ? "hint" : NULL;
	default:
		return tui_binding_of(a)->label;
	}
}

/* One hint, "key label", from x; returns columns used (0 when it does not fit). */
static int draw_hint(tui_app *app, int y, int x, int end, const tui_binding *b, const char *label)
{
	int need = (int)strlen(b->name) + tui_width(label) + 2;
	if (x + need > end)
		return 0;
	attrset(app->crt.attr[TUI_EL_HINT_KEY]);
	int used = tui_put(stdscr, y, x, b->name, end - x);
	attrset(app->crt.attr[TUI_EL_HINTS]);
	return used + tui_putf(stdscr, y, x + used, end - x - used, " %s ", label);
}

/* The focused pane's keys from the action table, a person's actions first,
 * then ways of looking, then moving; help and quit keep their place at the
 * right end. A hint that does not fit is skipped, a shorter one may. */
void tui_draw_hints(tui_app *app)
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
			right -= (int)strlen(b->name) + (int)strlen(b->label) + 2;
		}
		for (int k = 0, x = right; k < 2; k++)
			x += draw_hint(app, y, x, app->cols, tui_binding_of(fixed[k]), tui_binding_of(fixed[k])->label);
		unsigned ctx = app->panes[app->focus].ops->context;
		int x = 0;
		for (int g = 0; g < TUI_G_COUNT; g++)
			for (int a = 1; a < TUI_ACT_COUNT; a++) {
				const tui_binding *b = tui_binding_of((tui_action)a);
				if (b->group != g || !(b->context & ctx) || a == TUI_ACT_HELP || a == TUI_ACT_QUIT)
					continue;
				const char *word = hint_word(app, (tui_action)a);
				if (word)
					x += draw_hint(app, y, x, right - 1, b, word);
			}
	}
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
}
