/* eval_int.h — private to src/eval: the pieces the evaluator is built
 * from (expressions, templates, the stage runner, result protocols and
 * runners), each in its own file so each can be tested alone. */
#ifndef CUCO_EVAL_INT_H
#define CUCO_EVAL_INT_H

#include "eval/eval.h"

#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <sys/types.h>

/* ---- expr.c: the peak model's arithmetic -------------------------------- */

/* Evaluate + - * / and parentheses over numbers, the size's variables and
 * `ranks`. size may be NULL (then only numbers and ranks are known). */
int eval_expr(const char *text, const cuco_size *size, int ranks, double *out, cuco_err *err);

/* ---- template.c: placeholders, defines, slots ----------------------------- */

typedef struct eval_vars {
	const cuco_workload *wl;
	const cuco_size *size;
	const cuco_directive *dir;  /* NULL: placeholders only checked */
	const char *compiler;
	const char *source;
	const char *output;
	int warmup, reps;
	const char *nccl_home, *cuda_home;
} eval_vars;

/* Whether {name} is a placeholder the workload's templates may use. */
bool eval_placeholder_known(const cuco_workload *wl, const char *name);
/* Expand a build or run template. Path-like values are shell-quoted when
 * they hold characters the shell would split or interpret. */
int eval_expand(const char *tmpl, const eval_vars *v, cuco_buf *out, cuco_err *err);
/* Replace every @SLOT@ of a dimension with a slot by its directive value. */
void eval_apply_slots(const cuco_workload *wl, const cuco_directive *dir,
	const char *src, size_t len, cuco_buf *out);
/* Append `word` to out, quoted for /bin/sh when needed. */
void eval_shell_quote(cuco_buf *out, const char *word);

/* ---- stage.c: one child process tree with limits -------------------------- */

typedef struct eval_limits {
	double wall_s;        /* SIGTERM to the session, then SIGKILL after grace_s */
	double grace_s;
	long mem_mb;          /* RLIMIT_AS; 0 = none (CUDA reserves huge address space) */
	long fsize_mb;        /* RLIMIT_FSIZE for files the stage writes */
	int max_procs;        /* processes alive in the stage's session */
	size_t log_cap;       /* bytes of output kept in the log file */
	char *const *sandbox; /* bwrap and its options (eval_sandbox_argv); NULL: none */
} eval_limits;

/* Sees each line of output as it streams past (without its newline). */
typedef void (*eval_line_fn)(const char *line, size_t len, void *arg);

typedef struct eval_stage {
	int exit_code;        /* -1 when killed by a signal */
	int signal;           /* the signal that ended the leader, 0 if none */
	bool timed_out;
	bool too_many_procs;
	bool cancelled;
	pid_t session;        /* the leader's pid = its session and group id */
	double wall_s;
	size_t out_bytes;     /* all output, including what the log dropped */
	char tail[2048];      /* the last bytes of output */
} eval_stage;

/* Run `sh -c cmd` in workdir (inside lim->sandbox when given) under a
 * keeper that leads a new session (and so a new process group) and kills
 * it if cuco dies, with the environment scrubbed of secrets, stdout and
 * stderr to log_path (capped), and wait until every process of the session
 * is gone. Returns an error only when the stage could not be started. */
int eval_stage_run(const char *cmd, const char *workdir, const char *log_path,
	const eval_limits *lim, const atomic_int *cancel, eval_line_fn on_line, void *arg,
	eval_stage *st, cuco_err *err);
/* Whether an environment variable of that name would be dropped. */
bool eval_env_secret(const char *name);
/* Live (non-zombie) processes in a session; for tests and the monitor. */
int eval_session_count(pid_t session);

/* ---- sandbox.c: bubblewrap around a stage ----------------------------------- */

typedef struct eval_sandbox {
	bool on;                  /* stages run inside bwrap */
	char bwrap[1024];
	char status[640];         /* one line for the user: what runs how, and why */
} eval_sandbox;

/* One folder over the read-only system: hidden (an empty tmpfs over it)
 * or shown again read-only inside something hidden before it. */
