/* stage.c — one stage (compile, run, benchmark) as a child process tree.
 *
 * The command is an argument vector, run with no shell between (template.c
 * builds it) and an allowlisted environment (env.c).
 *
 * The child becomes the leader of a new session, which also makes it the
 * leader of a new process group, and joins the stage's cgroup where there
 * is one (cgroup.c) before anything else runs. The session and the group
 * are what we watch and kill: Open MPI's mpirun puts every rank in a
 * process group of its own, but they all stay in the session; a process
 * that calls setsid() leaves the session but not the cgroup (nor, in the
 * sandbox, its PID namespace, which dies whole with its first process).
 *
 * The leader is a keeper that forks the command and waits: it kills the
 * stage when cuco dies, which cuco itself can no longer do (keep()).
 *
 * What the command leaves running when it ends did work nobody measured:
 * it is counted (eval_stage.leftovers, which trust.c refuses) and killed.
 * In the sandbox its PID namespace counts it (cuco-stage-init's report,
 * sandbox.c); without, the stage's cgroup, which holds every process
 * whatever it did with sessions and parents (a setsid() grandchild, a
 * clone(CLONE_PARENT) sibling), else the session.
 *
 * Local stages (those with a system-call filter) join a session keyring of
 * their own: nothing the host's session keeps there reaches them. Without a
 * sandbox, the command becomes the stage user (sandbox.c) before exec.
 *
 * The stage's cgroup limits its processes together: a fork refused at
 * pids.max or an OOM kill ends the stage at once. RLIMIT_NPROC would be the
 * usual fork-bomb guard, but it counts all of a user's processes and root
 * ignores it, so without a cgroup the monitor counts the session's live
 * processes every few milliseconds and kills the session above the limit.
 * RLIMIT_CPU is a backstop for when the monitor itself dies: a candidate
 * outliving cuco still stops eventually.
 *
 * Output goes through a pipe that the parent drains: the log file keeps the
 * first log_cap bytes, a tail is kept for the result's excerpt, and every
 * line is handed to a callback as it passes, so a CUCO_RESULT line is found
 * even after megabytes of chatter. */
#include "eval/eval_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 65536
#define POLL_MS 10
#define SCAN_EVERY_S 0.01
#define ORPHAN_WAIT_S 5.0  /* after the leader: how long to wait for output to close */
#define KEEPER_FD 3         /* the lifeline's read end in the keeper */
#define KEEPER_KILL_TRIES 2000  /* 5 ms apart: a process stuck in the kernel gets 10 s */
#define MAX_DEPTH 4096      /* the longest chain of parents followed */

/* A numeric field of /proc/<pid>/stat's text after the state (STAT_PPID,
 * STAT_SESSION), or -1 when it is a zombie or unreadable. "pid (comm)
 * state ppid pgrp session ...": comm may hold spaces and parentheses, so
 * fields are counted from the last ')'. */
enum { STAT_PPID = 0, STAT_SESSION = 2 };

static long stat_field(const char *buf, int field)
{
	const char *p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2] || p[2] == 'Z' || p[2] == 'X')
		return -1;
	p += 3;
	for (int i = 0; i < field; i++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	long v = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return *p == ' ' ? v : -1;
}

/* /proc/<pid>/stat into buf; false when it is gone. */
static bool read_stat(const char *pid, char *buf, size_t size)
{
	char path[48] = "/proc/";
	size_t len = strlen(pid);
	if (len > 20)
		return false;
	memcpy(path + 6, pid, len);
	memcpy(path + 6 + len, "/stat", 6);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t got = read(fd, buf, size - 1);
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
	return got > 0;
}

/* pid as text, without stdio. */
static void pid_text(long pid, char out[24])
{
	char rev[24];
	int n = 0;
	do
		rev[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0 && n < 23);
	for (int i = 0; i < n; i++)
		out[i] = rev[n - 1 - i];
	out[n] = '\0';
}

