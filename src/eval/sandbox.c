/* sandbox.c — bubblewrap (bwrap) around a stage, and the user it runs as.
 *
 * Candidates are untrusted programs, and so are their build commands. In
 * the sandbox a stage sees the system read-only, its own working directory
 * writable, a private /tmp and /dev/shm, no network but its own loopback
 * (Open MPI's ranks still talk through it and through /dev/shm), a tmpfs
 * over the user's home and over the run directory (the store, other
 * candidates' folders), and for a GPU workload's run stage its slot's GPU
 * devices and no other GPU's (cuco_gpu_nodes_pick: the nodes are read, and
 * told apart, at the edge). It runs with no capabilities, even as root, so
 * nothing can be remounted, nor a device node made.
 *
 * Its user. cuco often runs as root (CI, containers), and root's files
 * (/etc/shadow, SSH host keys) would otherwise be a stage's to read and to
 * print into excerpts that later prompts carry. So as root a stage runs as
 * an unprivileged user ($CUCO_STAGE_USER, else nobody), joined to the GPU
 * devices' group where only a group may open them. In the sandbox bwrap
 * still makes the mounts as root (a workload under /root stays showable)
 * and keeps CAP_SETUID/CAP_SETGID for one thing: cuco-stage-init (its
 * first process, stage-init.c) becomes that user before the command
 * starts. As a plain user, a stage is that user, in bwrap's user
 * namespace. Without bwrap the keeper's child becomes the stage user
 * (stage.c), where the stage user can pass every folder above the run and
 * the workloads (eval_sandbox_reach); where it cannot, stages stay root's
 * and the line that says who they run as says which folder.
 *
 * The sandbox has its own PID namespace: when its first process dies, the
 * kernel kills everything in it, so a candidate cannot slip out of the
 * stage's session with setsid() and linger. --die-with-parent ties that
 * first process to the stage's keeper (stage.c). Since the namespace's end
 * would kill what the command leaves running before anyone looked,
 * cuco-stage-init counts it first and reports the count on a pipe of its
 * own (EVAL_REPORT_FD): work outside the measurement, which trust.c
 * refuses.
 *
 * A maintained tool rather than our own namespace code: bwrap is small,
 * audited, packaged by Debian and Ubuntu, and works unprivileged through
 * user namespaces. Where it is missing or cannot create namespaces (some
 * containers), auto mode runs stages with resource limits only, and says
 * so once. cuco_stage_check runs cuco-stage-init --probe as a stage, so
 * that `cuco doctor` says what a stage here really gets. */
#include "eval/eval_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_S 10.0
#define SMALL_TMPFS_MB 16L  /* /var, a hidden home: room for a tool's notes */

bool cuco_sandbox_mode_parse(const char *text, cuco_sandbox_mode *out)
{
	static const char *const names[] = { "auto", "bwrap", "off" };  /* from CUCO_SANDBOX_AUTO */
	int i = cuco_name_index(names, sizeof names / sizeof names[0], text);
	if (i >= 0)
		*out = (cuco_sandbox_mode)(CUCO_SANDBOX_AUTO + i);
	return i >= 0;
}

/* ---- the command line ---------------------------------------------------- */

/* An option and its arguments; the list ends with NULL. */
static void words(cuco_argv *a, const char *word, ...) __attribute__((sentinel));

static void words(cuco_argv *a, const char *word, ...)
{
	va_list ap;
	va_start(ap, word);
	for (; word; word = va_arg(ap, const char *))
		cuco_argv_push(a, word);
	va_end(ap);
}

/* A folder's real path: bwrap cannot mount over a symbolic link, such as
 * /usr/local/cuda -> cuda-13.0; mounted at its target, the link inside
 * still leads there. False when path is not an absolute folder. */
static bool real_dir(const char *path, char real[PATH_MAX])
{
	struct stat sb;
	return path && path[0] == '/' && realpath(path, real) && stat(real, &sb) == 0
		&& S_ISDIR(sb.st_mode);
}

