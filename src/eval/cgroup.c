/* cgroup.c — a control group per stage: limits per candidate, not per
 * process.
 *
 * Resource limits apply to each process: a candidate's children that
 * each stay under RLIMIT_AS add up past it (issue 18: four of 2.5 GB under
 * an 8 GiB limit), RLIMIT_NPROC counts all of a user's processes and root
 * ignores it, and a child that calls setsid() leaves the stage's session.
 * A control group holds every process a stage starts, whatever they do
 * with sessions, and limits them together: pids.max (processes and
 * threads), the memory the group uses (tmpfs pages included, so the
 * sandbox's writable folders count too), for builds one CPU's time, and
 * the CPUs it may run on (cpuset): a run stage's are the ones the
 * evaluator gave it (its ranks' cores, or cuco's own CPUs when they are
 * not bound), so no thread of it computes on a CPU the baseline is not
 * given, whatever affinity it asks for (tests/hostile/cpu-gemm-allgather/
 * other-cores.c).
 *
 * Where a stage's group can be made:
 *  - cgroup v2 (/sys/fs/cgroup is cgroup2, e.g. Debian 12): as root, a group
 *    cuco-<pid> under the hierarchy's root; otherwise in cuco's own group
 *    when it is delegated to the user (systemd-run --user --scope -p
 *    Delegate=yes): cuco moves itself into a leaf of it first, as v2 lets
 *    only leaves hold processes;
 *  - cgroup v1 (a container, or a host booted that way): a group cuco-<pid>
 *    under cuco's own group in each of the pids, memory and cpu
 *    hierarchies and the cpuset one that is mounted and writable.
 * Elsewhere stages run with the per-process rlimits only, and `cuco doctor`
 * says which applies and why (eval_cgroups.status).
 *
 * The stage's keeper joins the group between fork and exec, so its command
 * and all it starts are in it from the first instruction. The monitor reads
 * the group's events (a fork refused at pids.max, an OOM kill) and ends
 * the stage at once; killing reads cgroup.procs, so a process in a session
 * of its own is killed too, and without the sandbox cgroup.procs is what
 * counts the processes a stage left running (stage.c). A group of a dead
 * cuco is removed by the next one that starts. */
#include "eval/eval_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP2_MAGIC 0x63677270
#define PREFIX "cuco-"

static const char *const v1_names[EVAL_CG_COUNT] = { "pids", "memory", "cpu", "freezer", "cpuacct",
	"cpuset" };

/* ---- small file reads and writes ------------------------------------------- */

static bool write_text(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	return ok;
}

/* dir/file's text into to/file (a v1 cpuset's cpus and mems, which a
 * new group starts without and needs before it holds a process). */
static bool copy_text(const char *dir, const char *to, const char *file)
{
	char path[PATH_MAX + 64], buf[8192];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return write_text(to, file, buf);
}

static bool writable(const char *dir)
{
	char path[PATH_MAX + 4200];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	return access(dir, W_OK) == 0 && access(path, W_OK) == 0;
}

/* The value after `key ` in a flat keyed file (pids.events, memory.events,
 * memory.oom_control); -1 when absent. Async-signal-safe. */
static long keyed(const char *dir, const char *file, const char *key)
{
	char path[PATH_MAX + 64], buf[1024];
	size_t dl = strlen(dir), fl = strlen(file), kl = strlen(key);
	if (dl + fl + 2 > sizeof path)
		return -1;
	memcpy(path, dir, dl);
	path[dl] = '/';
	memcpy(path + dl + 1, file, fl + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) != 0 || p[kl] != ' ')
			continue;
		long v = 0;
		for (p += kl + 1; *p >= '0' && *p <= '9'; p++)
			v = v * 10 + (*p - '0');
		return v;
	}
	return -1;
}

/* ---- where groups can be made ------------------------------------------------- */

/* cuco's own group in a hierarchy, from /proc/self/cgroup: the line
 * "0::/path" (v2) or "N:a,b:/path" naming the controller (v1). */
static bool own_group(const char *controller, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *names = strchr(line, ':'), *rel = names ? strchr(names + 1, ':') : NULL;
		if (!rel)
			continue;
		*rel++ = '\0';
		names++;
		if (!controller) {
			found = strcmp(line, "0") == 0 && !*names;
		} else {
			for (char *save = NULL, *c = strtok_r(names, ",", &save); c && !found;
			     c = strtok_r(NULL, ",", &save))
				found = strcmp(c, controller) == 0;
		}
		if (found)
			snprintf(path, size, "%s", rel);
	}
	if (f)
		fclose(f);
	return found;
}

