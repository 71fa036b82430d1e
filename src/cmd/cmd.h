/* cmd.h — the CLI's commands, one file each (cmd-*.c), and the helpers
 * they share. main() finds a command in cuco_commands[] and runs it;
 * a command returns an exit code (CUCO_OK, CUCO_EUSAGE, CUCO_EDATA,
 * CUCO_EENV) and prints its own output; errors go through cmd_fail(). */
#ifndef CUCO_CMD_H
#define CUCO_CMD_H

#include "core.h"
#include "eval/eval.h"
#include "store/store.h"
#include "strategies/strategies.h"

#include <getopt.h>

/* ---- options: each command's in a table (tmux's cmd_entry.args) ---------
 * A command lists its options as an X-macro of X(ID, row) lines; from it
 * come the command's enum of IDs and its table. One parser (cmd_option_next)
 * builds getopt_long's arrays from the table, answers --help and -h and
 * reports a bad option; the usage line and --help are printed from the
 * table, so they list exactly what is taken. Options several commands
 * share are rows defined once below (CMD_OPT_RUN, the runner's). */
typedef struct cmd_option {
	const char *name;     /* --name */
	char letter;          /* -x as well, or 0 */
	const char *arg;      /* its value as usage and help name it; NULL: a flag */
	unsigned flags;       /* CMD_OPT_* */
	const char *help;     /* one paragraph; --help wraps it */
} cmd_option;

enum {
	CMD_OPT_MANY = 1,     /* may be given again: "..." after it in the usage line */
	CMD_OPT_NEEDED = 2,   /* the command requires it: no brackets in the usage line */
	CMD_OPT_HIDDEN = 4,   /* taken (to refuse it in the command's words), not listed */
	CMD_OPT_THE_RUN = 8,  /* CMD_OPT_RUN: the parser takes it (cmd_args.run) */
};

#define CMD_OPTION_ENUM(id, ...) id,
#define CMD_OPTION_ROW(id, ...) [id] = { __VA_ARGS__ },
/* The enum of a list's IDs and its table, named table. */
#define CMD_TABLE(table, list) \
	enum { list(CMD_OPTION_ENUM) }; \
	static const cmd_option table[] = { list(CMD_OPTION_ROW) }

/* The run a command reads or steers. */
#define CMD_OPT_RUN "run", 0, "DIR", CMD_OPT_THE_RUN, "the run directory (default $CUCO_RUN, else " \
	"runs/latest)"
/* How the screen looks, as `cuco tui` and `cuco run` take it. */
#define CMD_OPT_THEME "theme", 0, "NAME", 0, "the screen's theme: dark (default), light, " \
	"monochrome, high-contrast, or a path to a .theme file (default $CUCO_THEME, else the " \
	"config's [screen] theme)"
#define CMD_OPT_NO_COLOR "no-color", 0, NULL, 0, "the screen in attributes only (also when " \
	"$NO_COLOR is set)"
#define CMD_OPT_ASCII "ascii", 0, NULL, 0, "the screen in ASCII lines and glyphs instead of UTF-8"
/* Where stages run, as `cuco run` and `cuco doctor` take it (cmd_runner_option). */
#define CMD_OPT_RUNNER "runner", 0, "local|hostfile|slurm|ssh", 0, "where run and benchmark " \
	"stages run (docs/cluster.md): local (default), hostfile, slurm or ssh; each host or node " \
	"is a slot, which runs one benchmark at a time (default: the config file's [runner] kind)"
#define CMD_OPT_HOSTFILE "hostfile", 0, "FILE", 0, "an Open MPI hostfile, a slot per host; " \
	"implies --runner hostfile"
#define CMD_OPT_HOSTS "hosts", 0, "LIST", 0, "ssh: user@host[:port],...; slurm: the nodes to " \
	"use outside an allocation (a hostlist: n[1-4]); replaces [runner] hosts"

#define CMD_MAX_OPTIONS 32  /* in one command's table */

typedef struct cuco_cmd {
	const char *name;
	const char *operands; /* after the options in the usage line; "" when none */
	const char *summary;  /* one line for `cuco --help` */
	int (*exec)(int argc, char **argv);  /* argv[0] is the command name */
	const cmd_option *options;
	int noptions;
	const char *notes;    /* --help's paragraph after the options, or NULL */
} cuco_cmd;
/* .options and .noptions of a table of at most CMD_MAX_OPTIONS rows. */
#define CMD_OPTIONS(table) .options = table, \
	.noptions = (int)(sizeof table / sizeof table[0] + \
		0 * sizeof(char[1 - 2 * (sizeof table / sizeof table[0] > CMD_MAX_OPTIONS)]))

extern const cuco_cmd *const cuco_commands[];  /* NULL-terminated */
const cuco_cmd *cmd_find(const char *name);

