/* stage-init.c — cuco-stage-init, the first process of a sandboxed stage.
 *
 * bwrap starts it as the stage's command, inside the stage's PID namespace
 * (sandbox.c): `cuco-stage-init [--user UID:GID[:GID,...]] [--report FD] --
 * COMMAND ARGS...`. It
 *  - runs the command as its child, as the stage's user when --user says
 *    so: for cuco run as root, bwrap keeps CAP_SETUID and CAP_SETGID for
 *    this alone, and the command, once it is that user, has no capability
 *    left;
 *  - stays behind with no capability and not dumpable: as root's it is out
 *    of the command's reach (no signal, no /proc/PID/mem, no fd of its);
 *    as the user's own (cuco not root), a command that kills it ends its
 *    own stage (bwrap reports the signal: a crash);
 *  - when the command ends, counts the processes of the namespace still
 *    alive, but bwrap's init (PID 1) and itself: work the stage left
 *    running — a child, a grandchild in a session of its own, a clone that
 *    names another parent — which the namespace's end would otherwise kill
 *    unseen. It writes "leftovers N" to FD, a pipe the command never holds;
 *  - ends as the command did: its exit status, or 128+N for signal N, as
 *    bwrap itself reports one.
 * With --probe instead of a command it says what a stage here gets, one
 * line each (`cuco doctor`): its uid, its PID, and how each of the
 * filter's doors answers.
 *
 * Plain libc and raw system calls: it runs inside the sandbox, under the
 * stage's system-call filter. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 16
#define SETTLE_TRIES 5      /* processes on their way out get 5 x 10 ms */

typedef struct user {
	bool set;
	uid_t uid;
	gid_t gid;
	gid_t groups[MAX_GROUPS];
	int ngroups;
} user;

static void die(const char *what)
{
	fprintf(stderr, "cuco-stage-init: %s: %s\n", what, strerror(errno));
	exit(126);
}

/* "UID:GID" or "UID:GID:G1,G2,...". */
static bool parse_user(const char *text, user *u)
{
	char *end;
	unsigned long v[2];
	const char *p = text;
	for (int i = 0; i < 2; i++) {
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || end == p || (i == 0 && *end != ':') || (i == 1 && *end && *end != ':'))
			return false;
		p = end + 1;
	}
	u->uid = (uid_t)v[0];
	u->gid = (gid_t)v[1];
	u->ngroups = 0;
	for (p = *end ? end + 1 : end; *p && u->ngroups < MAX_GROUPS; p = *end ? end + 1 : end) {
		u->groups[u->ngroups++] = (gid_t)strtoul(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return false;
	}
	u->set = true;
	return !*p;
}

/* In the command's child: the stage's user, with its groups and nothing
 * of root's; a failure ends the stage rather than run it as root. */
static void become(const user *u)
{
	if (!u->set)
		return;
	if (setgroups((size_t)u->ngroups, u->groups) != 0 || setresgid(u->gid, u->gid, u->gid) != 0
			|| setresuid(u->uid, u->uid, u->uid) != 0)
		die("cannot become the stage's user");
	uid_t r, e, s;
	if (getresuid(&r, &e, &s) != 0 || r != u->uid || e != u->uid || s != u->uid)
		die("still not the stage's user");
}

/* Give up every capability (what bwrap left for become()). */
static void drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	syscall(SYS_capset, &h, d);
}

/* Live processes of the namespace but PID 1 and this one. */
static int others(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int live = 0;
	pid_t self = getpid();
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 1 || pid == self)
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		const char *p = strrchr(buf, ')');
		live += p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	}
	if (d)
		closedir(d);
	return live;
}

static int leftovers(void)
{
	int n = others();
	for (int i = 0; i < SETTLE_TRIES && n > 0; i++) {
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
		n = others();
	}
	return n;
}

/* ---- --probe ------------------------------------------------------------------- */

/* A door's answer: "allowed" when the kernel took the call (whatever it
 * then said), else the errno's name: the filter's own (seccomp.c) says it
 * was refused. Each call is harmless when allowed. */
static void answer(const char *door, long rc, int refused)
{
	printf("%s %s\n", door, rc >= 0 || errno != refused ? "allowed" : strerrorname_np(errno));
}

static int probe(void)
{
	char ns[64] = "";
	ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
	printf("uid %d\npidns %s\n", (int)getuid(), n > 0 ? ns : "?");
	int sv[2];
	answer("socket(AF_UNIX)", socket(AF_UNIX, SOCK_STREAM, 0), EACCES);
	answer("socketpair(AF_UNIX)", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), EACCES);
	answer("io_uring", syscall(SYS_io_uring_setup, 0, NULL), ENOSYS);
	answer("keyrings", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), ENOSYS);
	answer("ptrace", syscall(SYS_ptrace, PTRACE_PEEKDATA, 1, NULL, NULL), EPERM);
	answer("process_vm_readv", syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0), EPERM);
	answer("userns", unshare(CLONE_NEWUSER), EPERM);
	return 0;
}

int main(int argc, char **argv)
{
	user u = { 0 };
	int report = -1, i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--probe") == 0)
			return probe();
		if (i + 1 >= argc || (strcmp(argv[i], "--user") == 0 ? !parse_user(argv[i + 1], &u)
				: strcmp(argv[i], "--report") != 0 || (report = atoi(argv[i + 1])) < 3)) {
			fprintf(stderr, "usage: cuco-stage-init [--user UID:GID[:GID,...]] [--report FD] -- "
				"COMMAND ARGS... | --probe\n");
			return 126;
		}
		i++;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "cuco-stage-init: no command\n");
		return 126;
	}
	if (report >= 0 && fcntl(report, F_SETFD, FD_CLOEXEC) != 0)
		die("--report");
	pid_t cmd = fork();
	if (cmd < 0)
		die("fork");
	if (cmd == 0) {
		become(&u);
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "cuco-stage-init: %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	drop_caps();
	prctl(PR_SET_DUMPABLE, 0);
	int status;
	while (waitpid(cmd, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (report >= 0)
		dprintf(report, "leftovers %d\n", leftovers());
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
