/* eval_int.h — private to src/eval: the pieces the evaluator is built
 * from (expressions, templates, the stage runner, result protocols and
 * runners), each in its own file so each can be tested alone. */
#ifndef CUCO_EVAL_INT_H
#define CUCO_EVAL_INT_H

#include "eval/eval.h"
#include "env.h"
#include "proc.h"

#include <linux/filter.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/types.h>

/* ---- template.c: placeholders, defines, slots ------------------------------ */

typedef struct eval_vars {
	const cuco_workload *wl;
	const cuco_size *size;
	const cuco_directive *dir;  /* NULL: placeholders only checked */
	const char *compiler;
	const char *source;
	const char *output;
	char *const *objects;       /* {objects}: the link's inputs (NULL-terminated) */
	int warmup, reps;
	const char *nccl_home, *cuda_home;
} eval_vars;

/* Split a build or run template into words (blanks; '…', "…" and \ quote)
 * and substitute each placeholder within its word; {compiler} and
 * {defines} are lists of words of their own. No value is ever split or
 * interpreted. With v->dir NULL (checking a manifest) placeholders are
 * only checked and stay as they are; with v NULL there are none (braces
 * are text): words the user gives, such as [runner] options. */
int eval_expand(const char *tmpl, const eval_vars *v, cuco_argv *out, cuco_err *err);
/* Replace every @SLOT@ of a dimension with a slot by its directive value. */
void eval_apply_slots(const cuco_workload *wl, const cuco_directive *dir,
	const char *src, size_t len, cuco_buf *out);

/* ---- seccomp.c: the stages' system-call filter -------------------------------- */

/* A classic BPF program for seccomp: io_uring, the keyring calls, ptrace,
 * process_vm_readv/writev, pidfd_getfd, process_madvise and user
 * namespaces (clone3, and unshare or clone with CLONE_NEWUSER) refused, Unix
 * sockets (socket and socketpair) too unless allowed; x32 and 32-bit
 * socketcall() refused. Empty where the architecture is not known.
 * seccomp.c says which stage gets which and why. */
typedef struct eval_filter {
	struct sock_filter prog[96];
	unsigned short len;
} eval_filter;

bool eval_filter_available(void);
/* unix_sockets: let Unix sockets through (GPU run stages: CUDA needs one). */
void eval_filter_build(eval_filter *f, bool unix_sockets);
/* In a child after fork(): no_new_privs, then the filter. -1 on failure. */
int eval_filter_install(const eval_filter *f);

/* ---- cgroup.c: a control group per stage ------------------------------------ */

/* The controllers a stage's group uses; v2 has them all in one
 * hierarchy (the freezer and CPU accounting are in its core), v1 one
 * hierarchy each. The freezer and cpuacct serve the referee
 * (workloads/common/cuco_referee.c), which holds a stage still between
 * steps and counts its CPU; the cpuset keeps a stage on the CPUs it was
 * given, whatever affinity its threads ask for. */
enum { EVAL_CG_PIDS, EVAL_CG_MEMORY, EVAL_CG_CPU, EVAL_CG_FREEZER, EVAL_CG_CPUACCT, EVAL_CG_CPUSET,
	EVAL_CG_COUNT };

/* The evaluator's groups, parents of its stages' (one per v1 hierarchy).
 * They are the process's, cuco-<pid>: every evaluator of one process opens
 * the same ones, and its stages' groups are numbered across them all. */
typedef struct eval_cgroups {
	bool on, v2;
	bool have[EVAL_CG_COUNT];           /* the controller limits its stages */
	char dir[EVAL_CG_COUNT][PATH_MAX];  /* v2: [0] only */
	char status[512];                   /* one line for cuco doctor: which limits apply */
} eval_cgroups;

typedef struct eval_cgroup_limits {
	long max_tasks;     /* pids.max: processes and threads together */
	long mem_mb;        /* memory of all the stage's processes, tmpfs pages included */
	double cpus;        /* CPU time per period, in CPUs; 0: none */
	const cpu_set_t *cpuset;  /* the CPUs its processes may run on; NULL: cuco's own */
} eval_cgroup_limits;

/* One stage's group. */
typedef struct eval_cgroup {
	bool v2, mem, freezer;
	char dir[EVAL_CG_COUNT][PATH_MAX];
	char procs[EVAL_CG_COUNT][PATH_MAX + 16];
} eval_cgroup;

/* Find where groups can be made here, and make the evaluator's; never
 * fails: g->on says whether stages get groups, g->status says so. Set
 * CUCO_CGROUPS=off (env) to run without (rlimits only). */
void eval_cgroups_open(eval_cgroups *g, const cuco_env *env);
void eval_cgroups_close(eval_cgroups *g);
/* A stage's group with its limits; nothing (cg empty) when g is off. */
int eval_cgroup_new(eval_cgroups *g, const eval_cgroup_limits *lim, eval_cgroup *cg, cuco_err *err);
/* After fork(), in the process that leads the stage: join the group.
 * Async-signal-safe, as are the next two. */