/* Whether the process whose stat text is buf has root among its
 * ancestors. */
static bool descends(const char *buf, pid_t root)
{
	char text[24], up[512];
	long parent = stat_field(buf, STAT_PPID);
	for (int depth = 0; parent > 1 && depth < MAX_DEPTH; depth++) {
		if (parent == root)
			return true;
		pid_text(parent, text);
		parent = read_stat(text, up, sizeof up) ? stat_field(up, STAT_PPID) : -1;
	}
	return false;
}

/* Signal every live process of the stage but the caller (sig 0: only
 * count them): those of the session `key` (IN_SESSION), or those below
 * the process `key` (BELOW: the keeper, the stage's subreaper, is an
 * ancestor of all of them, whatever sessions they made). Only raw system
 * calls and hand parsing: the stage's keeper calls this after fork() in a
 * threaded process, where malloc and stdio may deadlock on a lock another
 * thread held. */
typedef enum { IN_SESSION, BELOW } scope;

static int procs_signal(scope which, pid_t key, int sig)
{
	int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 0;
	pid_t self = getpid();
	int live = 0;
	_Alignas(struct dirent64) char ents[8192];
	ssize_t n;
	while ((n = getdents64(dir, ents, sizeof ents)) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *e = (const struct dirent64 *)(ents + off);
			off += e->d_reclen;
			long pid = 0;
			const char *c = e->d_name;
			for (; *c >= '0' && *c <= '9' && pid < 1L << 30; c++)
				pid = pid * 10 + (*c - '0');
			char buf[512];
			if (*c || pid <= 0 || pid == self || !read_stat(e->d_name, buf, sizeof buf))
				continue;
			if (which == IN_SESSION ? stat_field(buf, STAT_SESSION) != key : !descends(buf, key))
				continue;
			live++;
			if (sig)
				kill((pid_t)pid, sig);
		}
	}
	close(dir);
	return live;
}

int eval_session_count(pid_t session)
{
	return procs_signal(IN_SESSION, session, 0);
}

/* ---- output sink ------------------------------------------------------------ */

typedef struct sink {
	int log_fd;
	size_t log_cap, logged;
	eval_stage *st;
	eval_line_fn on_line;
	void *arg;
	char *line;
	size_t line_len;
	bool line_cut;
} sink;

static void sink_line(sink *s)
{
	size_t n = s->line_len;
	if (n > 0 && s->line[n - 1] == '\r')
		n--;
	s->line[n] = '\0';
	if (s->on_line)
		s->on_line(s->line, n, s->arg);
	s->line_len = 0;
	s->line_cut = false;
}

static void sink_feed(sink *s, const char *data, size_t n)
{
	eval_stage *st = s->st;
	st->out_bytes += n;
	if (s->logged < s->log_cap) {
		size_t take = n < s->log_cap - s->logged ? n : s->log_cap - s->logged;
		if (write(s->log_fd, data, take) > 0)
			s->logged += take;
	}
	/* Keep the last sizeof tail - 1 bytes. */
	size_t cap = sizeof st->tail - 1, have = strlen(st->tail);
	if (n >= cap) {
		memcpy(st->tail, data + n - cap, cap);
		st->tail[cap] = '\0';
	} else {
		size_t drop = have + n > cap ? have + n - cap : 0;
		memmove(st->tail, st->tail + drop, have - drop);
		memcpy(st->tail + have - drop, data, n);
		st->tail[have - drop + n] = '\0';
	}
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			sink_line(s);
		} else if (s->line_len < LINE_MAX_BYTES) {
			s->line[s->line_len++] = data[i];
		} else {
			s->line_cut = true;  /* an over-long line is seen truncated */
		}
	}
}

static void sink_finish(sink *s)
{
	if (s->line_len > 0 || s->line_cut)
		sink_line(s);
	if (s->st->out_bytes > s->logged) {
		char note[128];
		int n = snprintf(note, sizeof note, "\n[cuco: output cut: %zu of %zu bytes kept]\n",
			s->logged, s->st->out_bytes);
		if (write(s->log_fd, note, (size_t)n) < 0)
			return;  /* the log is a convenience; the tail still holds the end */
	}
}

