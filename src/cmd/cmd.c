/* cmd.c — the command table and the helpers every command shares. */
#include "cmd/cmd.h"

#include "agents/agents.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line per command, in the order `cuco --help` lists them. */
const cuco_cmd *const cuco_commands[] = {
	&cmd_run,
	&cmd_ls,
	&cmd_show,
	&cmd_diff,
	&cmd_export,
	&cmd_pin,
	&cmd_unpin,
	&cmd_reject,
	&cmd_unreject,
	&cmd_report,
	&cmd_compare,
	&cmd_patch,
	&cmd_pause,
	&cmd_resume,
	&cmd_stop,
	&cmd_hint,
	&cmd_tui,
	&cmd_init,
	&cmd_analyze,
	&cmd_check,
	&cmd_workloads,
	&cmd_doctor,
	&cmd_memory,
	NULL,
};

const cuco_cmd *cmd_find(const char *name)
{
	for (int i = 0; cuco_commands[i]; i++)
		if (strcmp(cuco_commands[i]->name, name) == 0)
			return cuco_commands[i];
	return NULL;
}

int cmd_fail(const cuco_err *err)
{
	fprintf(stderr, "cuco: %s\n", err->msg);
	/* A lookup miss reaches the user as bad input (exit 2). */
	return (err->code && err->code != CUCO_ENOTFOUND) ? err->code : CUCO_EDATA;
}

int cmd_usage_error(const cuco_cmd *cmd, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	fprintf(stderr, "cuco: %s: %s (see 'cuco %s --help')\n", cmd->name, what, cmd->name);
	return CUCO_EUSAGE;
}

int cmd_bad_option(const cuco_cmd *cmd, const struct option *longopts, char **argv)
{
	const char *word = argv[optind - 1] ? argv[optind - 1] : "";
	bool long_form = strncmp(word, "--", 2) == 0;
	for (const struct option *o = longopts; optopt && o->name; o++)
		if (o->val == optopt) {
			char as[80];
			if (long_form)
				snprintf(as, sizeof as, "--%s", o->name);
			else
				snprintf(as, sizeof as, "-%c", optopt);
			return o->has_arg == required_argument
				? cmd_usage_error(cmd, "%s needs a value", as)
				: cmd_usage_error(cmd, "%s takes no value", as);
		}
	if (optopt)
		return cmd_usage_error(cmd, "unknown option -%c", optopt);
	if (!long_form)
		return cmd_usage_error(cmd, "unknown option %s", word);
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(word + 2, "="), word + 2);
	const char *names[64];
	size_t n = 0;
	for (const struct option *o = longopts; o->name && n < 64; o++)
		names[n++] = o->name;
	const char *near = cuco_nearest(name, names, n);
	if (near)
		return cmd_usage_error(cmd, "unknown option --%s; did you mean --%s?", name, near);
	return cmd_usage_error(cmd, "unknown option %s", word);
}