int eval_cgroup_join(const eval_cgroup *cg);
/* Signal every process of the group but `except` (0: count); the number. */
int eval_cgroup_signal(const eval_cgroup *cg, int sig, pid_t except);
/* Whether a fork was refused at pids.max, whether the OOM killer struck. */
void eval_cgroup_events(const eval_cgroup *cg, bool *pids_hit, bool *oom);
/* The line the referee reads on its stdin: where it freezes the stage and
 * reads its CPU time ("cgroup v2 DIR", "cgroup v1 FREEZER_DIR
 * CPUACCT_DIR"), or "cgroup none" when the group has no freezer. */
void eval_cgroup_describe(const eval_cgroup *cg, char *line, size_t size);
/* Thaw the group should the referee have left it frozen. */
void eval_cgroup_thaw(const eval_cgroup *cg);
/* Kill what is left and remove the group. */
void eval_cgroup_free(eval_cgroup *cg);

/* ---- stage.c: one child process tree with limits -------------------------- */

typedef struct eval_limits {
	double wall_s;        /* SIGTERM to the session, then SIGKILL after grace_s */
	double grace_s;
	long mem_mb;          /* RLIMIT_AS; 0 = none (CUDA reserves huge address space) */
	long fsize_mb;        /* RLIMIT_FSIZE for files the stage writes */
	int max_procs;        /* processes alive in the stage's session */
	size_t log_cap;       /* bytes of output kept in the log file */
	size_t out_cap;       /* bytes of output past which the stage is ended; 0 = none */
	char *const *sandbox; /* bwrap and its options (eval_sandbox_argv); NULL: none */
	const char *const *env; /* NAME=value entries added to (and replacing) the stage's environment */
	const eval_filter *filter;  /* the system-call filter; NULL: none */
	eval_cgroups *cgroups;      /* where the stage's group is made; NULL: none */
	eval_cgroup_limits group;   /* its limits, for all its processes together */
	const char *tmpdir;   /* the stage's $TMPDIR, or NULL */
	const char *pass_env; /* further variables the stage gets ($CUCO_PASS_ENV), or NULL */
	bool ssh_agent;       /* pass SSH_AUTH_SOCK (the ssh and hostfile runners' launchers) */
	const struct eval_user *user;  /* without a sandbox: the user the command becomes; NULL: cuco's */
	/* Told once the stage is started, with its group (empty when there is
	 * none): the referee's cue. NULL: nobody listens. */
	void (*on_start)(const struct eval_cgroup *cg, void *arg);
	void *on_start_arg;
} eval_limits;

/* Sees each line of output as it streams past (without its newline). */
typedef void (*eval_line_fn)(const char *line, size_t len, void *arg);

typedef struct eval_stage {
	int exit_code;        /* -1 when killed by a signal */
	int leftovers;        /* processes of the stage alive when its command ended */
	int signal;           /* the signal that ended the leader, 0 if none */
	bool timed_out;
	bool too_many_procs;
	bool too_much_output; /* it wrote past lim->out_cap and was ended */
	bool out_of_memory;   /* its group's memory limit was reached (an OOM kill) */
	pid_t session;        /* the leader's pid = its session and group id */
	double wall_s;
	size_t out_bytes;     /* all output, including what the log dropped */
	char tail[2048];      /* the last bytes of output */
} eval_stage;

/* Run the command cmd (an argument vector: no shell) in workdir (inside
 * lim->sandbox when given) under a keeper that leads a new session (and so
 * a new process group) and kills it if cuco dies, with the stage's
 * environment (env.c), stdout and stderr to log_path (capped), and wait
 * until every process of the session is gone. Returns an error only when
 * the stage could not be started. */
int eval_stage_run(char *const *cmd, const char *workdir, const char *log_path,
	const eval_limits *lim, eval_line_fn on_line, void *arg,
	eval_stage *st, cuco_err *err);

/* ---- env.c: the environment of a stage ---------------------------------------- */

bool eval_env_secret(const char *name);
/* The allowed part of cuco's environment, then extra's NAME=value entries
 * (replacing the same names; NULL: none), TMPDIR (when given),
 * NCCL_NVLS_ENABLE=0 and, for a stage under the system-call filter
 * (filtered), Open MPI told to copy without process_vm_readv; malloc'd,
 * for eval_stage_env_free. pass_env: $CUCO_PASS_ENV's names, or NULL. */
char **eval_stage_env(const char *tmpdir, bool ssh_agent, bool filtered, const char *const *extra,
	const char *pass_env);
void eval_stage_env_free(char **env);
/* Live (non-zombie) processes in a session; for tests and the monitor. */
int eval_session_count(pid_t session);

/* ---- workload.c ------------------------------------------------------------ */

