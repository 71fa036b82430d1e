/* sandbox.c — bubblewrap (bwrap) around a stage.
 *
 * Candidates are untrusted programs, and so are their build commands. In
 * the sandbox a stage sees the system read-only, its own working directory
 * writable, a private /tmp and /dev/shm, no network but its own loopback
 * (Open MPI's ranks still talk through it and through /dev/shm), a tmpfs
 * over the user's home and over the run directory (the store, other
 * candidates' folders), and the GPU devices only for GPU workloads. It
 * runs with no capabilities, even as root, so nothing can be remounted.
 *
 * The sandbox has its own PID namespace: when its first process dies, the
 * kernel kills everything in it, so a candidate cannot slip out of the
 * stage's session with setsid() and linger. --die-with-parent ties that
 * first process to the stage's keeper (stage.c).
 *
 * A maintained tool rather than our own namespace code: bwrap is small,
 * audited, packaged by Debian and Ubuntu, and works unprivileged through
 * user namespaces. Where it is missing or cannot create namespaces (some
 * containers), auto mode runs stages with resource limits only, and says
 * so once. */
#include "eval/eval_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROBE_S 10.0
#define SMALL_TMPFS_MB 16L  /* /var, a hidden home: room for a tool's notes */

bool cuco_sandbox_mode_parse(const char *text, cuco_sandbox_mode *out)
{
	static const struct { const char *name; cuco_sandbox_mode mode; } modes[] = {
		{ "auto", CUCO_SANDBOX_AUTO }, { "bwrap", CUCO_SANDBOX_BWRAP }, { "off", CUCO_SANDBOX_OFF },
	};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(text, modes[i].name) == 0) {
			*out = modes[i].mode;
			return true;
		}
	return false;
}

/* ---- the command line ---------------------------------------------------- */

/* An option and its arguments; the list ends with NULL. */
static void words(eval_argv *a, const char *word, ...) __attribute__((sentinel));

static void words(eval_argv *a, const char *word, ...)
{
	va_list ap;
	va_start(ap, word);
	for (; word; word = va_arg(ap, const char *))
		eval_argv_push(a, word);
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

/* /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-caps/, and
 * WSL's /dev/dxg: whatever of them this machine has. */
static void push_gpu_devices(eval_argv *a)
{
	DIR *d = opendir("/dev");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "nvidia", 6) != 0 && strcmp(e->d_name, "dxg") != 0)
			continue;
		char path[300];
		snprintf(path, sizeof path, "/dev/%s", e->d_name);
		words(a, "--dev-bind", path, path, NULL);
	}
	if (d)
		closedir(d);
}

/* The system, read-only: where programs, libraries and their settings
 * live. Nothing else of the host is shown unless a layer names it: not
 * /run, /var, /tmp, /home or /srv, where services keep their sockets. A
 * merged-/usr link (/bin -> usr/bin) is made again as a link. */
static void push_system(eval_argv *a)
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

/* A writable tmpfs of at most mb MiB at path. */
static void push_tmpfs(eval_argv *a, const char *path, long mb, const char *perms)
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
	eval_argv a = { 0 }, readonly = { 0 };
	words(&a, sb->bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--unshare-net", NULL);
	words(&a, "--cap-drop", "ALL", NULL);
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
	eval_argv_push(&readonly, "/run");
	if (v->gpu)
		push_gpu_devices(&a);
	char real[PATH_MAX];
	for (size_t i = 0; i < sizeof v->layers / sizeof v->layers[0]; i++) {
		const eval_sandbox_layer *l = &v->layers[i];
		if (!real_dir(l->path, real) || strcmp(real, "/") == 0)
			continue;
		if (l->hide == EVAL_SHOW) {
			words(&a, "--ro-bind", real, real, NULL);
		} else if (l->hide == EVAL_SCRATCH) {
			push_tmpfs(&a, real, SMALL_TMPFS_MB, NULL);
		} else {
			words(&a, "--tmpfs", real, NULL);
			eval_argv_push(&readonly, real);
		}
	}
	/* The work folder: a tmpfs of its own, with the host's files the
	 * stage needs shown in it (the source read-only, the output to write). */
	if (!real_dir(v->workdir, real))
		cuco_strlcpy(real, v->workdir, sizeof real);  /* bwrap will say what is wrong */
	push_tmpfs(&a, real, disk, NULL);
	for (size_t i = 0; i < sizeof v->files / sizeof v->files[0] && v->files[i].name; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s/%s", real, v->files[i].name);
		words(&a, v->files[i].writable ? "--bind" : "--ro-bind", path, path, NULL);
	}
	words(&a, "--chdir", real, NULL);
	if (v->tmpdir && *v->tmpdir && real_dir(v->tmpdir, real))
		push_tmpfs(&a, real, disk, "0700");
	/* The referee's channel: the one host folder a run stage writes. */
	if (v->channel && *v->channel && real_dir(v->channel, real))
		words(&a, "--bind", real, real, NULL);
	/* The root and what is hidden stay empty: nothing to write there. */
	for (size_t i = 0; i < readonly.n; i++)
		words(&a, "--remount-ro", readonly.v[i], NULL);
	words(&a, "--remount-ro", "/", NULL);
	eval_argv_free(&readonly);
	if (v->seccomp) {
		char fd[16];
		snprintf(fd, sizeof fd, "%d", EVAL_SECCOMP_FD);
		words(&a, "--seccomp", fd, NULL);
	}
	eval_argv_push(&a, "--");
	return a.v;
}

