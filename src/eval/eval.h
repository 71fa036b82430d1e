/* eval.h — workloads and the evaluation cascade.
 *
 * A workload is a folder with workload.json (docs/workloads.md): sizes,
 * files, build and run command templates, the design space and its
 * constraints, a peak model and context documents. The evaluator takes a
 * candidate's source and directive through compile → run and verify →
 * benchmark, each stage a child process (an argument vector: no shell) in
 * its own process group with a wall-clock limit, resource limits, a
 * private working directory and an allowlisted environment, and returns a
 * classified result.
 *
 * Threads: cuco_eval_candidate() may be called from several threads at
 * once. Compiles then run in parallel, always on this machine; the run and
 * benchmark stages of a candidate hold one slot of the run's pool (a
 * device set: this machine, a host, a Slurm node) alone, so timings are
 * not polluted, and two candidates run at once only on two slots. The
 * evaluator never calls an LLM, never draws, and never touches the store:
 * the caller records results.
 */
#ifndef CUCO_EVAL_H
#define CUCO_EVAL_H

#include "core.h"
#include "vocab/vocab.h"

#include <stdbool.h>
#include <stddef.h>

#define CUCO_MAX_DIMS 24
#define CUCO_MAX_VALUES 32
#define CUCO_MAX_SIZES 8
#define CUCO_MAX_SIZE_VARS 12
#define CUCO_MAX_CONSTRAINTS 16
#define CUCO_MAX_CONTEXT 8

/* ---- workloads ---------------------------------------------------------- */

/* A workload's family, which says how it is built and run: X(enum, name in
 * workload.json and every view). */
#define CUCO_FAMILIES(X) X(CPU_MPI, "cpu-mpi") X(CUDA_NCCL, "cuda-nccl") X(CUDA, "cuda")

typedef enum cuco_family {
#define X(e, name) CUCO_FAMILY_##e,
	CUCO_FAMILIES(X)
#undef X
	CUCO_FAMILY_COUNT
} cuco_family;
const char *cuco_family_name(cuco_family f);        /* "cuda-nccl", …; "?" out of range */
int cuco_family_parse(const char *name);            /* a cuco_family, or -1 */
typedef enum cuco_dim_kind { CUCO_DIM_ENUM, CUCO_DIM_INT } cuco_dim_kind;

/* One dimension of the design space: a directive field (one of
 * CUCO_DIRECTIVE_DIMS, vocab.h) or a free knob. */
typedef struct cuco_dim {
	char name[32];
	bool directive;          /* one of the five directive fields */
	cuco_dim_kind kind;
	int nvalues;             /* ENUM: allowed values; INT: the explicit list if given */
	char values[CUCO_MAX_VALUES][32];
	long min, max, step;     /* INT range when nvalues == 0 */
	bool pow2;               /* INT: powers of two in [min,max] */
	char define[48];         /* reaches the source as -D<define>=<value>, or */
	char slot[48];           /* replaces the template slot @<slot>@ in the source */
	char help[256];          /* one-line explanation (teaching, prompts) */
} cuco_dim;

/* A forbidden combination: a point matching every listed dimension's
 * values is invalid and never run. */
typedef struct cuco_constraint {
	int nterms;
	struct {
		char dim[32];
		int nvalues;
		char values[8][32];
	} terms[4];
	char why[160];
} cuco_constraint;

typedef struct cuco_size {
	char name[32];
	int nvars;
	struct { char name[24]; long value; } vars[CUCO_MAX_SIZE_VARS];
} cuco_size;

/* How a program's verdict is told: by the referee, a process of its own
 * that draws the inputs, times the steps and checks the outputs
 * (docs/trust.md: the verdict a candidate cannot reach); by the program's
 * own sealed line (native: its harness runs in its process); or by CUCo's
 * Time:/Verification: lines (compat). */