typedef struct eval_sandbox_layer {
	const char *path;         /* NULL, "" or missing: skipped */
	bool hide;
} eval_sandbox_layer;

/* What a stage may see besides the read-only system. */
typedef struct eval_sandbox_view {
	const char *workdir;      /* writable, and the stage's working directory */
	const char *tmpdir;       /* writable too (its $TMPDIR), or NULL / "" */
	eval_sandbox_layer layers[8];  /* applied in order, later over earlier */
	bool gpu;                 /* pass /dev/nvidia* and /dev/dxg through */
} eval_sandbox_view;

/* Settle the mode (CUCO_SANDBOX overrides CUCO_SANDBOX_DEFAULT) and, unless
 * it is off, find bwrap and try it once. auto falls back to limits only
 * and says why in sb->status; bwrap fails instead. */
int eval_sandbox_open(cuco_sandbox_mode mode, eval_sandbox *sb, cuco_err *err);
/* bwrap's argv up to the command, NULL-terminated; free with
 * eval_sandbox_argv_free(). NULL when sb is off. */
char **eval_sandbox_argv(const eval_sandbox *sb, const eval_sandbox_view *v);
void eval_sandbox_argv_free(char **argv);

/* ---- result.c: native and compat protocols ---------------------------------- */

#define EVAL_MAX_SAMPLES 4096

typedef struct eval_parse {
	const cuco_workload *wl;
	regex_t time_re, phase_re, signal_re;
	bool have_time_re;
	char *result_line;        /* native: the first CUCO_RESULT line's JSON */
	bool pass_seen;           /* compat */
	int nsamples;
	double samples[EVAL_MAX_SAMPLES];
	int nphases;
	cuco_phase phases[CUCO_MAX_PHASES];
	int rank_signal;          /* "exited on signal N" from mpirun */
	char env_problem[160];    /* a line saying the environment is at fault */
} eval_parse;

int eval_parse_init(eval_parse *p, const cuco_workload *wl, cuco_err *err);
void eval_parse_free(eval_parse *p);
void eval_parse_line(const char *line, size_t len, void *arg);  /* an eval_line_fn */

/* What a stage's output says about the candidate. */
typedef struct eval_outcome {
	bool have_result;       /* a result line was found and understood */
	char protocol_error[160];
	bool correct;
	double max_error;
	double min_us, median_us, p90_us, max_us;
	int samples;
	int nphases;
	cuco_phase phases[CUCO_MAX_PHASES];
	double bytes, flops;
	char environment[160];  /* the harness said the environment is at fault */
} eval_outcome;

void eval_parse_finish(eval_parse *p, eval_outcome *o);
/* Validate a compat time regex; for the manifest check. */
int eval_compile_time_re(const char *re, regex_t *out, char *why, size_t size);

/* ---- runner.c: how a program is launched ------------------------------------ */

typedef struct eval_launch {
	cuco_runner_kind kind;
	const char *launcher;     /* mpirun / srun path, "" when run as is */
	const cuco_runner_config *rc;  /* options; slurm: partition, account, GPUs, time */
	const cuco_slot_spec *slot;    /* where: its hosts or nodes */
	const char *remote_dir;   /* ssh: a fresh folder on the host, removed after */
	const char *job_name;     /* slurm: the job's or step's name */
	bool in_allocation;       /* slurm: a step of the allocation cuco runs in */
	bool as_root;
	int ranks;
	bool mpi;                 /* needs the MPI launcher (ranks > 1, not family cuda) */
	double limit_s;           /* remote runners: `timeout` on the far side, per rank */
} eval_launch;

/* The shell command that runs `prog_cmd` (already expanded; for ssh it must
 * name the binary as ./<basename of binary>) under the runner. binary and
 * extras are what ssh copies to the host. */
void eval_launch_command(const eval_launch *l, const char *prog_cmd, const char *binary,
	const char *const *extras, int nextras, cuco_buf *out);
