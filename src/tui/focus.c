/* focus.c — the records behind the selection: the candidate, its parent,
 * the baseline and the best (for the phases pane), both sources and their
 * diff, and the detail pane's text. Read in one short transaction each
 * time the selection, the mark or the store moves. */
#include "tui/screen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_CONTEXT 3
#define DIFF_MAX_D 4000  /* past this many changed lines: show a replacement */

const char *tui_fmt_us(double us, char *buf, size_t size)
{
	if (isnan(us))
		snprintf(buf, size, "-");
	else if (us >= 1e6)
		snprintf(buf, size, "%.2fs", us / 1e6);
	else if (us >= 1e3)
		snprintf(buf, size, "%.2fms", us / 1e3);
	else
		snprintf(buf, size, "%.1fus", us);
	return buf;
}

const char *tui_fmt_speedup(double speedup, char *buf, size_t size)
{
	if (isnan(speedup))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.2fx", speedup);
	return buf;
}

void tui_focus_free(tui_focus *f)
{
	free(f->src);
	free(f->other_src);
	cuco_diff_free(&f->diff);
	cuco_buf_free(&f->detail);
	memset(f, 0, sizeof *f);
}

struct load {
	tui_app *app;
	char *prompt, *reply;
	size_t prompt_len, reply_len;
	cuco_buf measurements;  /* one line each (cuco_measurement_line) */
	int nmeasurements;
};

static int add_measurement(const cuco_measurement *m, void *arg)
{
	struct load *l = arg;
	char line[700];
	cuco_measurement_line(m, line, sizeof line);
	cuco_buf_printf(&l->measurements, "  %-3u %s\n", m->seq, line);
	l->nmeasurements++;
	return 0;
}

static bool get(cuco_txn *txn, uint64_t id, cuco_candidate *out)
{
	return id && cuco_cand_get(txn, id, out) == CUCO_OK;
}

static int load_txn(cuco_txn *txn, void *arg)
{
	struct load *l = arg;
	tui_app *app = l->app;
	tui_focus *f = &app->f;
	f->have = get(txn, f->id, &f->cand);
	if (!f->have)
		return CUCO_OK;
	f->have_parent = f->cand.nparents > 0 && get(txn, f->cand.parents[0], &f->parent);
	f->have_base = get(txn, app->m.baseline_id, &f->base);
	f->have_best = get(txn, app->m.best_id, &f->best);
	f->other_id = app->mark_id && app->mark_id != f->id ? app->mark_id
		: f->have_parent ? f->parent.id : 0;
	cuco_candidate *other = &f->other;
	f->have_other = get(txn, f->other_id, other);
	if (f->cand.source_hash[0])
		cuco_source_get(txn, f->cand.source_hash, &f->src, &f->src_len);
	if (f->have_other && other->source_hash[0])
		cuco_source_get(txn, other->source_hash, &f->other_src, &f->other_len);
	if (f->cand.prompt_hash[0])
		cuco_source_get(txn, f->cand.prompt_hash, &l->prompt, &l->prompt_len);
	if (f->cand.reply_hash[0])
		cuco_source_get(txn, f->cand.reply_hash, &l->reply, &l->reply_len);
	l->measurements.len = 0;  /* a retried read */
	l->nmeasurements = 0;
	return cuco_measure_each(txn, f->id, add_measurement, l);
}

static void add_num(cuco_buf *b, const char *label, double v, const char *fmt)
{
	if (isnan(v))
		cuco_buf_printf(b, "%-14s -\n", label);
	else {
		cuco_buf_printf(b, "%-14s ", label);
		cuco_buf_printf(b, fmt, v);
		cuco_buf_puts(b, "\n");
	}
}

static void add_text(cuco_buf *b, const char *title, const char *text, size_t len)
{
	cuco_buf_printf(b, "\n-- %s --\n", title);
	cuco_buf_append(b, text, len);
	if (len && text[len - 1] != '\n')
		cuco_buf_puts(b, "\n");
}