typedef enum cuco_protocol { CUCO_PROTO_NATIVE, CUCO_PROTO_COMPAT, CUCO_PROTO_REFEREE } cuco_protocol;

typedef struct cuco_workload {
	char dir[1024];          /* absolute folder of workload.json */
	char name[64];
	char title[128];
	char description[1024];
	cuco_family family;
	int ranks;
	int nsizes;
	cuco_size sizes[CUCO_MAX_SIZES];
	char default_size[32];
	char baseline_file[128]; /* relative to dir */
	char seed_file[128];     /* "": none, the fast path makes the first */
	char harness_file[128];  /* may be "" */
	int nextras;
	char extras[8][128];
	char build_cmd[1024];    /* template; see docs/workloads.md for placeholders */
	char run_cmd[1024];
	char compiler[256];      /* default {compiler} (mpicc, nvcc) */
	int ndims;
	cuco_dim dims[CUCO_MAX_DIMS];
	int nconstraints;
	cuco_constraint constraints[CUCO_MAX_CONSTRAINTS];
	double tolerance;        /* max error accepted */
	double limit_compile_s, limit_run_s, limit_bench_s;
	int warmup, reps;        /* benchmark defaults */
	double max_spread;       /* a baseline's (max-min)/min past this: a noisy machine;
	                            an interval within 1 + this: within noise */
	char peak_bytes[256];    /* expression over size variables */
	char peak_flops[256];
	double peak_bandwidth_gbs;  /* hardware peak used for peak_fraction; 0 = unknown */
	double peak_gflops;
	cuco_protocol protocol;
	char frame_file[128];    /* the trusted main() the program's object is linked with, or "" */
	char link_cmd[1024];     /* with a frame: {objects} (frame, program) into {output} */
	char referee_file[128];  /* referee: the workload's half of the referee */
	char referee_cmd[1024];  /* referee: builds the referee from {source} at {sizes} */
	char compat_pass[128];   /* compat: a fixed string meaning correct */
	char compat_fail[128];   /* compat: a fixed string meaning wrong; "" = pass's FAIL form */
	char compat_time[128];   /* compat: POSIX ERE, group 1 = time */
	double compat_time_scale;/* multiply the matched number to get µs */
	int ncontext;
	char context[CUCO_MAX_CONTEXT][128];  /* context documents, relative to dir */
} cuco_workload;

/* Load by folder path, by path to workload.json, or by name looked up in
 * the workload folders (core.h, cuco_paths: $CUCO_WORKLOADS, ./workloads,
 * the person's, then cuco's own data folder). Every error names the file,
 * the field and the problem; a name found nowhere, the nearest that is. */
int cuco_workload_load(const char *name_or_path, cuco_workload **out, cuco_err *err);
void cuco_workload_free(cuco_workload *wl);
/* Full validation: fields, files present, templates' placeholders known,
 * seed and baseline readable, constraints naming real dimensions. Calls
 * report() once per problem found; returns the number of problems. */
int cuco_workload_check(const char *name_or_path,
	void (*report)(const char *line, void *arg), void *arg);
/* Names of the shipped workloads (folders with workload.json) found by the
 * same search as load; *names malloc'd array of malloc'd strings. */
int cuco_workload_list(char ***names, size_t *n, cuco_err *err);
const cuco_size *cuco_workload_size(const cuco_workload *wl, const char *name); /* NULL: default */
const cuco_dim *cuco_workload_dim(const cuco_workload *wl, const char *name);
/* Whether a directive lies inside the design space and breaks no constraint;
 * when not, err says which dimension or constraint. */
bool cuco_directive_valid(const cuco_workload *wl, const cuco_directive *d, cuco_err *err);
/* A dimension's values as text, at most CUCO_DIM_LISTED: the listed
 * ones, or its integer range (powers of two, or its steps); how many.
 * A range longer than that is cut there. */
#define CUCO_DIM_LISTED 64
int cuco_dim_values(const cuco_dim *d, char (*out)[32]);

