/* evaluator.c — the cascade: compile → run and verify → benchmark.
 *
 * Each evaluation gets a private folder RUN/work/<hash>-XXXXXX/ holding the
 * source, the stage logs and whatever the program writes. Builds are cached
 * as RUN/cache/<hash>, the hash covering the source after slots, the
 * build command and the compiler's version, so a rebuilt toolchain or a
 * changed flag never reuses a stale binary. A build lands in the cache by
 * rename(2), so two threads building the same thing both end up right.
 *
 * A session killed mid-evaluation leaves its folders behind: the
 * evaluator that finds itself alone on a run (an flock on RUN/work) removes
 * them before it starts, with the private $TMPDIR folders whose names carry
 * this run's id. */
#include "eval/eval_int.h"
#include "../../workloads/common/cuco_channel.h"
#include "../../workloads/common/cuco_seal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#define DEFAULT_MEM_MB 8192L  /* mpirun and MPI ranks map a lot of address space */
#define DEFAULT_FSIZE_MB 1024L
#define DEFAULT_MAX_PROCS 256
#define LOG_CAP (4u << 20)
#define GRACE_S 1.0
#define LAUNCH_S 30.0        /* ssh's connecting and copying, mpirun's starting its
                                daemons over ssh: on top of a stage's limit */
#define SLURM_QUEUE_S 600.0  /* waiting for a node, on top of a stage's limit */
#define REMOTE_GRACE_S 10.0  /* srun and mpirun pass a SIGTERM on and clean up */
#define SLOT_TRIES 3          /* slots an evaluation tries when the environment fails */
/* The least median a benchmark may report: a nanosecond. Nothing a stage
 * times (a launch, an MPI call, a loop of work) is faster, and a harness
 * that says 1e-300 us would be a 300-digit speedup (issue 18). */
#define MIN_LATENCY_US 1e-3

struct cuco_evaluator {
	cuco_workload wl;
	cuco_eval_config cfg;
	const cuco_size *size;
	char compiler[256];
	char compiler_version[512];
	bool compiler_missing;
	bool mpi;                    /* the program needs an MPI launcher */
	bool gpu_lock;               /* stages take the machine's GPU lock (local GPU runs) */
	atomic_int gpu_lock_said;
	char launcher[PATH_MAX];
	char launcher_missing[160];  /* why the runner cannot start anything */
	char gpu_missing[160];
	char work_root[PATH_MAX], cache_root[PATH_MAX];
	eval_cache cache;            /* RUN/cache's bounds (cache.c) */
	int work_lock;               /* flock on work_root, or -1 when not alone */
	char tmp_base[PATH_MAX];     /* $TMPDIR, else /tmp */
	char tmp_prefix[64];         /* "cuco-tmp-<run id>-": this run's private $TMPDIRs */
	char src_name[32];
	eval_limits limits;
	eval_sandbox sandbox;
	char interposer[PATH_MAX];   /* cuco-count.so in the cache, "" when none */
	char common_dir[PATH_MAX];   /* cuco's harness headers, shown to stages (eval_common_dir) */
	eval_known known;            /* the workload's baseline and seed, which the scan trusts (trust.c) */
	eval_elf interposer_elf;
	eval_filter filter;          /* compiles, CPU runs (seccomp.c) */
	eval_filter gpu_filter;      /* GPU runs: the same, Unix sockets allowed */
	long disk_mb;                /* each writable tmpfs of a sandboxed stage */
	eval_cgroups cgroups;        /* a group per stage, where the machine allows */
	/* A run and its benchmark hold one slot alone (slots.c). When the CPU
	 * itself is the device (MPI ranks on a machine with no core to spare),
	 * compiles hold the local slot's device lock shared: they still run
	 * side by side, but never while a benchmark is timing. */
	eval_pool pool;
	bool cpu_is_device;
	bool bind;                    /* local MPI ranks: one per core of the device set */
	bool pin_compiles;            /* compiles run on compile_cpus, off the ranks' cores */
	cpu_set_t compile_cpus;
	cpu_set_t stage_cpus;         /* a local run stage's cpuset: the ranks' cores, or all of cuco's */
	bool in_allocation;          /* slurm: stages are steps of cuco's own allocation */
	atomic_uint stages;          /* names Slurm jobs: cuco-<run>-<slot>-<n> */
	pthread_mutex_t jobs_lock;
	pthread_cond_t jobs_cond;
	int jobs_free;                /* compile slots left */
	/* A refereed workload's trusted builds (trusted_build): made once, at
	 * first need, into the cache. */
	pthread_mutex_t trusted_lock;
	char frame_obj[PATH_MAX + 96]; /* the frame's object, "" until built */
	eval_objrules *objrules;      /* what a framed candidate's object may hold, made with the frame */
	char referee_bin[PATH_MAX + 96]; /* the referee, "" until built */
	char referee_sum[65];         /* its SHA-256, for the ssh runner's hosts; "" until needed */
};

/* ---- setup ------------------------------------------------------------------ */

static void collect_line(const char *line, size_t len, void *arg)
{
	cuco_buf *b = arg;
	if (b->len < 400) {
		cuco_buf_append(b, line, len);
		cuco_buf_puts(b, "\n");
	}
}

/* Whether path is dir or lies below it. */
static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* What of the workloads a stage sees: the workload folder's parent, since
 * templates reach shared headers as {workload}/../common, unless that
 * parent holds the home or the config folder, which must stay hidden. */
static void workload_shelf(const cuco_workload *wl, const cuco_env *env, char *out, size_t size)
{
	const char *home = env->home, *xdg = env->xdg_config_home;
	cuco_strlcpy(out, wl->dir, size);
	char *slash = strrchr(out, '/');
	if (!slash || slash == out)
		return;
	*slash = '\0';
	if ((home && below(home, out)) || (xdg && below(xdg, out)))
		cuco_strlcpy(out, wl->dir, size);
}

/* The stage's system-call filter: none for a remote runner's launcher (ssh
 * and srun reach their agents through Unix sockets); a GPU workload's ranks
 * keep Unix sockets (CUDA's driver makes one in cuInit: seccomp.c). */
static const eval_filter *stage_filter(const cuco_evaluator *ev, bool run)
{
	if (run && ev->cfg.runner.kind != CUCO_RUNNER_LOCAL)
		return NULL;
	return run && ev->wl.family != CUCO_FAMILY_CPU_MPI ? &ev->gpu_filter : &ev->filter;
}

/* bwrap's words for a stage working in workdir; NULL when stages run with
 * limits only. The run and benchmark stages of remote runners (hostfile,
 * slurm, ssh) are left out: their launchers need the network and the
 * user's keys in ~/.ssh, and the candidate runs on other hosts, beyond
 * this sandbox's reach anyway. Compiles always run here, so always in it. */
/* tmpdir: the stage's private $TMPDIR (a tmpfs of its own in the sandbox),
 * or NULL. A build sees its source and writes its output in the host's
 * work folder; everything else it writes is in tmpfs, gone after. */
/* A build sees `in` (read-only) and writes `out`, files of the work
 * folder (either may be NULL); a run stage writes the ticket file of a
 * framed native program (out), or the referee's channel folder, and a GPU
 * workload's sees its slot's GPUs (gpu; a build, none). */
typedef struct stage_files {
	const char *in, *out, *channel;
	const cuco_gpu_binds *gpu;
} stage_files;

static char **stage_sandbox(const cuco_evaluator *ev, const char *workdir, const char *tmpdir,
	bool run, const stage_files *f)
{
	if (run && ev->cfg.runner.kind != CUCO_RUNNER_LOCAL)
		return NULL;
	/* The run directory is hidden after the folders shown again, so that
	 * none of them (a workload folder holding runs/, say) brings the
	 * store back; of the run, only built programs stay, read-only. */
	char shelf[PATH_MAX];
	workload_shelf(&ev->wl, ev->cfg.env, shelf, sizeof shelf);
	eval_sandbox_view v = {
		.workdir = workdir,
		.tmpdir = tmpdir,
		.disk_mb = ev->disk_mb,
		.layers = {
			{ ev->cfg.env->home, EVAL_SCRATCH }, { ev->cfg.env->xdg_config_home, EVAL_HIDE },
			{ shelf, EVAL_SHOW }, { ev->cfg.env->cuda_home, EVAL_SHOW },
			{ ev->cfg.env->nccl_home, EVAL_SHOW },
			{ ev->common_dir, EVAL_SHOW }, { ev->cfg.run_dir, EVAL_HIDE },
			{ ev->cache_root, EVAL_SHOW },
		},
		.gpu = f ? f->gpu : NULL,
		/* bwrap loads the stage's filter, where it has one. */
		.seccomp = eval_filter_available() && stage_filter(ev, run),
	};
	if (f && f->in) {
		v.files[0].name = f->in;
		v.files[1].name = f->out;
		v.files[1].writable = true;
	} else if (f && f->out) {
		v.files[0].name = f->out;
		v.files[0].writable = true;
	}
	v.channel = f ? f->channel : NULL;
	return eval_sandbox_argv(&ev->sandbox, &v);
}


static long half_of_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (long)((double)pages * (double)size / 2 / (1 << 20)) : DEFAULT_MEM_MB;
}

/* `{compiler} --version`, once: part of every build's cache key. */
static void probe_compiler(cuco_evaluator *ev)
{
	cuco_buf out = { 0 };
	cuco_argv cmd = { 0 };
	cuco_argv_push_words(&cmd, ev->compiler);
	cuco_argv_push(&cmd, "--version");
	eval_limits lim = ev->limits;
	lim.wall_s = 30;
	lim.sandbox = stage_sandbox(ev, ev->work_root, NULL, false, NULL);
	lim.filter = stage_filter(ev, false);
	eval_stage st;
	char log[PATH_MAX + 32];
	snprintf(log, sizeof log, "%s/compiler-version.log", ev->work_root);
	cuco_err err = { 0 };
	if (eval_stage_run(cmd.v, ev->work_root, log, &lim, collect_line, &out, &st, &err) != CUCO_OK
		|| st.exit_code != 0 || st.timed_out)
		ev->compiler_missing = true;
	else
		cuco_strlcpy(ev->compiler_version, out.data ? out.data : "", sizeof ev->compiler_version);
	eval_sandbox_argv_free((char **)lim.sandbox);
	unlink(log);
	cuco_argv_free(&cmd);
	cuco_buf_free(&out);
}