/* ---- the child ---------------------------------------------------------------- */

static void set_limit(int resource, rlim_t value)
{
	struct rlimit rl = { value, value };
	setrlimit(resource, &rl);
}

/* The keeper's only use for SIGCHLD is to wake ppoll(). */
static void on_child(int sig)
{
	(void)sig;
}

/* Without a sandbox (where cuco-stage-init does it): the stage user, with
 * nothing of root's left. Raw calls: one thread after fork(), and glibc's
 * would signal the threads the parent had. */
static void become(const eval_user *u)
{
	static const char msg[] = "cuco: cannot become the stage's user\n";
	if (!u || !u->drop)
		return;
	if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) != 0
			|| syscall(SYS_setresgid, u->gid, u->gid, u->gid) != 0
			|| syscall(SYS_setresuid, u->uid, u->uid, u->uid) != 0) {
		if (write(2, msg, sizeof msg - 1) < 0)
			_exit(126);
		_exit(126);
	}
}

/* The command, a child of the keeper: limits, then exec. */
static void exec_command(char *const *argv, const eval_limits *lim, rlim_t cpu_s, char **env,
	const sigset_t *none)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);  /* the keeper's ignored: an exec keeps that */
	sigprocmask(SIG_SETMASK, none, NULL);
	set_limit(RLIMIT_CORE, 0);
	set_limit(RLIMIT_CPU, cpu_s);
	if (lim->mem_mb > 0)
		set_limit(RLIMIT_AS, (rlim_t)lim->mem_mb << 20);
	if (lim->fsize_mb > 0)
		set_limit(RLIMIT_FSIZE, (rlim_t)lim->fsize_mb << 20);
	/* In the sandbox bwrap loads the filter itself, once it is set up. */
	if (!lim->sandbox)
		become(lim->user);
	if (lim->filter && !lim->sandbox && eval_filter_install(lim->filter) != 0)
		_exit(126);
	execve(argv[0], argv, env);
	_exit(127);
}

/* Reap every child the keeper has: the command's orphans come to it. */
static void reap_orphans(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		continue;
}

/* Kill everything below the keeper, the session and the group. */
static void kill_below(const eval_cgroup *cg)
{
	pid_t self = getpid();
	for (int i = 0; i < KEEPER_KILL_TRIES && (procs_signal(BELOW, self, SIGKILL)
			+ procs_signal(IN_SESSION, self, SIGKILL) + eval_cgroup_signal(cg, SIGKILL, self)) > 0; i++) {
		reap_orphans();
		nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
	}
	reap_orphans();
}

/* What the command left running when it ended: "leftovers N" on the
 * report pipe (-1: cuco-stage-init counts, in a sandbox, where bwrap's
 * own processes are on their way out below the keeper), then killed.
 * Processes on their way out get a moment. */
static void end_leftovers(int report, const eval_cgroup *cg)
{
	int left = 0;
	for (int i = 0; report >= 0 && i < 5 && (left = procs_signal(BELOW, getpid(), 0)) > 0; i++) {
		reap_orphans();
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	}
	char line[48] = "leftovers ";
	pid_text(left, line + 10);
	size_t n = strlen(line);
	line[n] = '\n';
	if (report >= 0 && write(report, line, n + 1) < 0)
		line[0] = '\0';  /* the pipe is gone: cuco counts as it can */
	kill_below(cg);
}