static bool is_cgroup2(const char *dir)
{
	struct statfs sf;
	return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == CGROUP2_MAGIC;
}

/* Remove the groups a dead cuco left in parent (empty by now: its keepers
 * killed their stages), children first. */
static void sweep_dead(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) != 0)
			continue;
		long pid = atol(e->d_name + strlen(PREFIX));
		if (pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char dir[PATH_MAX + 300];
		snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name);
		DIR *sub = opendir(dir);
		struct dirent *s;
		while (sub && (s = readdir(sub))) {
			char child[PATH_MAX + 600];
			snprintf(child, sizeof child, "%s/%s", dir, s->d_name);
			if (s->d_name[0] != '.' && s->d_type == DT_DIR)
				rmdir(child);
		}
		if (sub)
			closedir(sub);
		rmdir(dir);
	}
	if (d)
		closedir(d);
}

/* Make parent/cuco-<pid>; false with errno when it cannot. */
static bool make_base(const char *parent, char *base, size_t size)
{
	sweep_dead(parent);
	int n = snprintf(base, size, "%s/" PREFIX "%ld", parent, (long)getpid());
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return false;
	}
	return mkdir(base, 0755) == 0 || errno == EEXIST;
}

static bool enable(const char *dir, const char *controllers)
{
	return write_text(dir, "cgroup.subtree_control", controllers);
}

/* pids and memory for dir's children, or pids alone where memory is not
 * delegated. */
static bool enable_limits(const char *dir)
{
	return enable(dir, "+pids +memory") || enable(dir, "+pids");
}

/* v2 as root: a group under the hierarchy's root, whose subtree has the
 * controllers (systemd enables them; a bare root is asked to). */
static bool open_v2_root(eval_cgroups *g)
{
	if (geteuid() != 0 || !writable(CGROUP_ROOT))
		return false;
	enable(CGROUP_ROOT, "+pids +memory");
	enable(CGROUP_ROOT, "+cpu");
	enable(CGROUP_ROOT, "+cpuset");
	return make_base(CGROUP_ROOT, g->dir[0], sizeof g->dir[0]) && enable_limits(g->dir[0]);
}

/* v2 delegated: cuco's own group is writable; cuco moves itself into the
 * leaf cuco-<pid>.self so that the group may give its subtree controllers.
 * Any other process in the group (the shell that started cuco) forbids it. */
static bool open_v2_delegated(eval_cgroups *g, const char *own, char *why, size_t size)
{
	if (!writable(own)) {
		snprintf(why, size, "%s is not writable (run as root, or delegate it: "
			"systemd-run --user --scope -p Delegate=yes cuco …)", own);
		return false;
	}
	char self[PATH_MAX + 64], pid[24];
	snprintf(self, sizeof self, "%s/" PREFIX "%ld.self", own, (long)getpid());
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	if ((mkdir(self, 0755) != 0 && errno != EEXIST) || !write_text(self, "cgroup.procs", pid)) {
		snprintf(why, size, "%s: cannot move cuco into a leaf: %s", own, strerror(errno));
		rmdir(self);
		return false;
	}
	if (!enable_limits(own)) {
		snprintf(why, size, "%s holds other processes (the shell?), so it cannot give its "
			"subtree controllers: %s", own, strerror(errno));
		write_text(own, "cgroup.procs", pid);
		rmdir(self);
		return false;
	}
	enable(own, "+cpu");
	enable(own, "+cpuset");
	if (!make_base(own, g->dir[0], sizeof g->dir[0]) || !enable_limits(g->dir[0])) {
		snprintf(why, size, "%s: %s", g->dir[0], strerror(errno));
		return false;
	}
	return true;
}