static void find_launcher(cuco_evaluator *ev)
{
	const char *name = NULL;
	bool needed = true;
	switch (ev->cfg.runner.kind) {
	case CUCO_RUNNER_LOCAL:
	case CUCO_RUNNER_HOSTFILE:  /* mpirun takes even one rank to its host */
		/* One local rank needs it too when its program links MPI
		 * (inspect_binary), so it is looked up for every MPI family. */
		needed = ev->mpi || ev->cfg.runner.kind == CUCO_RUNNER_HOSTFILE;
		if (needed || ev->wl.family != CUCO_FAMILY_CUDA) {
			name = ev->cfg.env->mpirun;
		}
		break;
	case CUCO_RUNNER_SLURM:
		name = "srun";
		break;
	case CUCO_RUNNER_SSH:
		name = "ssh";
		break;
	}
	if (name && !cuco_which(name, ev->launcher, sizeof ev->launcher)) {
		ev->launcher[0] = '\0';
		if (needed)
			snprintf(ev->launcher_missing, sizeof ev->launcher_missing,
				"%s not found (needed to run %d ranks with this runner)", name, ev->wl.ranks);
	}
}

/* The GPUs a local slot's stages are shown: the slot's own (the runner
 * gives the one local slot its ranks' GPUs, runner.c whole_host), else,
 * on a machine of fewer GPUs than ranks, the ones cuco was shown. */
static void slot_gpu_nodes(const cuco_evaluator *ev, const cuco_slot_spec *slot, cuco_gpu_binds *b)
{
	cuco_gpu_nodes_pick(cuco_gpu_nodes_get(), *slot->gpus ? slot->gpus : ev->cfg.env->visible_gpus, b);
}

/* The GPU nodes each slot's run stages are shown in the sandbox, a line
 * each in the log: a warning where they are every GPU's for want of a map. */
static void say_gpu_nodes(const cuco_evaluator *ev)
{
	for (int i = 0; ev->sandbox.on && i < ev->pool.n; i++) {
		const cuco_slot_spec *slot = &ev->pool.slots[i].spec;
		cuco_gpu_binds b;
		slot_gpu_nodes(ev, slot, &b);
		cuco_buf shown = { 0 };
		for (int k = 0; k < b.n; k++)
			cuco_buf_printf(&shown, "%s/dev/%s", k ? ", " : "", b.names[k]);
		cuco_log(*b.why ? CUCO_LOG_WARN : CUCO_LOG_INFO, "sandbox: slot %s's GPU stages are shown %s%s%s",
			slot->name, shown.data ? shown.data : "no GPU node", *b.why ? ", every GPU's: " : "", b.why);
		cuco_buf_free(&shown);
	}
}

static void check_gpu(cuco_evaluator *ev)
{
	if (ev->wl.family == CUCO_FAMILY_CPU_MPI || ev->cfg.runner.kind != CUCO_RUNNER_LOCAL)
		return;  /* on another host the GPU is that host's business */
	if (access("/dev/nvidiactl", F_OK) != 0 && access("/dev/dxg", F_OK) != 0)
		snprintf(ev->gpu_missing, sizeof ev->gpu_missing, "no GPU: /dev/nvidiactl is missing");
	say_gpu_nodes(ev);
}

/* Remove every entry of dir whose name starts with prefix. */
static void sweep(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	size_t plen = strlen(prefix);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strncmp(e->d_name, prefix, plen) != 0)
			continue;
		char path[PATH_MAX + 256];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		cuco_remove_tree(path);
	}
	closedir(d);
}

/* The run's id names its private $TMPDIR folders, so that a later
 * evaluator of the same run knows which leftovers are its own. */
static void name_tmp(cuco_evaluator *ev)
{
	cuco_strlcpy(ev->tmp_base, cuco_tmp_dir(), sizeof ev->tmp_base);
	char real[PATH_MAX];
	const char *run = realpath(ev->cfg.run_dir, real) ? real : ev->cfg.run_dir;
	snprintf(ev->tmp_prefix, sizeof ev->tmp_prefix, "cuco-tmp-%012llx-",
		(unsigned long long)(XXH3_64bits(run, strlen(run)) & 0xffffffffffffULL));
}

/* Alone on this run: what a killed session left is nobody's now. */
static void sweep_leftovers(cuco_evaluator *ev)
{
	ev->work_lock = open(ev->work_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ev->work_lock >= 0 && flock(ev->work_lock, LOCK_EX | LOCK_NB) != 0) {
		close(ev->work_lock);
		ev->work_lock = -1;
	}
	if (ev->work_lock < 0)
		return;
	if (!ev->cfg.keep_workdirs)  /* kept to be looked at */
		sweep(ev->work_root, "");
	sweep(ev->tmp_base, ev->tmp_prefix);
}

/* Where timings and compiles run. Local MPI ranks are bound one per core
 * of the device set; compiles go to the cores left over. With none left
 * (the 2-core machine, 2 ranks), a CPU workload's compiles hold the device
 * lock shared instead: they run side by side, but never while a run or
 * benchmark is timing. */
static void place_work(cuco_evaluator *ev)
{
	cpu_set_t allowed, device;
	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		for (long c = 0, n = sysconf(_SC_NPROCESSORS_ONLN); c < n && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, &allowed);
	bool fits = eval_device_cpus("/sys/devices/system/cpu", &allowed, ev->wl.ranks, &device);
	bool local = ev->cfg.runner.kind == CUCO_RUNNER_LOCAL;
	CPU_ZERO(&ev->compile_cpus);
	if (fits)
		CPU_XOR(&ev->compile_cpus, &allowed, &device);
	int spare = CPU_COUNT(&ev->compile_cpus);
	ev->bind = local && ev->mpi && fits;
	ev->stage_cpus = ev->bind ? device : allowed;
	ev->pin_compiles = ev->bind && spare > 0;
	ev->cpu_is_device = ev->wl.family == CUCO_FAMILY_CPU_MPI && local && spare == 0;
}

/* A compile on the spare cores: this thread's affinity, which the stage's
 * processes inherit, for as long as the stage runs. */
static bool pin_compile(const cuco_evaluator *ev, cpu_set_t *saved)
{
	return ev->pin_compiles && pthread_getaffinity_np(pthread_self(), sizeof *saved, saved) == 0
		&& pthread_setaffinity_np(pthread_self(), sizeof ev->compile_cpus, &ev->compile_cpus) == 0;
}