/* The valid directive nearest to base with dimension dim set to value:
 * the fewest other dimensions changed (at most two, earlier dimensions and
 * values first). False when the value is not the dimension's or no such
 * directive is valid. How a GIN island gets its seed's directive. */
bool cuco_directive_nearest(const cuco_workload *wl, const cuco_directive *base,
	const char *dim, const char *value, cuco_directive *out);
/* The seed's own directive: each dimension's first value (or min). */
void cuco_directive_default(const cuco_workload *wl, cuco_directive *out);
/* Bytes and flops of the peak model at a size (NAN when not given). */
int cuco_workload_peak(const cuco_workload *wl, const cuco_size *size,
	double *bytes, double *flops, cuco_err *err);
/* The peak model's arithmetic (expr.c): + - * / and parentheses over
 * numbers, the size's variables and `ranks`. size may be NULL (then only
 * numbers and ranks are known). */
int cuco_expr(const char *text, const cuco_size *size, int ranks, double *out, cuco_err *err);
/* The {compiler} of a workload: $CUCO_MPICC (cpu-mpi) or $CUCO_NVCC (the
 * GPU families) when set in env (env.h), else the manifest's compiler. */
struct cuco_env;
void cuco_workload_compiler(const cuco_workload *wl, const struct cuco_env *env, char *out,
	size_t size);

/* ---- evaluator ---------------------------------------------------------- */

/* X(enum, name in the config and --runner). LOCAL: this machine, mpirun
 * -np N (or the command as is for 1 rank); HOSTFILE: mpirun --host onto
 * each host (group) of an Open MPI hostfile; SLURM: srun onto each node
 * (group) of an allocation or a partition; SSH: copy to each host, run
 * there, bring the output back. */
#define CUCO_RUNNERS(X) X(LOCAL, "local") X(HOSTFILE, "hostfile") X(SLURM, "slurm") X(SSH, "ssh")

typedef enum cuco_runner_kind {
#define X(e, name) CUCO_RUNNER_##e,
	CUCO_RUNNERS(X)
#undef X
} cuco_runner_kind;

/* Where run and benchmark stages run (docs/cluster.md): `--runner` and
 * the config file's [runner] section. Every runner gives the run a pool of
 * slots, one device set each, listed by cuco_runner_slots(). */
typedef struct cuco_runner_config {
	cuco_runner_kind kind;
	char hostfile[1024];       /* hostfile: Open MPI's format, a slot per host (group) */
	char hosts[1024];          /* ssh: user@host[:port],…; slurm: the nodes (a hostlist
	                              expression, "n[1-4]") to use outside an allocation */
	int hosts_per_slot;        /* hosts (nodes) a slot spans; 0 = hostfile: enough
	                              for the ranks by slots=, slurm: 1 */
	int slots_per_host;        /* GPU workloads: slots on each host (group), each
	                              its own set of `ranks` GPUs; 0 = 1 */
	int max_slots;             /* use at most this many slots; 0 = all */
	char partition[64];        /* slurm, outside an allocation */
	char account[64];
	int time_limit_min;        /* slurm: each stage's --time; 0 = its limit, rounded up */
	int gpus_per_task;         /* slurm: --gpus-per-task; 0 = not given */
	char options[512];         /* extra launcher words (mpirun, srun, or ssh and scp),
	                              the user's own: not quoted */
	double retry_after_s;      /* a slot's rest after an environment failure, doubled
	                              at each failure in a row; 0 = 30 s */
	int retire_after;          /* environment failures in a row that retire a slot; 0 = 3 */
} cuco_runner_config;

/* "local", "hostfile", "slurm" or "ssh". */
const char *cuco_runner_name(cuco_runner_kind kind);
bool cuco_runner_parse(const char *text, cuco_runner_kind *out);
/* One key of the [runner] section (kind, hostfile, hosts, hosts_per_slot,
 * slots_per_host, slots, partition, account, time_limit, gpus_per_task,
 * options, retry_after, retire_after); false with why (a phrase) when the
 * key is unknown or its value is not valid. */