void cmd_print_usage(const cuco_cmd *cmd, const char *options)
{
	printf("usage: cuco %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (options && *options)
		printf("\noptions:\n%s", options);
}

const char *cmd_run_dir(const char *opt)
{
	if (opt && *opt)
		return opt;
	const char *env = getenv("CUCO_RUN");
	if (env && *env)
		return env;
	return "runs/latest";
}

int cmd_open_store(const char *run_dir, unsigned flags, cuco_store **st)
{
	cuco_err err = { 0 };
	if (cuco_store_open(run_dir, flags, st, &err) != CUCO_OK)
		return cmd_fail(&err);
	return CUCO_OK;
}

static int find_best(cuco_txn *txn, void *arg)
{
	cuco_summary s;
	int rc = cuco_best(txn, &s);
	if (rc == CUCO_OK)
		*(uint64_t *)arg = s.id;
	return rc;
}

struct find_origin { cuco_origin origin; uint64_t id; };

static int find_origin(cuco_txn *txn, void *arg)
{
	struct find_origin *fo = arg;
	cuco_summary *sums = NULL;
	size_t n = 0;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	/* The latest one: a resumed run re-measures its baseline. */
	for (size_t i = n; i-- > 0;)
		if (sums[i].origin == fo->origin) {
			fo->id = sums[i].id;
			break;
		}
	free(sums);
	return fo->id ? CUCO_OK : cuco_txn_fail(txn, CUCO_ENOTFOUND, "no %s candidate yet",
		cuco_origin_name(fo->origin));
}

int cmd_resolve_id(cuco_store *st, const char *text, uint64_t *id)
{
	cuco_err err = { 0 };
	if (strcmp(text, "best") == 0) {
		if (cuco_store_read(st, find_best, id, &err) != CUCO_OK) {
			if (err.code == CUCO_ENOTFOUND)
				cuco_errf(&err, CUCO_EDATA, "%s: no finished candidate yet", cuco_store_dir(st));
			return cmd_fail(&err);
		}
		return CUCO_OK;
	}
	if (strcmp(text, "baseline") == 0 || strcmp(text, "seed") == 0) {
		struct find_origin fo = { text[0] == 'b' ? CUCO_ORIGIN_BASELINE : CUCO_ORIGIN_SEED, 0 };
		if (cuco_store_read(st, find_origin, &fo, &err) != CUCO_OK) {
			err.code = CUCO_EDATA;
			return cmd_fail(&err);
		}
		*id = fo.id;
		return CUCO_OK;
	}
	char *end = NULL;
	unsigned long long v = strtoull(text, &end, 10);
	if (!*text || *end || v == 0) {
		cuco_errf(&err, CUCO_EUSAGE, "%s: not a candidate id (a number, best, baseline or seed)", text);
		return cmd_fail(&err);
	}
	*id = v;
	return CUCO_OK;
}

void cmd_config_read(cmd_config *c)
{
	memset(&c->err, 0, sizeof c->err);
	c->rc = cuco_config_read(&c->file, &c->err);
	if (c->rc != CUCO_OK)
		cuco_config_defaults(&c->file);
}

const char *cmd_default_theme(const cmd_config *c, char *buf, size_t size)
{
	const char *env = getenv("CUCO_THEME");
	if (env && *env)
		return env;
	/* A config that does not load is reported by the commands that need
	 * it; the screen then opens in its default theme. */
	if (c->rc != CUCO_OK || !c->file.theme[0])
		return NULL;
	cuco_strlcpy(buf, c->file.theme, size);
	return buf;
}

cuco_err *cmd_default_theme_error(const char *theme, const char *buf, cuco_err *err)
{
	char msg[sizeof err->msg], path[1024] = "$CUCO_THEME";
	cuco_strlcpy(msg, err->msg, sizeof msg);
	if (theme == buf && !cuco_llm_config_path(path, sizeof path))
		cuco_strlcpy(path, "config", sizeof path);
	cuco_errf(err, CUCO_EDATA, "%s%s: %s", path, theme == buf ? ": [screen] theme" : "", msg);
	return err;
}

int cmd_runner_config(const cmd_config *c, const cmd_runner_flags *f, cuco_runner_config *out,
	cuco_err *err)
{
	if (c->rc != CUCO_OK) {
		*err = c->err;
		return c->rc;
	}
	*out = c->file.runner;
	if (f->hostfile) {
		cuco_strlcpy(out->hostfile, f->hostfile, sizeof out->hostfile);
		out->kind = CUCO_RUNNER_HOSTFILE;
	}
	if (f->kind && !cuco_runner_parse(f->kind, &out->kind))
		return cuco_errf(err, CUCO_EUSAGE, "--runner %s: not local, hostfile, slurm or ssh", f->kind);
	if (f->hosts)
		cuco_strlcpy(out->hosts, f->hosts, sizeof out->hosts);
	return CUCO_OK;
}

int cmd_runner_option(const cuco_cmd *cmd, int opt, const char *arg, cmd_runner_flags *f)
{
	cuco_runner_kind kind;
	const cuco_runner_config *r = NULL;  /* for the fields' sizes only */
	switch (opt) {
	case CMD_OPT_RUNNER:
		if (!cuco_runner_parse(arg, &kind))
			return cmd_usage_error(cmd, "--runner %s: not local, hostfile, slurm or ssh", arg);
		f->kind = arg;
		return CUCO_OK;
	case CMD_OPT_HOSTFILE:
		if (!*arg || strlen(arg) >= sizeof r->hostfile)
			return cmd_usage_error(cmd, "--hostfile: empty or too long");
		f->hostfile = arg;
		return CUCO_OK;
	default:
		if (!*arg || strlen(arg) >= sizeof r->hosts)
			return cmd_usage_error(cmd, "--hosts: empty or too long");
		f->hosts = arg;
		return CUCO_OK;
	}
}

int cmd_sandbox_mode(const cmd_config *c, cuco_sandbox_mode *mode, cuco_err *err)
{
	const char *env = getenv("CUCO_SANDBOX");
	if (*mode != CUCO_SANDBOX_DEFAULT || (env && *env))
		return CUCO_OK;
	*mode = c->file.sandbox;
	if (c->rc != CUCO_OK)
		*err = c->err;
	return c->rc;
}

void cmd_author(char *buf, size_t size)
{
	const char *user = getenv("USER");
	char host[128] = "localhost";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	snprintf(buf, size, "%s@%s", user && *user ? user : "user", host);
}

static int act_txn(cuco_txn *txn, void *arg)
{
	cuco_command *cmd = arg;
	return cuco_person_act(txn, cmd);
}

int cmd_act(cuco_store *st, cuco_command *cmd)
{
	cuco_err err = { 0 };
	return cuco_store_write(st, act_txn, cmd, &err) == CUCO_OK ? CUCO_OK : cmd_fail(&err);
}