int cuco_evaluator_new(const cuco_workload *wl, const cuco_eval_config *cfg,
	cuco_evaluator **out, cuco_err *err)
{
	cuco_evaluator *ev = cuco_xcalloc(1, sizeof *ev);
	ev->wl = *wl;
	ev->cfg = *cfg;
	if (!ev->cfg.env)
		ev->cfg.env = cuco_env_get();
	ev->size = cuco_workload_size(&ev->wl, cfg->size);
	if (!ev->size) {
		free(ev);
		return cuco_errf(err, CUCO_EDATA, "%s: size %s: no such size", wl->name, cfg->size);
	}
	if (cfg->runner.slots_per_host > 1 && wl->family == CUCO_FAMILY_CPU_MPI) {
		free(ev);
		return cuco_errf(err, CUCO_EUSAGE, "slots_per_host: %s is a CPU workload, and slots on one host "
			"would share its cores; slots_per_host splits a host's GPUs", wl->name);
	}
	bool spread = cfg->runner.kind == CUCO_RUNNER_HOSTFILE || cfg->runner.kind == CUCO_RUNNER_SLURM;
	if (wl->protocol == CUCO_PROTO_REFEREE && spread) {
		free(ev);
		return cuco_errf(err, CUCO_EUSAGE, "--runner %s: %s is refereed, and its referee must share one "
			"host with all its ranks, which the %s runner may spread over several; use the local or ssh "
			"runner (docs/cluster.md)", cuco_runner_name(cfg->runner.kind), wl->name,
			cuco_runner_name(cfg->runner.kind));
	}
	cuco_slot_spec *slots = cuco_xcalloc(CUCO_MAX_SLOTS, sizeof *slots);
	int nslots = 0;
	char where[256];
	int rc = cuco_runner_slots(&cfg->runner, wl->ranks, slots, CUCO_MAX_SLOTS, &nslots, where,
		sizeof where, err);
	if (rc != CUCO_OK) {
		free(slots);
		free(ev);
		return rc;
	}
	eval_pool_init(&ev->pool, slots, nslots, cfg->runner.retry_after_s, cfg->runner.retire_after);
	free(slots);
	cuco_log(CUCO_LOG_INFO, "evaluator: %s runner, %d slot%s: %s", cuco_runner_name(cfg->runner.kind),
		nslots, nslots == 1 ? "" : "s", where);
	if (wl->protocol == CUCO_PROTO_REFEREE && cfg->runner.kind == CUCO_RUNNER_SSH)
		cuco_log(CUCO_LOG_WARN, "evaluator: %s over ssh: each stage's referee runs on its host as the "
			"ssh user; as root there its ranks run as the stage user (%s) and a cgroup made there freezes "
			"the gaps between steps; as another user the ranks are the referee's uid, who may replace or "
			"signal it, nothing is frozen (\"frozen\": false), and its verdict is defence in depth; each "
			"stage's \"referee on HOST\" line says which (docs/trust.md)", wl->name,
			ev->cfg.env->stage_user ? ev->cfg.env->stage_user : "CUCO_STAGE_USER, else a uid of each stage's own");
	ev->in_allocation = cfg->runner.kind == CUCO_RUNNER_SLURM && eval_slurm_allocation(NULL, 0);
	snprintf(ev->work_root, sizeof ev->work_root, "%s/work", cfg->run_dir);
	snprintf(ev->cache_root, sizeof ev->cache_root, "%s/cache", cfg->run_dir);
	if (cuco_mkdir_p(ev->work_root, err) != CUCO_OK || cuco_mkdir_p(ev->cache_root, err) != CUCO_OK
			|| eval_sandbox_open(cfg->sandbox, ev->cfg.env, &ev->sandbox, err) != CUCO_OK) {
		eval_pool_free(&ev->pool);
		free(ev);
		return err->code;
	}
	name_tmp(ev);
	sweep_leftovers(ev);
	eval_cache_open(&ev->cache, ev->cache_root, cfg->cache_program_mb, cfg->cache_run_mb);
	ev->disk_mb = cfg->disk_limit_mb > 0 ? cfg->disk_limit_mb : EVAL_DISK_MB;
	eval_cgroups_open(&ev->cgroups, ev->cfg.env);
	cuco_log(CUCO_LOG_INFO, "limits: %s", ev->cgroups.status);
	eval_filter_build(&ev->filter, false);
	eval_filter_build(&ev->gpu_filter, true);
	const char *ext = strrchr(*wl->seed_file ? wl->seed_file : wl->baseline_file, '.');
	snprintf(ev->src_name, sizeof ev->src_name, "candidate%s", ext && strlen(ext) < 10 ? ext : ".c");
	cuco_workload_compiler(wl, ev->cfg.env, ev->compiler, sizeof ev->compiler);
	ev->mpi = wl->family != CUCO_FAMILY_CUDA && wl->ranks > 1;
	bool cuda = wl->family != CUCO_FAMILY_CPU_MPI;
	ev->gpu_lock = cuda && cfg->runner.kind == CUCO_RUNNER_LOCAL;
	ev->limits = (eval_limits){
		.grace_s = GRACE_S,
		/* CUDA maps far more address space than it uses: no RLIMIT_AS there. */
		.mem_mb = cfg->mem_limit_mb > 0 ? cfg->mem_limit_mb : cuda ? 0 : DEFAULT_MEM_MB,
		.fsize_mb = DEFAULT_FSIZE_MB,
		.max_procs = cfg->max_procs > 0 ? cfg->max_procs : DEFAULT_MAX_PROCS,
		.log_cap = LOG_CAP,
		.cgroups = &ev->cgroups,
		.pass_env = ev->cfg.env->pass_env,
		/* The candidate's processes together: its limit, or 8 GiB; a GPU
		 * workload's host side, half the machine (RLIMIT_AS cannot hold
		 * CUDA, a group can). */
		.group = { .max_tasks = cfg->max_procs > 0 ? cfg->max_procs : DEFAULT_MAX_PROCS,
			.mem_mb = cfg->mem_limit_mb > 0 ? cfg->mem_limit_mb : cuda ? half_of_memory() : DEFAULT_MEM_MB },
	};
	pthread_mutex_init(&ev->jobs_lock, NULL);
	cuco_cond_init(&ev->jobs_cond);
	pthread_mutex_init(&ev->trusted_lock, NULL);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	place_work(ev);
	ev->jobs_free = cfg->jobs > 0 ? cfg->jobs : (int)(ncpu > 0 ? ncpu : 1);
	eval_common_dir(ev->common_dir);
	char shelf[PATH_MAX];
	workload_shelf(&ev->wl, ev->cfg.env, shelf, sizeof shelf);
	/* In the sandbox only what it shows as it is must be open to the stage
	 * user (the run folder is hidden, $TMPDIR a tmpfs of its own). */
	const char *reach[] = { shelf, ev->common_dir, ev->cfg.env->cuda_home, ev->cfg.env->nccl_home,
		cfg->run_dir, ev->tmp_base };
	size_t nreach = sizeof reach / sizeof reach[0] - (ev->sandbox.on ? 2 : 0);
	eval_sandbox_reach(&ev->sandbox, reach, nreach);
	ev->limits.user = &ev->sandbox.user;
	cuco_log(CUCO_LOG_INFO, "stages: %s", ev->sandbox.user_status);
	probe_compiler(ev);
	find_launcher(ev);
	check_gpu(ev);
	eval_known_read(&ev->known, wl);
	cuco_err why = { 0 };
	if (eval_trust_interposer(ev->cache_root, ev->cfg.env, ev->interposer, sizeof ev->interposer,
			&ev->interposer_elf, &why) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "eval: host calls will not be counted: %s", why.msg);
	*out = ev;
	return CUCO_OK;
}

void cuco_evaluator_free(cuco_evaluator *ev)
{
	if (!ev)
		return;
	if (ev->work_lock >= 0)
		close(ev->work_lock);
	eval_pool_free(&ev->pool);
	eval_elf_free(&ev->interposer_elf);
	eval_known_free(&ev->known);
	eval_cgroups_close(&ev->cgroups);
	pthread_mutex_destroy(&ev->jobs_lock);
	pthread_cond_destroy(&ev->jobs_cond);
	pthread_mutex_destroy(&ev->trusted_lock);
	eval_objrules_free(ev->objrules);
	free(ev);
}

bool cuco_evaluator_limits(const cuco_evaluator *ev, char *status, size_t size)
{
	cuco_strlcpy(status, ev->cgroups.status, size);
	return ev->cgroups.on;
}

bool cuco_evaluator_stage_user(const cuco_evaluator *ev, char *status, size_t size)
{
	cuco_strlcpy(status, ev->sandbox.user_status, size);
	return ev->sandbox.user.drop;
}

int cuco_evaluator_slots(cuco_evaluator *ev, cuco_slot_info *out, int max)
{
	return eval_pool_list(&ev->pool, out, max);
}

/* ---- results ------------------------------------------------------------------ */

static void result_init(cuco_eval_result *res)
{
	memset(res, 0, sizeof *res);
	res->slot = -1;
	cuco_timing_init(&res->timing);
	res->bytes = res->flops = NAN;
}

/* A classified failure: the reason first, then as much of the tail as fits. */
static void fail(cuco_eval_result *res, const char *stage, cuco_fail_class cls, const char *tail,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void fail(cuco_eval_result *res, const char *stage, cuco_fail_class cls, const char *tail,
	const char *fmt, ...)
{
	cuco_failure *f = &res->failure;
	res->ok = false;
	cuco_strlcpy(f->stage, stage, sizeof f->stage);
	cuco_strlcpy(f->error_class, cuco_fail_name(cls), sizeof f->error_class);
	res->environment = cls == CUCO_FAIL_ENVIRONMENT;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(f->excerpt, sizeof f->excerpt, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof f->excerpt - 2 || !tail || !*tail)
		return;
	size_t room = sizeof f->excerpt - (size_t)n - 2, len = strlen(tail);
	snprintf(f->excerpt + n, sizeof f->excerpt - (size_t)n, "\n%s", len > room ? tail + len - room : tail);
}

typedef struct job {
	cuco_evaluator *ev;
	const cuco_directive *dir;
	char hash[CUCO_HASH_LEN + 1];
	char workdir[PATH_MAX];
	char tmpdir[PATH_MAX];   /* $TMPDIR of its local stages, or "" */
	char binary[PATH_MAX];
	int binary_fd;           /* held in the cache while the evaluation uses it, or -1 */
	eval_trust trust;        /* what the candidate claims (trust.c) */
	bool preload;            /* the interposer fits the built program */
	bool mpi;                /* runs under mpirun: several ranks, or one that links MPI */
	eval_ticket ticket;      /* the running stage's */
	int slot;                /* the slot held for the run and benchmark */
	char slurm_fault[256];   /* why Slurm ended the last stage, or "" */
	cuco_eval_result *res;
} job;

/* Sort a stage's end into the failure classes; false when it failed.
 * j->slurm_fault: why Slurm ended or never started the stage, or "". */
static bool classify(const job *j, const char *stage, const eval_stage *st,
	const eval_parse *p, const eval_outcome *o, cuco_eval_result *res)
{
	const cuco_evaluator *ev = j->ev;
	const char *slurm_fault = j->slurm_fault;
	cuco_runner_kind kind = ev->cfg.runner.kind;
	char why[512];
	/* Once a refereed program's ranks have all mapped their channels, the
	 * machine ran it: a launcher's complaint it prints, or a status 127 it
	 * exits with, is the program's doing, not the environment's. */
	bool ran = ev->wl.protocol == CUCO_PROTO_REFEREE && o->started;
	if (*slurm_fault || (!ran && (*p->env_problem || st->exit_code == 127)) || *o->environment
		|| (kind == CUCO_RUNNER_SSH && st->exit_code == 255)) {
		fail(res, stage, CUCO_FAIL_ENVIRONMENT, st->tail, "%s: the environment failed: %s", stage,
			*slurm_fault ? slurm_fault : *o->environment ? o->environment
			: *p->env_problem ? p->env_problem
			: st->exit_code == 127 ? "command not found" : "ssh could not reach the host");
		return false;
	}
	/* A defence that caught the candidate says more than how it ended (a
	 * child it left running keeps mpirun waiting: a timeout otherwise). */
	if (eval_trust_verdict(&ev->wl, &j->trust, ev->wl.protocol == CUCO_PROTO_NATIVE ? &j->ticket : NULL,
			p, o, why, sizeof why)) {
		res->timing.max_error = o->timing.max_error;
		fail(res, stage, CUCO_FAIL_SUSPECT, st->tail, "%s: %s", stage, why);
		return false;
	}
	/* Remote stages hold the program to its limit on the far side, where
	 * `timeout` ends with status 124. */
	bool far_timeout = kind != CUCO_RUNNER_LOCAL && st->exit_code == 124;
	/* A rank that died leaves the others hanging: a crash, even past the limit. */
	if ((st->timed_out || far_timeout) && !p->rank_signal) {
		fail(res, stage, CUCO_FAIL_TIMEOUT, st->tail, "%s: killed after %.0f s (endless loop or deadlock)",
			stage, st->wall_s);
		return false;
	}
	if (st->out_of_memory) {
		res->signal = SIGKILL;
		fail(res, stage, CUCO_FAIL_CRASH, st->tail, "%s: killed: its processes together passed "
			"the memory limit (%ld MiB)", stage, ev->limits.group.mem_mb);
		return false;
	}
	if (st->too_many_procs) {
		res->signal = SIGKILL;
		fail(res, stage, CUCO_FAIL_CRASH, st->tail, "%s: killed: more than %d processes (fork loop)",
			stage, ev->limits.max_procs);
		return false;
	}
	int sig = st->signal ? st->signal : p->rank_signal;
	/* A shell (the ssh runner's) reports a command a signal ended as exit
	 * status 128 + N. */
	if (!sig && st->exit_code > 128 && st->exit_code < 128 + NSIG)
		sig = st->exit_code - 128;
	if (sig) {
		res->signal = sig;
		fail(res, stage, CUCO_FAIL_CRASH, st->tail, "%s: killed by signal %d (%s)", stage, sig, strsignal(sig));
		return false;
	}
	if (eval_trust_leftovers(st, why, sizeof why)) {
		res->timing.max_error = o->timing.max_error;
		fail(res, stage, CUCO_FAIL_SUSPECT, st->tail, "%s: %s", stage, why);
		return false;
	}
	bool within = !isfinite(o->timing.max_error) || o->timing.max_error <= ev->wl.tolerance;
	if (o->have_result && (!o->correct || !within)) {
		res->timing.max_error = o->timing.max_error;
		fail(res, stage, CUCO_FAIL_WRONG_ANSWER, st->tail, "%s: wrong answer: %s%smax error %g (tolerance %g)",
			stage, o->why, *o->why ? "; " : "", o->timing.max_error, ev->wl.tolerance);
		return false;
	}
	if (st->exit_code != 0) {
		fail(res, stage, CUCO_FAIL_CRASH, st->tail, "%s: exit status %d", stage, st->exit_code);
		return false;
	}
	if (!o->have_result) {
		fail(res, stage, CUCO_FAIL_PROTOCOL, st->tail, "%s: %s", stage, o->protocol_error);
		return false;
	}
	return true;
}

/* ---- stages ---------------------------------------------------------------------- */

static void hex128(XXH128_hash_t h, char out[CUCO_HASH_LEN + 1])
{
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, h);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
}