static bool open_v2(eval_cgroups *g, char *why, size_t size)
{
	char rel[PATH_MAX], own[PATH_MAX + 32];
	if (!own_group(NULL, rel, sizeof rel)) {
		snprintf(why, size, "cuco's cgroup v2 group is unknown (/proc/self/cgroup)");
		return false;
	}
	snprintf(own, sizeof own, "%s%s", CGROUP_ROOT, strcmp(rel, "/") == 0 ? "" : rel);
	if (!open_v2_root(g) && !open_v2_delegated(g, own, why, size))
		return false;
	g->v2 = true;
	char controllers[256] = "";
	int fd = -1;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", g->dir[0]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, controllers, sizeof controllers - 1) : -1;
	if (fd >= 0)
		close(fd);
	controllers[n > 0 ? n : 0] = '\0';
	g->have[EVAL_CG_PIDS] = strstr(controllers, "pids") != NULL;
	g->have[EVAL_CG_MEMORY] = strstr(controllers, "memory") != NULL;
	g->have[EVAL_CG_CPU] = enable(g->dir[0], "+cpu") || strstr(controllers, "cpu") != NULL;
	g->have[EVAL_CG_CPUSET] = enable(g->dir[0], "+cpuset") || strstr(controllers, "cpuset") != NULL;
	/* Core files of every v2 group (cgroup.freeze since Linux 5.2). */
	snprintf(path, sizeof path, "%s/cgroup.freeze", g->dir[0]);
	g->have[EVAL_CG_FREEZER] = access(path, W_OK) == 0;
	g->have[EVAL_CG_CPUACCT] = true;
	return true;
}

/* v1: one group per hierarchy, under cuco's own group in it. */
static bool open_v1(eval_cgroups *g, char *why, size_t size)
{
	int made = 0;
	for (int c = 0; c < EVAL_CG_COUNT; c++) {
		char rel[PATH_MAX], own[PATH_MAX + 64];
		snprintf(own, sizeof own, "%s/%s", CGROUP_ROOT, v1_names[c]);
		if (!own_group(v1_names[c], rel, sizeof rel) || is_cgroup2(own))
			continue;
		snprintf(own, sizeof own, "%s/%s%s", CGROUP_ROOT, v1_names[c], strcmp(rel, "/") == 0 ? "" : rel);
		if (!writable(own)) {
			if (!why[0])
				snprintf(why, size, "%s is not writable", own);
			continue;
		}
		if (!make_base(own, g->dir[c], sizeof g->dir[c]))
			continue;
		/* A cpuset group holds no process until it has CPUs and memory. */
		if (c == EVAL_CG_CPUSET && !(copy_text(own, g->dir[c], "cpuset.cpus")
				&& copy_text(own, g->dir[c], "cpuset.mems"))) {
			rmdir(g->dir[c]);
			continue;
		}
		g->have[c] = true;
		made++;
	}
	if (!g->have[EVAL_CG_PIDS] && !why[0])
		snprintf(why, size, "no pids controller mounted (cgroup v1 or v2) under " CGROUP_ROOT);
	return g->have[EVAL_CG_PIDS] && made > 0;
}

void eval_cgroups_open(eval_cgroups *g, const cuco_env *env)
{
	memset(g, 0, sizeof *g);
	char why[PATH_MAX + 200] = "";
	const char *off = env->cgroups;
	if (off && strcmp(off, "off") == 0) {
		snprintf(g->status, sizeof g->status, "no cgroup (CUCO_CGROUPS=off): per-process rlimits only "
			"(RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_CPU) and a process count of the stage's session");
		return;
	}
	if (is_cgroup2(CGROUP_ROOT) ? open_v2(g, why, sizeof why) : open_v1(g, why, sizeof why)) {
		g->on = true;
		snprintf(g->status, sizeof g->status, "cgroup %s per stage under %.300s: %s%s%s%s per candidate%s",
			g->v2 ? "v2" : "v1", g->dir[0], g->have[EVAL_CG_PIDS] ? "pids.max" : "",
			g->have[EVAL_CG_MEMORY] ? ", memory" : "", g->have[EVAL_CG_CPU] ? ", a build's CPU" : "",
			g->have[EVAL_CG_CPUSET] ? ", a run's CPUs (cpuset)" : ", any CPU (no cpuset)",
			g->have[EVAL_CG_FREEZER] && g->have[EVAL_CG_CPUACCT] ? "; frozen between refereed steps"
			: "; no freezer: refereed steps' gaps are not held still");
		return;
	}
	for (int c = 0; c < EVAL_CG_COUNT; c++)
		if (g->have[c])
			rmdir(g->dir[c]);
	memset(g->have, 0, sizeof g->have);
	snprintf(g->status, sizeof g->status, "no cgroup (%.*s): per-process rlimits only (RLIMIT_AS, "
		"RLIMIT_FSIZE, RLIMIT_CPU) and a process count of the stage's session", 300, why);
}