/* The session leader stays behind as the command's keeper. cuco holds the
 * write end of the lifeline pipe and never writes to it: when cuco dies,
 * even by SIGKILL, the kernel closes it, ppoll() here sees the hang-up and
 * the keeper kills the whole stage. Without it a stage blocked in a
 * system call (a sleep, a read) would outlive cuco for good: RLIMIT_CPU
 * stops only busy ones. A pipe and not PR_SET_PDEATHSIG, because the death
 * signal follows the thread that forked, not the process.
 *
 * The keeper is the stage's subreaper (PR_SET_CHILD_SUBREAPER): a process
 * of the stage whose parent dies comes to it, not to init, so every
 * process of the stage stays below it whatever sessions it made (setsid
 * and a double fork) — without a sandbox or a cgroup, the only thing that
 * holds them all. It ignores SIGTERM, so that cuco's SIGKILL, which
 * kills what is below it first (signal_all), finds them still below it.
 * When the command ends, the keeper counts and kills what is left, then
 * ends the same way, so cuco sees the command's status. */
static void keep(pid_t cmd, int lifeline, int report, const eval_cgroup *cg, const sigset_t *none)
{
	struct pollfd p = { .fd = lifeline, .events = POLLIN };
	for (;;) {
		int status;
		pid_t got;
		while ((got = waitpid(-1, &status, WNOHANG)) > 0) {
			if (got != cmd)
				continue;  /* an orphan of the stage's */
			end_leftovers(report, cg);
			struct sigaction sa = { .sa_handler = SIG_DFL };
			if (WIFSIGNALED(status) && sigaction(WTERMSIG(status), &sa, NULL) == 0)
				kill(getpid(), WTERMSIG(status));
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		}
		/* SIGCHLD is blocked but here, so an exit cannot slip past. */
		if (ppoll(&p, 1, NULL, none) > 0)
			break;
	}
	kill_below(cg);
	_exit(128 + SIGKILL);
}

/* Put fd at want (both above stderr), through a number above both so the
 * two moves cannot clobber each other. */
static int move_fd(int fd, int want)
{
	if (fd < 0 || fd == want)
		return fd;
	return dup2(fd, want);
}

/* After fork() in a threaded process: async-signal-safe calls only. The
 * filter (for bwrap) and the report pipe's write end (for cuco-stage-init)
 * are put at EVAL_SECCOMP_FD and EVAL_REPORT_FD. */
static void child_exec(char *const *argv, const char *workdir, int null_fd, int out_fd,
	int lifeline, int filter_fd, int report_fd, const eval_cgroup *cg, const eval_limits *lim,
	rlim_t cpu_s, char **env)
{
	setsid();
	/* A session keyring of its own: nothing the host's session or another
	 * stage keeps there (the filter refuses the keyring calls as well). */
	if (lim->filter)
		syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
	if (eval_cgroup_join(cg) != 0) {
		static const char msg[] = "cuco: cannot join the stage's cgroup\n";
		if (write(out_fd, msg, sizeof msg - 1) < 0)
			_exit(126);
		_exit(126);
	}
	if (chdir(workdir) != 0)
		_exit(126);
	dup2(null_fd, 0);
	dup2(out_fd, 1);
	dup2(out_fd, 2);
	int high = EVAL_REPORT_FD + 16;
	lifeline = lifeline >= 0 ? fcntl(lifeline, F_DUPFD, high) : -1;
	filter_fd = filter_fd >= 0 ? fcntl(filter_fd, F_DUPFD, high) : -1;
	report_fd = report_fd >= 0 ? fcntl(report_fd, F_DUPFD, high) : -1;
	if (lifeline < 0 || move_fd(lifeline, KEEPER_FD) != KEEPER_FD
			|| (filter_fd >= 0 && move_fd(filter_fd, EVAL_SECCOMP_FD) != EVAL_SECCOMP_FD)
			|| (report_fd >= 0 && move_fd(report_fd, EVAL_REPORT_FD) != EVAL_REPORT_FD))
		_exit(126);
	/* Everything else goes, the lifeline's write end above all. */
	if (filter_fd < 0)
		close(EVAL_SECCOMP_FD);
	int keep_to = report_fd >= 0 ? EVAL_REPORT_FD : filter_fd >= 0 ? EVAL_SECCOMP_FD : KEEPER_FD;
	if (close_range((unsigned)keep_to + 1, ~0U, 0) != 0)
		for (int fd = keep_to + 1; fd < 1024; fd++)
			close(fd);
	struct sigaction sa = { .sa_handler = SIG_DFL }, ignore = { .sa_handler = SIG_IGN };
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, sig == SIGTERM ? &ignore : &sa, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sigset_t none, chld;
	sigemptyset(&none);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	struct sigaction wake = { .sa_handler = on_child };
	sigaction(SIGCHLD, &wake, NULL);
	pid_t cmd = fork();
	if (cmd == 0) {
		close(KEEPER_FD);
		if (!lim->sandbox)  /* the keeper's report, not the command's */
			close(EVAL_REPORT_FD);
		exec_command(argv, lim, cpu_s, env, &none);
	}
	if (cmd < 0)
		_exit(126);
	keep(cmd, KEEPER_FD, report_fd >= 0 && !lim->sandbox ? EVAL_REPORT_FD : -1, cg, &none);
}