static void build_key(cuco_evaluator *ev, const cuco_directive *dir, const cuco_buf *src,
	char hash[CUCO_HASH_LEN + 1])
{
	/* Fixed names instead of the private folder: the key must not vary. */
	eval_vars v = { .wl = &ev->wl, .size = ev->size, .dir = dir, .compiler = ev->compiler,
		.source = "SOURCE", .output = "OUTPUT", .nccl_home = ev->cfg.env->nccl_home,
		.cuda_home = ev->cfg.env->cuda_home };
	cuco_argv words = { 0 };
	cuco_buf cmd = { 0 };
	eval_expand(ev->wl.build_cmd, &v, &words, NULL);
	cuco_argv_join(words.v, &cmd);
	cuco_argv_free(&words);
	XXH3_state_t *s = XXH3_createState();
	XXH3_128bits_reset(s);
	XXH3_128bits_update(s, src->data, src->len);
	XXH3_128bits_update(s, "", 1);
	XXH3_128bits_update(s, cmd.data, cmd.len + 1);
	XXH3_128bits_update(s, ev->compiler_version, strlen(ev->compiler_version));
	hex128(XXH3_128bits_digest(s), hash);
	XXH3_freeState(s);
	cuco_buf_free(&cmd);
}

static void take_job_slot(cuco_evaluator *ev)
{
	pthread_mutex_lock(&ev->jobs_lock);
	while (ev->jobs_free == 0)
		pthread_cond_wait(&ev->jobs_cond, &ev->jobs_lock);
	ev->jobs_free--;
	pthread_mutex_unlock(&ev->jobs_lock);
}

static void give_job_slot(cuco_evaluator *ev)
{
	pthread_mutex_lock(&ev->jobs_lock);
	ev->jobs_free++;
	pthread_cond_signal(&ev->jobs_cond);
	pthread_mutex_unlock(&ev->jobs_lock);
}

/* A local stage's temporaries (the compiler's, Open MPI's session folder)
 * go to a private folder, its $TMPDIR, removed after the evaluation: an
 * mpirun killed from outside cannot clean up after itself. Not the work
 * folder: Open MPI's socket paths must stay short. Other runners' $TMPDIR
 * is the far side's business. */
static int make_tmpdir(job *j, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	if (ev->cfg.runner.kind != CUCO_RUNNER_LOCAL)
		return CUCO_OK;
	int n = snprintf(j->tmpdir, sizeof j->tmpdir, "%s/%sXXXXXX", ev->tmp_base, ev->tmp_prefix);
	if (n < (int)sizeof j->tmpdir && mkdtemp(j->tmpdir))
		return eval_sandbox_give(&ev->sandbox, j->tmpdir, err);
	int e = n < (int)sizeof j->tmpdir ? errno : ENAMETOOLONG;
	j->tmpdir[0] = '\0';
	return cuco_errf(err, CUCO_EENV, "%s: cannot create a temporary folder: %s", ev->tmp_base, strerror(e));
}

/* Within this of the end, a file system counts as full. */
#define FULL_MARGIN_BYTES (8ull << 20)

static bool host_full(const char *dir)
{
	struct statvfs vfs;
	return statvfs(dir, &vfs) == 0 && (unsigned long long)vfs.f_bavail * vfs.f_frsize < FULL_MARGIN_BYTES;
}

/* A build that failed because the disk or the quota ran out is no verdict
 * on the candidate: it ends the run (the candidate stays unfinished, so a
 * resumed run builds it again). The compiler's own words tell, since the
 * failing write may be anywhere (its output here, its temporaries in
 * $TMPDIR) — but in the sandbox a build that filled its own tmpfs is the
 * build's doing, so ENOSPC counts only when the host's folders are full.
 * Not EFBIG: past the stage's RLIMIT_FSIZE, the build itself is at fault,
 * and would end every resumed run again. Returns the reason, or NULL. */
static const char *out_of_room(const job *j, const char *tail)
{
	if (strstr(tail, strerror(EDQUOT)))
		return strerror(EDQUOT);
	bool full = !j->ev->sandbox.on || host_full(j->workdir) || (*j->tmpdir && host_full(j->tmpdir));
	return full && strstr(tail, strerror(ENOSPC)) ? strerror(ENOSPC) : NULL;
}

/* One build step of the job (stage "compile" or "link"): tmpl expanded
 * with v, in the job's folder, seeing the file `in` and writing `out`. */
static int build_step(job *j, const char *tmpl, const eval_vars *v, const stage_files *f,
	eval_stage *st, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	char out[PATH_MAX + 64], log[PATH_MAX + 32];
	snprintf(out, sizeof out, "%s/%s", j->workdir, f->out);
	snprintf(log, sizeof log, "%s/%s.log", j->workdir, f->in && strcmp(f->in, ev->src_name) != 0
		? "link" : "compile");
	int rc = eval_sandbox_placeholder(&ev->sandbox, out, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_argv cmd = { 0 };
	eval_expand(tmpl, v, &cmd, NULL);
	eval_limits lim = ev->limits;
	lim.tmpdir = j->tmpdir;
	lim.wall_s = ev->wl.limit_compile_s * (ev->cfg.limit_scale > 0 ? ev->cfg.limit_scale : 1);
	lim.sandbox = stage_sandbox(ev, j->workdir, j->tmpdir, false, f);
	lim.filter = stage_filter(ev, false);
	lim.group.cpus = 1;  /* `jobs` builds take at most `jobs` CPUs beside a benchmark */
	take_job_slot(ev);
	if (ev->cpu_is_device)
		pthread_rwlock_rdlock(&ev->pool.slots[0].device);
	cpu_set_t saved;
	bool pinned = pin_compile(ev, &saved);
	rc = eval_stage_run(cmd.v, j->workdir, log, &lim, NULL, NULL, st, err);
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
	if (ev->cpu_is_device)
		pthread_rwlock_unlock(&ev->pool.slots[0].device);
	give_job_slot(ev);
	eval_sandbox_argv_free((char **)lim.sandbox);
	cuco_argv_free(&cmd);
	j->res->compile_s += st->wall_s;
	return rc;
}

/* Whether a build step made `out`; when not, the failure is classified
 * (what = "compile" or "link"). CUCO_EENV when the host's disk is full. */
static int build_made(job *j, const char *what, const eval_stage *st, const char *out, bool *made,
	cuco_err *err)
{
	struct stat sb;
	*made = false;
	if (st->timed_out)
		fail(j->res, "compile", CUCO_FAIL_TIMEOUT, st->tail, "%s: killed after %.0f s", what, st->wall_s);
	else if (st->exit_code == 127)
		fail(j->res, "compile", CUCO_FAIL_ENVIRONMENT, st->tail, "%s: command not found", what);
	else if (st->out_of_memory || st->too_many_procs)
		fail(j->res, "compile", CUCO_FAIL_COMPILE_ERROR, st->tail, "%s: killed: %s", what,
			st->out_of_memory ? "its processes together passed the memory limit"
			: "more processes than the limit");
	else if ((st->exit_code != 0 || st->signal) && out_of_room(j, st->tail))
		return cuco_errf(err, CUCO_EENV, "%s: %s: %s", j->workdir, what, out_of_room(j, st->tail));
	else if (st->exit_code != 0 || st->signal)
		fail(j->res, "compile", CUCO_FAIL_COMPILE_ERROR, st->tail, "%s: exit status %d", what, st->exit_code);
	else if (stat(out, &sb) != 0 || sb.st_size == 0)
		fail(j->res, "compile", CUCO_FAIL_COMPILE_ERROR, st->tail, "%s: the build made no {output}", what);
	else
		*made = true;
	return CUCO_OK;
}

/* Hash the C and CUDA sources (.c .h .cu .cuh) of dir into s (sorted by
 * name: the same on every machine). */
static void hash_sources(XXH3_state_t *s, const char *dir)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *e = names[i]->d_name, *dot = strrchr(e, '.');
		if (dot && (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0 || strcmp(dot, ".cu") == 0
				|| strcmp(dot, ".cuh") == 0)) {
			char path[PATH_MAX + 300], *text;
			size_t len;
			snprintf(path, sizeof path, "%s/%s", dir, e);
			if (cuco_read_file(path, 4u << 20, &text, &len, NULL) == CUCO_OK) {
				XXH3_128bits_update(s, e, strlen(e) + 1);
				XXH3_128bits_update(s, text, len);
				free(text);
			}
		}
		free(names[i]);
	}
	free(names);
}