void eval_cgroups_close(eval_cgroups *g)
{
	for (int c = 0; c < EVAL_CG_COUNT; c++)
		if (g->have[c] || (c == 0 && g->on))
			rmdir(g->dir[c]);
}

/* ---- a stage's group ------------------------------------------------------------ */

/* The stage's CPUs: `cpus` ("0,2,3"), or cuco's own where NULL (a v1
 * group needs them said; a v2 group inherits them); its memory nodes,
 * cuco's own. */
static bool set_cpus(const eval_cgroups *g, const eval_cgroup *cg, const cpu_set_t *cpus)
{
	const char *base = g->dir[g->v2 ? 0 : EVAL_CG_CPUSET], *dir = cg->dir[g->v2 ? 0 : EVAL_CG_CPUSET];
	if (!g->v2 && !copy_text(base, dir, "cpuset.mems"))
		return false;
	if (!cpus)
		return g->v2 || copy_text(base, dir, "cpuset.cpus");
	char list[8192];
	size_t n = 0;
	list[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && n + 8 < sizeof list; c++)
		if (CPU_ISSET(c, cpus))
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%d", n ? "," : "", c);
	return n > 0 && write_text(dir, "cpuset.cpus", list);
}

int eval_cgroup_new(eval_cgroups *g, const eval_cgroup_limits *lim, eval_cgroup *cg, cuco_err *err)
{
	memset(cg, 0, sizeof *cg);
	if (!g->on)
		return CUCO_OK;
	/* Numbered per process, not per evaluator: two evaluators' stages in
	 * one group would be killed together when either ends. */
	static atomic_uint serials;
	unsigned serial = atomic_fetch_add(&serials, 1);
	char num[32];
	for (int c = 0; c < EVAL_CG_COUNT; c++) {
		int base = g->v2 ? 0 : c;
		if (!g->have[c] || (g->v2 && c > 0))
			continue;
		int n = snprintf(cg->dir[c], sizeof cg->dir[c], "%s/stage-%u", g->dir[base], serial);
		if (n < 0 || (size_t)n >= sizeof cg->dir[c]) {
			cg->dir[c][0] = '\0';   /* never created: nothing to remove */
			eval_cgroup_free(cg);
			return cuco_errf(err, CUCO_EENV, "%s: path too long for a stage's group", g->dir[base]);
		}
		if (mkdir(cg->dir[c], 0755) != 0 && errno != EEXIST) {
			int e = errno;
			eval_cgroup_free(cg);
			return cuco_errf(err, CUCO_EENV, "%s: %s", g->dir[base], strerror(e));
		}
	}
	cg->v2 = g->v2;
	cg->freezer = g->have[EVAL_CG_FREEZER] && g->have[EVAL_CG_CPUACCT];
	const char *mem_dir = g->v2 ? cg->dir[0] : cg->dir[EVAL_CG_MEMORY];
	const char *cpu_dir = g->v2 ? cg->dir[0] : cg->dir[EVAL_CG_CPU];
	bool ok = true;
	if (g->have[EVAL_CG_PIDS] && lim->max_tasks > 0) {
		snprintf(num, sizeof num, "%ld", lim->max_tasks);
		ok &= write_text(cg->dir[0], "pids.max", num);
	}
	if (g->have[EVAL_CG_MEMORY] && lim->mem_mb > 0) {
		snprintf(num, sizeof num, "%lld", (long long)lim->mem_mb << 20);
		if (g->v2) {
			ok &= write_text(mem_dir, "memory.max", num);
			write_text(mem_dir, "memory.swap.max", "0");  /* absent without swap */
			write_text(mem_dir, "memory.oom.group", "1");  /* one OOM kill ends them all */
		} else {
			ok &= write_text(mem_dir, "memory.limit_in_bytes", num);
			write_text(mem_dir, "memory.memsw.limit_in_bytes", num);  /* absent without swap accounting */
		}
		cg->mem = true;
	}
	if (g->have[EVAL_CG_CPUSET])
		ok &= set_cpus(g, cg, lim->cpuset);
	if (g->have[EVAL_CG_CPU] && lim->cpus > 0) {
		long period = 100000, quota = (long)(lim->cpus * period);
		if (g->v2) {
			snprintf(num, sizeof num, "%ld %ld", quota, period);
			write_text(cpu_dir, "cpu.max", num);
		} else {
			snprintf(num, sizeof num, "%ld", quota);
			write_text(cpu_dir, "cpu.cfs_quota_us", num);
		}
	}
	if (!ok) {
		int e = errno;
		eval_cgroup_free(cg);
		return cuco_errf(err, CUCO_EENV, "%s: cannot set the stage's limits: %s", g->dir[0], strerror(e));
	}
	for (int c = 0; c < EVAL_CG_COUNT; c++)
		if (cg->dir[c][0])
			snprintf(cg->procs[c], sizeof cg->procs[c], "%s/cgroup.procs", cg->dir[c]);
	return CUCO_OK;
}