/* The GPU nodes a stage is shown, at /dev/<name>. */
static void push_gpu_devices(cuco_argv *a, const cuco_gpu_binds *b)
{
	for (int i = 0; i < b->n; i++) {
		char src[sizeof b->names[0] + 300], dst[sizeof b->names[0] + 8];
		snprintf(src, sizeof src, "%.280s/%s", b->dev, b->names[i]);
		snprintf(dst, sizeof dst, "/dev/%s", b->names[i]);
		words(a, "--dev-bind", src, dst, NULL);
	}
}

/* A device only its group may open (mode 0660, group video): the stage
 * user joins that group, as a user at the machine would have. */
static void add_device_group(eval_user *u, const char *path)
{
	struct stat sb;
	if (stat(path, &sb) != 0 || (sb.st_mode & S_IROTH && sb.st_mode & S_IWOTH)
			|| !(sb.st_mode & S_IRGRP && sb.st_mode & S_IWGRP) || sb.st_gid == u->gid)
		return;
	for (int i = 0; i < u->ngroups; i++)
		if (u->groups[i] == sb.st_gid)
			return;
	if (u->ngroups < (int)(sizeof u->groups / sizeof u->groups[0]))
		u->groups[u->ngroups++] = sb.st_gid;
}

/* The system, read-only: where programs, libraries and their settings
 * live. Nothing else of the host is shown unless a layer names it: not
 * /run, /var, /tmp, /home or /srv, where services keep their sockets. A
 * merged-/usr link (/bin -> usr/bin) is made again as a link. */
static void push_system(cuco_argv *a)
{
	static const char *const system[] = { "/usr", "/etc", "/opt", "/sys", "/bin", "/sbin", "/lib",
		"/lib32", "/lib64", "/libx32", NULL };
	for (int i = 0; system[i]; i++) {
		struct stat sb;
		char target[PATH_MAX];
		if (lstat(system[i], &sb) != 0)
			continue;
		ssize_t n = S_ISLNK(sb.st_mode) ? readlink(system[i], target, sizeof target - 1) : -1;
		if (n > 0) {
			target[n] = '\0';
			words(a, "--symlink", target, system[i], NULL);
		} else if (S_ISDIR(sb.st_mode)) {
			words(a, "--ro-bind", system[i], system[i], NULL);
		}
	}
}

/* The folders above path, as bwrap would make them for a mount there but
 * open to others (bwrap's own are 0700, closed to a stage user not root):
 * those already there (the system's, a tmpfs) stay as they are. */