/* cuco's harness headers (common/cuco_seal.h, cuco_harness.h): the first
 * workload search folder that has them, as a real path; "" and false when
 * none does. A sandboxed stage is shown it, for workloads kept elsewhere
 * that include them (a user's own, the tests' fixtures). */
bool eval_common_dir(char out[PATH_MAX]);

/* ---- sandbox.c: bubblewrap around a stage ----------------------------------- */

/* The user local stages run as: cuco's own, or for cuco run as root an
 * unprivileged one ($CUCO_STAGE_USER, else nobody), so that root's files
 * (/etc/shadow, SSH host keys) stay out of reach. */
typedef struct eval_user {
	bool drop;                /* stages become uid/gid: cuco is root */
	uid_t uid;
	gid_t gid;
	gid_t groups[8];          /* the GPU devices' groups, where only a group may open them */
	int ngroups;
	char name[64];
} eval_user;

typedef struct eval_sandbox {
	bool on;                  /* stages run inside bwrap */
	char bwrap[1024];
	char init[PATH_MAX];      /* cuco-stage-init, each sandboxed stage's first process */
	eval_user user;
	char status[640];         /* one line for the user: what runs how, and why */
	char user_status[400];    /* one line: which user stages run as, and why */
	const char *pass_env;     /* $CUCO_PASS_ENV, for its probes' stages */
} eval_sandbox;

/* One folder over the system: shown read-only, hidden (an empty read-only
 * tmpfs over it) or scratch (an empty writable one of 16 MiB: the home). */
typedef enum eval_layer_kind { EVAL_SHOW, EVAL_HIDE, EVAL_SCRATCH } eval_layer_kind;

typedef struct eval_sandbox_layer {
	const char *path;         /* NULL, "" or missing: skipped */
	eval_layer_kind hide;
} eval_sandbox_layer;

#define EVAL_DISK_MB 1024L    /* each writable folder's tmpfs, by default */
#define EVAL_SECCOMP_FD 4     /* where a stage's child finds the filter for bwrap */
#define EVAL_REPORT_FD 5      /* where cuco-stage-init writes what the stage left running */
#define EVAL_INIT_PATH "/run/cuco-stage-init"  /* cuco-stage-init inside the sandbox */

/* What a stage may see besides the read-only system (sandbox.c). */
typedef struct eval_sandbox_view {
	const char *workdir;      /* a tmpfs there, the stage's working directory */
	struct {
		const char *name;     /* a file of the host's work folder shown in it */
		bool writable;        /* the build's output; else read-only */
	} files[2];
	const char *tmpdir;       /* a tmpfs there too (its $TMPDIR), or NULL / "" */
	const char *channel;      /* the referee's channel folder, shown writable, or NULL */
	long disk_mb;             /* the size of each writable tmpfs; 0: EVAL_DISK_MB */
	eval_sandbox_layer layers[8];  /* applied in order, later over earlier */
	const cuco_gpu_binds *gpu;  /* the GPU nodes shown (cuco_gpu_nodes_pick); NULL: none */
	bool seccomp;             /* bwrap loads the filter from EVAL_SECCOMP_FD */
} eval_sandbox_view;

/* Settle the mode (CUCO_SANDBOX overrides CUCO_SANDBOX_DEFAULT) and the
 * stage user (CUCO_STAGE_USER; sb->user_status says who and why) and,
 * unless the mode is off, find bwrap and cuco-stage-init and try them
 * once. auto falls back to limits only and says why in sb->status; bwrap
 * fails instead. */
int eval_sandbox_open(cuco_sandbox_mode mode, const cuco_env *env, eval_sandbox *sb, cuco_err *err);
/* bwrap's argv up to the command, cuco-stage-init's included (it reports
 * at EVAL_REPORT_FD), NULL-terminated; free with eval_sandbox_argv_free().
 * NULL when sb is off. */
char **eval_sandbox_argv(const eval_sandbox *sb, const eval_sandbox_view *v);
void eval_sandbox_argv_free(char **argv);
/* The stage user must reach the folders stages read: in bwrap, each
 * folder the sandbox shows as it is (the workloads', the headers'); without
 * it, through every folder above them, the run and the workloads too.
 * Where one of the n paths (NULL or "" skipped) is out of its reach,
 * stages stay cuco's own and sb->user_status says why. */
void eval_sandbox_reach(eval_sandbox *sb, const char *const *paths, size_t n);
/* A file or folder the stage writes on the host (the build's output, its
 * $TMPDIR), given to the stage user; nothing when stages stay cuco's. */
int eval_sandbox_give(const eval_sandbox *sb, const char *path, cuco_err *err);
/* An empty file at path (mode 0755) for the stage to write: a build's
 * output, given to the stage user (sb NULL: cuco's). */
int eval_sandbox_placeholder(const eval_sandbox *sb, const char *path, cuco_err *err);
/* The stage's working folder, cuco's, which the stage user must enter
 * (without bwrap; in it the folder is a tmpfs): search, not list nor write. */