/* In the keeper after fork(): join every hierarchy's group. */
int eval_cgroup_join(const eval_cgroup *cg)
{
	char pid[24];
	long v = (long)getpid();
	int n = 0;
	char rev[24];
	do
		rev[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	for (int i = 0; i < n; i++)
		pid[i] = rev[n - 1 - i];
	for (int c = 0; c < EVAL_CG_COUNT; c++) {
		if (!cg->procs[c][0])
			continue;
		int fd = open(cg->procs[c], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, pid, (size_t)n) != n) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Signal every process in the group but `except` (sig 0: count them).
 * Raw system calls only: the keeper calls this after fork(). */
int eval_cgroup_signal(const eval_cgroup *cg, int sig, pid_t except)
{
	if (!cg->procs[0][0])
		return 0;
	int fd = open(cg->procs[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	int live = 0;
	long pid = 0;
	bool digits = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				pid = pid * 10 + (buf[i] - '0');
				digits = true;
				continue;
			}
			if (digits && pid != except) {
				live++;
				if (sig)
					kill((pid_t)pid, sig);
			}
			pid = 0;
			digits = false;
		}
	close(fd);
	return live;
}

void eval_cgroup_events(const eval_cgroup *cg, bool *pids_hit, bool *oom)
{
	*pids_hit = cg->procs[0][0] && keyed(cg->dir[0], "pids.events", "max") > 0;
	const char *mem = cg->v2 ? cg->dir[0] : cg->dir[EVAL_CG_MEMORY];
	*oom = cg->mem && keyed(mem, cg->v2 ? "memory.events" : "memory.oom_control", "oom_kill") > 0;
}

void eval_cgroup_describe(const eval_cgroup *cg, char *line, size_t size)
{
	if (!cg->freezer)
		snprintf(line, size, "cgroup none\n");
	else if (cg->v2)
		snprintf(line, size, "cgroup v2 %s\n", cg->dir[0]);
	else
		snprintf(line, size, "cgroup v1 %s %s\n", cg->dir[EVAL_CG_FREEZER], cg->dir[EVAL_CG_CPUACCT]);
}

void eval_cgroup_thaw(const eval_cgroup *cg)
{
	if (cg->freezer)
		write_text(cg->v2 ? cg->dir[0] : cg->dir[EVAL_CG_FREEZER], cg->v2 ? "cgroup.freeze"
			: "freezer.state", cg->v2 ? "0" : "THAWED");
}

void eval_cgroup_free(eval_cgroup *cg)
{
	/* A frozen group's processes cannot die. */
	eval_cgroup_thaw(cg);
	/* Anything left dies; a group is removed once empty. */
	for (int i = 0; i < 400 && eval_cgroup_signal(cg, SIGKILL, 0) > 0; i++)
		nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
	for (int c = 0; c < EVAL_CG_COUNT; c++)
		for (int i = 0; cg->dir[c][0] && rmdir(cg->dir[c]) != 0 && errno == EBUSY && i < 200; i++)
			nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
	memset(cg, 0, sizeof *cg);
}

bool cuco_limits_check(char *status, size_t size)
{
	eval_cgroups g;
	eval_cgroups_open(&g, cuco_env_get());
	cuco_strlcpy(status, g.status, size);
	eval_cgroups_close(&g);
	return g.on;
}
