/* actions.c — what a person does from the screen. Each action is queued
 * as a command for the engine and recorded as an event with its author, in
 * one write transaction; the engine applies commands and acknowledges
 * them, so a viewer attached from another process steers the same way as
 * the screen of an in-process run. */
#include "tui/screen.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct action {
	cuco_command cmd;
	cuco_event ev;
	const char *src;       /* edit: the new source, stored first */
	size_t src_len;
	bool event_only;       /* export: nothing for the engine to do */
};

/* Safe to repeat (cuco_store_write retries on a full map): works on copies. */
static int action_txn(cuco_txn *txn, void *arg)
{
	const struct action *a = arg;
	cuco_command cmd = a->cmd;
	cuco_event ev = a->ev;
	int rc;
	if (a->src && (rc = cuco_source_put(txn, a->src, a->src_len, cmd.source_hash)) != CUCO_OK)
		return rc;
	/* Pin, unpin and reject take effect on the record at once, as `cuco
	 * pin` does, so they hold over a run no engine drives any more; the
	 * command tells a running engine (which applies the same mark again). */
	if (cmd.kind == CUCO_CMD_PIN || cmd.kind == CUCO_CMD_UNPIN || cmd.kind == CUCO_CMD_REJECT) {
		char why[256];
		rc = cuco_cand_mark(txn, cmd.kind, cmd.candidate, cmd.text, why, sizeof why);
		if (rc == CUCO_EDATA || rc == CUCO_ENOTFOUND)
			return cuco_txn_fail(txn, CUCO_EDATA, "%s", why);
		if (rc != CUCO_OK)
			return rc;
	}
	if (!a->event_only && (rc = cuco_command_add(txn, &cmd)) != CUCO_OK)
		return rc;
	return cuco_event_add(txn, &ev);
}

/* island: the hint's target, -1 for every island and for other commands. */
static void record(tui_app *app, struct action *a, cuco_command_kind kind, int island,
	const char *event_kind, const char *text)
{
	a->cmd.kind = kind;
	a->cmd.candidate = app->sel_id;
	a->cmd.island = island;
	cuco_strlcpy(a->cmd.author, app->author, sizeof a->cmd.author);
	cuco_strlcpy(a->cmd.text, text, sizeof a->cmd.text);
	cuco_strlcpy(a->ev.kind, event_kind, sizeof a->ev.kind);
	a->ev.candidate = a->cmd.candidate;
	cuco_strlcpy(a->ev.author, app->author, sizeof a->ev.author);
	cuco_strlcpy(a->ev.text, text, sizeof a->ev.text);
	cuco_err err = { 0 };
	if (cuco_store_write(app->st, action_txn, a, &err) != CUCO_OK)
		tui_flash(app, "not recorded: %s", err.msg);
	app->focus_stale = true;
}

static bool need_candidate(tui_app *app)
{
	if (app->sel_id && app->f.have)
		return true;
	tui_flash(app, "select a candidate first");
	return false;
}

void tui_act_pin(tui_app *app)
{
	if (!need_candidate(app))
		return;
	struct action a = { 0 };
	bool pinned = app->f.cand.pinned;
	record(app, &a, pinned ? CUCO_CMD_UNPIN : CUCO_CMD_PIN, -1, pinned ? "unpin" : "pin", "");
	tui_flash(app, "%s #%llu", pinned ? "unpinned" : "pinned", (unsigned long long)app->sel_id);
}

void tui_act_reject(tui_app *app)
{
	if (!need_candidate(app))
		return;
	if (app->f.cand.origin == CUCO_ORIGIN_BASELINE) {
		tui_flash(app, "the baseline cannot be rejected: every speedup is measured against it");
		return;
	}
	char reason[256] = "", q[400];
	char label[64];
	snprintf(label, sizeof label, "reject #%llu, reason: ", (unsigned long long)app->sel_id);
	if (!tui_prompt(app, label, reason, sizeof reason))
		return;
	if (!reason[0]) {
		tui_flash(app, "not rejected: a reason is needed");
		return;
	}
	snprintf(q, sizeof q, "Reject #%llu (%s)? y = reject, Enter/Esc = cancel",
		(unsigned long long)app->sel_id, reason);
	if (tui_ask(app, q, "y") != 'y') {
		tui_flash(app, "not rejected");
		return;
	}
	struct action a = { 0 };
	record(app, &a, CUCO_CMD_REJECT, -1, "reject", reason);
	tui_flash(app, "rejected #%llu", (unsigned long long)app->sel_id);
}

void tui_act_hint(tui_app *app, int island)
{
	char text[512] = "", label[64];
	if (island >= 0)
		snprintf(label, sizeof label, "hint to island %d: ", island);
	else
		snprintf(label, sizeof label, "hint to every island: ");
	if (!tui_prompt(app, label, text, sizeof text) || !text[0])
		return;
	struct action a = { 0 };
	record(app, &a, CUCO_CMD_HINT, island, "hint", text);
	tui_flash(app, "hint queued for %s", island >= 0 ? "the island" : "every island");
}

void tui_act_pause(tui_app *app)
{
	struct action a = { 0 };
	bool paused = app->m.paused;
	uint64_t sel = app->sel_id;
	app->sel_id = 0;  /* about the run, not a candidate */
	record(app, &a, paused ? CUCO_CMD_RESUME : CUCO_CMD_PAUSE, -1, paused ? "resume" : "pause", "");
	app->sel_id = sel;
	tui_flash(app, "%s: queued for the engine", paused ? "resume" : "pause");
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
	if (!tui_prompt(app, "export to: ", path, sizeof path) || !path[0])
		return;
	cuco_err err = { 0 };
	if (cuco_write_file(path, app->f.src, app->f.src_len, &err) != CUCO_OK) {
		tui_flash(app, "%s", err.msg);
		return;
	}
	struct action a = { .event_only = true };
	record(app, &a, CUCO_CMD_COUNT, -1, "export", path);
	tui_flash(app, "wrote %s", path);
}

/* ---- edit ----------------------------------------------------------------- */

/* Run the editor on path with the screen suspended; returns its exit status,
 * or -1 when it could not run. */
static int run_editor(const char *path)
{
	const char *ed = getenv("VISUAL");
	if (!ed || !*ed)
		ed = getenv("EDITOR");
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
	const char *tmp = getenv("TMPDIR");
	char path[1024];
	snprintf(path, sizeof path, "%s/cuco-edit-%llu-XXXXXX.c", tmp && *tmp ? tmp : "/tmp",
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
		char note[64];
		snprintf(note, sizeof note, "hand edit of #%llu", (unsigned long long)app->sel_id);
		record(app, &a, CUCO_CMD_EDIT, -1, "edit", note);
		tui_flash(app, "edit of #%llu queued: the engine evaluates it as a human candidate",
			(unsigned long long)app->sel_id);
	}
	free(text);
	app->focus_stale = true;
}