static void push_parents(cuco_argv *a, const char *path)
{
	char parent[PATH_MAX];
	cuco_strlcpy(parent, path, sizeof parent);
	for (char *p = strchr(parent + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		words(a, "--perms", "0755", "--dir", parent, NULL);
		*p = '/';
	}
}

/* A writable tmpfs of at most mb MiB at path. */
static void push_tmpfs(cuco_argv *a, const char *path, long mb, const char *perms)
{
	char size[32];
	snprintf(size, sizeof size, "%lld", (long long)mb << 20);
	if (perms)
		words(a, "--perms", perms, NULL);
	words(a, "--size", size, "--tmpfs", path, NULL);
}

char **eval_sandbox_argv(const eval_sandbox *sb, const eval_sandbox_view *v)
{
	if (!sb->on)
		return NULL;
	long disk = v->disk_mb > 0 ? v->disk_mb : EVAL_DISK_MB;
	cuco_argv a = { 0 }, readonly = { 0 };
	words(&a, sb->bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--unshare-net", NULL);
	words(&a, "--cap-drop", "ALL", NULL);
	if (sb->user.drop)  /* for cuco-stage-init to become the stage user, and no more */
		words(&a, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", NULL);
	push_system(&a);
	words(&a, "--dev", "/dev", NULL);
	words(&a, "--proc", "/proc", NULL);
	/* Every folder it may write is a tmpfs of bounded size, gone with the
	 * stage: its disk is bounded by their sizes (issue 18: 3 GB in the
	 * work folder, 2 GB in an unbounded /tmp). */
	push_tmpfs(&a, "/tmp", disk, "1777");
	push_tmpfs(&a, "/dev/shm", disk, "1777");
	push_tmpfs(&a, "/var", SMALL_TMPFS_MB, NULL);
	words(&a, "--perms", "1777", "--dir", "/var/tmp", NULL);
	words(&a, "--tmpfs", "/run", NULL);
	words(&a, "--ro-bind", sb->init, EVAL_INIT_PATH, NULL);
	cuco_argv_push(&readonly, "/run");
	if (v->gpu)
		push_gpu_devices(&a, v->gpu);
	char real[PATH_MAX];
	for (size_t i = 0; i < sizeof v->layers / sizeof v->layers[0]; i++) {
		const eval_sandbox_layer *l = &v->layers[i];
		if (!real_dir(l->path, real) || strcmp(real, "/") == 0)
			continue;
		push_parents(&a, real);
		if (l->hide == EVAL_SHOW) {
			words(&a, "--ro-bind", real, real, NULL);
		} else if (l->hide == EVAL_SCRATCH) {
			push_tmpfs(&a, real, SMALL_TMPFS_MB, "1777");
		} else {
			words(&a, "--tmpfs", real, NULL);
			cuco_argv_push(&readonly, real);
		}
	}
	/* The work folder: a tmpfs of its own, with the host's files the
	 * stage needs shown in it (the source read-only, the output to write). */
	if (!real_dir(v->workdir, real))
		cuco_strlcpy(real, v->workdir, sizeof real);  /* bwrap will say what is wrong */
	push_parents(&a, real);
	push_tmpfs(&a, real, disk, "1777");
	for (size_t i = 0; i < sizeof v->files / sizeof v->files[0] && v->files[i].name; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s/%s", real, v->files[i].name);
		words(&a, v->files[i].writable ? "--bind" : "--ro-bind", path, path, NULL);
	}
	words(&a, "--chdir", real, NULL);
	if (v->tmpdir && *v->tmpdir && real_dir(v->tmpdir, real)) {
		push_parents(&a, real);
		push_tmpfs(&a, real, disk, "1777");
	}
	/* The referee's channel: the one host folder a run stage writes. */
	if (v->channel && *v->channel && real_dir(v->channel, real))
		words(&a, "--bind", real, real, NULL);
	/* The root and what is hidden stay empty: nothing to write there. */
	for (size_t i = 0; i < readonly.n; i++)
		words(&a, "--remount-ro", readonly.v[i], NULL);
	words(&a, "--remount-ro", "/", NULL);
	cuco_argv_free(&readonly);
	if (v->seccomp) {
		char fd[16];
		snprintf(fd, sizeof fd, "%d", EVAL_SECCOMP_FD);
		words(&a, "--seccomp", fd, NULL);
	}
	cuco_argv_push(&a, "--");
	char report[16];
	snprintf(report, sizeof report, "%d", EVAL_REPORT_FD);
	words(&a, EVAL_INIT_PATH, "--report", report, NULL);
	if (sb->user.drop) {
		char spec[256];
		int n = snprintf(spec, sizeof spec, "%u:%u", (unsigned)sb->user.uid, (unsigned)sb->user.gid);
		for (int i = 0; i < sb->user.ngroups && n < (int)sizeof spec; i++)
			n += snprintf(spec + n, sizeof spec - (size_t)n, "%c%u", i ? ',' : ':',
				(unsigned)sb->user.groups[i]);
		words(&a, "--user", spec, NULL);
	}
	cuco_argv_push(&a, "--");
	return a.v;
}

void eval_sandbox_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* ---- the stage user ---------------------------------------------------------- */

/* Who stages run as. Not root: as cuco's own user, in bwrap's user
 * namespace where bwrap works. Root: as $CUCO_STAGE_USER (a name or a
 * uid), else nobody, else uid and gid 65534; CUCO_STAGE_USER=root keeps
 * root, on purpose. */
static int stage_user(eval_user *u, const char *want, cuco_err *err)
{
	memset(u, 0, sizeof *u);
	u->uid = geteuid();
	u->gid = getegid();
	const struct passwd *pw = getpwuid(u->uid);
	snprintf(u->name, sizeof u->name, "%s", pw ? pw->pw_name : "?");
	if (u->uid != 0)
		return CUCO_OK;
	char *end;
	if (want) {
		unsigned long id = strtoul(want, &end, 10);
		pw = *end ? getpwnam(want) : getpwuid((uid_t)id);
		if (!pw && *end)
			return cuco_errf(err, CUCO_EUSAGE, "CUCO_STAGE_USER=%s: no such user", want);
		u->uid = pw ? pw->pw_uid : (uid_t)id;
		u->gid = pw ? pw->pw_gid : (gid_t)id;
	} else {
		pw = getpwnam("nobody");
		u->uid = pw ? pw->pw_uid : 65534;
		u->gid = pw ? pw->pw_gid : 65534;
	}
	snprintf(u->name, sizeof u->name, "%s", pw ? pw->pw_name : "?");
	u->drop = u->uid != 0;
	const cuco_gpu_nodes *gpu = cuco_gpu_nodes_get();
	for (int i = 0; u->drop && i < gpu->npresent; i++) {
		char path[sizeof gpu->dev + sizeof gpu->present[0] + 1];
		snprintf(path, sizeof path, "%s/%s", gpu->dev, gpu->present[i]);
		add_device_group(u, path);
	}
	return CUCO_OK;
}

/* Whether this process may become u: a root whose user namespace maps
 * only itself (unshare -r, some rootless containers) may not. A child
 * tries; its exit status is the errno. */
static bool can_become(const eval_user *u, int *err)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) != 0
				|| syscall(SYS_setresgid, u->gid, u->gid, u->gid) != 0
				|| syscall(SYS_setresuid, u->uid, u->uid, u->uid) != 0)
			_exit(errno & 0x7f);
		_exit(0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = 0;  /* cannot tell: the stage will say */
	*err = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	return *err == 0;
}

static void say_user(eval_sandbox *sb, const char *why)
{
	const eval_user *u = &sb->user;
	if (u->drop)
		snprintf(sb->user_status, sizeof sb->user_status, "stages run as %s (uid %u), not root%s",
			u->name, (unsigned)u->uid, sb->on ? ", in a PID namespace of their own" : "");
	else if (u->uid != 0)
		snprintf(sb->user_status, sizeof sb->user_status, "stages run as cuco's user, %s (uid %u)%s",
			u->name, (unsigned)u->uid, sb->on ? ", in a user and a PID namespace of their own" : "");
	else
		snprintf(sb->user_status, sizeof sb->user_status, "stages run as root: %s", why);
}

/* Stages stay root's, for why. */
static void stay_root(eval_sandbox *sb, const char *why)
{
	memset(&sb->user, 0, sizeof sb->user);
	snprintf(sb->user.name, sizeof sb->user.name, "root");
	say_user(sb, why);
}

/* Whether u may pass through dir (search it). */
static bool may_search(const eval_user *u, const struct stat *st)
{
	if (st->st_uid == u->uid)
		return st->st_mode & S_IXUSR;
	bool group = st->st_gid == u->gid;
	for (int i = 0; i < u->ngroups && !group; i++)
		group = st->st_gid == u->groups[i];
	return st->st_mode & (group ? S_IXGRP : S_IXOTH);
}

/* The first folder from / down to path that u may not pass ("" when
 * none), and its mode. */
static void blocked(const eval_user *u, const char *path, char at[PATH_MAX], unsigned *mode)
{
	at[0] = '\0';
	if (!realpath(path, at))
		at[0] = '\0';  /* not there: nothing to reach */
	for (char *p = at; *at; p = strchr(p + 1, '/')) {
		char c = p ? *p : '\0';
		if (p)
			*p = '\0';
		struct stat st;
		if (stat(*at ? at : "/", &st) == 0 && S_ISDIR(st.st_mode) && !may_search(u, &st)) {
			*mode = (unsigned)(st.st_mode & 07777);
			return;
		}
		if (!p)
			break;
		*p = c;
	}
	at[0] = '\0';
}

/* In bwrap: whether u may not pass the folder path itself (it is shown
 * as it is; the folders above it are bwrap's own). */
static void blocked_self(const eval_user *u, const char *path, char at[PATH_MAX], unsigned *mode)
{
	struct stat st;
	if (!realpath(path, at) || stat(at, &st) != 0 || !S_ISDIR(st.st_mode) || may_search(u, &st)) {
		at[0] = '\0';
		return;
	}
	*mode = (unsigned)(st.st_mode & 07777);
}

void eval_sandbox_reach(eval_sandbox *sb, const char *const *paths, size_t n)
{
	if (!sb->user.drop)
		return;
	for (size_t i = 0; i < n; i++) {
		char at[PATH_MAX], why[2 * PATH_MAX + 300];
		unsigned mode = 0;
		if (!paths[i] || !*paths[i])
			continue;
		if (sb->on)
			blocked_self(&sb->user, paths[i], at, &mode);
		else
			blocked(&sb->user, paths[i], at, &mode);
		if (!*at)
			continue;
		snprintf(why, sizeof why, "%s cannot enter %s (mode %04o)%s%s; %s", sb->user.name, at, mode,
			strcmp(at, paths[i]) != 0 ? ", above " : "", strcmp(at, paths[i]) != 0 ? paths[i] : "",
			sb->on ? "the sandbox shows the workloads' and the headers' folders as they are"
			: "with limits only, every folder above the run and the workloads must be open to others");
		stay_root(sb, why);
		return;
	}
}

int eval_sandbox_give(const eval_sandbox *sb, const char *path, cuco_err *err)
{
	if (sb->user.drop && lchown(path, sb->user.uid, sb->user.gid) != 0)
		return cuco_errf(err, CUCO_EENV, "%s: cannot give it to the stage user %s: %s", path,
			sb->user.name, strerror(errno));
	return CUCO_OK;
}

int eval_sandbox_placeholder(const eval_sandbox *sb, const char *path, cuco_err *err)
{
	int rc = cuco_write_file(path, "", 0, err);
	if (rc == CUCO_OK && chmod(path, 0755) != 0)
		rc = cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(errno));
	return rc == CUCO_OK && sb ? eval_sandbox_give(sb, path, err) : rc;
}