int eval_sandbox_enter(const eval_sandbox *sb, const char *dir, cuco_err *err);

/* ---- cache.c: RUN/cache, built programs, bounded ------------------------------ */

typedef struct eval_cache {
	char root[PATH_MAX];
	long program_mb;          /* a program's size at most */
	long run_mb;              /* all programs together, beyond which the least recently used go */
} eval_cache;

/* The bounds: 0 takes the default (256 MiB a program, 4096 MiB a run). */
void eval_cache_open(eval_cache *c, const char *root, long program_mb, long run_mb);
/* The program at path, held for an evaluation (a shared lock: never
 * evicted meanwhile) and marked used; its fd, or -1 when it is not there
 * (then it is built). */
int eval_cache_hold(const char *path);
/* A fresh build (built) into the cache as path, cuco's, held (*fd), and the
 * cache trimmed to its size per run. A program above the size per program
 * is not taken: why says so (*fd -1) and the build has failed. */
int eval_cache_add(const eval_cache *c, const char *built, const char *path, int *fd, char *why,
	size_t size, cuco_err *err);
/* Whether path is cuco's own: a regular file of cuco's user that no other
 * may write (never the stage user's, whoever built it). */
bool eval_cache_owned(const char *path);
/* Make the file at path cuco's own, mode 0755: a copy put in its place
 * (beside it, then renamed), so that no descriptor the stage user opened
 * on it reaches what is there now. Its fd, or -1 with errno. */
int eval_cache_own(const char *path);
/* Done with a held program; evicted when its candidate failed. */
void eval_cache_release(const char *path, int fd, bool failed);

/* ---- elf.c: what a built program links ----------------------------------------- */

typedef struct eval_elf {
	char **undefined;         /* undefined dynamic symbols: what it calls in libraries */
	int nundefined;
	char **defined;           /* functions its static symbol table defines */
	int ndefined;
	char **needed;            /* DT_NEEDED sonames */
	int nneeded;
	char **exported;          /* defined dynamic symbols, functions: what a library offers */
	int nexported;
	char **exported_data;     /* ... and its objects (MPI_COMM_WORLD is &ompi_mpi_comm_world) */
	int nexported_data;
} eval_elf;

int eval_elf_read(const char *path, eval_elf *out, cuco_err *err);
/* The same from memory; name is for errors (the fuzz target's way in). */
int eval_elf_parse(const void *data, size_t size, const char *name, eval_elf *out, cuco_err *err);
void eval_elf_free(eval_elf *e);
bool eval_elf_has(char *const *list, int n, const char *name);
/* Whether one of the program's DT_NEEDED sonames starts with prefix ("libmpi"). */
bool eval_elf_needs(const eval_elf *e, const char *prefix);

/* A relocatable object (ET_REL) as its headers say, unjudged: objcheck.c
 * decides what of it is allowed. Names and data point into the file's
 * bytes, which the struct holds (eval_obj_read) or the caller keeps
 * (eval_obj_parse). Indices are the file's own: symbol 0 and section 0
 * are ELF's null entries. */
typedef struct eval_obj_section {
	const char *name;
	uint32_t type, link, info;  /* SHT_*; a relocation section patches section `info` */
	uint64_t flags, size;       /* SHF_* */
	const unsigned char *data;  /* size bytes; NULL for SHT_NOBITS */
	bool comdat;                /* a member of a COMDAT group: kept once, from the first object */
} eval_obj_section;

typedef struct eval_obj_symbol {
	const char *name;           /* "" when it has none */
	uint64_t value, size;       /* value: the offset in its section */
	unsigned char type, bind;   /* STT_*, STB_* */
	uint16_t shndx;             /* its section, or SHN_UNDEF, SHN_ABS, SHN_COMMON */
} eval_obj_symbol;

typedef struct eval_obj_reloc {
	uint32_t section;           /* the section it patches */
	uint32_t type, symbol;      /* R_X86_64_*; an index into symbols */
	uint64_t offset;            /* in that section */
	int64_t addend;
} eval_obj_reloc;

typedef struct eval_obj {
	unsigned machine;           /* EM_* */
	eval_obj_section *sections;
	int nsections;
	eval_obj_symbol *symbols;
	int nsymbols;
	eval_obj_reloc *relocs;
	int nrelocs;
	char *file;                 /* eval_obj_read: the bytes it read */
} eval_obj;

/* Read and check every offset; CUCO_EDATA naming what lies outside the
 * file, or a file that is not a 64-bit relocatable object. */
int eval_obj_read(const char *path, eval_obj *out, cuco_err *err);
int eval_obj_parse(const void *data, size_t size, const char *name, eval_obj *out, cuco_err *err);
void eval_obj_free(eval_obj *o);
/* The function or object of `section` that covers `offset` (a global one
 * where aliases share it): its symbol index, -1 when none does. */