bool cuco_runner_config_set(cuco_runner_config *c, const char *key, const char *value,
	char *why, size_t size);

/* One slot as the runner sees it before a run: its name and the hosts or
 * nodes it spans. */
typedef struct cuco_slot_spec {
	char name[64];             /* "local", a host, a node, or "n1+n2" for a group */
	char hosts[512];           /* ssh: user@host[:port]; hostfile: mpirun's --host
	                              list (host:slots,…); slurm: the nodes, comma-separated */
	char gpus[64];             /* its GPUs as CUDA_VISIBLE_DEVICES ("2,3"); "" = all
	                              of the host's (slurm: the ones Slurm gives the step) */
} cuco_slot_spec;

#define CUCO_MAX_SLOTS 64

/* The slots a run with this runner would use for a workload of `ranks`
 * ranks: the local machine; the hostfile's hosts; the ssh hosts; the
 * Slurm allocation's nodes ($SLURM_JOB_NODELIST) when cuco runs inside
 * one, else the `hosts` nodes or those sinfo lists for the partition —
 * each host (group) slots_per_host times, a set of `ranks` GPUs each.
 * *where says in one line where they came from. An error names the file,
 * the variable or the command that failed. */
int cuco_runner_slots(const cuco_runner_config *c, int ranks, cuco_slot_spec *out, int max,
	int *n, char *where, size_t wsize, cuco_err *err);
/* Check that the runner can start anything (`cuco doctor`): the launcher
 * is there and answers (mpirun, srun --version, sinfo, ssh), and the slots
 * resolve (hostfile hosts and ssh hosts by name, Slurm nodes by sinfo).
 * Calls report() once per check; returns the number that failed. */
int cuco_runner_check(const cuco_runner_config *c, int ranks,
	void (*report)(const char *what, bool ok, const char *detail, void *arg), void *arg);

/* Whether stages run inside bubblewrap (docs/configuration.md, [eval]).
 * DEFAULT: $CUCO_SANDBOX if set, else AUTO. AUTO: bwrap when it works here,
 * else resource limits only, said once. BWRAP: bwrap or refuse to start. */
typedef enum cuco_sandbox_mode {
	CUCO_SANDBOX_DEFAULT, CUCO_SANDBOX_AUTO, CUCO_SANDBOX_BWRAP, CUCO_SANDBOX_OFF
} cuco_sandbox_mode;

/* "auto", "bwrap" or "off"; false for anything else. */
bool cuco_sandbox_mode_parse(const char *text, cuco_sandbox_mode *out);
/* Try the sandbox as the evaluator would: *on tells whether stages will
 * run in it, status says so in one line (and why not). An error only when
 * the mode is bwrap and bwrap cannot run, or $CUCO_SANDBOX is not a mode. */
int cuco_sandbox_check(cuco_sandbox_mode mode, bool *on, char *status, size_t size, cuco_err *err);
/* What confines a stage here, measured by a stage that looks (`cuco
 * doctor`): the user it runs as, its PID namespace, the system-call filter,
 * the keyrings, how what it leaves running is counted, the build cache's
 * bounds. Calls report() once per line; errors as cuco_sandbox_check. */
int cuco_stage_check(cuco_sandbox_mode mode,
	void (*report)(const char *what, bool ok, const char *detail, void *arg), void *arg, cuco_err *err);

/* A slot of a run as the evaluator holds it. A run or benchmark stage
 * holds its slot alone (busy); an environment failure there (a host that
 * does not answer, a Slurm job cancelled, preempted or on a failed node)
 * rests the slot, retry_after seconds doubled at each failure in a row,
 * and retire_after of them in a row retire it for the session. */