int eval_sandbox_enter(const eval_sandbox *sb, const char *dir, cuco_err *err)
{
	if (!sb->on && sb->user.drop && chmod(dir, 0711) != 0)
		return cuco_errf(err, CUCO_EENV, "%s: %s", dir, strerror(errno));
	return CUCO_OK;
}

/* cuco-stage-init: $CUCO_STAGE_INIT, then the build tree's, then beside
 * the running executable's prefix (an installed prefix moved), then the
 * configured one; false when none is there. */
static bool find_init(const char *env, char *out, size_t size)
{
	if (env) {
		cuco_strlcpy(out, env, size);
		return access(out, X_OK) == 0;
	}
	if (access(CUCO_INIT_BUILD, X_OK) == 0)
		return cuco_strlcpy(out, CUCO_INIT_BUILD, size);
	if (cuco_installed_beside(CUCO_INIT_REL, out, size) && access(out, X_OK) == 0)
		return true;
	cuco_strlcpy(out, CUCO_INIT_INSTALL, size);
	return access(out, X_OK) == 0;
}

/* ---- finding out whether it works here ------------------------------------ */

static void collect(const char *line, size_t len, void *arg)
{
	cuco_buf_append(arg, line, len);
	cuco_buf_puts(arg, "\n");
}

/* Run cmd as a CPU stage would run (in the sandbox when it is on, under
 * the filter f when given, as the stage user), in a scratch folder, its
 * output into out (NULL: dropped); false with the reason in why (bwrap's
 * own complaint, say) when it did not end with status 0. */
