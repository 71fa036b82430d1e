/* loop.c — the workbench loop (htop's ScreenManager): it waits, reads
 * keys, hands each action to the focused pane and then to the screen's
 * own actions, and draws again only when one of them says so.
 *
 * One UI thread owns the terminal. Each turn it waits in poll() on the
 * keyboard and, in-process, the engine's wake fd; attached from another
 * process it wakes a few times a second to look at the store's last event
 * sequence (tui_refresh). Between keys it steps a running search and the
 * tokens/cost sums a chunk at a time. Dialogs (prompts, help,
 * explanations) keep the same rhythm (dialog.c), so the screen behind
 * them stays live. */
#include "tui/screen.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ATTACHED_POLL_MS 250   /* a viewer in another process polls the store */
#define IN_PROCESS_POLL_MS 1000 /* in-process the wake fd says when; the clock ticks */
#define SUM_CHUNK 100          /* candidates summed for tokens/cost per turn */

static const tui_pane_ops *const pane_ops[TUI_PANE_COUNT] = {
	&tui_pane_islands, &tui_pane_tree, &tui_pane_diff, &tui_pane_phases, &tui_pane_detail,
	&tui_pane_log,
};

/* ---- the screen's own actions --------------------------------------------- */

static tui_result focus_pane(tui_app *app, int pane)
{
	bool below = app->narrow && pane != TUI_PANE_TREE && app->lower != pane;
	app->focus = pane;
	if (below)
		app->lower = pane;
	return TUI_HANDLED | (below || app->zoom ? TUI_RELAYOUT : TUI_REDRAW);
}

static tui_result cycle_focus(tui_app *app, int dir)
{
	int k = 0;
	while (k < app->norder && app->order[k] != app->focus)
		k++;
	k = (k + (dir > 0 ? 1 : app->norder - 1)) % app->norder;
	return focus_pane(app, app->order[k]);
}

static void explain(tui_app *app)
{
	cuco_buf b = { 0 };
	const tui_pane_ops *ops = app->panes[app->focus].ops;
	ops->explain(app, &b);
	tui_popup(app, "explain", b.data ? b.data : "");
	cuco_buf_free(&b);
}

static void help(tui_app *app)
{
	cuco_buf b = { 0 };
	cuco_buf_puts(&b, "Keys (the same table drives the keys, this help and the hint bar):\n\n");
	tui_keys_help(&b);
	cuco_buf_puts(&b, "\nMouse: click focuses a pane and selects a row; the wheel scrolls.\n"
		"Every action of yours is stored with your name, on the candidate at once and as a "
		"command for the engine, which applies it and says so in the log; confirmations "
		"default to cancel (Enter or Esc cancels).\n");
	tui_popup(app, "help", b.data);
	cuco_buf_free(&b);
}

static void quit(tui_app *app)
{
	/* A viewer never stops a detached run; a run that ended has nothing to stop. */
	if (!app->opt->in_process || !tui_model_engine_live(&app->m)) {
		app->quit = true;
		return;
	}
	int ch = tui_ask(app, "Quit: y stops the search, n leaves it running, Esc stays", "yn");
	if (ch == 'y' || ch == 'n') {
		app->stop_run = ch == 'y';
		app->quit = true;
	}
}

static void mark(tui_app *app)
{
	if (!app->sel_id)
		return;
	app->mark_id = app->mark_id == app->sel_id ? 0 : app->sel_id;
	app->focus_stale = true;
	if (app->mark_id)
		tui_flash(app, "marked #%llu: the diff now compares against it (%s again to clear)",
			(unsigned long long)app->mark_id, tui_key_name(TUI_ACT_MARK));
}

