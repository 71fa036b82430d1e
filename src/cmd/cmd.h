/* cmd.h — the CLI's commands, one file each (cmd-*.c), and the helpers
 * they share. main() finds a command in cuco_commands[] and runs it;
 * a command returns an exit code (CUCO_OK, CUCO_EUSAGE, CUCO_EDATA,
 * CUCO_EENV) and prints its own output; errors go through cmd_fail(). */
#ifndef CUCO_CMD_H
#define CUCO_CMD_H

#include "agents/config.h"
#include "core.h"
#include "eval/eval.h"
#include "store/store.h"

typedef struct cuco_cmd {
	const char *name;
	const char *usage;    /* arguments after the name */
	const char *summary;  /* one line for `cuco --help` */
	int (*exec)(int argc, char **argv);  /* argv[0] is the command name */
} cuco_cmd;

extern const cuco_cmd *const cuco_commands[];  /* NULL-terminated */
const cuco_cmd *cmd_find(const char *name);

/* Print "cuco: <msg>" on stderr and return err->code. */
int cmd_fail(const cuco_err *err);
/* Print "cuco: <cmd>: <what>" plus a usage hint and return CUCO_EUSAGE. */
int cmd_usage_error(const cuco_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmd_print_usage(const cuco_cmd *cmd, const char *options);
/* getopt_long's '?' as one usage error (main() silences getopt's own
 * message): the option it did not know, with the nearest it does, or the
 * one that lacks its value. argv is the command's. */
struct option;
int cmd_bad_option(const cuco_cmd *cmd, const struct option *longopts, char **argv);

/* The run directory: --run DIR, else $CUCO_RUN, else runs/latest. */
const char *cmd_run_dir(const char *opt);
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
/* --runner KIND, --hostfile FILE (implies hostfile) and --hosts LIST, as
 * `cuco run` and `cuco doctor` take them: getopt_long's values for them,
 * and what was given (NULL: not given). */
enum { CMD_OPT_RUNNER = 1000, CMD_OPT_HOSTFILE, CMD_OPT_HOSTS };
#define CMD_RUNNER_LONGOPTS \
	{ "runner", required_argument, NULL, CMD_OPT_RUNNER }, \
	{ "hostfile", required_argument, NULL, CMD_OPT_HOSTFILE }, \
	{ "hosts", required_argument, NULL, CMD_OPT_HOSTS }
typedef struct cmd_runner_flags {
	const char *kind, *hostfile, *hosts;
} cmd_runner_flags;
/* Take one of the three options; a usage error (printed) when its value
 * is not valid. */
int cmd_runner_option(const cuco_cmd *cmd, int opt, const char *arg, cmd_runner_flags *f);
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