static bool run_probe(const eval_sandbox *sb, const eval_filter *f, char *const *cmd, cuco_buf *out,
	char *why, size_t size)
{
	char dir[] = "/tmp/cuco-sandbox-XXXXXX", log[64];
	if (!mkdtemp(dir)) {
		snprintf(why, size, "/tmp: %s", strerror(errno));
		return false;
	}
	snprintf(log, sizeof log, "%s/probe.log", dir);
	eval_sandbox_view v = { .workdir = dir, .seccomp = f != NULL };
	char **argv = eval_sandbox_argv(sb, &v);
	eval_limits lim = { .wall_s = PROBE_S, .grace_s = 1, .log_cap = 4096, .sandbox = argv,
		.filter = f, .user = &sb->user, .pass_env = sb->pass_env };
	eval_stage st;
	cuco_err err = { 0 };
	bool ok = eval_stage_run(cmd, dir, log, &lim, out ? collect : NULL, out, &st, &err) == CUCO_OK
		&& st.exit_code == 0;
	if (!ok) {
		char *tail = cuco_trim(st.tail);
		tail[strcspn(tail, "\n")] = '\0';
		cuco_strlcpy(why, *err.msg ? err.msg : *tail ? tail : st.timed_out ? "it hung" : "it failed",
			size);
	}
	eval_sandbox_argv_free(argv);
	unlink(log);
	rmdir(dir);
	return ok;
}