int eval_obj_symbol_at(const eval_obj *o, uint32_t section, uint64_t offset);

/* ---- objcheck.c: the candidate's object, before it is linked ------------------------------
 *
 * A candidate's code is its own translation unit, compiled to a relocatable
 * x86-64 object (ET_REL) and linked with the trusted frame. Before the link
 * its object is checked (docs/trust.md, "The candidate's object"):
 *
 * - the globals it defines: a name a linked library exports (libc, libm,
 *   libpthread, libgcc_s, libstdc++, Open MPI's libmpi, the CUDA runtime,
 *   cuBLAS, NCCL, and the libraries those need, as this machine has them)
 *   or one the frame defines is refused; weak definitions outside C++'s
 *   COMDAT groups, ifuncs, common and versioned symbols are refused; then
 *   C++'s COMDAT members are renamed ("cuco.candidate." + name) and every
 *   other global but the entry points is made local;
 * - nothing runs before or after main on its own: initializer and
 *   finalizer sections are refused, but for nvcc's module registration and
 *   <iostream>'s std::ios_base::Init, checked to the instruction;
 * - every name it imports is on the family's allowlist (objcheck.c's
 *   import table, with a reason for each row);
 * - no system-call or far-transfer instruction, no bytes that are not
 *   instructions, no jump into an instruction, in any executable section;
 *   no section the linker would make executable unseen.
 *
 * Usage, once per evaluator and then per candidate:
 *
 *     eval_objspec spec = { .family = wl->family,
 *         .entries = "cuco_setup cuco_step cuco_teardown cuco_mpi_thread",
 *         .frame = frame_objects, .mpicc = "mpicc",
 *         .cuda_home = env->cuda_home, .nccl_home = env->nccl_home };
 *     eval_objrules *rules;
 *     if (eval_objrules_new(&spec, &rules, err) != CUCO_OK) ...  // CUCO_EENV: this machine
 *     char why[512];
 *     int rc = eval_objcheck("cand.o", rules, why, sizeof why, err);
 *     if (rc != CUCO_OK) ...            // the check could not run: the environment's fault
 *     else if (*why) ...                // refused: why is "object: ...", class `suspect`
 *     else ...                          // accepted, and cand.o rewritten: link it with the
 *                                       // frame's objects, in any order
 *     eval_objrules_free(rules);
 *
 * The rules are read-only once made: evaluator threads may share them.
 * The frame must keep its own state static (a global of the frame is a
 * name the candidate may call; `main` it may not). */

typedef struct eval_objspec {
	cuco_family family;
	bool refereed;            /* the workload's referee times and checks it: the rows marked
	                             REFEREED apply (a route to work the referee cannot see) */
	const char *entries;      /* blank-separated names the frame calls: kept global */
	char *const *frame;       /* the frame's objects, NULL-terminated; NULL: none (yet) */
	const char *mpicc;        /* cpu-mpi, cuda-nccl: the MPI wrapper whose `--showme:link`
	                             says where libmpi is */
	const char *cuda_home;    /* cuda, cuda-nccl: where lib64/libcudart.so is; NULL or "":
	                             /usr/local/cuda */
	const char *nccl_home;    /* cuda-nccl: where lib/libnccl.so.2 is; NULL or "": cuda_home,
	                             then the system's folders */
	/* How objdump and objcopy run on a candidate's object, whose bytes may
	 * aim at their parsers: as a stage runs (the stage user, in its sandbox
	 * where it is on; NULL: as cuco's user, unconfined), under filter
	 * (NULL: none), within tool_s seconds each (0: a minute). */
	const struct eval_sandbox *sandbox;
	const eval_filter *filter;
	double tool_s;
} eval_objspec;

typedef struct eval_objrules eval_objrules;

/* The entry points a family's frame calls in the program, blank-separated
 * ("" for a family with no frame yet): what eval_objspec.entries names. */
const char *eval_frame_entries(cuco_family family);

/* Read the family's libraries' dynamic symbol tables (and those of the
 * libraries they need) and the frame's objects, and find objdump and
 * objcopy on PATH. CUCO_EENV naming what is missing; CUCO_EUSAGE without
 * entries. Costs a fraction of a second (the libraries are mapped, only
 * their dynamic symbols read). */
int eval_objrules_new(const eval_objspec *spec, eval_objrules **out, cuco_err *err);
void eval_objrules_free(eval_objrules *rules);

/* Check the object at obj. Accepted: CUCO_OK with why "", and the object
 * rewritten in place (objcopy) so that nothing outside it binds to what
 * it defines but the entry points. Refused: CUCO_OK with why the first
 * refusal, one line starting "object: " naming the symbol, section or
 * instruction and why (a file that is no relocatable object, or that
 * objdump or objcopy cannot read, hangs on or writes without end about,
 * included); the object is left as it was. *unlinkable says that every
 * refusal is of a name defined nowhere (neither the family's libraries nor
 * the frame have it): the program's mistake, which the link would refuse,
 * not a defence's verdict. The tools read it in its folder, where objcopy writes obj.local, cuco's once taken. An error
 * (CUCO_EENV: the file is missing, objdump or objcopy could not run, the
 * object is not x86-64) means no verdict.
 * Deterministic; about 0.1 s per object on the 2-core machine, most of it
 * starting objdump and objcopy. */