/* Print "cuco: <msg>" on stderr and return err->code. */
int cmd_fail(const cuco_err *err);
/* Print "cuco: <cmd>: <what>" plus a usage hint and return CUCO_EUSAGE. */
int cmd_usage_error(const cuco_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A command line being read, option by option, in the order given
 * (getopt_long's permutation: options may follow operands). */
typedef struct cmd_args {
	const cuco_cmd *cmd;
	int argc;
	char **argv;
	char *value;          /* the value of the option just returned (in argv); NULL for a flag */
	const char *run;      /* once read, with CMD_OPT_RUN: --run, else $CUCO_RUN, else runs/latest */
	int nargs;            /* once read: the operands */
	char **args;
	int rc;               /* once cmd_operands says stop: the command's exit code */
	bool started, stopped;
	struct option longopts[CMD_MAX_OPTIONS + 2];  /* getopt_long's, from the table */
	char shorts[2 * CMD_MAX_OPTIONS + 2];
} cmd_args;
#define CMD_ARGS(c, n, v) { .cmd = (c), .argc = (n), .argv = (v) }
/* The next option: its ID (its index in the table); -1 when none is left,
 * or once --help is printed or a bad option or a missing value said
 * (cmd_operands then says stop). CMD_OPT_RUN is taken here, into a->run. */
int cmd_option_next(cmd_args *a);
/* After the options: whether the command goes on with a->args, min to max
 * of them. When not, a->rc is its exit code: --help was printed, or a
 * usage error said (a bad option; too few or too many operands: why, or
 * when NULL "unexpected argument 'X'"). */
bool cmd_operands(cmd_args *a, int min, int max, const char *why);

/* Open a run's store, printing the error; returns an exit code. */
int cmd_open_store(const char *run_dir, unsigned flags, cuco_store **st);
/* Parse a candidate id, or "best"/"baseline" resolved against the store. */
int cmd_resolve_id(cuco_store *st, const char *text, uint64_t *id);
/* The config file, read once by a command at its start (cuco_config_read)
 * and handed to what needs it: rc and err say whether it loaded (when
 * not, file holds the defaults). */
typedef struct cmd_config {
	cuco_config file;
	int rc;
	cuco_err err;
} cmd_config;
void cmd_config_read(cmd_config *c);
/* The screen's theme when --theme is not given: $CUCO_THEME, else the
 * config file's [screen] theme, else NULL (the built-in dark). */
const char *cmd_default_theme(const cmd_config *c, char *buf, size_t size);
/* err, a theme check's failure, rewritten for a theme cmd_default_theme
 * gave (buf its buffer): bad input of $CUCO_THEME or of the config's
 * [screen] theme, exit 2 (a --theme flag's is a usage error). */
cuco_err *cmd_default_theme_error(const char *theme, const char *buf, cuco_err *err);
/* The sandbox's mode when none was given on the command line: left as is
 * when $CUCO_SANDBOX is set (the evaluator reads it), else the config
 * file's [eval] sandbox. The config file's error when it did not load. */
int cmd_sandbox_mode(const cmd_config *c, cuco_sandbox_mode *mode, cuco_err *err);
/* --runner, --hostfile (implies hostfile) and --hosts (CMD_OPT_RUNNER,
 * CMD_OPT_HOSTFILE, CMD_OPT_HOSTS): what was given (NULL: not given). */
typedef struct cmd_runner_flags {
	const char *kind, *hostfile, *hosts;
} cmd_runner_flags;
/* Take one of the three, a->value its value; a usage error (printed) when
 * the value is not valid. */
int cmd_runner_option(const cmd_args *a, int id, cmd_runner_flags *f);
/* Where stages run: the config file's [runner] section (zero, the local
 * runner, when there is none), with the flags over it. The config file's
 * error when it did not load. */
int cmd_runner_config(const cmd_config *c, const cmd_runner_flags *f, cuco_runner_config *out,
	cuco_err *err);
/* Take a person's action (cuco_person_act) in one write transaction,
 * printing a refusal; returns an exit code. cmd->seq is set. */
int cmd_act(cuco_store *st, cuco_command *cmd);
/* Author of a human action: $USER@hostname. */
void cmd_author(char *buf, size_t size);

/* What a run's summary and `cuco report` both say about confirming
 * (verdicts.c): the last session's confirmation (meta "confirmation") and
 * the crowns' revisits, read in one transaction. */
typedef struct cmd_verdicts {
	cuco_confirmation conf;
	bool have_conf;          /* false in a run no session of this cuco ended */
	cuco_revisit *rev;
	size_t nrev;
} cmd_verdicts;
int cmd_verdicts_read(cuco_txn *txn, cmd_verdicts *v);
void cmd_verdicts_free(cmd_verdicts *v);
/* Each contender left without a verdict and why, what to do when the
 * confirmation did not end, and every revisit; labels w wide. */
void cmd_verdicts_print(const cmd_verdicts *v, int w);

/* The commands. */
extern const cuco_cmd cmd_ls, cmd_show, cmd_diff, cmd_export, cmd_pin, cmd_unpin,
	cmd_reject, cmd_unreject, cmd_report;
extern const cuco_cmd cmd_patch;
extern const cuco_cmd cmd_run, cmd_pause, cmd_resume, cmd_stop, cmd_hint;
extern const cuco_cmd cmd_tui;
extern const cuco_cmd cmd_init, cmd_analyze, cmd_check, cmd_workloads;
extern const cuco_cmd cmd_doctor;
extern const cuco_cmd cmd_memory;
extern const cuco_cmd cmd_compare;

#endif
