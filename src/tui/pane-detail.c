/* pane-detail.c — the selected candidate in full: directive, metrics,
 * failure, model and cost, then the prompt and the reply behind it. */
#include "tui/screen.h"

#include <string.h>

static void draw(tui_app *app, tui_pane *p)
{
	const tui_focus *f = &app->f;
	int view = p->h - 2, w = p->w - 2;
	if (!f->have) {
		wattrset(p->win, app->crt.attr[TUI_EL_DIM]);
		tui_put(p->win, 1, 2, "no candidate selected", w - 2);
		p->lines = 0;
		return;
	}
	/* Wrapped to the pane: a note or an excerpt is read whole. */
	cuco_buf wrapped = { 0 };
	tui_wrap(f->detail.data ? f->detail.data : "", w, &wrapped);
	const char *s = wrapped.data ? wrapped.data : "";
	int line = 0;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		int r = line++ - p->top;
		if (r >= 0 && r < view) {
			char text[512];
			if (len >= sizeof text)
				len = sizeof text - 1;
			memcpy(text, s, len);
			text[len] = '\0';
			for (char *c = text; *c; c++)
				if (*c == '\t')
					*c = ' ';
			tui_element el = strncmp(text, "-- ", 3) == 0 ? TUI_EL_TITLE
				: strncmp(text, "failed", 6) == 0 ? TUI_EL_BAD : TUI_EL_NORMAL;
			wattrset(p->win, app->crt.attr[el]);
			tui_put(p->win, 1 + r, 1, text, w);
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	cuco_buf_free(&wrapped);
	p->lines = line;
}

static tui_result act(tui_app *app, tui_pane *p, tui_action a)
{
	(void)app;
	return tui_scroll_act(p, a, p->h - 2);
}

static void explain(tui_app *app, cuco_buf *out)
{
	const tui_focus *f = &app->f;
	cuco_buf_puts(out, "The optimization directive every candidate states before its code:\n\n");
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		cuco_buf_printf(out, "%s\n  %s\n", cuco_dirdim_name((cuco_dirdim)i), tui_teach_dim(&app->m, i));
	cuco_buf_puts(out, "\nMetrics: latency is per iteration after warm-up (min/median/p90 of the\n"
		"timed repetitions); spread is (max-min)/min; speedup is the baseline's median over\n"
		"this one's, measured in the same run; peak fraction is the share of the hardware's\n"
		"theoretical bandwidth/flops the kernel reaches (AccelOpt's score).\n");
	if (f->have) {
		cuco_buf_printf(out, "\nThis candidate: %s (%s), %s (%s).\n",
			cuco_origin_name(f->cand.origin), cuco_origin_help(f->cand.origin),
			cuco_status_name(f->cand.status), cuco_status_help(f->cand.status));
		if (f->cand.failure.error_class[0])
			cuco_buf_printf(out, "Failure class %s: %s\n", f->cand.failure.error_class,
				tui_teach_error(f->cand.failure.error_class));
	}
	cuco_buf_puts(out, "\nFailure classes:\n");
	for (int i = 0; i < CUCO_FAIL_COUNT; i++)
		cuco_buf_printf(out, "  %-14s %s\n", cuco_fail_name((cuco_fail_class)i),
			cuco_fail_help((cuco_fail_class)i));
}

const tui_pane_ops tui_pane_detail = {
	.title = "detail", .context = TUI_IN_DETAIL, .draw = draw, .act = act, .explain = explain,
};