/* X(enum, name in slot events and views). */
#define CUCO_SLOT_STATES(X) \
	X(IDLE, "idle") X(BUSY, "busy") X(RESTING, "resting") X(RETIRED, "retired")

typedef enum cuco_slot_state {
#define X(e, name) CUCO_SLOT_##e,
	CUCO_SLOT_STATES(X)
#undef X
} cuco_slot_state;

typedef struct cuco_slot_info {
	int index;                 /* 0 .. slots-1 */
	char name[64];
	cuco_slot_state state;
	int failures;              /* environment failures in a row */
	int holds;                 /* run+benchmark holds ended, this session */
	double rest_s;             /* resting: seconds until it is tried again */
} cuco_slot_info;

const char *cuco_slot_state_name(cuco_slot_state s);
/* Which limits hold a stage's processes together here: a cgroup per stage
 * (true: pids.max, memory, a build's CPU, a run's CPUs), or per-process rlimits only
 * (false); status says which, and why. As an evaluator would find it. */
bool cuco_limits_check(char *status, size_t size);

typedef struct cuco_eval_config {
	char run_dir[1024];        /* work/ and cache/ live below it */
	cuco_runner_config runner;
	char size[32];             /* "" = workload default */
	int jobs;                  /* parallel compiles; 0 = number of CPUs */
	double limit_scale;        /* multiplies the manifest's limits; 0 = 1 */
	long mem_limit_mb;         /* RLIMIT_AS per stage; 0 = default (8 GiB; none for CUDA) */
	bool keep_workdirs;
	int max_procs;             /* live processes per stage before it is killed; 0 = 256 */
	double peak_bandwidth_gbs; /* the hardware's peaks for peak_fraction; 0 = the */
	double peak_gflops;        /* manifest's peak.bandwidth_gbs / peak.gflops */
	cuco_sandbox_mode sandbox;
	/* Told of every change of a slot's state (busy, idle, resting after an
	 * environment failure, retired, back in service), from the thread that
	 * caused it, with no lock of the evaluator's held; text is one line
	 * for the log, "" for busy and idle. NULL: nobody listens. */
	void (*slot_changed)(void *arg, const struct cuco_slot_info *slot, const char *text);
	void *slot_changed_arg;
	long disk_limit_mb;        /* in the sandbox, each folder a stage writes is a tmpfs of
	                              this size; 0 = 1024 */
	long cache_program_mb;     /* RUN/cache: a built program's size at most; 0 = 256 */
	long cache_run_mb;         /* RUN/cache: all of them together; 0 = 4096 */
	/* cuco's environment variables (env.h) its stages, compilers and
	 * sandbox take; NULL: the process's, cuco_env_get(). */
	const struct cuco_env *env;
} cuco_eval_config;

typedef struct cuco_evaluator cuco_evaluator;

int cuco_evaluator_new(const cuco_workload *wl, const cuco_eval_config *cfg,
	cuco_evaluator **out, cuco_err *err);
void cuco_evaluator_free(cuco_evaluator *ev);
/* The evaluator's cuco_limits_check. */
bool cuco_evaluator_limits(const cuco_evaluator *ev, char *status, size_t size);
/* Which user the evaluator's stages run as, in one line; true when it is
 * not root although cuco is (docs/architecture.md, the sandbox). */
bool cuco_evaluator_stage_user(const cuco_evaluator *ev, char *status, size_t size);
/* A refereed workload's referee, built at first need from trusted
 * sources (docs/trust.md, "The referee"): its path into path. A build that
 * fails is CUCO_EDATA, with the compiler's last lines. */
int cuco_evaluator_referee(cuco_evaluator *ev, char *path, size_t size, cuco_err *err);
/* The run's slots as they are now (at most max); returns how many. */
int cuco_evaluator_slots(cuco_evaluator *ev, cuco_slot_info *out, int max);