/* Find an executable in $PATH (or a path as is); false when missing. */
bool eval_which(const char *prog, char *path, size_t size);
/* Run a short command (sinfo, squeue, scancel, `srun --version`) through
 * sh with a time limit, its output (both streams) appended to out when
 * not NULL; returns its exit status, -1 when it was killed or not run. */
int eval_query(const char *cmd, double wall_s, cuco_buf *out);
/* The first non-empty line of text, cut to size. */
void eval_first_line(const char *text, char *buf, size_t size);

/* ---- hosts.c: host lists ----------------------------------------------------- */

typedef struct eval_host {
	char name[256];
	int slots;                /* a hostfile's slots=N; 0 when not given */
} eval_host;

/* Expand a Slurm hostlist expression ("n[01-03,7],login1") into at most
 * max hosts, in order. */
int eval_hostlist_expand(const char *expr, eval_host *out, int max, int *n, cuco_err *err);
/* Read an Open MPI hostfile: `host [slots=N] [max_slots=N]` lines, `#`
 * comments. Errors name file:line. */
int eval_hostfile_read(const char *path, eval_host *out, int max, int *n, cuco_err *err);
/* Group hosts into slots of per_slot hosts each (0: as many as it takes
 * for `ranks` by their slots=), at most max; hosts left over are unused. */
int eval_hosts_to_slots(const eval_host *h, int nhosts, int per_slot, int ranks,
	cuco_runner_kind kind, cuco_slot_spec *out, int max, int *n, cuco_err *err);

/* ---- slots.c: the pool of slots --------------------------------------------- */

typedef struct eval_slot {
	cuco_slot_spec spec;
	cuco_slot_state state;
	int failures, holds;
	double rest_until, idle_since;  /* cuco_mono() */
	/* Held for writing by a run or benchmark; for reading by compiles
	 * when this machine's CPU is the device. */
	pthread_rwlock_t device;
} eval_slot;

typedef struct eval_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int n;
	eval_slot slots[CUCO_MAX_SLOTS];
	double retry_after_s;
	int retire_after;
} eval_pool;

void eval_pool_init(eval_pool *p, const cuco_slot_spec *specs, int n, double retry_after_s,
	int retire_after);
void eval_pool_free(eval_pool *p);
/* Wait for a slot (want: that one; -1: the one idle longest), mark it busy
 * and take its device lock. CUCO_EENV when it (every slot) is retired or
 * cancel is set; info is the slot as taken. */
int eval_pool_take(eval_pool *p, int want, const atomic_int *cancel, int *slot,
	cuco_slot_info *info, cuco_err *err);
/* Give a slot back: fault NULL when it worked, else the environment's
 * failure there (the slot rests or retires). text says what changed, ""
 * when nothing worth a line did; info is the slot as left. */
void eval_pool_give(eval_pool *p, int slot, const char *fault, cuco_slot_info *info, char *text,
	size_t size);
/* Wake every waiter (to see the cancel flag). */
void eval_pool_wake(eval_pool *p);
int eval_pool_list(eval_pool *p, cuco_slot_info *out, int max);

/* ---- slurm.c: asking Slurm ----------------------------------------------------- */

/* Whether cuco runs inside an allocation ($SLURM_JOB_ID and
 * $SLURM_JOB_NODELIST), and its id. */
bool eval_slurm_allocation(char *job_id, size_t size);
/* The nodes a Slurm run uses: the allocation's, else [runner] hosts, else
 * the partition's as sinfo lists them. where says which in one line. */
int eval_slurm_nodes(const cuco_runner_config *c, eval_host *out, int max, int *n, char *where,
	size_t wsize, cuco_err *err);
/* After a stage on nodes failed (st): whether Slurm ended it or never
 * started it (cancelled, preempted, timed out, a node failed, no job), with
 * why. Outside an allocation the controller's record of the job decides;
 * inside one, the nodes' state and srun's own messages. */
bool eval_slurm_fault(const char *job_name, const char *nodes, const eval_stage *st, char *why,
	size_t size);
/* Cancel the job or step of that name, should a killed srun have left it. */
void eval_slurm_cancel(const char *job_name);

#endif
