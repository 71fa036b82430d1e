/* pane-log.c — the event log: what the engine did and what people did,
 * newest at the bottom. It follows new events unless scrolled back; a
 * text longer than the pane wraps under the text column. */
#include "tui/screen.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define HEAD_W 44   /* "12:00:00 author           kind      #12     " */
#define TEXT_MIN 24  /* narrower than this, a text is cut rather than wrapped */

/* An event's text wrapped to the columns after the head: its rows in out,
 * one a line; returns how many. */
static int wrap_event(const cuco_event *ev, int w, cuco_buf *out)
{
	out->len = 0;
	if (w - HEAD_W < TEXT_MIN) {
		cuco_buf_puts(out, ev->text);
		cuco_buf_puts(out, "\n");
		return 1;
	}
	tui_wrap(ev->text[0] ? ev->text : " ", w - HEAD_W, out);
	int rows = 0;
	for (size_t i = 0; i < out->len; i++)
		rows += out->data[i] == '\n';
	return rows ? rows : 1;
}

/* Draw event i from row y, at most `room` rows; returns the rows used. */
static int draw_event(tui_app *app, tui_pane *p, int i, int y, int room, cuco_buf *rows)
{
	const cuco_event *ev = tui_model_event(&app->m, i);
	int w = p->w - 2, n = wrap_event(ev, w, rows);
	char when[16], cand[24] = "";
	time_t t = (time_t)ev->time;
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	if (ev->candidate)
		snprintf(cand, sizeof cand, "#%llu", (unsigned long long)ev->candidate);
	bool human = strchr(ev->author, '@') != NULL;
	bool bad = strcmp(ev->kind, "error") == 0;
	wattrset(p->win, app->crt.attr[bad ? TUI_EL_BAD : human ? TUI_EL_PINNED : TUI_EL_NORMAL]);
	const char *line = rows->data;
	for (int r = 0; r < n && r < room; r++) {
		size_t len = strcspn(line, "\n");
		if (r == 0)
			tui_putf(p->win, y, 1, w, "%s %-16.16s %-9s %-7s %.*s", when, ev->author, ev->kind,
				cand, (int)len, line);
		else
			tui_putf(p->win, y + r, 1, w, "%*s%.*s", HEAD_W, "", (int)len, line);
		line += len + 1;
	}
	return n < room ? n : room;
}

/* Events wrap under their text column, so a long failure reads whole at
 * any width that leaves the text room; scrolling moves by events. */
static void draw(tui_app *app, tui_pane *p)
{
	const tui_model *m = &app->m;
	int view = p->h - 2, w = p->w - 2;
	p->lines = m->log_count;
	cuco_buf rows = { 0 };
	/* top < 0 follows the newest events: as many as fit, from the newest
	 * back; scrolling back stops following and draws from `top` down. */
	int last_top = m->log_count > view ? m->log_count - view : 0;
	int first = p->top < 0 || p->top > last_top ? last_top : p->top;
	if (p->top < 0) {
		int used = 0;
		first = m->log_count;
		while (first > 0) {
			int n = wrap_event(tui_model_event(m, first - 1), w, &rows);
			if (used + n > view && used > 0)
				break;
			used += n;
			first--;
		}
	}
	for (int i = first, y = 1; i < m->log_count && y <= view; i++)
		y += draw_event(app, p, i, y, view - y + 1, &rows);
	cuco_buf_free(&rows);
	if (!m->log_count) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 1, 2, "no events yet", w - 2);
	}
}

static bool act(tui_app *app, tui_pane *p, tui_action a)
{
	int view = p->h - 2, last_top = app->m.log_count > view ? app->m.log_count - view : 0;
	if (p->top < 0)
		p->top = last_top;
	bool moved = tui_scroll_act(p, a, view);
	if (p->top >= last_top)
		p->top = -1;
	return moved;
}

/* Whether the log follows new events is in its title: a scrolled-back log
 * that looks like a quiet run would mislead. */
static void title(tui_app *app, char *buf, size_t size)
{
	const tui_pane *p = &app->panes[TUI_PANE_LOG];
	if (p->top < 0)
		snprintf(buf, size, "log");
	else
		snprintf(buf, size, "log %s held at %d/%d, G follows", app->crt.g->sep, p->top + 1,
			app->m.log_count);
}

static void explain(tui_app *app, cuco_buf *out)
{
	(void)app;
	cuco_buf_puts(out,
		"The event log: the run's audit trail, newest at the bottom.\n\n"
		"Each line: time, author (engine, tuner, or user@host for a person), kind, candidate\n"
		"and text. Kinds: candidate (proposed), status (a cascade stage moved), best (a new\n"
		"best), pin/unpin, reject, edit, hint, pause/resume, export (people's actions),\n"
		"run-start/run-end, error. People's actions are highlighted.\n"
		"A long text wraps under the text column. It follows new events; scrolling up holds it\n"
		"(the title says where) and G follows again.\n"
		"The log keeps its last 256 events here; 'cuco show' and the store keep them all.\n");
}

const tui_pane_ops tui_pane_log = {
	.title = "log", .context = TUI_IN_LOG, .draw = draw, .act = act, .explain = explain,
	.title_fn = title,
};
