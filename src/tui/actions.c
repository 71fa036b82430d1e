/* actions.c — what a person does from the screen, taken through
 * cuco_person_act as the CLI takes it: a mark lands on the record at once,
 * the command is queued for the engine (which applies it and says so in
 * the log) and an event names who did what, in one write transaction. So
 * a viewer attached from another process steers the same way as the
 * screen of an in-process run. The screen also views and exports sources,
 * which no engine needs to know about (an export is an event only). */
#include "tui/screen.h"
#include "env.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct action {
	cuco_command cmd;
	const char *src;       /* edit: the new source, stored first */
	size_t src_len;
};

/* Safe to repeat (cuco_store_write retries on a full map): works on a copy. */
static int action_txn(cuco_txn *txn, void *arg)
{
	const struct action *a = arg;
	cuco_command cmd = a->cmd;
	int rc;
	if (a->src && (rc = cuco_source_put(txn, a->src, a->src_len, cmd.source_hash)) != CUCO_OK)
		return rc;
	return cuco_person_act(txn, &cmd);
}

/* Take an action about the selected candidate (a hint names the one it
 * was sent from; pause and resume none); false, with the reason flashed,
 * when it was refused. */
static bool take(tui_app *app, struct action *a, cuco_command_kind kind, int island,
	const char *text)
{
	a->cmd.kind = kind;
	a->cmd.candidate = kind == CUCO_CMD_PAUSE || kind == CUCO_CMD_RESUME ? 0 : app->sel_id;
	a->cmd.island = island;
	cuco_strlcpy(a->cmd.author, app->author, sizeof a->cmd.author);
	cuco_strlcpy(a->cmd.text, text, sizeof a->cmd.text);
	/* With no engine, the flash says a hint holds for the next session:
	 * it is kept on purpose (store.h). */
	a->cmd.next_session = kind == CUCO_CMD_HINT && !tui_model_engine_live(&app->m);
	cuco_err err = { 0 };
	app->focus_stale = true;
	if (cuco_store_write(app->st, action_txn, a, &err) != CUCO_OK) {
		tui_flash(app, "not done: %s", err.msg);
		return false;
	}
	return true;
}

static bool need_candidate(tui_app *app)
{
	if (app->sel_id && app->f.have)
		return true;
	tui_flash(app, "select a candidate first");
	return false;
}

/* What becomes of an action now: the engine applies it, or it waits. */
static const char *when(tui_app *app)
{
	return tui_model_engine_live(&app->m) ? "the engine applies it next"
		: "no engine runs this search: it holds, and a resumed run applies it";
}

void tui_act_pin(tui_app *app)
{
	if (!need_candidate(app))
		return;
	struct action a = { 0 };
	bool pinned = app->f.cand.pinned;
	cuco_command_kind kind = pinned ? CUCO_CMD_UNPIN : CUCO_CMD_PIN;
	if (take(app, &a, kind, -1, ""))
		tui_flash(app, "%s #%llu (%s)", cuco_command_past(kind), (unsigned long long)app->sel_id,
			when(app));
}

static void unreject(tui_app *app)
{
	struct action a = { 0 };
	if (take(app, &a, CUCO_CMD_UNREJECT, -1, ""))
		tui_flash(app, "%s #%llu: a parent again (%s rejects it again)",
			cuco_command_past(CUCO_CMD_UNREJECT), (unsigned long long)app->sel_id,
			tui_key_name(TUI_ACT_REJECT));
}

void tui_act_reject(tui_app *app)
{
	if (!need_candidate(app))
		return;
	if (app->f.cand.status == CUCO_STATUS_REJECTED) {
		unreject(app);
		return;
	}
	if (app->f.cand.origin == CUCO_ORIGIN_BASELINE) {
		tui_flash(app, "the baseline cannot be rejected: every speedup is measured against it");
		return;
	}
	char reason[256] = "", q[400];
	char label[64];
	snprintf(label, sizeof label, "reject #%llu, reason: ", (unsigned long long)app->sel_id);
	if (!tui_prompt(app, label, reason, sizeof reason))
		return;
	snprintf(q, sizeof q, "Reject #%llu%s%s%s? y rejects, Enter/Esc cancels",
		(unsigned long long)app->sel_id, reason[0] ? " (" : "", reason, reason[0] ? ")" : "");
	if (tui_ask(app, q, "y") != 'y') {
		tui_flash(app, "not rejected");
		return;
	}
	struct action a = { 0 };
	if (take(app, &a, CUCO_CMD_REJECT, -1, reason))
		tui_flash(app, "%s #%llu (%s; %s on it takes it back)", cuco_command_past(CUCO_CMD_REJECT),
			(unsigned long long)app->sel_id, when(app), tui_key_name(TUI_ACT_REJECT));
}

void tui_act_hint(tui_app *app, int island)
{
	if (!app->m.hints) {
		tui_flash(app, "strategy %s writes no prompts: a hint would reach nothing",
			app->m.strategy[0] ? app->m.strategy : "-");
		return;
	}
	char text[512] = "", label[64];
	if (island >= 0)
		snprintf(label, sizeof label, "hint to island %d: ", island);
	else
		snprintf(label, sizeof label, "hint to every island: ");
	if (!tui_prompt(app, label, text, sizeof text) || !text[0])
		return;
	struct action a = { 0 };
	if (take(app, &a, CUCO_CMD_HINT, island, text))
		tui_flash(app, "hint for %s: %s", island >= 0 ? "the island" : "every island", when(app));
}