/* hash_sources of the folder that holds path. */
static void hash_folder_of(XXH3_state_t *s, const char *path)
{
	char dir[PATH_MAX];
	cuco_strlcpy(dir, path, sizeof dir);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	hash_sources(s, dir);
}

/* Where a trusted build of source by tmpl goes in the cache: named by a
 * hash of the command, the compiler and the sources of its folder, of the
 * common headers and of the folders of the workload's harness and extras
 * (gpu-common's, say). */
static void trusted_path(cuco_evaluator *ev, const eval_vars *v, const char *tmpl, const char *name,
	char *path, size_t size)
{
	eval_vars fixed = *v;
	fixed.output = "OUTPUT";
	cuco_argv words = { 0 };
	cuco_buf cmd = { 0 };
	eval_expand(tmpl, &fixed, &words, NULL);
	cuco_argv_join(words.v, &cmd);
	cuco_argv_free(&words);
	XXH3_state_t *s = XXH3_createState();
	XXH3_128bits_reset(s);
	XXH3_128bits_update(s, cmd.data, cmd.len + 1);
	XXH3_128bits_update(s, ev->compiler_version, strlen(ev->compiler_version));
	hash_folder_of(s, v->source);
	hash_sources(s, ev->common_dir);
	for (int i = -1; i < ev->wl.nextras; i++) {
		const char *f = i < 0 ? ev->wl.harness_file : ev->wl.extras[i];
		char path[PATH_MAX + 200];
		snprintf(path, sizeof path, "%s/%s", ev->wl.dir, f);
		if (*f)
			hash_folder_of(s, path);
	}
	char hash[CUCO_HASH_LEN + 1];
	hex128(XXH3_128bits_digest(s), hash);
	XXH3_freeState(s);
	cuco_buf_free(&cmd);
	/* The hash before the extension: nvcc takes a file for an object by its ".o". */
	const char *dot = strrchr(name, '.');
	snprintf(path, size, "%s/%.*s-%.16s%s", ev->cache_root, dot ? (int)(dot - name) : (int)strlen(name), name,
		hash, dot ? dot : "");
}

/* A refereed workload's trusted build (its frame's object, its referee):
 * from the workload's own files, never a candidate's, once per
 * evaluator, kept in the cache. A failure is the workload's, not a
 * candidate's: CUCO_EDATA, naming the build's last words. */
static int trusted_build(cuco_evaluator *ev, const char *tmpl, const char *source, const char *name,
	char *path, size_t size, cuco_err *err)
{
	pthread_mutex_lock(&ev->trusted_lock);
	int rc = CUCO_OK;
	if (*path)
		goto out;
	cuco_directive dflt;
	cuco_directive_default(&ev->wl, &dflt);
	eval_vars v = { .wl = &ev->wl, .size = ev->size, .dir = &dflt, .compiler = ev->compiler,
		.source = source, .nccl_home = ev->cfg.env->nccl_home, .cuda_home = ev->cfg.env->cuda_home };
	char want[PATH_MAX + 96];
	trusted_path(ev, &v, tmpl, name, want, sizeof want);
	/* Run as cuco's user (the referee) or linked into every program (the
	 * frame): one another user may rewrite is built again. */
	if (eval_cache_owned(want)) {
		cuco_strlcpy(path, want, size);
		goto out;
	}
	char dir[PATH_MAX + 32], out[PATH_MAX + 64], log[PATH_MAX + 64];
	snprintf(dir, sizeof dir, "%s/trusted-XXXXXX", ev->work_root);
	if (!mkdtemp(dir)) {
		rc = cuco_errf(err, CUCO_EENV, "%s: %s", ev->work_root, strerror(errno));
		goto out;
	}
	snprintf(out, sizeof out, "%s/%s", dir, name);
	snprintf(log, sizeof log, "%s/build.log", dir);
	v.output = out;
	cuco_argv cmd = { 0 };
	eval_expand(tmpl, &v, &cmd, NULL);
	eval_limits lim = ev->limits;
	lim.wall_s = ev->wl.limit_compile_s * (ev->cfg.limit_scale > 0 ? ev->cfg.limit_scale : 1);
	stage_files f = { .out = name };
	lim.sandbox = stage_sandbox(ev, dir, NULL, false, &f);
	lim.filter = stage_filter(ev, false);
	/* Without a sandbox the workload's own build runs as cuco's user, in
	 * its private folder: as the stage user it could not write there, and
	 * what it made (the frame, the referee) would be the candidates' user's
	 * to change. */
	if (!ev->sandbox.on)
		lim.user = NULL;
	eval_stage st;
	if (!ev->sandbox.on || (rc = eval_sandbox_placeholder(&ev->sandbox, out, err)) == CUCO_OK)
		rc = eval_stage_run(cmd.v, dir, log, &lim, NULL, NULL, &st, err);
	eval_sandbox_argv_free((char **)lim.sandbox);
	cuco_argv_free(&cmd);
	struct stat sb;
	int own = -1;
	if (rc == CUCO_OK && (st.exit_code != 0 || st.signal || st.timed_out || stat(out, &sb) != 0
			|| sb.st_size == 0))
		rc = cuco_errf(err, CUCO_EDATA, "%s: %s does not build (exit status %d): %s", ev->wl.name,
			source, st.exit_code, st.tail);
	/* In the sandbox the build wrote it as the stage user: cuco's now. */
	else if (rc == CUCO_OK && ((own = eval_cache_own(out)) < 0 || rename(out, want) != 0))
		rc = cuco_errf(err, CUCO_EENV, "%s: %s", want, strerror(errno));
	if (own >= 0)
		close(own);
	if (rc == CUCO_OK)
		cuco_strlcpy(path, want, size);
	cuco_remove_tree(dir);
out:
	pthread_mutex_unlock(&ev->trusted_lock);
	return rc;
}

/* A framed program (a refereed one, say): the candidate's object, then
 * the link with the trusted frame (docs/trust.md, "The candidate's
 * object"). */
/* The frame's object, and the rules a candidate's object is held to,
 * which name the frame's globals: both made once, at first need. */
static int frame_and_rules(cuco_evaluator *ev, cuco_err *err)
{
	char src[sizeof ev->wl.dir + sizeof ev->wl.frame_file + 2];
	snprintf(src, sizeof src, "%s/%s", ev->wl.dir, ev->wl.frame_file);
	int rc = trusted_build(ev, ev->wl.build_cmd, src, "frame.o", ev->frame_obj, sizeof ev->frame_obj, err);
	pthread_mutex_lock(&ev->trusted_lock);
	if (rc == CUCO_OK && !ev->objrules) {
		/* MPI's names come from its wrapper, whatever compiles the program. */
		const char *mpicc = ev->cfg.env->mpicc ? ev->cfg.env->mpicc : "mpicc";
		char *frame[] = { ev->frame_obj, NULL };
		/* objdump and objcopy read the candidate's object as a compile
		 * does: as the stage user, in its sandbox, under its filter. */
		eval_objspec spec = { .family = ev->wl.family, .refereed = ev->wl.protocol == CUCO_PROTO_REFEREE,
			.entries = eval_frame_entries(ev->wl.family),
			.frame = frame, .mpicc = mpicc, .cuda_home = ev->cfg.env->cuda_home,
			.nccl_home = ev->cfg.env->nccl_home, .sandbox = &ev->sandbox,
			.filter = stage_filter(ev, false) };
		rc = eval_objrules_new(&spec, &ev->objrules, err);
	}
	pthread_mutex_unlock(&ev->trusted_lock);
	return rc;
}

/* A framed program (a refereed one, say): the candidate's object, checked
 * (docs/trust.md, "The candidate's object"), then linked with the
 * trusted frame. */
static int link_frame(job *j, eval_vars *v, const char *object, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	char obj_path[PATH_MAX + 64], out[PATH_MAX + 16], why[512];
	int rc = frame_and_rules(ev, err);
	if (rc != CUCO_OK)
		return rc;
	snprintf(obj_path, sizeof obj_path, "%s/%s", j->workdir, object);
	/* Checked and linked is cuco's copy: the compile's output is the stage
	 * user's, and a process of that user's could rewrite it in between. */
	int own = eval_cache_own(obj_path);
	if (own < 0)
		return cuco_errf(err, CUCO_EENV, "%s: %s", obj_path, strerror(errno));
	close(own);
	double t0 = cuco_mono();
	cuco_err check = { 0 };
	bool unlinkable;
	rc = eval_objcheck(obj_path, ev->objrules, why, sizeof why, &unlinkable, &check);
	j->res->compile_s += cuco_mono() - t0;
	if (rc != CUCO_OK) {
		fail(j->res, "compile", CUCO_FAIL_ENVIRONMENT, NULL, "compile: the object check could not run: %s",
			check.msg);
		return CUCO_OK;
	}
	if (*why) {
		fail(j->res, "compile", unlinkable ? CUCO_FAIL_COMPILE_ERROR : CUCO_FAIL_SUSPECT, NULL,
			"compile: %s", why);
		return CUCO_OK;
	}
	snprintf(out, sizeof out, "%s/prog", j->workdir);
	char *objects[] = { ev->frame_obj, obj_path, NULL };
	v->objects = objects;
	v->output = out;
	stage_files f = { .in = object, .out = "prog" };
	eval_stage st;
	bool made;
	if ((rc = build_step(j, ev->wl.link_cmd, v, &f, &st, err)) != CUCO_OK
		|| (rc = build_made(j, "link", &st, out, &made, err)) != CUCO_OK || !made)
		return rc;
	j->res->ok = true;
	return CUCO_OK;
}