/* `true` in the sandbox of a CPU stage. */
static bool probe(const eval_sandbox *sb, char *why, size_t size)
{
	char *const cmd[] = { "true", NULL };
	return run_probe(sb, NULL, cmd, NULL, why, size);
}

static int resolve_mode(cuco_sandbox_mode mode, const char *env, cuco_sandbox_mode *out,
	cuco_err *err)
{
	*out = mode;
	if (mode != CUCO_SANDBOX_DEFAULT)
		return CUCO_OK;
	*out = CUCO_SANDBOX_AUTO;
	if (env && !cuco_sandbox_mode_parse(env, out))
		return cuco_errf(err, CUCO_EUSAGE, "CUCO_SANDBOX=%s: not auto, bwrap or off", env);
	return CUCO_OK;
}

int eval_sandbox_open(cuco_sandbox_mode mode, const cuco_env *env, eval_sandbox *sb, cuco_err *err)
{
	memset(sb, 0, sizeof *sb);
	sb->pass_env = env->pass_env;
	int rc = resolve_mode(mode, env->sandbox, &mode, err);
	if (rc == CUCO_OK)
		rc = stage_user(&sb->user, env->stage_user, err);
	if (rc != CUCO_OK)
		return rc;
	int e;
	if (sb->user.drop && !can_become(&sb->user, &e)) {
		char why[200];
		snprintf(why, sizeof why, "it cannot become %s (uid %u): %s (a user namespace that maps "
			"only root?)", sb->user.name, (unsigned)sb->user.uid, strerror(e));
		stay_root(sb, why);
	} else {
		say_user(sb, "CUCO_STAGE_USER says so");
	}
	static const char fallback[] = "stages run with resource limits only";
	if (mode == CUCO_SANDBOX_OFF) {
		find_init(env->stage_init, sb->init, sizeof sb->init);  /* for cuco_stage_check's probe */
		snprintf(sb->status, sizeof sb->status, "sandbox off (sandbox = off): %s", fallback);
		return CUCO_OK;
	}
	const char *name = env->bwrap;
	char why[PATH_MAX + 300], failed[160];
	bool init = find_init(env->stage_init, sb->init, sizeof sb->init);
	if (!cuco_which(name, sb->bwrap, sizeof sb->bwrap)) {
		snprintf(why, sizeof why, "%.200s not found (Debian and Ubuntu: apt-get install bubblewrap)",
			name);
	} else if (!init) {
		snprintf(why, sizeof why, "%s not found (it is built and installed with cuco)", sb->init);
	} else {
		sb->on = true;
		if (probe(sb, failed, sizeof failed)) {
			snprintf(sb->status, sizeof sb->status, "sandbox: %.300s (read-only system, private "
				"working directory, no network for local runs, home and run directory hidden)",
				sb->bwrap);
			char gpu[300];
			if (!cuco_gpu_nodes_say(cuco_gpu_nodes_get(), gpu, sizeof gpu))
				snprintf(sb->status + strlen(sb->status), sizeof sb->status - strlen(sb->status), "; %s",
					gpu);
			if (sb->user.drop || geteuid() != 0)
				say_user(sb, "");  /* now in the sandbox's namespaces */
			return CUCO_OK;
		}
		sb->on = false;
		snprintf(why, sizeof why, "%.300s cannot run here: %s", sb->bwrap, failed);
	}
	if (mode == CUCO_SANDBOX_BWRAP)
		return cuco_errf(err, CUCO_EENV, "sandbox = bwrap: %s", why);
	snprintf(sb->status, sizeof sb->status, "sandbox off: %.400s; %s", why, fallback);
	return CUCO_OK;
}