int eval_objcheck(const char *obj, const eval_objrules *rules, char *why, size_t size, bool *unlinkable,
	cuco_err *err);

/* Every refusal, in the order eval_objcheck meets them, each with the
 * function or object of the object it is about ("" when none: a section,
 * the file) and whether it is only of a name defined nowhere (undefined:
 * the link would refuse it); fn returns false to hear no more. Nothing is
 * rewritten. For tests and for listing all that is wrong at once. */
typedef bool (*eval_objcheck_fn)(const char *why, const char *function, bool undefined, void *arg);
int eval_objcheck_scan(const char *obj, const eval_objrules *rules, eval_objcheck_fn fn, void *arg,
	cuco_err *err);

/* ---- trust.c: what the evaluator believes (docs/workloads.md, "Trust") ---------- */

/* One stage's ticket: the seal's key and the input seed, handed to the
 * harness as env ("CUCO_HARNESS=1:<key>:<seed>"), or to a framed
 * program's frame in a file (eval_ticket_file). */
typedef struct eval_ticket {
	uint64_t k0, k1, seed;
	char env[80];
} eval_ticket;

void eval_ticket_new(eval_ticket *t);
/* Write the ticket ("1:<key>:<seed>", mode 0600) to dir/cuco-ticket
 * (CUCO_SEAL_FILE), where a framed program's frame takes it first thing
 * (workloads/common/cuco_trust.h); its path into path. CUCO_EENV when it
 * cannot be written. */
int eval_ticket_file(const eval_ticket *t, const char *dir, char *path, size_t size, cuco_err *err);
/* Whether `sealed` ("<tag> <json>", the text after "CUCO_SEALED ") carries
 * this ticket's seal; *json then points at the JSON. */
bool eval_ticket_open(const eval_ticket *t, const char *sealed, const char **json);

/* The workload's own texts, its baseline and its seed, whose frames the
 * source scan trusts whole: the lines around their blocks (the compiler's
 * lines, splices joined), comments blanked, the blanks at their ends and
 * blank lines left out; the local headers they include, the only ones a
 * candidate may include (the scan reads no other file); and the names
 * those use, which no candidate's macro may redefine above their
 * #include. The evaluator reads them once, when it opens. */
typedef struct eval_known {
	cuco_buf *frames;         /* one per text */
	size_t nframes;
	cuco_buf names;           /* one a line: the names the workload's headers use */
	cuco_buf knobs;           /* one a line: those its texts' blocks #define (the search's) */
	cuco_buf includes;        /* one a line: the local headers its code includes, as written */
	cuco_buf dirs;            /* one a line: the folders its build searches (-I) */
} eval_known;

/* A text's frame and knobs (not the headers it includes). */
void eval_known_add(eval_known *k, const char *text, size_t len);
/* The baseline and the seed of wl and the local headers they include
 * (from their folder, the workload's, its extras'); a file that cannot be
 * read adds nothing. */
void eval_known_read(eval_known *k, const cuco_workload *wl);
void eval_known_free(eval_known *k);

/* Whether a program reaches for the harness's key or runs before it, or
 * holds what the scan cannot read as every compiler does, in the insides
 * of its EVOLVE-BLOCKs (text.h), and around them too unless what is around
 * them is a frame known holds (NULL: none); a program without blocks, or
 * with markers the rule refuses, is all around them.
 * why says what and where ("source: line N uses getenv: ..."). */
bool eval_trust_scan(const char *src, size_t len, const eval_known *known, char *why, size_t size);

/* What a candidate claims of its communication. */
typedef struct eval_trust {
	struct {
		bool on;              /* it claims device-initiated (CPU: one-sided) communication */
		bool p2p;             /* ... with two-sided messages as its design (CPU backend msg) */
		char what[96];        /* the claim in words, for reasons */
	} claim;
} eval_trust;

/* A program with EVOLVE-BLOCK marker lines (not a baseline, not fast-path
 * stage A) in a communicating family claims what its directive's backend
 * says. */
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
int eval_trust_interposer(const char *cache_root, const cuco_env *env, char *path, size_t size,
	eval_elf *elf, cuco_err *err);

/* ---- referee.c: the referee beside a stage (docs/trust.md, "The referee") --- */

/* What a remote referee's host said of the stage it referees, before the
 * referee said it is ready (eval_ssh_referee, runner.c): where the ssh
 * user is root there, the ranks run as the stage user (CUCO_STAGE_USER,
 * else a fresh uid of the stage's own) and in a control group of their own that the referee
 * freezes; elsewhere as the ssh user, and in none. */
