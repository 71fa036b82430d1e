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
#include <getopt.h>
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

static void ctl_help(const cuco_cmd *self, cuco_command_kind kind)
{
	char options[512];
	snprintf(options, sizeof options, "  --run DIR        the run (default $CUCO_RUN, else runs/latest)\n%s%s",
		kind == CUCO_CMD_HINT ? "  --island N       only this island's prompts (default: every island)\n" : "",
		keeps(kind) ? "  --next-session   with no session driving the run, keep it for the next one\n"
			"                   (the next 'cuco run' on it applies it and says so)\n" : "");
	cmd_print_usage(self, options);
	printf("\nOptions may come anywhere on the line; with no session driving the run the\n"
		"command is refused (exit 3)%s.\n", keeps(kind) ? " unless --next-session keeps it" : "");
}

static int ctl_exec(const cuco_cmd *self, cuco_command_kind kind, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' }, { "island", required_argument, NULL, 'i' },
		{ "next-session", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	cuco_command cmd = { .kind = kind, .island = -1 };
	const char *run = NULL;
	bool later = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 'i': {
			char *end = NULL;
			long v = strtol(optarg, &end, 10);
			if (kind != CUCO_CMD_HINT)
				return cmd_usage_error(self, "--island is for hint only");
			if (!*optarg || *end || v < 0 || v > INT_MAX)
				return cmd_usage_error(self, "--island %s: not an island number", optarg);
			cmd.island = (int)v;
			break;
		}
		case 'n':
			if (!keeps(kind))
				return cmd_usage_error(self, "--next-session: a %s means nothing to a session "
					"that has not started", cuco_command_name(kind));
			later = true;
			break;
		case 'h':
			ctl_help(self, kind);
			return CUCO_OK;
		default:
			return cmd_bad_option(self, longopts, argv);
		}
	}
	if (kind == CUCO_CMD_HINT) {
		if (optind >= argc)
			return cmd_usage_error(self, "expected the hint's TEXT");
		for (int i = optind; i < argc; i++) {  /* words join with spaces, unquoted */
			size_t used = strlen(cmd.text);
			if (snprintf(cmd.text + used, sizeof cmd.text - used, "%s%s", i > optind ? " " : "",
					argv[i]) >= (int)(sizeof cmd.text - used))
				return cmd_usage_error(self, "hint longer than %zu bytes", sizeof cmd.text - 1);
		}
	} else if (optind != argc) {
		return cmd_usage_error(self, "unexpected argument %s", argv[optind]);
	}
	cmd_author(cmd.author, sizeof cmd.author);

	const char *dir = cmd_run_dir(run);
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

const cuco_cmd cmd_pause = { "pause", "[--run DIR] [--next-session]",
	"pause a running search: model calls in flight are cancelled, evaluations in flight "
	"finish, no new ones start", pause_exec };
const cuco_cmd cmd_resume = { "resume", "[--run DIR]",
	"resume a paused search", resume_exec };
const cuco_cmd cmd_stop = { "stop", "[--run DIR]",
	"end a running search: model calls in flight are cancelled, evaluations in flight "
	"finish (resumable)", stop_exec };
const cuco_cmd cmd_hint = { "hint", "[--run DIR] [--island N] [--next-session] TEXT",
	"add a hint to the LLM strategies' next prompts", hint_exec };