int cuco_sandbox_check(cuco_sandbox_mode mode, bool *on, char *status, size_t size, cuco_err *err)
{
	eval_sandbox sb;
	int rc = eval_sandbox_open(mode, cuco_env_get(), &sb, err);
	*on = sb.on;
	cuco_strlcpy(status, sb.status, size);
	return rc;
}

/* ---- what confines a stage here (cuco doctor) ------------------------------------- */

/* The value of "key value" in the probe's output, or "" (it said nothing). */
static void said(const char *out, const char *key, char *value, size_t size)
{
	value[0] = '\0';
	size_t kl = strlen(key);
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
			snprintf(value, size, "%.*s", (int)strcspn(p + kl + 1, "\n"), p + kl + 1);
			return;
		}
}

/* The doors of the filter (stage-init.c --probe names them), with those a
 * GPU run stage keeps open. */
static const struct { const char *door; bool gpu_open; } doors[] = {
	{ "io_uring", false }, { "keyrings", false }, { "ptrace", false }, { "process_vm_readv", false },
	{ "userns", false },
	{ "socket(AF_UNIX)", true }, { "socketpair(AF_UNIX)", true },
};

typedef void (*report_fn)(const char *what, bool ok, const char *detail, void *arg);

/* How many running processes have uid among their ids (real, effective,
 * saved, file system), but this one; the first one's pid and name. */