typedef struct eval_ssh_stage {
	bool root;                /* the ssh user is root there */
	bool drop;                /* the ranks become uid:gid; the referee stays root */
	unsigned uid, gid;
	char cgroup[128];         /* the stage's group there ("" none) */
	bool v2;                  /* cgroup v2; else a v1 freezer's */
} eval_ssh_stage;

typedef struct eval_referee_args {
	int ranks, warmup, reps;
	double tolerance;
	const char *log_path;     /* the referee's stderr */
	const struct eval_user *owner;  /* the user the stage runs as (drop set); NULL: cuco's */
	const char *gpus;         /* the stage's GPUs as its CUDA_VISIBLE_DEVICES (the slot's, by UUID
	                             where cuco_gpu_nodes_pick knows them), "" or NULL: as
	                             cuco sees them: a GPU referee must own memory on the stage's GPU,
	                             where its probes see the stage's work */
	const struct eval_launch *remote;  /* the ssh runner's stage: the referee runs on its host */
	const char *sum;          /* remote: the referee's SHA-256 (eval_referee_sum), checked there */
} eval_referee_args;

typedef struct eval_referee {
	pid_t pid;                /* -1: not running */
	int in_fd, out_fd;        /* its stdin (the control line, then end of file) and stdout */
	char dir[PATH_MAX];       /* the channel folder on /dev/shm, shown to the stage */
	char *cleanup;            /* remote: the script that removes its folders there; else NULL */
	eval_ssh_stage far;       /* remote: what its host said of the stage (eval_ssh_referee) */
} eval_referee;

/* binary's SHA-256 (hex), which a remote referee's host checks its copy
 * against; computed once per built referee. */
int eval_referee_sum(const char *binary, char sum[65], cuco_err *err);

/* Start the workload's referee (binary) with a fresh channel folder; the
 * stage is then started with $CUCO_CHANNEL = r->dir. A remote one is
 * copied to the stage's host and started there in an ssh session of its
 * own; this returns once it said it is ready (its channel is made there). */
int eval_referee_start(const char *binary, const eval_referee_args *a, eval_referee *r, cuco_err *err);
/* The stage's on_start hook (arg: the eval_referee): where its group is. */
void eval_referee_started(const struct eval_cgroup *cg, void *arg);
/* After the stage ended: the referee's verdict (JSON, malloc'd), or NULL
 * and CUCO_EENV with why when it gave none. */
int eval_referee_finish(eval_referee *r, char **json, char *why, size_t size);
/* Kill it if it still runs, remove the channel folder (remote: the
 * referee's folder and channel on the host). */
void eval_referee_free(eval_referee *r);

/* ---- result.c: native and compat protocols ---------------------------------- */

#define EVAL_MAX_SAMPLES 4096

typedef struct eval_compat eval_compat;  /* compat.c */

typedef struct eval_parse {
	const cuco_workload *wl;
	const eval_ticket *ticket; /* native: the stage's seal; set after init */
	regex_t signal_re;
	char *result_line;        /* native: the JSON of the one line sealed with the ticket */
	char forged[160];         /* native: why a line that claims a verdict is not believed */
	eval_compat *compat;      /* compat: what its lines said so far */
	int rank_signal;          /* "exited on signal N" from mpirun */
	char referee_why[300];    /* referee: why it gave no verdict */
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
	char host_calls_by[256];/* "name=N ..." */
	char protocol_error[320];
	bool correct;
	cuco_timing timing;     /* native: host calls counted in the steps; no spread, no
	                           peak fraction (the evaluator's, from max_us and the peak) */
	double max_us;
	double bytes, flops;
	char environment[160];  /* the harness said the environment is at fault */
	bool started;           /* referee: every rank mapped its channel, so the machine ran the
	                           program; what its output says of the environment is then its own */
} eval_outcome;

void eval_parse_finish(eval_parse *p, eval_outcome *o);
/* Read a native verdict's JSON into o; false with o->protocol_error set. */
bool eval_result_json(const char *json, eval_outcome *o);

/* ---- compat.c: the compat protocol (CUCo's output) -------------------------- */

int eval_compat_new(const cuco_workload *wl, eval_compat **out, cuco_err *err);
void eval_compat_free(eval_compat *c);
void eval_compat_line(eval_compat *c, const char *line);
void eval_compat_finish(eval_compat *c, eval_outcome *o);
/* Validate a compat time regex; for the manifest check. */
int eval_compile_time_re(const char *re, regex_t *out, char *why, size_t size);

/* ---- runner.c: how a program is launched ------------------------------------ */

