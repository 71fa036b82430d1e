/* pane-log.c — the event log: what the engine did and what people did,
 * newest at the bottom. Each event's text wraps under itself, so a long
 * one — a refusal's reason, a verdict, a crown that lapsed — is read
 * whole, never cut at the pane's edge. It follows new events unless
 * scrolled back; it scrolls by rows. */
#include "tui/screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEAD_W 44   /* "HH:MM:SS author(16) kind(9) #cand(7) ", before the text */
#define TEXT_MIN 24 /* narrower than this beside the head: the text goes below it */

typedef struct log_state {
	bool held;               /* scrolled back: new events do not move the view */
} log_state;

typedef struct log_row {
	int ev;                  /* the event, 0 = the oldest kept */
	size_t off, len;         /* its text's piece on this row, in the layout's text */
	bool head;               /* the row starts with the event's time, author, kind */
} log_row;

typedef struct log_layout {
	log_row *rows;
	int n, cap;
	cuco_buf text;           /* every event's text, wrapped */
	bool beside;             /* the text beside the head, else below it */
} log_layout;

static void add_row(log_layout *l, int ev, size_t off, size_t len, bool head)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->rows = cuco_xrealloc(l->rows, (size_t)l->cap * sizeof *l->rows);
	}
	l->rows[l->n++] = (log_row){ ev, off, len, head };
}

/* The rows of every event kept, for a pane w columns wide. */
static void layout(const tui_model *m, int w, log_layout *l)
{
	l->beside = w - HEAD_W >= TEXT_MIN;
	int tw = l->beside ? w - HEAD_W : w - 2;
	for (int i = 0; i < m->log_count; i++) {
		size_t start = l->text.len;
		tui_wrap(tui_model_event(m, i)->text, tw, &l->text);
		if (!l->beside)
			add_row(l, i, 0, 0, true);
		bool first = l->beside;
		for (size_t at = start; at < l->text.len;) {
			size_t len = strcspn(l->text.data + at, "\n");
			add_row(l, i, at, len, first);
			first = false;
			at += len + 1;
		}
		if (first)  /* no text: the head alone */
			add_row(l, i, 0, 0, true);
	}
}

static void draw(tui_app *app, tui_pane *p)
{
	const tui_model *m = &app->m;
	const log_state *s = p->state;
	int view = p->h - 2, w = p->w - 2;
	log_layout l = { 0 };
	layout(m, w, &l);
	p->lines = l.n;
	/* Unless held, the view follows the newest events. */
	int last_top = l.n > view ? l.n - view : 0;
	int first = !s->held || p->top > last_top ? last_top : p->top;
	for (int r = 0; r < view && first + r < l.n; r++) {
		const log_row *row = &l.rows[first + r];
		const cuco_event *ev = tui_model_event(m, row->ev);
		bool human = strchr(ev->author, '@') != NULL;
		wattrset(p->win, app->crt.attr[human ? TUI_EL_PINNED : TUI_EL_NORMAL]);
		if (row->head) {
			char when[16], cand[24] = "";
			time_t t = (time_t)ev->time;
			struct tm tm;
			localtime_r(&t, &tm);
			strftime(when, sizeof when, "%H:%M:%S", &tm);
			if (ev->candidate)
				snprintf(cand, sizeof cand, "#%llu", (unsigned long long)ev->candidate);
			tui_putf(p->win, 1 + r, 1, w, "%s %-16.16s %-9s %-7s", when, ev->author, ev->name,
				cand);
		}
		int x = l.beside ? HEAD_W : 2;
		if (row->len)
			tui_putf(p->win, 1 + r, 1 + x, w - x, "%.*s", (int)row->len, l.text.data + row->off);
	}
	if (!m->log_count) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 1, 2, "no events yet", w - 2);
	}
	free(l.rows);
	cuco_buf_free(&l.text);
}

/* Scrolling back holds the view; scrolling to the end follows again. */
static tui_result act(tui_app *app, tui_pane *p, tui_action a)
{
	(void)app;
	log_state *s = p->state;
	int view = p->h - 2, last_top = p->lines > view ? p->lines - view : 0;
	bool held = s->held;
	if (!held)
		p->top = last_top;
	tui_result r = tui_scroll_act(p, a, view);
	if (r & TUI_HANDLED)
		s->held = p->top < last_top;
	return r | (s->held != held ? TUI_REDRAW : 0);
}

/* Whether the log follows new events is in its title: a scrolled-back log
 * that looks like a quiet run would mislead. */
static void title(tui_app *app, char *buf, size_t size)
{
	const tui_pane *p = &app->panes[TUI_PANE_LOG];
	const log_state *s = p->state;
	if (!s->held)
		snprintf(buf, size, "log");
	else
		snprintf(buf, size, "log %s held at row %d/%d, %s follows", app->crt.g->sep, p->top + 1,
			p->lines, tui_key_name(TUI_ACT_BOTTOM));
}

static void explain(tui_app *app, cuco_buf *out)
{
	(void)app;
	cuco_buf_printf(out,
		"The event log: the run's audit trail, newest at the bottom.\n\n"
		"Each event: time, author (engine, tuner, or user@host for a person), kind, candidate\n"
		"and text, wrapped under itself so that it is read whole. Kinds: candidate (proposed),\n"
		"status (a cascade stage moved; a failure with its reason, a refusal naming its\n"
		"defence), confirm (a contender's verdict, or no verdict and why), best (a new best),\n"
		"lapse and revisit (a crown measured again), pin/unpin, reject, edit, hint,\n"
		"pause/resume, export (people's actions), run-start/run-end, error. People's actions\n"
		"are highlighted.\n"
		"It follows new events; scrolling up holds it (the title says where) and %s follows again.\n"
		"The log keeps its last 256 events here; 'cuco show' and the store keep them all.\n",
		tui_key_name(TUI_ACT_BOTTOM));
}

const tui_pane_ops tui_pane_log = {
	.title = "log", .context = TUI_IN_LOG, .state_size = sizeof(log_state), .draw = draw, .act = act,
	.explain = explain, .title_fn = title,
};