typedef struct cuco_eval_result {
	bool ok;                     /* passed every stage */
	bool environment;            /* failure is the environment's, not the candidate's */
	cuco_failure failure;        /* "" when ok */
	int signal;                  /* crash: the signal */
	cuco_timing timing;          /* its host calls counted by hostcalls.h; its
	                                peak_fraction NAN when the workload has no peak */
	double bytes, flops;
	bool cached_build;
	double compile_s, run_s, bench_s;  /* wall time of each stage */
	double overhead_s;           /* evaluator time outside the children */
	int slot;                    /* the slot its run and benchmark held; -1: none */
	char slot_name[64];
	int slot_retries;            /* slots given up on for the environment first */
} cuco_eval_result;

/* The compile stage alone (cuco init's trial build); res->ok when built. */
int cuco_eval_build(cuco_evaluator *ev, const char *source, size_t len,
	const cuco_directive *dir, cuco_eval_result *res, cuco_err *err);
/* Evaluate one candidate end to end. bench=false stops after run+verify.
 * Returns CUCO_OK whenever a result was produced (pass or classified
 * failure); an error return means the evaluator itself could not work. */
int cuco_eval_candidate(cuco_evaluator *ev, const char *source, size_t len,
	const cuco_directive *dir, bool bench, cuco_eval_result *res, cuco_err *err);
/* The same on one slot (0 .. slots-1), waiting for it when busy, and with
 * no retry elsewhere: what a measurement paired with another on the same
 * slot needs. -1: the first slot free, and after an environment failure of
 * a slot the run and benchmark again on another (up to three slots). */
int cuco_eval_candidate_on(cuco_evaluator *ev, int slot, const char *source, size_t len,
	const cuco_directive *dir, bool bench, cuco_eval_result *res, cuco_err *err);
/* A round of a paired comparison: the benchmark again, of a candidate whose
 * build is cached (one cuco_eval_candidate passed in this run) — without
 * the separate run and verify stage, since the benchmark checks the answer
 * too. Without a cached build, cuco_eval_candidate with bench. */
int cuco_eval_remeasure(cuco_evaluator *ev, const char *source, size_t len,
	const cuco_directive *dir, cuco_eval_result *res, cuco_err *err);
/* The same on one slot, as cuco_eval_candidate_on: every round of a
 * comparison on the one slot, so that no ratio mixes two machines. */
int cuco_eval_remeasure_on(cuco_evaluator *ev, int slot, const char *source, size_t len,
	const cuco_directive *dir, cuco_eval_result *res, cuco_err *err);

/* ---- hardware profile (hardware.c) ------------------------------------- */

typedef struct cuco_hardware {
	char cpu_model[128];
	int cpus;
	long mem_mb;
	int ngpus;                 /* 0 when no GPU is usable */
	char gpu_model[128];
	int sm_count;
	long gpu_mem_mb;
	double hbm_gbs;            /* peak memory bandwidth */
	double tensor_tflops;      /* bf16 dense tensor-core peak */
	char nvlink[256];          /* topology in short, "" when none */
	double nvlink_gbs;         /* NVLink per direction per GPU (datasheet); 0 when none joins the GPUs */
	char driver[32];
	char cuda_version[32];
	char nccl_version[32];     /* of the library that will be loaded */
	bool gin;                  /* GPU-initiated networking usable */
	char missing[512];         /* what doctor found missing, "; "-separated */
} cuco_hardware;

/* Detect what this machine offers; never fails (absent parts stay empty).
 * GPUs count as CUDA_VISIBLE_DEVICES leaves them to a process. */
void cuco_hardware_detect(cuco_hardware *hw);
/* This machine as the process first detected it: detection runs once,
 * and what a process does with the hardware reads this (or is handed it). */
const cuco_hardware *cuco_hardware_get(void);
struct cJSON *cuco_hardware_to_json(const cuco_hardware *hw);

/* Whether this machine can run a workload itself: the GPU families need
 * one visible GPU per rank. When not, says why in one line. */
