/* cmd-ctl.c — `cuco pause`, `cuco resume`, `cuco stop`, `cuco hint`:
 * steer a running search from another shell.
 *
 * Each queues a command in the run's store through cuco_person_act, as the
 * screen does, with an event naming who asked; the session driving the run
 * applies it between candidates (within a second) and acknowledges it with
 * what it did, which the screen's log then shows. With no session driving
 * the run the command is refused (exit 3): it would otherwise wait for one
 * that may come much later and act on it unasked. A pause or a hint may be
 * kept for the next session on purpose (--next-session); that session
 * applies it first and says so. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

/* Whether a command means anything to a session that starts later: a
 * pause (it starts paused) and a hint (its prompts), not a resume or a
 * stop. */
static bool keeps(cuco_command_kind kind)
{
	return kind == CUCO_CMD_PAUSE || kind == CUCO_CMD_HINT;
}

/* Every command here takes all three options, to refuse one that means
 * nothing to it in its own words; each lists only its own. */
#define CTL_OPTIONS(X, island, later) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_ISLAND, "island", 0, "N", island, "only this island's prompts (default: every island)") \
	X(O_LATER, "next-session", 0, NULL, later, "with no session driving the run, keep it for the " \
		"next one (the next 'cuco run' on it applies it and says so)")
#define CTL_HINT(X) CTL_OPTIONS(X, 0, 0)
#define CTL_PAUSE(X) CTL_OPTIONS(X, CMD_OPT_HIDDEN, 0)
#define CTL_ELSE(X) CTL_OPTIONS(X, CMD_OPT_HIDDEN, CMD_OPT_HIDDEN)
CMD_TABLE(hint_options, CTL_HINT);
static const cmd_option pause_options[] = { CTL_PAUSE(CMD_OPTION_ROW) };
static const cmd_option ctl_options[] = { CTL_ELSE(CMD_OPTION_ROW) };

static int ctl_exec(const cuco_cmd *self, cuco_command_kind kind, int argc, char **argv)
{
	cuco_command cmd = { .kind = kind, .island = -1 };
	bool later = false;
	int o;
	cmd_args a = CMD_ARGS(self, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		switch (o) {
		case O_ISLAND: {
			char *end = NULL;
			long v = strtol(a.value, &end, 10);
			if (kind != CUCO_CMD_HINT)
				return cmd_usage_error(self, "--island is for hint only");
			if (!*a.value || *end || v < 0 || v > INT_MAX)
				return cmd_usage_error(self, "--island %s: not an island number", a.value);
			cmd.island = (int)v;
			break;
		}
		case O_LATER:
			if (!keeps(kind))
				return cmd_usage_error(self, "--next-session: a %s means nothing to a session "
					"that has not started", cuco_command_name(kind));
			later = true;
			break;
		}
	}
	bool hint = kind == CUCO_CMD_HINT;
	if (!cmd_operands(&a, hint, hint ? a.argc : 0, hint ? "expected the hint's TEXT" : NULL))
		return a.rc;
	for (int i = 0; i < a.nargs; i++) {  /* a hint's words join with spaces, unquoted */
		size_t used = strlen(cmd.text);
		if (snprintf(cmd.text + used, sizeof cmd.text - used, "%s%s", i ? " " : "", a.args[i]) >=
				(int)(sizeof cmd.text - used))
			return cmd_usage_error(self, "hint longer than %zu bytes", sizeof cmd.text - 1);
	}
	cmd_author(cmd.author, sizeof cmd.author);

	const char *dir = a.run;
	cuco_store *st = NULL;
	int rc = cmd_open_store(dir, 0, &st);
	if (rc != CUCO_OK)
		return rc;
	bool driven = cuco_run_driven(dir);
	if (!driven && !later) {
		cuco_store_close(st);
		cuco_err err;
		cuco_errf(&err, CUCO_EENV, "%s: no cuco run drives this run, so nothing would apply the %s%s", dir,
			cuco_command_name(kind), keeps(kind) ? " (--next-session keeps it for the next "
			"'cuco run' on it)" : "");
		return cmd_fail(&err);
	}
	cmd.next_session = !driven;
	rc = cmd_act(st, &cmd);
	cuco_store_close(st);
	if (rc != CUCO_OK)
		return rc;
	if (driven)
		printf("queued %s as command %llu in %s; the session driving it applies it between "
			"candidates\n", cuco_command_name(kind), (unsigned long long)cmd.seq, dir);
	else
		printf("kept %s as command %llu in %s for the next 'cuco run' on it, which applies it "
			"first and says so\n", cuco_command_name(kind), (unsigned long long)cmd.seq, dir);
	return CUCO_OK;
}

static int pause_exec(int argc, char **argv) { return ctl_exec(&cmd_pause, CUCO_CMD_PAUSE, argc, argv); }
static int resume_exec(int argc, char **argv) { return ctl_exec(&cmd_resume, CUCO_CMD_RESUME, argc, argv); }
static int stop_exec(int argc, char **argv) { return ctl_exec(&cmd_stop, CUCO_CMD_STOP, argc, argv); }
static int hint_exec(int argc, char **argv) { return ctl_exec(&cmd_hint, CUCO_CMD_HINT, argc, argv); }

#define CTL_NOTES "Options may come anywhere on the line; with no session driving the run the\n" \
	"command is refused (exit 3)"
#define CTL_NOTES_KEPT CTL_NOTES " unless --next-session keeps it.\n"

const cuco_cmd cmd_pause = { "pause", "",
	"pause a running search: model calls in flight are cancelled, evaluations in flight "
	"finish, no new ones start", pause_exec, CMD_OPTIONS(pause_options), CTL_NOTES_KEPT };
const cuco_cmd cmd_resume = { "resume", "", "resume a paused search", resume_exec,
	CMD_OPTIONS(ctl_options), CTL_NOTES ".\n" };
const cuco_cmd cmd_stop = { "stop", "",
	"end a running search: model calls in flight are cancelled, evaluations in flight "
	"finish (resumable)", stop_exec, CMD_OPTIONS(ctl_options), CTL_NOTES ".\n" };
const cuco_cmd cmd_hint = { "hint", "TEXT", "add a hint to the LLM strategies' next prompts", hint_exec,
	CMD_OPTIONS(hint_options), CTL_NOTES_KEPT };