/* Returns CUCO_OK with res->ok telling whether the build succeeded. */
static int compile(job *j, const cuco_buf *src, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	if (ev->compiler_missing) {
		fail(j->res, "compile", CUCO_FAIL_ENVIRONMENT, NULL, "compile: %s --version failed: compiler missing%s",
			ev->compiler, ev->sandbox.on ? " (or hidden by the sandbox, as all of $HOME is)" : "");
		return CUCO_OK;
	}
	bool framed = *ev->wl.frame_file;
	const char *object = framed ? "candidate.o" : "prog";
	char source[PATH_MAX + 64], output[PATH_MAX + 16];
	snprintf(source, sizeof source, "%s/%s", j->workdir, ev->src_name);
	snprintf(output, sizeof output, "%s/%s", j->workdir, object);
	int rc = cuco_write_file(source, src->data, src->len, err);
	if (rc != CUCO_OK)
		return rc;
	eval_vars v = { .wl = &ev->wl, .size = ev->size, .dir = j->dir, .compiler = ev->compiler,
		.source = source, .output = output, .nccl_home = ev->cfg.env->nccl_home,
		.cuda_home = ev->cfg.env->cuda_home };
	stage_files f = { .in = ev->src_name, .out = object };
	eval_stage st;
	bool made;
	if ((rc = build_step(j, ev->wl.build_cmd, &v, &f, &st, err)) != CUCO_OK
		|| (rc = build_made(j, "compile", &st, output, &made, err)) != CUCO_OK || !made)
		return rc;
	if (framed && (rc = link_frame(j, &v, object, err)) != CUCO_OK)
		return rc;
	if (!framed)
		j->res->ok = true;
	if (!j->res->ok)
		return CUCO_OK;
	/* Into the cache, held; a program past its size is a failed build. */
	char why[200];
	snprintf(output, sizeof output, "%s/prog", j->workdir);
	if ((rc = eval_cache_add(&ev->cache, output, j->binary, &j->binary_fd, why, sizeof why, err)) != CUCO_OK)
		return rc;
	if (*why) {
		j->res->ok = false;
		fail(j->res, "compile", CUCO_FAIL_COMPILE_ERROR, NULL, "compile: %s", why);
	}
	return CUCO_OK;
}

/* The stage's wall-clock limit here: the program's own, plus what the
 * launcher may spend first (connecting and copying, a Slurm queue); the
 * far side's `timeout` holds the program itself to limit_s. */
static double local_limit(const cuco_evaluator *ev, double limit_s)
{
	switch (ev->cfg.runner.kind) {
	case CUCO_RUNNER_LOCAL: return limit_s;
	case CUCO_RUNNER_SLURM: return limit_s + SLURM_QUEUE_S;
	default: return limit_s + LAUNCH_S;
	}
}

int cuco_evaluator_referee(cuco_evaluator *ev, char *path, size_t size, cuco_err *err)
{
	char src[sizeof ev->wl.dir + sizeof ev->wl.referee_file + 2];
	snprintf(src, sizeof src, "%s/%s", ev->wl.dir, ev->wl.referee_file);
	int rc = trusted_build(ev, ev->wl.referee_cmd, src, "referee", ev->referee_bin,
		sizeof ev->referee_bin, err);
	if (rc == CUCO_OK)
		cuco_strlcpy(path, ev->referee_bin, size);
	return rc;
}

/* Which way a refereed stage runs on its ssh host, as the host said. */
static void log_far(const eval_launch *l, const eval_ssh_stage *f)
{
	char who[160] = "as the ssh user, not root there, as the referee: its verdict is defence in depth";
	if (f->drop)
		snprintf(who, sizeof who, "as uid %u (CUCO_STAGE_USER, else the stage's own), the referee as root", f->uid);
	else if (f->root)
		snprintf(who, sizeof who, "as root, as the referee (CUCO_STAGE_USER=root): its verdict is defence "
			"in depth");
	cuco_log(CUCO_LOG_INFO, "referee on %s: ranks %s; %s%s", l->slot->hosts, who,
		*f->cgroup ? "frozen between steps in " : "not frozen between steps (no cgroup made there)",
		f->cgroup);
}

/* The workload's referee for one stage (built at first need), and the
 * variable that tells the stage's ranks its channel. */
static int start_referee(job *j, const char *stage, int warmup, int reps, const char *gpus,
	const eval_launch *l, eval_referee *ref, char *channel, size_t size, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	char log[PATH_MAX + 32], bin[sizeof ev->referee_bin];
	snprintf(log, sizeof log, "%s/%s-referee.log", j->workdir, stage);
	/* Its channel is the stage user's, where the stage runs here as one. */
	eval_referee_args a = { .ranks = ev->wl.ranks, .warmup = warmup, .reps = reps,
		.tolerance = ev->wl.tolerance, .log_path = log,
		.owner = ev->cfg.runner.kind == CUCO_RUNNER_LOCAL ? ev->limits.user : NULL,
		.gpus = gpus, .remote = l->kind == CUCO_RUNNER_SSH ? l : NULL };
	int rc = cuco_evaluator_referee(ev, bin, sizeof bin, err);
	if (rc == CUCO_OK && a.remote) {  /* its sum, once per built referee */
		pthread_mutex_lock(&ev->trusted_lock);
		if (!*ev->referee_sum)
			rc = eval_referee_sum(bin, ev->referee_sum, err);
		pthread_mutex_unlock(&ev->trusted_lock);
		a.sum = ev->referee_sum;
	}
	if (rc == CUCO_OK && (rc = eval_referee_start(bin, &a, ref, err)) == CUCO_OK)
		snprintf(channel, size, CUCO_CHAN_ENV "=%s", ref->dir);
	if (rc == CUCO_OK && a.remote)
		log_far(l, &ref->far);
	return rc;
}

/* One run of the program on the job's slot: stage "run" (0 warm-ups, 1
 * repetition) or "bench". */