static tui_result screen_act(tui_app *app, tui_action a)
{
	switch (a) {
	case TUI_ACT_FOCUS_NEXT: return cycle_focus(app, 1);
	case TUI_ACT_FOCUS_PREV: return cycle_focus(app, -1);
	case TUI_ACT_ZOOM:
		app->zoom = !app->zoom;
		return TUI_HANDLED | TUI_RELAYOUT;
	case TUI_ACT_PIN: tui_act_pin(app); break;
	case TUI_ACT_REJECT: tui_act_reject(app); break;
	case TUI_ACT_EDIT: tui_act_edit(app); break;
	case TUI_ACT_HINT: tui_act_hint(app, app->f.have ? app->f.cand.island : -1); break;
	case TUI_ACT_PAUSE: tui_act_pause(app); break;
	case TUI_ACT_EXPORT: tui_act_export(app); break;
	case TUI_ACT_SOURCE: tui_act_source(app); break;
	case TUI_ACT_MARK: mark(app); break;
	case TUI_ACT_EXPLAIN: explain(app); break;
	case TUI_ACT_HELP: help(app); break;
	case TUI_ACT_REDRAW: clearok(curscr, TRUE); break;
	case TUI_ACT_QUIT: quit(app); break;
	default: return TUI_IGNORED;
	}
	return TUI_HANDLED | TUI_REDRAW;
}

/* ---- keys and the mouse ---------------------------------------------------- */

static tui_result mouse(tui_app *app)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return TUI_IGNORED;
	for (int i = 0; i < TUI_PANE_COUNT; i++) {
		tui_pane *p = &app->panes[i];
		if (!p->win || !p->shown || ev.y < p->y || ev.y >= p->y + p->h || ev.x < p->x ||
				ev.x >= p->x + p->w)
			continue;
		tui_result r = focus_pane(app, i);
		tui_action a = ev.bstate & BUTTON4_PRESSED ? TUI_ACT_UP
			: ev.bstate & BUTTON5_PRESSED ? TUI_ACT_DOWN : TUI_ACT_NONE;
		if (a != TUI_ACT_NONE)
			for (int k = 0; k < 3; k++)
				r |= p->ops->act(app, p, a);
		else if (p->ops->click)
			r |= p->ops->click(app, p, ev.y - p->y);
		return r;
	}
	return TUI_IGNORED;
}

static tui_result key(tui_app *app, int ch)
{
	if (ch == KEY_RESIZE) {
		clearok(curscr, TRUE);
		return TUI_RELAYOUT;
	}
	if (app->too_small) {
		if (ch == tui_binding_of(TUI_ACT_QUIT)->key)
			app->quit = true;
		return TUI_IGNORED;
	}
	if (ch == KEY_MOUSE)
		return mouse(app);
	tui_action a = tui_key_action(ch);
	if (a == TUI_ACT_NONE)
		return TUI_IGNORED;
	app->search_jump = false;  /* a person moving on does not want to be moved */
	/* Keys typed ahead act on what the cursor is on now, not on the last frame. */
	tui_result r = app->focus_stale ? TUI_REDRAW : TUI_IGNORED;
	if (app->focus_stale)
		tui_focus_load(app);
	tui_pane *p = &app->panes[app->focus];
	tui_result acted = p->ops->act(app, p, a);
	return r | (acted & TUI_HANDLED ? acted : screen_act(app, a));
}

/* ---- the loop ------------------------------------------------------------- */

/* Between keys: a running search or the usage sums take a step; true
 * when what is shown moved. */
static bool step(tui_app *app, bool searching, bool summing, bool dirty)
{
	if (searching) {
		tui_model_search_step(&app->m, app->st, TUI_SEARCH_CHUNK);
		if (app->search_jump && (app->m.nmatch || app->m.searched >= app->m.n)) {
			app->search_jump = false;
			tui_tree_next_match(app, 1);
		}
		return true;
	}
	if (summing) {
		tui_model_sum_step(&app->m, app->st, SUM_CHUNK);
		if (!dirty)
			tui_draw_status(app);
	}
	return false;
}

