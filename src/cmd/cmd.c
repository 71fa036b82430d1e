/* cmd.c — the command table and the helpers every command shares. */
#include "cmd/cmd.h"

#include "env.h"
#include "strategies/strategies.h"

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

/* ---- the options' parser and help ------------------------------------------- */

#define HELP_WIDTH 80   /* --help's lines, at most (a word longer stays whole) */
#define HELP_COLUMN 24  /* where an option's help starts, at most */

/* getopt_long's '?' as one usage error: the option it did not know, with
 * the nearest it does, or the one that lacks its value. */
static int bad_option(const cmd_args *a)
{
	const cuco_cmd *cmd = a->cmd;
	const char *word = a->argv[optind - 1] ? a->argv[optind - 1] : "";
	bool long_form = strncmp(word, "--", 2) == 0;
	for (const struct option *o = a->longopts; optopt && o->name; o++)
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
	const char *names[CMD_MAX_OPTIONS + 1];
	size_t n = 0;
	for (const struct option *o = a->longopts; o->name; o++)
		names[n++] = o->name;
	const char *near = cuco_nearest(name, names, n);
	if (near)
		return cmd_usage_error(cmd, "unknown option --%s; did you mean --%s?", name, near);
	return cmd_usage_error(cmd, "unknown option %s", word);
}

/* Columns text takes on a terminal (UTF-8: continuation bytes take none). */
static int width(const char *text, size_t len)
{
	int w = 0;
	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)text[i] & 0xc0) != 0x80;
	return w;
}

/* text in lines of at most HELP_WIDTH columns, broken at spaces and at
 * its own newlines; the first goes on at column `at`, the others start
 * at column `indent`. */
static void print_wrapped(const char *text, int at, int indent)
{
	while (*text) {
		size_t len = strcspn(text, "\n"), cut = len;
		if (at + width(text, len) > HELP_WIDTH) {
			cut = 0;
			for (size_t i = 0; i < len && (!cut || at + width(text, i) <= HELP_WIDTH); i++)
				if (text[i] == ' ')
					cut = i;
			if (!cut)
				cut = len;
		}
		printf("%.*s\n", (int)cut, text);
		text += cut + (text[cut] == ' ' || text[cut] == '\n');
		if (*text)
			printf("%*s", indent, "");
		at = indent;
	}
}

/* One word of the usage line, on a new line when it would pass HELP_WIDTH. */
static void usage_word(const char *word, int *col)
{
	int w = width(word, strlen(word));
	if (*col + 1 + w > HELP_WIDTH && *col > 7) {
		printf("\n       ");
		*col = 7;
	} else {
		putchar(' ');
		(*col)++;
	}
	*col += printf("%s", word);
}

/* "-x ARG" or "--name ARG" as the usage line writes it; with both,
 * "-x, --name ARG" as the options' list does. */
static void option_words(const cmd_option *o, bool both, char *buf, size_t size)
{
	int n = o->letter ? snprintf(buf, size, "-%c%s", o->letter, both ? ", " : "") : 0;
	if (!o->letter || both)
		n += snprintf(buf + n, size - (size_t)n, "--%s", o->name);
	snprintf(buf + n, size - (size_t)n, "%s%s", o->arg ? " " : "", o->arg ? o->arg : "");
}

static void print_help(const cuco_cmd *cmd)
{
	char words[128], bracketed[140];
	int col = printf("usage: cuco %s", cmd->name), column = 0;
	for (int i = 0; i < cmd->noptions; i++) {
		const cmd_option *o = &cmd->options[i];
		if (o->flags & CMD_OPT_HIDDEN)
			continue;
		option_words(o, false, words, sizeof words);
		snprintf(bracketed, sizeof bracketed, o->flags & CMD_OPT_NEEDED ? "%s" : "[%s]%s", words,
			o->flags & CMD_OPT_MANY ? "..." : "");
		usage_word(bracketed, &col);
		option_words(o, true, words, sizeof words);
		int w = width(words, strlen(words));
		if (w <= HELP_COLUMN - 4 && w > column)
			column = w;
	}
	if (*cmd->operands)
		usage_word(cmd->operands, &col);
	printf("\n\n%s\n", cmd->summary);
	column += 4;
	if (cmd->noptions)
		printf("\noptions:\n");
	for (int i = 0; i < cmd->noptions; i++) {
		const cmd_option *o = &cmd->options[i];
		if (o->flags & CMD_OPT_HIDDEN)
			continue;
		option_words(o, true, words, sizeof words);
		int at = printf("  %s", words);
		if (at + 2 > column) {
			printf("\n");
			at = 0;
		}
		printf("%*s", column - at, "");
		print_wrapped(o->help, column, column);
	}
	if (cmd->notes)
		printf("\n%s", cmd->notes);
}