static int run_stage(job *j, const char *stage, int warmup, int reps, double limit_s,
	eval_stage *st, eval_parse *p, eval_outcome *o, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	cuco_runner_kind kind = ev->cfg.runner.kind;
	bool ssh = kind == CUCO_RUNNER_SSH;
	char remote_bin[CUCO_HASH_LEN + 8], remote_dir[128], log[PATH_MAX + 16], job_name[96];
	snprintf(remote_bin, sizeof remote_bin, "./%s", j->hash);
	/* A new name for every stage: no process left on the host can have
	 * made it first. */
	uint64_t salt = 0;
	if (ssh && getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt)
		return cuco_errf(err, CUCO_EENV, "getrandom: %s", strerror(errno));
	snprintf(remote_dir, sizeof remote_dir, "/tmp/cuco-%.60s-%016llx", strrchr(j->workdir, '/') + 1,
		(unsigned long long)salt);
	snprintf(log, sizeof log, "%s/%s.log", j->workdir, stage);
	/* tmp_prefix is "cuco-tmp-<run id>-": the job names this run's own. */
	snprintf(job_name, sizeof job_name, "cuco-%.12s-%d-%u", ev->tmp_prefix + 9, j->slot,
		atomic_fetch_add(&ev->stages, 1));
	eval_vars v = { .wl = &ev->wl, .size = ev->size, .dir = j->dir, .compiler = ev->compiler,
		.source = ev->src_name, .output = ssh ? remote_bin : j->binary, .warmup = warmup,
		.reps = reps, .nccl_home = ev->cfg.env->nccl_home, .cuda_home = ev->cfg.env->cuda_home };
	cuco_argv prog = { 0 }, cmd = { 0 };
	eval_expand(ev->wl.run_cmd, &v, &prog, NULL);
	const char *extras[8 + 1];
	char extra_paths[8][PATH_MAX];
	int nextras = ev->wl.nextras;
	for (int i = 0; i < nextras; i++) {
		snprintf(extra_paths[i], sizeof extra_paths[i], "%s/%s", ev->wl.dir, ev->wl.extras[i]);
		extras[i] = extra_paths[i];
	}
	/* A fresh key and input seed for every stage (trust.c); a refereed
	 * workload's verdict is its referee's, beside the stage. A framed
	 * native program's frame takes the ticket from a file in the stage's
	 * working folder before any of the program's code runs (ssh copies it
	 * there), so no environment holds it; an unframed one's harness, from
	 * its environment. */
	eval_ticket_new(&j->ticket);
	bool refereed = ev->wl.protocol == CUCO_PROTO_REFEREE;
	bool ticket_file = ev->wl.protocol == CUCO_PROTO_NATIVE && *ev->wl.frame_file;
	eval_referee ref = { .pid = -1, .in_fd = -1, .out_fd = -1 };
	char channel[PATH_MAX + 32] = "", ticket_path[PATH_MAX + 32] = "";
	/* A local GPU stage is shown its slot's GPUs' nodes alone, and told
	 * them by UUID (cuco_gpu_nodes_pick); the referee beside it, the same. */
	const cuco_slot_spec *slot = &ev->pool.slots[j->slot].spec;
	cuco_gpu_binds gpu = { 0 };
	bool local_gpu = kind == CUCO_RUNNER_LOCAL && ev->wl.family != CUCO_FAMILY_CPU_MPI;
	if (local_gpu)
		slot_gpu_nodes(ev, slot, &gpu);
	const char *gpus = *gpu.visible ? gpu.visible : slot->gpus;
	const char *ticket_env = refereed ? channel : ticket_file ? NULL : j->ticket.env;
	/* The interposer only where the stage runs here: remote hosts lack it. */
	bool preload = j->preload && kind == CUCO_RUNNER_LOCAL;
	eval_launch l = { .kind = kind, .launcher = ev->launcher, .rc = &ev->cfg.runner, .slot = slot,
		.visible = gpu.visible,
		.remote_dir = remote_dir, .job_name = job_name, .in_allocation = ev->in_allocation,
		.as_root = geteuid() == 0, .ranks = ev->wl.ranks, .mpi = j->mpi, .bind = ev->bind,
		.limit_s = limit_s, .preload = preload ? ev->interposer : NULL,
		.ticket = ticket_env, .tag_output = ev->wl.protocol == CUCO_PROTO_COMPAT,
		.stage_user = ev->cfg.env->stage_user,
		.cgroups = !ev->cfg.env->cgroups || strcmp(ev->cfg.env->cgroups, "off") != 0 };
	int rc = refereed ? start_referee(j, stage, warmup, reps, gpus, &l, &ref, channel, sizeof channel, err)
		: ticket_file ? eval_ticket_file(&j->ticket, j->workdir, ticket_path, sizeof ticket_path, err)
		: CUCO_OK;
	if (refereed && ssh)
		l.far = &ref.far;  /* who its ranks run as there, and in which group */
	/* A referee that could not start on the stage's host is that host's
	 * failure, as ssh's own would be: the slot rests, the candidate goes
	 * elsewhere. */
	bool host_failed = refereed && ssh && rc == CUCO_EENV;
	/* The frame reads and empties it as the stage user. */
	if (rc == CUCO_OK && ticket_file)
		rc = eval_sandbox_give(&ev->sandbox, ticket_path, err);
	if (ticket_file && ssh)
		extras[nextras++] = ticket_path;
	eval_launch_argv(&l, prog.v, j->binary, extras, nextras, &cmd);
	cuco_argv_free(&prog);
	eval_limits lim = ev->limits;
	lim.tmpdir = j->tmpdir;
	lim.ssh_agent = ssh || kind == CUCO_RUNNER_HOSTFILE;  /* mpirun reaches its hosts over ssh */
	lim.wall_s = local_limit(ev, limit_s);
	if (kind != CUCO_RUNNER_LOCAL)
		lim.grace_s = REMOTE_GRACE_S;
	if (kind != CUCO_RUNNER_LOCAL)
		lim.user = NULL;  /* its launcher needs cuco's user's keys */
	else
		lim.group.cpuset = &ev->stage_cpus;  /* no thread of it on a CPU it was not given */
	if (refereed && !ref.cleanup) {  /* a remote referee was told its group: none */
		lim.on_start = eval_referee_started;
		lim.on_start_arg = &ref;
	}
	stage_files files = { .out = ticket_file ? CUCO_SEAL_FILE : NULL,
		.channel = refereed && !ref.cleanup ? ref.dir : NULL, .gpu = local_gpu ? &gpu : NULL };
	lim.sandbox = stage_sandbox(ev, j->workdir, j->tmpdir, true, &files);
	lim.filter = stage_filter(ev, true);
	const char *env[] = { ticket_env, NULL };
	lim.env = env;
	j->slurm_fault[0] = '\0';
	if (rc == CUCO_OK)
		rc = eval_parse_init(p, &ev->wl, err);
	else
		memset(p, 0, sizeof *p);  /* eval_parse_free of nothing */
	p->ticket = &j->ticket;
	if (rc == CUCO_OK) {
		rc = eval_stage_run(cmd.v, j->workdir, log, &lim, eval_parse_line, p, st, err);
		if (refereed)
			eval_referee_finish(&ref, &p->result_line, p->referee_why, sizeof p->referee_why);
		eval_parse_finish(p, o);
		bool failed = st->timed_out || st->signal || st->exit_code != 0;
		/* srun can exit 0 for a step Slurm aborted before it fully launched
		 * (its output says "CANCELLED AT"): no verdict is Slurm's to explain
		 * first, else the candidate would fail for the cancel. */
		bool unreported = !o->have_result;
		if (rc == CUCO_OK && kind == CUCO_RUNNER_SLURM && (failed || unreported)) {
			eval_slurm_fault(job_name, slot->hosts, st, j->slurm_fault, sizeof j->slurm_fault);
			/* A srun killed before it could cancel its job leaves it queued. */
			if (st->timed_out)
				eval_slurm_cancel(job_name);
		}
	}
	if (host_failed) {
		memset(st, 0, sizeof *st);
		p->wl = &ev->wl;
		eval_parse_finish(p, o);
		cuco_strlcpy(o->environment, err->msg, sizeof o->environment);
		rc = CUCO_OK;
	}
	eval_referee_free(&ref);
	if (*ticket_path)
		unlink(ticket_path);  /* the frame empties it; in the sandbox it cannot remove it */
	eval_sandbox_argv_free((char **)lim.sandbox);
	cuco_argv_free(&cmd);
	return rc;
}

static double spread_of(const eval_outcome *o)
{
	double hi = isfinite(o->max_us) ? o->max_us : o->timing.p90_us;
	if (!(o->timing.min_us > 0) || !isfinite(hi))
		return NAN;
	return (hi - o->timing.min_us) / o->timing.min_us;
}

static void take_outcome(cuco_eval_result *res, const eval_outcome *o)
{
	res->timing = o->timing;
	res->timing.spread = spread_of(o);
	res->bytes = o->bytes;
	res->flops = o->flops;
}

static int verify(job *j, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	double scale = ev->cfg.limit_scale > 0 ? ev->cfg.limit_scale : 1;
	eval_stage st;
	eval_parse p;
	eval_outcome o;
	int rc = run_stage(j, "run", 0, 1, ev->wl.limit_run_s * scale, &st, &p, &o, err);
	j->res->run_s = st.wall_s;
	if (rc == CUCO_OK && classify(j, "run", &st, &p, &o, j->res))
		take_outcome(j->res, &o);
	eval_parse_free(&p);
	return rc;
}

/* Warm-ups and timed repetitions, in one run. A noisy run is not run
 * again: keeping the steadiest of several runs gave a noisy program more
 * draws than a steady one (a screening advantage, and an unequal arm in a
 * paired round), and tripled a round's cost on a machine past max_spread.
 * Noise is answered by more paired rounds instead (docs/trust.md). */
static int benchmark(job *j, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	double scale = ev->cfg.limit_scale > 0 ? ev->cfg.limit_scale : 1;
	eval_stage st;
	eval_parse p;
	eval_outcome o;
	int rc = run_stage(j, "bench", ev->wl.warmup, ev->wl.reps, ev->wl.limit_bench_s * scale,
		&st, &p, &o, err);
	j->res->bench_s = st.wall_s;
	bool ok = rc == CUCO_OK && classify(j, "bench", &st, &p, &o, j->res);
	if (ok && isnan(o.timing.median_us)) {
		fail(j->res, "bench", CUCO_FAIL_PROTOCOL, st.tail, "bench: the result has no latency_us.median");
		ok = false;
	} else if (ok && !(o.timing.median_us >= MIN_LATENCY_US && isfinite(o.timing.median_us))) {
		fail(j->res, "bench", CUCO_FAIL_PROTOCOL, st.tail,
			"bench: latency_us.median %g is not a time (at least %g us, finite)",
			o.timing.median_us, MIN_LATENCY_US);
		ok = false;
	}
	eval_parse_free(&p);
	if (rc != CUCO_OK || !ok)
		return rc;
	take_outcome(j->res, &o);
	/* The stage clock holds a harness in the candidate's process to the
	 * stages' own walls; a referee's clock needs no such check, and a
	 * remote stage's wall holds its launcher's queue and connection,
	 * which vary by seconds (a Slurm step on a loaded machine: 3 s). */
	char why[320];
	bool clocked = ev->wl.protocol == CUCO_PROTO_NATIVE && ev->cfg.runner.kind == CUCO_RUNNER_LOCAL;
	if (clocked && eval_trust_clock(j->res->run_s, st.wall_s, ev->wl.warmup, ev->wl.reps,
			o.timing.median_us, why, sizeof why))
		fail(j->res, "bench", CUCO_FAIL_SUSPECT, NULL, "bench: %s", why);
	return CUCO_OK;
}

static void peak_fraction(const cuco_evaluator *ev, cuco_eval_result *res, const char *stage)
{
	double bytes, flops;
	if (cuco_workload_peak(&ev->wl, ev->size, &bytes, &flops, NULL) == CUCO_OK) {
		if (isfinite(bytes))
			res->bytes = bytes;
		if (isfinite(flops))
			res->flops = flops;
	}
	double bw = ev->cfg.peak_bandwidth_gbs > 0 ? ev->cfg.peak_bandwidth_gbs : ev->wl.peak_bandwidth_gbs;
	double gf = ev->cfg.peak_gflops > 0 ? ev->cfg.peak_gflops : ev->wl.peak_gflops;
	double bound = 0;  /* the fastest the hardware could possibly do it, in s */
	if (bw > 0 && res->bytes > 0)
		bound = fmax(bound, res->bytes / (bw * 1e9));
	if (gf > 0 && res->flops > 0)
		bound = fmax(bound, res->flops / (gf * 1e9));
	if (bound > 0 && res->timing.median_us > 0)
		res->timing.peak_fraction = bound / (res->timing.median_us * 1e-6);
	char model[160], why[400];
	snprintf(model, sizeof model, "%.4g bytes at %.4g GB/s, %.4g flops at %.4g GFLOP/s", res->bytes, bw,
		res->flops, gf);
	if (eval_trust_physics(bound, res->timing.median_us, model, why, sizeof why))
		fail(res, stage, CUCO_FAIL_SUSPECT, NULL, "%s: %s", stage, why);
}

/* What the built program links: host calls its claim rules out, and
 * whether the host-call interposer fits it. */