/* [sandbox...] command..., built before fork(). Outside the sandbox the
 * program is found in $PATH here (bwrap finds it inside); one not found
 * stays as it is, and execve's failure is the stage's exit status 127. */
static void command_argv(char *const *sandbox, char *const *cmd, cuco_argv *out)
{
	cuco_argv_append(out, sandbox);
	char path[PATH_MAX];
	for (size_t i = 0; cmd[i]; i++)
		cuco_argv_push(out, i == 0 && !sandbox && cuco_which(cmd[0], path, sizeof path) ? path : cmd[i]);
}

/* The filter as bwrap's --seccomp reads it: the program's instructions,
 * from a file of their own. */
static int filter_memfd(const eval_filter *f)
{
	int fd = memfd_create("cuco-seccomp", MFD_CLOEXEC);
	size_t n = f->len * sizeof f->prog[0];
	if (fd >= 0 && (write(fd, f->prog, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* ---- the monitor ---------------------------------------------------------------- */

typedef struct monitor {
	pid_t pid;
	const eval_cgroup *cg;
	int report;              /* the keeper's report, and cuco-stage-init's in a sandbox; or -1 */
	bool sandboxed;
	bool leader_done, eof, terminating;
	double kill_at;
} monitor;

/* Every process of the stage: those below its keeper (first, while the
 * keeper holds them, and only while cuco has not reaped it: then its pid
 * is no other process's), its process group, its session, its cgroup
 * (thawed first: a frozen process does not die). */
static int signal_all(const monitor *m, int sig)
{
	if (sig == SIGKILL)
		eval_cgroup_thaw(m->cg);
	int below = m->leader_done ? 0 : procs_signal(BELOW, m->pid, sig);
	kill(-m->pid, sig);
	return below + procs_signal(IN_SESSION, m->pid, sig) + eval_cgroup_signal(m->cg, sig, 0);
}

static void terminate(monitor *m, const eval_limits *lim, double now)
{
	m->terminating = true;
	m->kill_at = now + lim->grace_s;
	signal_all(m, SIGTERM);
}

/* A limit of the stage's cgroup was hit: a fork refused at pids.max, or
 * the OOM killer. Either ends the stage at once, with no grace. */
static bool group_limit_hit(monitor *m, eval_stage *st, double now)
{
	bool pids_hit, oom;
	eval_cgroup_events(m->cg, &pids_hit, &oom);
	st->too_many_procs |= pids_hit;
	st->out_of_memory |= oom;
	if (pids_hit || oom) {
		m->terminating = true;
		m->kill_at = now;
	}
	return pids_hit || oom;
}

static void watch(monitor *m, const eval_limits *lim, eval_stage *st,
	double now, double deadline, double *next_scan)
{
	if (!m->terminating) {
		if (now >= deadline) {
			st->timed_out = true;
			terminate(m, lim, now);
		} else if (lim->out_cap && st->out_bytes > lim->out_cap) {
			st->too_much_output = true;
			terminate(m, lim, now);
		} else if (now >= *next_scan && group_limit_hit(m, st, now)) {
			*next_scan = now + SCAN_EVERY_S;
		} else if (lim->max_procs > 0 && now >= *next_scan) {
			*next_scan = now + SCAN_EVERY_S;
			if (procs_signal(IN_SESSION, m->pid, 0) > lim->max_procs) {
				st->too_many_procs = true;
				terminate(m, lim, now);
				m->kill_at = now;  /* a fork loop gets no grace */
			}
		}
	}
	/* Leftovers of a finished leader, or a group past its grace: kill. */
	if ((m->terminating && now >= m->kill_at) || m->leader_done)
		signal_all(m, SIGKILL);
}

static void drain(int fd, sink *s, monitor *m, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, POLL_MS) <= 0)
		return;
	ssize_t n = read(fd, buf, size);
	if (n > 0)
		sink_feed(s, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		m->eof = true;
}

/* cuco-stage-init's count, the most it said (a line a candidate slipped
 * in cannot lower it); -1 when it said nothing (it was killed). */
static int reported(int fd)
{
	char buf[256];
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	int most = -1;
	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf; n > 0 && (p = strstr(p, "leftovers ")); p++)
		if (atoi(p + 10) > most)
			most = atoi(p + 10);
	return most;
}

/* What the command left behind when it ended, before it is killed: a
 * process that outlives the stage did work nobody measured. Its keeper
 * counts what is below it (keep()); in the sandbox its PID namespace too
 * (cuco-stage-init: the namespace's end kills them before anything here
 * could look). Where the keeper said nothing (killed first), its cgroup,
 * else its session. Processes on their way out get a moment. */
static int leftovers(const monitor *m)
{
	int n = m->report >= 0 ? reported(m->report) : -1;
	if (n >= 0 || m->sandboxed)
		return n > 0 ? n : 0;
	for (int i = 0; i < 5; i++) {
		n = m->cg->procs[0][0] ? eval_cgroup_signal(m->cg, 0, 0) : procs_signal(IN_SESSION, m->pid, 0);
		if (n == 0)
			break;
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	}
	return n;
}

static void reap(monitor *m, const eval_limits *lim, eval_stage *st)
{
	int status;
	if (m->leader_done || waitpid(m->pid, &status, WNOHANG) != m->pid)
		return;
	m->leader_done = true;
	st->leftovers = leftovers(m);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	if (WIFEXITED(status) && lim->sandbox && code > 128 && code < 128 + 32) {
		/* bwrap reports a command killed by signal N as status 128+N. */
		st->exit_code = -1;
		st->signal = code - 128;
	} else if (WIFEXITED(status)) {
		st->exit_code = code;
	} else if (WIFSIGNALED(status)) {
		st->exit_code = -1;
		st->signal = WTERMSIG(status);
	}
}

int eval_stage_run(char *const *cmd, const char *workdir, const char *log_path,
	const eval_limits *lim, eval_line_fn on_line, void *arg,
	eval_stage *st, cuco_err *err)
{
	memset(st, 0, sizeof *st);
	int log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (log_fd < 0)
		return cuco_errf(err, CUCO_EENV, "%s: %s", log_path, strerror(errno));
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int fds[2] = { -1, -1 }, lifeline[2] = { -1, -1 };
	if (null_fd < 0 || pipe2(fds, O_CLOEXEC) != 0 || pipe2(lifeline, O_CLOEXEC) != 0) {
		int e = errno;
		int opened[] = { log_fd, null_fd, fds[0], fds[1] };
		for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++)
			if (opened[i] >= 0)
				close(opened[i]);
		return cuco_errf(err, CUCO_EENV, "stage pipe: %s", strerror(e));
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	rlim_t cpu_s = (rlim_t)ceil(lim->wall_s + lim->grace_s) * (rlim_t)(ncpu > 0 ? ncpu : 1) + 1;
	eval_cgroup *cg = cuco_xcalloc(1, sizeof *cg);
	if (lim->cgroups && eval_cgroup_new(lim->cgroups, &lim->group, cg, err) != CUCO_OK) {
		int opened[] = { log_fd, null_fd, fds[0], fds[1], lifeline[0], lifeline[1] };
		for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++)
			close(opened[i]);
		free(cg);
		return err->code;
	}
	int filter_fd = lim->sandbox && lim->filter ? filter_memfd(lim->filter) : -1;
	int report[2] = { -1, -1 };
	if (pipe2(report, O_CLOEXEC | O_NONBLOCK) != 0)
		report[0] = report[1] = -1;  /* counted as leftovers() can */
	char **env = eval_stage_env(lim->tmpdir, lim->ssh_agent, lim->filter != NULL, lim->env,
		lim->pass_env);
	cuco_argv argv = { 0 };
	command_argv(lim->sandbox, cmd, &argv);
	double start = cuco_mono();
	pid_t pid = fork();
	if (pid == 0)
		child_exec(argv.v, workdir, null_fd, fds[1], lifeline[0], filter_fd, report[1], cg, lim,
			cpu_s, env);
	int fork_errno = errno;
	if (filter_fd >= 0)
		close(filter_fd);
	if (report[1] >= 0)
		close(report[1]);
	eval_stage_env_free(env);
	cuco_argv_free(&argv);
	close(fds[1]);
	close(null_fd);
	close(lifeline[0]);
	if (pid < 0) {
		close(fds[0]);
		close(lifeline[1]);
		if (report[0] >= 0)
			close(report[0]);
		close(log_fd);
		eval_cgroup_free(cg);
		free(cg);
		return cuco_errf(err, CUCO_EENV, "fork: %s", strerror(fork_errno));
	}
	st->session = pid;
	/* Wait for the child to be a session leader, so kills reach its tree. */
	for (int i = 0; i < 10000 && getsid(pid) != pid; i++)
		sched_yield();
	if (lim->on_start)
		lim->on_start(cg, lim->on_start_arg);

	sink s = { .log_fd = log_fd, .log_cap = lim->log_cap, .st = st, .on_line = on_line,
		.arg = arg, .line = cuco_xmalloc(LINE_MAX_BYTES + 1) };
	char *buf = cuco_xmalloc(65536);
	monitor m = { .pid = pid, .cg = cg, .report = report[0], .sandboxed = lim->sandbox != NULL };
	double deadline = start + lim->wall_s, next_scan = start, orphan_deadline = 0;
	while (!(m.leader_done && m.eof)) {
		if (!m.eof)
			drain(fds[0], &s, &m, buf, 65536);
		else
			nanosleep(&(struct timespec){ 0, POLL_MS * 1000000L }, NULL);
		reap(&m, lim, st);
		double now = cuco_mono();
		watch(&m, lim, st, now, deadline, &next_scan);
		if (m.leader_done && orphan_deadline == 0)
			orphan_deadline = now + ORPHAN_WAIT_S;
		/* Something outside the session holds the pipe open: stop listening. */
		if (m.leader_done && now > orphan_deadline)
			break;
	}
	/* The stage's last processes may still be on their way out. */
	for (int i = 0; i < 200 && signal_all(&m, SIGKILL) > 0; i++)
		nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
	bool pids_hit, oom;
	eval_cgroup_events(cg, &pids_hit, &oom);  /* an OOM kill just before the end */
	st->out_of_memory |= oom;
	st->too_many_procs |= pids_hit;
	eval_cgroup_free(cg);
	free(cg);
	st->wall_s = cuco_mono() - start;
	sink_finish(&s);
	free(s.line);
	free(buf);
	close(fds[0]);
	close(lifeline[1]);
	if (report[0] >= 0)
		close(report[0]);
	close(log_fd);
	return CUCO_OK;
}