bool cuco_hardware_fits(const cuco_hardware *hw, const cuco_workload *wl, char *why, size_t size);

/* The GPUs' device nodes (hardware.c): which /dev/nvidiaN is which GPU, so
 * that a stage in the sandbox is shown its slot's GPUs and no other
 * (docs/trust.md, "One slot, its GPUs"). Read once, at the edge: the
 * driver's list of GPUs (/proc/driver/nvidia/gpus/<PCI bus id>/information:
 * "Device Minor:", "GPU UUID:", "GPU Excluded:") and the nodes of /dev. A
 * slot's GPU k is the k-th in PCI bus order: nvidia-smi's index, the one
 * cuco's slots and its topology use (CUDA's own default order, fastest
 * first, may differ), so a stage is told its GPUs by UUID. */
#define CUCO_MAX_GPUS 64

typedef struct cuco_gpu_dev {
	char bus_id[32];           /* "0000:3b:00.0" */
	char uuid[64];             /* "GPU-…" */
	int minor;                 /* its node: /dev/nvidia<minor> */
} cuco_gpu_dev;

typedef struct cuco_gpu_nodes {
	char dev[256];             /* where the nodes are ("/dev") */
	cuco_gpu_dev gpus[CUCO_MAX_GPUS];  /* the driver's GPUs in PCI bus order, but those excluded
	                                      and those without a node in dev */
	int ngpus;
	char present[CUCO_MAX_GPUS + 8][24];  /* the GPU nodes dev has: nvidiaN, the control nodes */
	int npresent;
	char unknown[160];         /* "" when each node's GPU is known; else why not */
} cuco_gpu_nodes;

/* Read the nodes of dev and the driver's list in proc (a folder standing
 * in for /proc/driver/nvidia/gpus). Never fails: what is missing is said
 * in out->unknown. */
void cuco_gpu_nodes_read(const char *dev, const char *proc, cuco_gpu_nodes *out);
/* This machine's (/dev, /proc/driver/nvidia/gpus), read on the first call. */
const cuco_gpu_nodes *cuco_gpu_nodes_get(void);

/* What a stage on GPUs `devices` (CUDA_VISIBLE_DEVICES' form: indices or
 * UUIDs; NULL or "": every GPU) is shown: the control nodes CUDA needs
 * (nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset, nvidia-caps/,
 * WSL's dxg) and those GPUs' nodes; where the GPUs' nodes cannot be told
 * apart, every GPU node, and why says so. */
typedef struct cuco_gpu_binds {
	const char *dev;           /* nodes->dev */
	char names[CUCO_MAX_GPUS + 8][24];  /* names in nodes->dev, shown at /dev/<name> */
	int n;
	char visible[1024];        /* the stage's CUDA_VISIBLE_DEVICES (UUIDs); "": as it was */
	char why[200];             /* "": only the slot's GPUs; else why every GPU is shown */
} cuco_gpu_binds;
void cuco_gpu_nodes_pick(const cuco_gpu_nodes *nodes, const char *devices, cuco_gpu_binds *out);
/* One line on what a GPU stage is shown here (`cuco doctor`, the sandbox's
 * line); false when a stage sees every GPU of a machine that has several. */
bool cuco_gpu_nodes_say(const cuco_gpu_nodes *nodes, char *line, size_t size);

/* The peaks a workload's fraction of peak is measured against here: the
 * GPU's tensor-core rate; for one GPU its HBM, for several the link the
 * bytes cross (NVLink from the profile where known); else the manifest's. */
typedef struct cuco_peak {
	double bandwidth_gbs, gflops;  /* 0: unknown */
	const char *bandwidth_of;      /* what the bandwidth is of, for people */
} cuco_peak;
void cuco_hardware_peak(const cuco_hardware *hw, const cuco_workload *wl, cuco_peak *pk);

#endif