static void build_detail(tui_app *app, struct load *l)
{
	tui_focus *f = &app->f;
	const cuco_candidate *c = &f->cand;
	cuco_buf *b = &f->detail;
	char t1[32], t2[32], t3[32];
	cuco_buf_printf(b, "#%llu  %s  %s  island %d  gen %d%s\n", (unsigned long long)c->id,
		cuco_origin_name(c->origin), cuco_status_name(c->status), c->island, c->generation,
		c->pinned ? "  pinned" : "");
	/* A failure first: it is what a reviewer of a failed candidate came for. */
	if (c->status == CUCO_STATUS_FAILED || c->failure.error_class[0]) {
		cuco_buf_printf(b, "failed at      %s: %s\n", c->failure.stage[0] ? c->failure.stage : "-",
			c->failure.error_class[0] ? c->failure.error_class : "-");
		if (c->failure.error_class[0])
			cuco_buf_printf(b, "  (%s)\n", tui_teach_error(c->failure.error_class));
		if (c->failure.excerpt[0])
			cuco_buf_printf(b, "%s\n", c->failure.excerpt);
	}
	if (c->status == CUCO_STATUS_REJECTED && c->reject_reason[0])
		cuco_buf_printf(b, "rejected       %s\n", c->reject_reason);
	for (int i = 0; i < c->nparents; i++)
		cuco_buf_printf(b, "parent         #%llu\n", (unsigned long long)c->parents[i]);
	if (c->note[0])
		cuco_buf_printf(b, "note           %s\n", c->note);
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++) {
		const char *v = cuco_directive_get(&c->directive, (cuco_dirdim)i);
		cuco_buf_printf(b, "%-14s %s\n", cuco_dirdim_name((cuco_dirdim)i), *v ? v : "-");
	}
	for (int i = 0; i < c->directive.nknobs; i++)
		cuco_buf_printf(b, "  knob %-8s %s\n", c->directive.knobs[i].name, c->directive.knobs[i].value);
	add_num(b, "score", c->score, "%.4g");
	cuco_buf_printf(b, "%-14s %s / %s / %s (min/median/p90, %d samples)\n", "latency",
		tui_fmt_us(c->timing.min_us, t1, sizeof t1), tui_fmt_us(c->timing.median_us, t2, sizeof t2),
		tui_fmt_us(c->timing.p90_us, t3, sizeof t3), c->timing.samples);
	add_num(b, "spread", c->timing.spread * 100, "%.1f%%");
	char sp[64];
	cuco_speedup_text(c->speedup, c->speedup_lo, c->speedup_hi, c->rounds, !app->crt.utf8, sp,
		sizeof sp);
	cuco_buf_printf(b, "%-14s %s", "speedup", sp);
	if (c->rounds >= 2)
		cuco_buf_printf(b, "  %s, %d paired rounds, %.4g%% interval", c->verdict ?
			cuco_verdict_name(c->verdict) : "-", c->rounds, 100 * c->confidence);
	cuco_buf_puts(b, "\n");
	add_num(b, "peak fraction", c->timing.peak_fraction * 100, "%.1f%% of peak");
	add_num(b, "max error", c->timing.max_error, "%.3g");
	if (c->slot[0])
		cuco_buf_printf(b, "slot           %s\n", c->slot);
	if (c->model[0])
		cuco_buf_printf(b, "model          %s  tokens %lld+%lld  $%.4f\n", c->model,
			(long long)c->tokens_prompt, (long long)c->tokens_completion, c->cost_usd);
	/* Every measurement, a refused one with its reason whole (a done
	 * baseline's refusal in a confirmation round is only here). */
	cuco_buf_printf(b, "%-14s %d\n", "measurements", l->nmeasurements);
	if (l->measurements.len)
		cuco_buf_append(b, l->measurements.data, l->measurements.len);
	if (l->prompt)
		add_text(b, "prompt", l->prompt, l->prompt_len);
	if (l->reply)
		add_text(b, "reply", l->reply, l->reply_len);
}

void tui_focus_load(tui_app *app)
{
	uint64_t id = app->sel_id;
	bool moved = id != app->f.id;
	tui_focus_free(&app->f);
	app->f.id = id;
	app->focus_stale = false;
	if (!id)
		return;
	struct load l = { .app = app };
	cuco_err err = { 0 };
	if (cuco_store_read(app->st, load_txn, &l, &err) != CUCO_OK) {
		tui_flash(app, "%s", err.msg);
		app->f.have = false;
	}
	if (app->f.have) {
		build_detail(app, &l);
		if (app->f.src && app->f.other_src)
			cuco_diff_compute(&app->f.diff, app->f.other_src, app->f.other_len,
				app->f.src, app->f.src_len, DIFF_CONTEXT, DIFF_MAX_D);
	}
	free(l.prompt);
	free(l.reply);
	cuco_buf_free(&l.measurements);
	/* A new candidate starts its diff and detail at the top; a reload
	 * of the same one keeps the reader's place. */
	if (moved) {
		app->panes[TUI_PANE_DIFF].top = 0;
		app->panes[TUI_PANE_DETAIL].top = 0;
	}
}