static void loop(tui_app *app)
{
	bool dirty = true;
	time_t shown_second = 0;
	while (!app->quit && !tui_crt_interrupted()) {
		time_t now = time(NULL);
		bool flash_over = app->flash[0] && cuco_mono() >= app->flash_until;
		if (flash_over)
			app->flash[0] = '\0';
		if (dirty || app->focus_stale)
			tui_draw(app);
		else if (!app->too_small && (now != shown_second || flash_over)) {
			/* Only the clock (or a flash ending) changed. */
			tui_draw_status(app);
			tui_draw_hints(app);
		}
		shown_second = now;
		doupdate();
		dirty = false;

		bool summing = tui_model_summing(&app->m);
		bool searching = app->m.search[0] && app->m.searched < app->m.n;
		struct pollfd pfd[2] = { { STDIN_FILENO, POLLIN, 0 }, { app->wake_fd, POLLIN, 0 } };
		int wait = summing || searching ? 0 : app->wake_fd >= 0 ? IN_PROCESS_POLL_MS : ATTACHED_POLL_MS;
		int rc = poll(pfd, app->wake_fd >= 0 ? 2 : 1, wait);
		if (rc < 0 && errno != EINTR)
			break;
		int ch;
		while ((ch = getch()) != ERR && !app->quit) {
			tui_result r = key(app, ch);
			if (r & TUI_RELAYOUT)
				tui_layout(app);
			dirty |= (r & (TUI_REDRAW | TUI_RELAYOUT)) != 0;
		}
		bool woke = app->wake_fd >= 0 && rc > 0 && (pfd[1].revents & POLLIN);
		if (woke)
			tui_drain(app->wake_fd);
		if (app->wake_fd < 0 || woke || rc == 0)
			dirty |= tui_refresh(app);
		dirty |= step(app, searching, summing, dirty);
	}
}

int cuco_tui_theme_check(const char *theme, cuco_err *err)
{
	tui_theme t;
	return theme ? tui_theme_load(&t, theme, err) : CUCO_OK;
}

int cuco_tui_run(cuco_store *st, int wake_fd, const cuco_tui_options *opt,
	bool *stop_run, cuco_err *err)
{
	tui_app *app = cuco_xcalloc(1, sizeof *app);
	app->st = st;
	app->wake_fd = wake_fd;
	app->opt = opt;
	cuco_strlcpy(app->author, opt->author && *opt->author ? opt->author : "user", sizeof app->author);
	for (int i = 0; i < TUI_PANE_COUNT; i++) {
		app->panes[i].ops = pane_ops[i];
		app->panes[i].state = pane_ops[i]->state_size ? cuco_xcalloc(1, pane_ops[i]->state_size) : NULL;
	}
	app->focus = TUI_PANE_TREE;
	app->lower = TUI_PANE_DETAIL;
	tui_model_init(&app->m, opt->in_process);
	int rc = tui_model_refresh(&app->m, st, true, NULL, err);
	if (rc == CUCO_OK) {
		tui_model_check_engine(&app->m);
		rc = tui_crt_init(&app->crt, opt->theme, opt->no_color, opt->ascii, err);
	}
	if (rc == CUCO_OK) {
		cuco_log_quiet(true);  /* stderr belongs to curses now */
		nodelay(stdscr, TRUE);
		tui_layout(app);
		tui_reload(app);
		loop(app);
		for (int i = 0; i < TUI_PANE_COUNT; i++)
			if (app->panes[i].win)
				delwin(app->panes[i].win);
		tui_crt_done();
		cuco_log_quiet(false);
	}
	/* SIGTERM/SIGHUP/SIGINT during an in-process run stop the search too. */
	if (stop_run)
		*stop_run = app->stop_run || (opt->in_process && tui_crt_interrupted());
	for (int i = 0; i < TUI_PANE_COUNT; i++)
		free(app->panes[i].state);
	tui_focus_free(&app->f);
	tui_model_free(&app->m);
	free(app);
	return rc;
}