/* getopt_long's arrays from the table: a long option's value is its
 * index past 256, or its letter; --help and -h are every command's. */
static void build_options(cmd_args *a)
{
	const cuco_cmd *cmd = a->cmd;
	char *s = a->shorts;
	*s++ = 'h';
	int n = cmd->noptions;
	for (int i = 0; i < n; i++) {
		const cmd_option *o = &cmd->options[i];
		a->longopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
			o->letter ? o->letter : 256 + i };
		if (o->letter) {
			*s++ = o->letter;
			if (o->arg)
				*s++ = ':';
		}
	}
	*s = '\0';
	a->longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	a->longopts[n + 1] = (struct option){ 0 };
}

/* The run directory: --run DIR, else $CUCO_RUN, else runs/latest. */
static const char *run_dir(const char *opt)
{
	if (opt && *opt)
		return opt;
	return cuco_env_get()->run;
}

int cmd_option_next(cmd_args *a)
{
	const cmd_option *t = a->cmd->options;
	if (!a->started) {
		build_options(a);
		optind = 1;
		opterr = 0;  /* the command says what is wrong with its options, in one line */
		a->started = true;
	}
	int opt;
	while ((opt = getopt_long(a->argc, a->argv, a->shorts, a->longopts, NULL)) >= 256 &&
			(t[opt - 256].flags & CMD_OPT_THE_RUN))
		a->run = optarg;
	a->value = optarg;
	if (opt == -1) {
		a->nargs = a->argc - optind;
		a->args = a->argv + optind;
		for (int i = 0; i < a->cmd->noptions; i++)
			if (t[i].flags & CMD_OPT_THE_RUN)
				a->run = run_dir(a->run);
		return -1;
	}
	for (int i = 0; opt != '?' && opt != 'h' && i < a->cmd->noptions; i++)
		if (opt == 256 + i || t[i].letter == opt)
			return i;
	a->stopped = true;
	if (opt == 'h')
		print_help(a->cmd);
	a->rc = opt == 'h' ? CUCO_OK : bad_option(a);
	return -1;
}

bool cmd_operands(cmd_args *a, int min, int max, const char *why)
{
	if (!a->stopped && a->nargs > max && !why)
		a->rc = cmd_usage_error(a->cmd, "unexpected argument '%s'", a->args[max]);
	else if (!a->stopped && (a->nargs < min || a->nargs > max))
		a->rc = cmd_usage_error(a->cmd, "%s", why);
	else
		return !a->stopped;
	return false;
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
	const char *env = cuco_env_get()->theme;
	if (env)
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

int cmd_runner_option(const cmd_args *a, int id, cmd_runner_flags *f)
{
	const char *name = a->cmd->options[id].name, *arg = a->value;
	cuco_runner_kind kind;
	const cuco_runner_config *r = NULL;  /* for the fields' sizes only */
	if (strcmp(name, "runner") == 0) {
		if (!cuco_runner_parse(arg, &kind))
			return cmd_usage_error(a->cmd, "--runner %s: not local, hostfile, slurm or ssh", arg);
		f->kind = arg;
	} else if (strcmp(name, "hostfile") == 0) {
		if (!*arg || strlen(arg) >= sizeof r->hostfile)
			return cmd_usage_error(a->cmd, "--hostfile: empty or too long");
		f->hostfile = arg;
	} else {
		if (!*arg || strlen(arg) >= sizeof r->hosts)
			return cmd_usage_error(a->cmd, "--hosts: empty or too long");
		f->hosts = arg;
	}
	return CUCO_OK;
}

int cmd_sandbox_mode(const cmd_config *c, cuco_sandbox_mode *mode, cuco_err *err)
{
	if (*mode != CUCO_SANDBOX_DEFAULT || cuco_env_get()->sandbox)
		return CUCO_OK;
	*mode = c->file.sandbox;
	if (c->rc != CUCO_OK)
		*err = c->err;
	return c->rc;
}

void cmd_author(char *buf, size_t size)
{
	const char *user = cuco_env_get()->user;
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