typedef struct eval_launch {
	cuco_runner_kind kind;
	const char *launcher;     /* mpirun / srun path, "" when run as is */
	const cuco_runner_config *rc;  /* options; slurm: partition, account, GPUs, time */
	const cuco_slot_spec *slot;    /* where: its hosts or nodes */
	const char *visible;      /* local: the ranks' CUDA_VISIBLE_DEVICES in place of the slot's
	                             (its GPUs by UUID); NULL or "": the slot's */
	const char *remote_dir;   /* ssh: a fresh folder on the host, removed after */
	const char *job_name;     /* slurm: the job's or step's name */
	bool in_allocation;       /* slurm: a step of the allocation cuco runs in */
	bool as_root;
	int ranks;
	bool mpi;                 /* needs the MPI launcher (ranks > 1, not family cuda) */
	bool bind;                /* local: a rank per core (--bind-to core), else none */
	double limit_s;           /* remote runners: `timeout` on the far side, per rank */
	const char *preload;      /* the ranks' LD_PRELOAD (the host-call interposer), or NULL */
	bool tag_output;          /* mpirun: each line tagged with its rank (--tag-output), so a
	                             compat program's per-rank lines are told apart (compat.c) */
	const char *ticket;       /* "CUCO_HARNESS=...": ssh sets it on the far side, mpirun
	                             passes it to remote ranks, srun passes the stage's
	                             environment; NULL: none */
	const char *stage_user;   /* ssh: who a refereed stage's ranks become where the ssh user
	                             is root (CUCO_STAGE_USER; NULL: a fresh uid; "root": stay) */
	bool cgroups;             /* ssh: a refereed stage's group there where it can be made */
	const eval_ssh_stage *far;  /* ssh: what the referee's host said of the stage; NULL: none */
} eval_launch;

/* The ssh runner's referee: a script that copies binary to a folder of
 * its own on the slot's host (l->remote_dir's "-referee", new, mode 0700),
 * checks the copy there against sum (its SHA-256, hex) just before it
 * runs, makes the channel folder chan there (new, mode 0700) and runs
 * binary args... there in an ssh session of its own, whose output is the
 * referee's alone. Where the ssh user is root there, the channel is given
 * to the stage user (l->stage_user) as locally (--owner) and the stage's
 * group is made (l->cgroups); first it says so in a line that
 * eval_ssh_stage_parse reads. And a script that removes all of them,
 * killing what is left in the group. */
void eval_ssh_referee(const eval_launch *l, const char *binary, const char *sum, char *const *args,
	const char *chan, cuco_buf *script, cuco_buf *cleanup);
/* A line of the remote referee's session before it is ready: true when it
 * is the host's word on the stage (into far); chan names its group. */
bool eval_ssh_stage_parse(const char *line, const char *chan, eval_ssh_stage *far);

/* The command that runs `prog` (the expanded run template; for ssh it must
 * name the binary as ./<basename of binary>) under the runner: the
 * launcher's words and then prog's, or for ssh /bin/sh -c with a script in
 * which every word is quoted. binary and extras are what ssh copies. */
void eval_launch_argv(const eval_launch *l, char *const *prog, const char *binary,
	const char *const *extras, int nextras, cuco_argv *out);
/* The CPUs of the cores a local run's ranks are bound to, one rank per
 * core: the first `ranks` cores among the allowed CPUs in the order Open
 * MPI's --bind-to core takes them, with all their hardware threads; sysfs
 * is normally "/sys/devices/system/cpu". False when fewer cores are
 * allowed than there are ranks (then nothing is bound). */
bool eval_device_cpus(const char *sysfs, const cpu_set_t *allowed, int ranks, cpu_set_t *device);
/* Run a short command (sinfo, squeue, scancel, `srun --version`), an
 * argument vector, with a time limit, its output (both streams) appended
 * to out when not NULL; returns its exit status, -1 when it was killed or
 * not run. */
int eval_query(char *const *argv, double wall_s, cuco_buf *out);
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
 * and take its device lock. CUCO_EENV when it (every slot) is retired;
 * info is the slot as taken. */
int eval_pool_take(eval_pool *p, int want, int *slot,
	cuco_slot_info *info, cuco_err *err);
/* Give a slot back: fault NULL when it worked, else the environment's
 * failure there (the slot rests or retires). text says what changed, ""
 * when nothing worth a line did; info is the slot as left. */
void eval_pool_give(eval_pool *p, int slot, const char *fault, cuco_slot_info *info, char *text,
	size_t size);
/* This machine's lock on a local slot's GPUs, shared by every cuco process
 * (an flock on /tmp/cuco-gpu-<devices>.lock), so that two runs on one GPU
 * never time at once: contexts on one GPU share it by time slices, and a
 * sample's events then time the other's slice. The devices are the slot's,
 * else visible (the process's CUDA_VISIBLE_DEVICES, cuco_env), else all.
 * Waits for it; *fd is -1 (no lock, and CUCO_EENV) when the file cannot
 * be opened or locked. */
int eval_gpu_lock(const cuco_slot_spec *spec, const char *visible, int *fd, cuco_err *err);
void eval_gpu_unlock(int fd);
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
