/* env.h — cuco's own environment variables (env.c): one table, read once.
 *
 * DESIGN: every CUCO_* variable cuco reads is a row of CUCO_ENV_VARS: its
 * name, the field of cuco_env that holds it, what a value is, its default
 * and a line of help. The process reads them all once, on the first
 * cuco_env_get(), into one struct that the commands, the evaluator and
 * the folder finder (paths.c) take their values from; no one else calls
 * getenv for them. A variable set to "" is not set. A default written as
 * a value is the field's when the variable is not set; one in brackets is
 * prose: the reader that uses the field decides (a folder that is shown
 * only when named, a compiler that is the workload's own). The ENVIRONMENT
 * section of docs/cuco.1 names every row, and a test holds the two
 * together. The world's variables that cuco reads (HOME, XDG_*, TMPDIR,
 * NO_COLOR, SLURM_*, CUDA_VISIBLE_DEVICES, …: CUCO_WORLD_VARS) are read
 * with the table, as they are, into fields of their own. Two are read
 * where they are used: PATH, since a program found on it must be the one
 * a child's exec finds, and a model's key, whose name is the config's
 * and whose value is never kept. The stages get the user's environment
 * through eval/env.c's allowlist.
 */
#ifndef CUCO_ENV_H
#define CUCO_ENV_H

#include <stddef.h>

/* X(NAME, field, what a value is, default, help) */
#define CUCO_ENV_VARS(X) \
	X(CUCO_RUN, run, "a folder", "runs/latest", "the run directory when a command names none") \
	X(CUCO_WORKLOADS, workloads, "folders, colon-separated", "(none)", \
		"searched for workloads before the others") \
	X(CUCO_THEMES, themes, "folders, colon-separated", "(none)", \
		"searched for themes before the others") \
	X(CUCO_THEME, theme, "a theme's name or file", "(the config's [screen] theme)", \
		"the screen's theme when --theme is not given") \
	X(CUCO_MPIRUN, mpirun, "a program", "mpirun", "the launcher of MPI workloads' ranks") \
	X(CUCO_MPICC, mpicc, "a program, with flags", "(the workload's compiler; mpicc)", \
		"the compiler of MPI workloads, and the wrapper MPI's names come from") \
	X(CUCO_NVCC, nvcc, "a program, with flags", "(the workload's compiler)", \
		"the compiler of CUDA workloads") \
	X(CUCO_NCCL_HOME, nccl_home, "a folder", "(CUCO_CUDA_HOME; /usr/local/cuda)", \
		"NCCL's prefix, shown in the sandbox") \
	X(CUCO_CUDA_HOME, cuda_home, "a folder", "(/usr/local/cuda)", \
		"the CUDA toolkit's prefix, shown in the sandbox") \
	X(CUCO_CGROUPS, cgroups, "off", "(on)", \
		"off: stages run without a cgroup of their own (per-process rlimits only), here and, " \
		"for a refereed stage over ssh, on its host") \
	X(CUCO_PASS_ENV, pass_env, "names, blank, comma or colon separated", "(none)", \
		"further variables the stages get; a name that looks like a secret never passes") \
	X(CUCO_SANDBOX, sandbox, "auto, bwrap or off", "(the config's [eval] sandbox; auto)", \
		"the sandbox's mode when --sandbox is not given") \
	X(CUCO_BWRAP, bwrap, "a program", "bwrap", "the bubblewrap program") \
	X(CUCO_STAGE_USER, stage_user, "a user's name or uid", "(nobody)", \
		"the user stages run as when cuco runs as root, and a refereed stage's ranks over ssh " \
		"where the ssh user is root (there, unset: a fresh uid for each stage; best a user of their own: " \
		"cuco doctor warns when it owns other processes); root keeps them root's") \
	X(CUCO_STAGE_INIT, stage_init, "a program", "(the built or installed one)", \
		"each sandboxed stage's first process") \
	X(CUCO_COUNT_LIB, count_lib, "a file", "(the built or installed one)", \
		"the host-call interposer preloaded into candidates' ranks")

/* The world's variables cuco reads, kept as they are: NULL when not set,
 * "" when set empty (each reader says what that means). X(NAME, field).
 * CUDA_VISIBLE_DEVICES, the GPUs this process is given: what the hardware
 * profile counts, local slots share out and the GPU lock is named by
 * (NULL: every GPU; "": none). */
#define CUCO_WORLD_VARS(X) \
	X(CUDA_VISIBLE_DEVICES, visible_gpus) X(HOME, home) X(TMPDIR, tmpdir) X(USER, user) \
	X(XDG_CONFIG_HOME, xdg_config_home) X(XDG_CONFIG_DIRS, xdg_config_dirs) \
	X(XDG_DATA_HOME, xdg_data_home) X(XDG_DATA_DIRS, xdg_data_dirs) \
	X(SLURM_JOB_ID, slurm_job_id) X(SLURM_JOB_NODELIST, slurm_job_nodelist) \
	X(NO_COLOR, no_color) X(TERM, term) X(VISUAL, visual) X(EDITOR, editor) \
	X(LC_ALL, lc_all) X(LC_CTYPE, lc_ctype) X(LANG, lang) X(NCCL_NVLS_ENABLE, nccl_nvls_enable)

/* Each variable's value: cuco's own NULL when not set (nor has a default). */
typedef struct cuco_env {
#define CUCO_ENV_FIELD(name, field, ...) const char *field;
	CUCO_ENV_VARS(CUCO_ENV_FIELD)
	CUCO_WORLD_VARS(CUCO_ENV_FIELD)
#undef CUCO_ENV_FIELD
} cuco_env;

/* One row of the table. */
typedef struct cuco_env_var {
	const char *name, *type, *def, *help;
} cuco_env_var;

/* The table, in the order docs/cuco.1 gives it. */
const cuco_env_var *cuco_env_vars(size_t *n);

/* The variables, read on the first call; the same struct after. */
const cuco_env *cuco_env_get(void);
/* Read them again: for tests that set a variable, never while another
 * thread holds a value of the struct. */
void cuco_env_reread(void);
/* Where temporary files go: $TMPDIR when set, else /tmp. */
const char *cuco_tmp_dir(void);

#endif