static int processes_of(uid_t uid, long *first, char *name, size_t size)
{
	DIR *d = opendir("/proc");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		char *end, path[300], line[256], comm[64] = "";
		long pid = strtol(e->d_name, &end, 10);
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		FILE *f = *end || pid <= 0 || pid == getpid() ? NULL : fopen(path, "re");
		unsigned ids[4] = { 0 };
		bool got = false;
		while (f && fgets(line, sizeof line, f)) {
			sscanf(line, "Name: %63s", comm);
			got |= sscanf(line, "Uid: %u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3]) == 4;
		}
		if (f)
			fclose(f);
		if (!got || (ids[0] != uid && ids[1] != uid && ids[2] != uid && ids[3] != uid))
			continue;
		if (n++ == 0) {
			*first = pid;
			snprintf(name, size, "%s", comm);
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* Whether the stage user is the stages' own: a uid that owns other running
 * processes (nobody is often a daemon's) shares with them what a uid
 * shares — signals, ptrace where it is allowed, its files. One line. */
static void report_shared_user(const eval_user *u, report_fn report, void *arg)
{
	if (!u->drop)
		return;  /* cuco's own user: it owns cuco */
	long pid = 0;
	char name[64] = "", line[400];
	int n = processes_of(u->uid, &pid, name, sizeof name);
	if (n)
		snprintf(line, sizeof line, "%s (uid %u) owns %d running process%s (PID %ld, %s): stages share "
			"that uid with them; set CUCO_STAGE_USER to a user of their own", u->name, (unsigned)u->uid, n,
			n == 1 ? "" : "es", pid, name);
	else
		snprintf(line, sizeof line, "%s (uid %u) owns no running process: no daemon shares it now",
			u->name, (unsigned)u->uid);
	report("stage user's own", n == 0, line, arg);
}

static void report_filter(const char *out, report_fn report, void *arg)
{
	char refused[256] = "", allowed[256] = "", value[64];
	for (size_t i = 0; i < sizeof doors / sizeof doors[0]; i++) {
		said(out, doors[i].door, value, sizeof value);
		char *list = *value && strcmp(value, "allowed") != 0 ? refused : allowed;
		snprintf(list + strlen(list), sizeof refused - strlen(list), "%s%s", *list ? ", " : "",
			doors[i].door);
	}
	char line[640];
	if (!*allowed)
		snprintf(line, sizeof line, "refused: %s (GPU run stages keep the Unix sockets: CUDA needs them)",
			refused);
	else
		snprintf(line, sizeof line, "allowed here: %s%s%s", allowed, *refused ? "; refused: " : "", refused);
	report("seccomp", !*allowed, line, arg);
	said(out, "keyrings", value, sizeof value);
	bool keys = *value && strcmp(value, "allowed") != 0;
	report("keyrings", keys, keys ? "a session keyring of its own per stage; add_key, request_key and "
		"keyctl refused" : "a session keyring of its own per stage, but the keyring calls are not "
		"refused: stages of one uid share its user keyring", arg);
}

int cuco_stage_check(cuco_sandbox_mode mode, report_fn report, void *arg, cuco_err *err)
{
	eval_sandbox sb;
	int rc = eval_sandbox_open(mode, cuco_env_get(), &sb, err);
	if (rc != CUCO_OK)
		return rc;
	eval_filter f;
	eval_filter_build(&f, false);
	char *const in[] = { EVAL_INIT_PATH, "--probe", NULL }, *out_of[] = { sb.init, "--probe", NULL };
	cuco_buf out = { 0 };
	char why[200] = "", uid[32], ns[64], own[64] = "";
	bool ran = eval_filter_available() && run_probe(&sb, &f, sb.on ? in : out_of, &out, why, sizeof why);
	if (!ran)
		snprintf(why + strlen(why), sizeof why - strlen(why), "%s", eval_filter_available() ? ""
			: "no seccomp filter for this architecture");
	said(out.data ? out.data : "", "uid", uid, sizeof uid);
	said(out.data ? out.data : "", "pidns", ns, sizeof ns);
	ssize_t n = readlink("/proc/self/ns/pid", own, sizeof own - 1);
	own[n > 0 ? n : 0] = '\0';
	if (!sb.on && sb.user.drop)
		snprintf(sb.user_status + strlen(sb.user_status), sizeof sb.user_status - strlen(sb.user_status),
			", where every folder above the run and the workloads is open to others (else root)");
	report("stage user", ran && atoi(uid) != 0, ran ? sb.user_status : why, arg);
	report_shared_user(&sb.user, report, arg);
	bool pidns = ran && *ns && strcmp(ns, own) != 0;
	report("PID namespace", pidns, pidns ? "a PID namespace of its own per stage (bwrap --unshare-pid)"
		: "none: stages share the host's (the sandbox is off)", arg);
	if (ran)
		report_filter(out.data, report, arg);
	else
		report("seccomp", false, why, arg);
	char gpu[300];
	bool apart = cuco_gpu_nodes_say(cuco_gpu_nodes_get(), gpu, sizeof gpu);
	if (!sb.on)
		snprintf(gpu, sizeof gpu, "every GPU's node of the host: the sandbox is off");
	report("GPU nodes", sb.on && apart, gpu, arg);
	eval_cgroups g;
	eval_cgroups_open(&g, cuco_env_get());
	report("leftovers", sb.on || g.on, sb.on ? "what a stage leaves running is counted in its PID "
		"namespace (cuco-stage-init), then killed" : g.on ? "what a stage leaves running is counted "
		"below its keeper (the stage's subreaper) and in its cgroup, then killed" : "counted below the "
		"stage's keeper (its subreaper), then killed; a process a daemon starts for it is not below it",
		arg);
	eval_cgroups_close(&g);
	eval_cache c;
	eval_cache_open(&c, "", 0, 0);
	char line[200];
	snprintf(line, sizeof line, "RUN/cache: %ld MiB a program, %ld MiB a run (the least recently used "
		"go first), a failed candidate's program evicted", c.program_mb, c.run_mb);
	report("build cache", true, line, arg);
	cuco_buf_free(&out);
	return CUCO_OK;
}
