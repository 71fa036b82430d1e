/* eval_int.h — private to src/eval: the pieces the evaluator is built
 * from (expressions, templates, the stage runner, result protocols and
 * runners), each in its own file so each can be tested alone. */
#ifndef CUCO_EVAL_INT_H
#define CUCO_EVAL_INT_H

#include "eval/eval.h"

#include <regex.h>
#include <sched.h>
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
	const char *const *env; /* NAME=value entries added to (and replacing) the stage's environment */
} eval_limits;

/* Sees each line of output as it streams past (without its newline). */
typedef void (*eval_line_fn)(const char *line, size_t len, void *arg);

typedef struct eval_stage {
	int exit_code;        /* -1 when killed by a signal */
	int leftovers;        /* processes of the session alive when the leader ended */
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

/* ---- elf.c: what a built program links ----------------------------------------- */

typedef struct eval_elf {
	char **undefined;         /* undefined dynamic symbols: what it calls in libraries */
	int nundefined;
	char **defined;           /* functions its static symbol table defines */
	int ndefined;
	char **needed;            /* DT_NEEDED sonames */
	int nneeded;
} eval_elf;

int eval_elf_read(const char *path, eval_elf *out, cuco_err *err);
/* The same from memory; name is for errors (the fuzz target's way in). */
int eval_elf_parse(const void *data, size_t size, const char *name, eval_elf *out, cuco_err *err);
void eval_elf_free(eval_elf *e);
bool eval_elf_has(char *const *list, int n, const char *name);

/* ---- trust.c: what the evaluator believes (docs/workloads.md, "Trust") ---------- */

/* One stage's ticket: the seal's key and the input seed, handed to the
 * harness as env ("CUCO_HARNESS=1:<key>:<seed>"). */
typedef struct eval_ticket {
	uint64_t k0, k1, seed;
	char env[80];
} eval_ticket;

void eval_ticket_new(eval_ticket *t);
/* Whether `sealed` ("<tag> <json>", the text after "CUCO_SEALED ") carries
 * this ticket's seal; *json then points at the JSON. */
bool eval_ticket_open(const eval_ticket *t, const char *sealed, const char **json);

/* Whether the code a search may change (EVOLVE-BLOCKs, or all of a program
 * without them) reaches for the harness's key or runs before it: why says
 * what and where ("source: line N uses getenv: ..."). */
bool eval_trust_scan(const char *src, size_t len, char *why, size_t size);

/* What a candidate claims of its communication. */
typedef struct eval_trust {
	struct {
		bool on;              /* it claims device-initiated (CPU: one-sided) communication */
		bool p2p;             /* ... with two-sided messages as its design (CPU backend msg) */
		char what[96];        /* the claim in words, for reasons */
	} claim;
} eval_trust;

/* A program with EVOLVE-BLOCKs (not a baseline, not fast-path stage A) in
 * a communicating family claims what its directive's backend says. */
void eval_trust_rules(const cuco_workload *wl, const cuco_directive *d, const char *src,
	size_t len, eval_trust *t);
/* Host calls the claim rules out that the binary links (or defines). */
bool eval_trust_binary(const cuco_workload *wl, const eval_trust *t, const eval_elf *elf,
	char *why, size_t size);
/* Whether the interposer (lib) may be preloaded into the program (prog). */
bool eval_trust_preload_fits(const eval_elf *prog, const eval_elf *lib);

struct eval_parse;
struct eval_outcome;
/* After a run: the channel, the harness's own findings, the rank count,
 * the harness's clocks and the counted host calls. tk may be NULL (no
 * ticket: compat). True, with why, when the candidate is refused. */
bool eval_trust_verdict(const cuco_workload *wl, const eval_trust *t, const eval_ticket *tk,
	const struct eval_parse *p, const struct eval_outcome *o, char *why, size_t size);
/* Processes of the stage still alive when its leader ended. */
bool eval_trust_leftovers(const eval_stage *st, char *why, size_t size);
/* A median below the peak model's bound (bound_s per repetition). */
bool eval_trust_physics(double bound_s, double median_us, const char *model, char *why, size_t size);
/* A median far below the floor the stages' own wall clocks put under a step. */
bool eval_trust_clock(double run_wall_s, double bench_wall_s, int warmup, int reps,
	double median_us, char *why, size_t size);

/* Put the host-call interposer (cuco-count.so, from the build or the
 * installation) into the run's cache, where stages see it: path and its
 * ELF, or path "" when there is none. */
int eval_trust_interposer(const char *cache_root, char *path, size_t size, eval_elf *elf,
	cuco_err *err);

/* ---- result.c: native and compat protocols ---------------------------------- */

#define EVAL_MAX_SAMPLES 4096

typedef struct eval_parse {
	const cuco_workload *wl;
	const eval_ticket *ticket; /* native: the stage's seal; set after init */
	regex_t time_re, phase_re, signal_re;
	bool have_time_re;
	char *result_line;        /* native: the JSON of the one line sealed with the ticket */
	char forged[160];         /* native: why a line that claims a verdict is not believed */
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
	char why[320];          /* native: the harness's reason for correct: false */
	char suspect[400];      /* native: a defence of the harness caught something */
	uint64_t seed;          /* native: the input seed the verdict is for */
	int ranks, checks;      /* native: ranks it covers, steps it checked */
	double wall_us;         /* native: the harness's wall clock per timed repetition */
	long host_calls;        /* native: host calls counted in the steps, -1 when not counted */
	char host_calls_by[256];/* "name=N ..." */
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
/* Read a native verdict's JSON into o; false with o->protocol_error set. */
bool eval_result_json(const char *json, eval_outcome *o);
/* Validate a compat time regex; for the manifest check. */
int eval_compile_time_re(const char *re, regex_t *out, char *why, size_t size);

/* ---- runner.c: how a program is launched ------------------------------------ */

typedef struct eval_launch {
	cuco_runner_kind kind;
	const char *launcher;     /* mpirun / srun path, "" when run as is */
	const char *hostfile;
	const char *ssh_host;     /* user@host[:port] */
	const char *ssh_options;  /* extra ssh/scp words, e.g. "-i KEY -o ..." */
	const char *remote_dir;   /* ssh: a fresh folder on the host, removed after */
	bool as_root;
	int ranks;
	bool mpi;                 /* needs the MPI launcher (ranks > 1, not family cuda) */
	bool bind;                /* local: a rank per core (--bind-to core), else none */
	double remote_limit_s;    /* ssh: `timeout` on the far side */
	const char *preload;      /* the ranks' LD_PRELOAD (the host-call interposer), or NULL */
	const char *ticket;       /* "CUCO_HARNESS=...": ssh sets it on the far side, mpirun
	                             passes it to remote ranks; NULL: none */
} eval_launch;

/* The shell command that runs `prog_cmd` (already expanded; for ssh it must
 * name the binary as ./<basename of binary>) under the runner. binary and
 * extras are what ssh copies to the host. */
void eval_launch_command(const eval_launch *l, const char *prog_cmd, const char *binary,
	const char *const *extras, int nextras, cuco_buf *out);
/* Find an executable in $PATH (or a path as is); false when missing. */
bool eval_which(const char *prog, char *path, size_t size);
/* The CPUs of the cores a local run's ranks are bound to, one rank per
 * core: the first `ranks` cores among the allowed CPUs in the order Open
 * MPI's --bind-to core takes them, with all their hardware threads; sysfs
 * is normally "/sys/devices/system/cpu". False when fewer cores are
 * allowed than there are ranks (then nothing is bound). */
bool eval_device_cpus(const char *sysfs, const cpu_set_t *allowed, int ranks, cpu_set_t *device);

#endif