static int inspect_binary(job *j, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	eval_elf elf;
	j->mpi = ev->mpi;
	int rc = eval_elf_read(j->binary, &elf, err);
	if (rc == CUCO_EDATA) {
		/* Not an ELF program (a script, say): no symbols to judge. */
		cuco_log(CUCO_LOG_DEBUG, "eval: %s", err->msg);
		return CUCO_OK;
	}
	if (rc != CUCO_OK)
		return rc;
	char why[400];
	if (eval_trust_binary(&ev->wl, &j->trust, &elf, why, sizeof why))
		fail(j->res, "compile", CUCO_FAIL_SUSPECT, NULL, "compile: %s", why);
	j->preload = *ev->interposer && eval_trust_preload_fits(&elf, &ev->interposer_elf);
	/* One rank of a program that links MPI runs under mpirun like several:
	 * MPI_Init alone makes a singleton, whose daemon is the program's
	 * child (the harness refuses that); one that does not is run as is. */
	if (!j->mpi && *ev->launcher && ev->wl.family != CUCO_FAMILY_CUDA)
		j->mpi = eval_elf_needs(&elf, "libmpi");
	eval_elf_free(&elf);
	return CUCO_OK;
}

static void slot_changed(cuco_evaluator *ev, const cuco_slot_info *info, const char *text)
{
	if (*text)
		cuco_log(info->state == CUCO_SLOT_IDLE ? CUCO_LOG_INFO : CUCO_LOG_WARN, "evaluator: %s", text);
	if (ev->cfg.slot_changed)
		ev->cfg.slot_changed(ev->cfg.slot_changed_arg, info, text);
}

/* A fresh result for another try on another slot; the build stays. */
static void result_retry(cuco_eval_result *res)
{
	double compile_s = res->compile_s;
	bool cached = res->cached_build;
	int retries = res->slot_retries + 1;
	result_init(res);
	res->compile_s = compile_s;
	res->cached_build = cached;
	res->slot_retries = retries;
}

/* The machine's lock on the slot's GPUs (eval_gpu_lock); a lock file
 * that cannot be opened is said once and the run goes on without. */
static void gpu_lock(cuco_evaluator *ev, const cuco_slot_spec *spec, int *fd)
{
	cuco_err why = { 0 };
	if (eval_gpu_lock(spec, ev->cfg.env->visible_gpus, fd, &why) != CUCO_OK &&
			!atomic_exchange(&ev->gpu_lock_said, 1))
		cuco_log(CUCO_LOG_WARN, "GPU lock: %s: benchmarks go on without it, and another cuco on "
			"these GPUs may time at the same moment", why.msg);
}

/* Run and verify (unless again: a remeasure of a cached build, which the
 * benchmark checks), then benchmark, holding one slot (want, or the one
 * idle longest) throughout. An environment failure of a remote slot rests it
 * and, unless the slot was asked for, the evaluation tries another; a
 * local failure of the environment is this machine's, which no other slot
 * would mend. */
static int on_slot(job *j, int want, bool bench, bool again, cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	bool remote = ev->cfg.runner.kind != CUCO_RUNNER_LOCAL;
	for (int tries = 1;; tries++) {
		cuco_slot_info info;
		int rc = eval_pool_take(&ev->pool, want, &j->slot, &info, err);
		if (rc != CUCO_OK) {
			if (rc != CUCO_EENV)
				return rc;
			fail(j->res, "run", CUCO_FAIL_ENVIRONMENT, NULL, "run: %s", err->msg);
			return CUCO_OK;
		}
		j->res->slot = j->slot;
		cuco_strlcpy(j->res->slot_name, info.name, sizeof j->res->slot_name);
		slot_changed(ev, &info, "");
		int gpu_fd = -1;
		if (ev->gpu_lock)
			gpu_lock(ev, &ev->pool.slots[j->slot].spec, &gpu_fd);
		if (!(again && j->res->cached_build))
			rc = verify(j, err);
		if (rc == CUCO_OK && !*j->res->failure.error_class && bench)
			rc = benchmark(j, err);
		eval_gpu_unlock(gpu_fd);
		char why[200] = "";
		bool fault = rc == CUCO_OK && remote && j->res->environment;
		if (fault)
			eval_first_line(j->res->failure.excerpt, why, sizeof why);
		char text[512];
		eval_pool_give(&ev->pool, j->slot, fault ? why : NULL, &info, text, sizeof text);
		slot_changed(ev, &info, text);
		if (!fault || want >= 0 || tries >= SLOT_TRIES)
			return rc;
		result_retry(j->res);
	}
}

/* stop: where the cascade ends (a build alone, verified, or benchmarked);
 * again: a remeasure, which skips the separate verification of a cached
 * build (the benchmark checks the answer as well); want: the slot, -1 any. */
typedef enum stop_at { STOP_BUILD, STOP_VERIFY, STOP_BENCH } stop_at;

static int cascade(job *j, const char *source, size_t len, stop_at stop, bool again, int want,
	cuco_err *err)
{
	cuco_evaluator *ev = j->ev;
	cuco_buf src = { 0 };
	eval_apply_slots(&ev->wl, j->dir, source, len, &src);
	char why[400];
	/* A framed program's object is checked instead, after it is built:
	 * what the compiler made, not how the text spells it. */
	if (!*ev->wl.frame_file && eval_trust_scan(src.data, src.len, &ev->known, why, sizeof why)) {
		fail(j->res, "compile", CUCO_FAIL_SUSPECT, NULL, "compile: %s", why);
		cuco_buf_free(&src);
		return CUCO_OK;
	}
	eval_trust_rules(&ev->wl, j->dir, src.data, src.len, &j->trust);
	build_key(ev, j->dir, &src, j->hash);
	int n1 = snprintf(j->workdir, sizeof j->workdir, "%s/%.12s-%ld-XXXXXX", ev->work_root, j->hash,
		(long)getpid());
	int n2 = snprintf(j->binary, sizeof j->binary, "%s/%s", ev->cache_root, j->hash);
	if (n1 >= (int)sizeof j->workdir || n2 >= (int)sizeof j->binary || !mkdtemp(j->workdir)) {
		j->workdir[0] = '\0';
		cuco_buf_free(&src);
		return cuco_errf(err, CUCO_EENV, "%s/work: %s", ev->cfg.run_dir, strerror(errno ? errno : ENAMETOOLONG));
	}
	int rc = eval_sandbox_enter(&ev->sandbox, j->workdir, err);
	if (rc == CUCO_OK)
		rc = make_tmpdir(j, err);
	if (rc != CUCO_OK) {
		cuco_buf_free(&src);
		return rc;
	}
	j->binary_fd = eval_cache_hold(j->binary);
	j->res->cached_build = j->binary_fd >= 0;
	if (j->res->cached_build)
		j->res->ok = true;
	else
		rc = compile(j, &src, err);
	cuco_buf_free(&src);
	if (rc != CUCO_OK || !j->res->ok || stop == STOP_BUILD)
		return rc;
	j->res->ok = false;
	if ((rc = inspect_binary(j, err)) != CUCO_OK || *j->res->failure.error_class)
		return rc;
	if (*ev->launcher_missing) {
		fail(j->res, "run", CUCO_FAIL_ENVIRONMENT, NULL, "run: %s", ev->launcher_missing);
		return CUCO_OK;
	}
	if (*ev->gpu_missing) {
		fail(j->res, "run", CUCO_FAIL_ENVIRONMENT, NULL, "run: %s", ev->gpu_missing);
		return CUCO_OK;
	}
	rc = on_slot(j, want, stop == STOP_BENCH, again, err);
	if (rc != CUCO_OK || *j->res->failure.error_class)
		return rc;
	peak_fraction(ev, j->res, stop == STOP_BENCH ? "bench" : "run");
	j->res->ok = !*j->res->failure.error_class;
	return CUCO_OK;
}

static int evaluate(cuco_evaluator *ev, int slot, const char *source, size_t len,
	const cuco_directive *dir, stop_at stop, bool again, cuco_eval_result *res, cuco_err *err)
{
	double start = cuco_mono();
	result_init(res);
	cuco_err why = { 0 };
	if (!cuco_directive_valid(&ev->wl, dir, &why)) {
		fail(res, "compile", CUCO_FAIL_COMPILE_ERROR, NULL, "directive: %s", why.msg);
		res->overhead_s = cuco_mono() - start;
		return CUCO_OK;
	}
	job j = { .ev = ev, .dir = dir, .res = res, .slot = -1, .binary_fd = -1 };
	int rc = cascade(&j, source, len, stop, again, slot, err);
	/* A candidate judged (not the environment's failure): its program
	 * will not run again. */
	eval_cache_release(j.binary, j.binary_fd, rc == CUCO_OK && !res->ok && !res->environment);
	if (*j.workdir && !ev->cfg.keep_workdirs)
		cuco_remove_tree(j.workdir);
	if (*j.tmpdir)
		cuco_remove_tree(j.tmpdir);
	res->overhead_s = cuco_mono() - start - res->compile_s - res->run_s - res->bench_s;
	return rc;
}

int cuco_eval_candidate(cuco_evaluator *ev, const char *source, size_t len,
	const cuco_directive *dir, bool bench, cuco_eval_result *res, cuco_err *err)
{
	return evaluate(ev, -1, source, len, dir, bench ? STOP_BENCH : STOP_VERIFY, false, res, err);
}

int cuco_eval_candidate_on(cuco_evaluator *ev, int slot, const char *source, size_t len,
	const cuco_directive *dir, bool bench, cuco_eval_result *res, cuco_err *err)
{
	return evaluate(ev, slot, source, len, dir, bench ? STOP_BENCH : STOP_VERIFY, false, res, err);
}

int cuco_eval_remeasure(cuco_evaluator *ev, const char *source, size_t len,
	const cuco_directive *dir, cuco_eval_result *res, cuco_err *err)
{
	return evaluate(ev, -1, source, len, dir, STOP_BENCH, true, res, err);
}

int cuco_eval_remeasure_on(cuco_evaluator *ev, int slot, const char *source, size_t len,
	const cuco_directive *dir, cuco_eval_result *res, cuco_err *err)
{
	return evaluate(ev, slot, source, len, dir, STOP_BENCH, true, res, err);
}

int cuco_eval_build(cuco_evaluator *ev, const char *source, size_t len,
	const cuco_directive *dir, cuco_eval_result *res, cuco_err *err)
{
	return evaluate(ev, -1, source, len, dir, STOP_BUILD, false, res, err);
}