void tui_act_pause(tui_app *app)
{
	if (!tui_model_engine_live(&app->m)) {
		tui_flash(app, "the run has %s: nothing to pause", tui_model_state_text(&app->m));
		return;
	}
	struct action a = { 0 };
	cuco_command_kind kind = app->m.paused ? CUCO_CMD_RESUME : CUCO_CMD_PAUSE;
	if (take(app, &a, kind, -1, ""))
		tui_flash(app, "%s: the engine applies it between evaluations", cuco_command_name(kind));
}

static int export_txn(cuco_txn *txn, void *arg)
{
	cuco_event ev = *(const cuco_event *)arg;
	return cuco_event_add(txn, &ev);
}

void tui_act_export(tui_app *app)
{
	if (!need_candidate(app))
		return;
	if (!app->f.src) {
		tui_flash(app, "#%llu has no stored source", (unsigned long long)app->sel_id);
		return;
	}
	char path[512];
	snprintf(path, sizeof path, "cand-%llu%s", (unsigned long long)app->sel_id,
		strstr(app->f.src, "__global__") ? ".cu" : ".c");
	if (!tui_prompt(app, "export to (typing replaces, arrows edit): ", path, sizeof path) || !path[0])
		return;
	struct stat sb;
	if (stat(path, &sb) == 0) {
		char q[600];
		snprintf(q, sizeof q, "%s exists. Overwrite it? y overwrites, Enter/Esc cancels", path);
		if (tui_ask(app, q, "y") != 'y') {
			tui_flash(app, "not exported: %s left as it was", path);
			return;
		}
	}
	cuco_err err = { 0 };
	if (cuco_write_file(path, app->f.src, app->f.src_len, &err) != CUCO_OK) {
		tui_flash(app, "not exported: %s", err.msg);
		return;
	}
	cuco_event ev = { .kind = CUCO_EVENT_EXPORT, .candidate = app->sel_id };
	cuco_strlcpy(ev.author, app->author, sizeof ev.author);
	snprintf(ev.text, sizeof ev.text, "#%llu to %.400s", (unsigned long long)app->sel_id, path);
	if (cuco_store_write(app->st, export_txn, &ev, &err) != CUCO_OK)
		tui_flash(app, "wrote %s (not in the log: %s)", path, err.msg);
	else
		tui_flash(app, "wrote %s", path);
}

void tui_act_source(tui_app *app)
{
	if (!need_candidate(app))
		return;
	if (!app->f.src) {
		tui_flash(app, "#%llu has no stored source", (unsigned long long)app->sel_id);
		return;
	}
	cuco_buf b = { 0 };
	int line = 1;
	for (const char *s = app->f.src, *end = s + app->f.src_len; s < end; line++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		cuco_buf_printf(&b, "%5d  ", line);
		for (size_t k = 0; k < len; k++)  /* tabs would jump past the box */
			cuco_buf_append(&b, s[k] == '\t' ? "    " : s + k, s[k] == '\t' ? 4 : 1);
		cuco_buf_puts(&b, "\n");
		s += len + 1;
	}
	char title[64];
	snprintf(title, sizeof title, "#%llu source, %d lines", (unsigned long long)app->sel_id, line - 1);
	tui_popup(app, title, b.data ? b.data : "");
	cuco_buf_free(&b);
}

/* ---- edit ----------------------------------------------------------------- */

/* Run the editor on path with the screen suspended; returns its exit status,
 * or -1 when it could not run. */
static int run_editor(const char *path)
{
	const char *ed = cuco_env_get()->visual;
	if (!ed || !*ed)
		ed = cuco_env_get()->editor;
	if (!ed || !*ed)
		ed = "vi";
	/* Through sh, so EDITOR="code -w" works; the path goes as $1, unquoted by nobody. */
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s \"$1\"", ed);
	tui_crt_suspend();
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, "sh", path, (char *)NULL);
		_exit(127);
	}
	/* The editor owns the terminal: ^C is its business, not ours. */
	struct sigaction ign = { 0 }, old_int, old_quit;
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	int status = -1;
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	tui_crt_resume();
	if (pid < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void tui_act_edit(tui_app *app)
{
	if (!need_candidate(app))
		return;
	if (!app->f.src) {
		tui_flash(app, "#%llu has no stored source to edit", (unsigned long long)app->sel_id);
		return;
	}
	char path[1024];
	snprintf(path, sizeof path, "%s/cuco-edit-%llu-XXXXXX.c", cuco_tmp_dir(),
		(unsigned long long)app->sel_id);
	int fd = mkstemps(path, 2);
	if (fd < 0) {
		tui_flash(app, "%s: cannot create: %s", path, strerror(errno));
		return;
	}
	bool written = write(fd, app->f.src, app->f.src_len) == (ssize_t)app->f.src_len;
	close(fd);
	int status = written ? run_editor(path) : -1;
	char *text = NULL;
	size_t len = 0;
	cuco_err err = { 0 };
	bool read_back = status == 0 && cuco_read_file(path, 16 << 20, &text, &len, &err) == CUCO_OK;
	unlink(path);
	if (!written)
		tui_flash(app, "%s: write failed", path);
	else if (status != 0)
		tui_flash(app, "editor exited with status %d: nothing saved", status);
	else if (!read_back)
		tui_flash(app, "%s", err.msg);
	else if (len == app->f.src_len && memcmp(text, app->f.src, len) == 0)
		tui_flash(app, "unchanged: nothing saved");
	else {
		struct action a = { .src = text, .src_len = len };
		if (take(app, &a, CUCO_CMD_EDIT, -1, ""))
			tui_flash(app, "edit of #%llu stored: %s", (unsigned long long)app->sel_id,
				!tui_model_engine_live(&app->m) ? "no engine runs this search; a resumed run evaluates it"
				: app->m.state == TUI_RUN_RETIMING ? "the run is re-timing its best; a resumed run evaluates it"
				: "the engine evaluates it as a human candidate");
	}
	free(text);
	app->focus_stale = true;
}