void eval_sandbox_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* ---- finding out whether it works here ------------------------------------ */

/* Run `true` in the sandbox of a CPU stage, in a scratch folder; false with
 * bwrap's own complaint in why when it cannot. */
static bool probe(eval_sandbox *sb, char *why, size_t size)
{
	char dir[] = "/tmp/cuco-sandbox-XXXXXX", log[64];
	if (!mkdtemp(dir)) {
		snprintf(why, size, "/tmp: %s", strerror(errno));
		return false;
	}
	snprintf(log, sizeof log, "%s/probe.log", dir);
	eval_sandbox_view v = { .workdir = dir };
	char **argv = eval_sandbox_argv(sb, &v);
	eval_limits lim = { .wall_s = PROBE_S, .grace_s = 1, .log_cap = 4096, .sandbox = argv };
	eval_stage st;
	cuco_err err = { 0 };
	char *const cmd[] = { "true", NULL };
	bool ok = eval_stage_run(cmd, dir, log, &lim, NULL, NULL, NULL, &st, &err) == CUCO_OK
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

static int resolve_mode(cuco_sandbox_mode mode, cuco_sandbox_mode *out, cuco_err *err)
{
	const char *env = getenv("CUCO_SANDBOX");
	*out = mode;
	if (mode != CUCO_SANDBOX_DEFAULT)
		return CUCO_OK;
	*out = CUCO_SANDBOX_AUTO;
	if (env && *env && !cuco_sandbox_mode_parse(env, out))
		return cuco_errf(err, CUCO_EUSAGE, "CUCO_SANDBOX=%s: not auto, bwrap or off", env);
	return CUCO_OK;
}

int eval_sandbox_open(cuco_sandbox_mode mode, eval_sandbox *sb, cuco_err *err)
{
	memset(sb, 0, sizeof *sb);
	int rc = resolve_mode(mode, &mode, err);
	if (rc != CUCO_OK)
		return rc;
	static const char fallback[] = "stages run with resource limits only";
	if (mode == CUCO_SANDBOX_OFF) {
		snprintf(sb->status, sizeof sb->status, "sandbox off (sandbox = off): %s", fallback);
		return CUCO_OK;
	}
	const char *name = getenv("CUCO_BWRAP");
	name = name && *name ? name : "bwrap";
	char why[512], failed[160];
	if (!eval_which(name, sb->bwrap, sizeof sb->bwrap)) {
		snprintf(why, sizeof why, "%.200s not found (Debian and Ubuntu: apt-get install bubblewrap)",
			name);
	} else {
		sb->on = true;
		if (probe(sb, failed, sizeof failed)) {
			snprintf(sb->status, sizeof sb->status, "sandbox: %.300s (read-only system, private "
				"working directory, no network for local runs, home and run directory hidden)",
				sb->bwrap);
			return CUCO_OK;
		}
		sb->on = false;
		snprintf(why, sizeof why, "%.300s cannot run here: %s", sb->bwrap, failed);
	}
	if (mode == CUCO_SANDBOX_BWRAP)
		return cuco_errf(err, CUCO_EENV, "sandbox = bwrap: %s", why);
	snprintf(sb->status, sizeof sb->status, "sandbox off: %s; %s", why, fallback);
	return CUCO_OK;
}

int cuco_sandbox_check(cuco_sandbox_mode mode, bool *on, char *status, size_t size, cuco_err *err)
{
	eval_sandbox sb;
	int rc = eval_sandbox_open(mode, &sb, err);
	*on = sb.on;
	cuco_strlcpy(status, sb.status, size);
	return rc;
}
