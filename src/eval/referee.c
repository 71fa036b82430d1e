/* referee.c — the referee beside a run or benchmark stage (docs/trust.md,
 * "The referee"; the referee itself is workloads/common/cuco_referee.c).
 *
 * For a workload whose protocol is `referee`, the verdict is not read from
 * the stage's output: the evaluator starts the workload's referee, a
 * program built from trusted sources only, as its own child — outside the
 * stage's sandbox, process group and control group — with a fresh channel
 * folder on /dev/shm that the stage is shown (and nothing else of the
 * referee). Once the stage runs, the referee is told where the stage's
 * control group is (eval_referee_started, the stage's on_start hook), so
 * that it can freeze the stage between steps and count its CPU. When the
 * stage has ended, the evaluator closes the referee's stdin, reads its one
 * line (`CUCO_REFEREE {json}`) from a pipe the stage never held, and
 * waits for it.
 *
 * The referee is its own stage in nothing but name: a trusted program, it
 * runs with no sandbox and no limits but a deadline (FINISH_S after the
 * stage ended; then it is killed).
 *
 * Under the ssh runner the stage's ranks run on another host, so the
 * referee does too: copied there into a folder of its own, checked
 * against its sum (computed once per built referee) just before it runs,
 * started in an ssh session of its own (never the stage's, whose output
 * the candidate writes), its stdin and stdout that session's. Before it
 * says its channel is made (and only then does the stage start), the
 * host says how the stage will run there (eval_ssh_stage, runner.c): as
 * root there, its ranks as the stage user and in a group made for it,
 * which the referee is told and freezes as here; as another user, as
 * that user, the referee's own, in no group it could freeze ("cgroup
 * none": defence in depth). Its folders and that group there are removed
 * however the stage ended. */
#include "eval/eval_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FINISH_S 30.0        /* the referee's last checks, after the stage ended */
#define VERDICT_TAG "CUCO_REFEREE "
#define READY_S 60.0         /* a remote referee's copy and start, until it says it is ready */
#define CLEANUP_S 30.0       /* removing its folders there */
#define READY_LINE "CUCO_REFEREE_READY"
#define READY_MAX (64u << 10) /* bytes of the remote shell's own before it */

/* cuco's environment, with the stage's GPUs in `mine` where they are
 * named: made before the fork, since the child of a threaded process may
 * not allocate. Free the array and `mine`, never the strings it shares. */
static char **referee_env(const char *gpus, char *mine, size_t size)
{
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **envp = cuco_xcalloc(n + 2, sizeof *envp);
	bool named = gpus && *gpus;
	if (named) {
		snprintf(mine, size, "CUDA_VISIBLE_DEVICES=%s", gpus);
		envp[k++] = mine;
	}
	for (size_t i = 0; i < n; i++)
		if (!named || strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) != 0)
			envp[k++] = environ[i];
	return envp;
}

/* The channel folder: here a fresh one (mkdtemp), given to the stage
 * user where the ranks run as one; on a remote host only a fresh name,
 * made there (mkdir, which fails on a name that exists). */
static int channel_dir(const eval_referee_args *a, eval_referee *r, cuco_err *err)
{
	static atomic_uint serial;
	int n = snprintf(r->dir, sizeof r->dir, "/dev/shm/cuco-chan-%ld-%u-", (long)getpid(),
		atomic_fetch_add(&serial, 1));
	if (a->remote) {
		uint64_t salt = 0;
		if (getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt) {
			r->dir[0] = '\0';
			return cuco_errf(err, CUCO_EENV, "getrandom: %s", strerror(errno));
		}
		snprintf(r->dir + n, sizeof r->dir - (size_t)n, "%016llx", (unsigned long long)salt);
		return CUCO_OK;
	}
	snprintf(r->dir + n, sizeof r->dir - (size_t)n, "XXXXXX");
	if (!mkdtemp(r->dir)) {
		r->dir[0] = '\0';
		return cuco_errf(err, CUCO_EENV, "/dev/shm: cannot make the referee's channel: %s", strerror(errno));
	}
	/* The ranks may run as another user (the stage user): its group may
	 * pass the folder, no more (nobody may add or rename a name in it), and
	 * the referee gives it the files; nothing is anyone else's. */
	const eval_user *u = a->owner;
	if (u && (chown(r->dir, 0, u->gid) != 0 || chmod(r->dir, 0710) != 0))
		return cuco_errf(err, CUCO_EENV, "/dev/shm: cannot give the referee's channel to %s: %s", u->name,
			strerror(errno));
	return CUCO_OK;
}

int eval_referee_sum(const char *binary, char sum[65], cuco_err *err)
{
	char *argv[] = { "sha256sum", "--", (char *)binary, NULL };
	cuco_buf out = { 0 };
	int rc = eval_query(argv, CLEANUP_S, &out);
	bool hex = rc == 0 && out.len >= 64 && strspn(out.data, "0123456789abcdef") == 64;
	if (hex)
		snprintf(sum, 65, "%.64s", out.data);
	cuco_buf_free(&out);
	return hex ? CUCO_OK : cuco_errf(err, CUCO_EENV, "sha256sum %s: no sum (exit status %d)", binary, rc);
}

/* A remote referee says it is ready (its channel made) before the stage
 * starts; until then, or past READY_S, no stage. Lines before it are the
 * remote shell's (a chatty startup file), read a byte at a time so that
 * nothing after it is taken. Why not: its log's last line but a usage
 * (ssh's, scp's or the referee's own words). */
static int await_ready(eval_referee *r, const eval_referee_args *a, cuco_err *err)
{
	char line[64];
	size_t n = 0, total = 0;
	double deadline = cuco_mono() + READY_S;
	while (total < READY_MAX) {
		double left = deadline - cuco_mono();
		struct pollfd p = { .fd = r->out_fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		char c;
		ssize_t k = read(r->out_fd, &c, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		total++;
		if (c != '\n') {
			if (n < sizeof line - 1)
				line[n] = c;
			n++;  /* a longer line is not the one */
			continue;
		}
		if (n < sizeof line) {
			line[n] = '\0';
			if (strcmp(line, READY_LINE) == 0)
				return CUCO_OK;
			eval_ssh_stage_parse(line, r->dir, &r->far);
		}
		n = 0;
	}
	char *log = NULL, last[240] = "";
	size_t len = 0;
	cuco_err ignored = { 0 };
	if (cuco_read_file(a->log_path, 1 << 20, &log, &len, &ignored) == CUCO_OK) {
		char *save = NULL;
		for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (strncmp(line, "usage:", 6) != 0)  /* the referee's own words precede its usage */
				eval_first_line(line, last, sizeof last);
	}
	free(log);
	return cuco_errf(err, CUCO_EENV, "the referee on %s did not start%s%s", a->remote->slot->hosts,
		*last ? ": " : " (its log is empty)", last);
}

int eval_referee_start(const char *binary, const eval_referee_args *a, eval_referee *r, cuco_err *err)
{
	memset(r, 0, sizeof *r);
	r->pid = -1;
	r->in_fd = r->out_fd = -1;
	eval_referee_args own = *a;
	if (!own.owner || !own.owner->drop)
		own.owner = NULL;
	int rc = channel_dir(&own, r, err);
	if (rc != CUCO_OK) {
		eval_referee_free(r);
		return rc;
	}
	const eval_user *u = own.owner;
	char owner[48] = "";
	if (u)
		snprintf(owner, sizeof owner, "%u:%u", (unsigned)u->uid, (unsigned)u->gid);
	char ranks[16], warmup[16], reps[16], tol[32];
	snprintf(ranks, sizeof ranks, "%d", a->ranks);
	snprintf(warmup, sizeof warmup, "%d", a->warmup);
	snprintf(reps, sizeof reps, "%d", a->reps);
	snprintf(tol, sizeof tol, "%.9g", a->tolerance);
	/* --trace: a line a step in its log, the stage's folder's
	 * <stage>-referee.log, for whoever asks why a step took its time. A
	 * remote one: --ready, and its owner as its host says (eval_ssh_referee). */
	char *argv[] = { (char *)binary, "--channel", r->dir, "--ranks", ranks, "--warmup", warmup,
		"--reps", reps, "--tolerance", tol, "--trace", a->remote ? "--ready" : u ? "--owner" : NULL,
		a->remote ? NULL : owner, NULL };
	cuco_buf script = { 0 }, cleanup = { 0 };
	if (a->remote) {
		eval_ssh_referee(a->remote, binary, a->sum, argv + 1, r->dir, &script, &cleanup);
		r->cleanup = cleanup.data;
		argv[0] = "/bin/sh";
		argv[1] = "-c";
		argv[2] = script.data;
		argv[3] = NULL;
	}
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int log = open(a->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log < 0 || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		int e = errno;
		int fds[] = { log, in[0], in[1], out[0], out[1] };
		for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		cuco_buf_free(&script);
		eval_referee_free(r);
		return cuco_errf(err, CUCO_EENV, "%s: %s", a->log_path, strerror(e));
	}
	char gpus[96];
	char **envp = referee_env(a->remote ? NULL : a->gpus, gpus, sizeof gpus);
	r->pid = fork();
	if (r->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(log, 2);
		setpgid(0, 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	int e = errno;
	free(envp);
	cuco_buf_free(&script);
	close(in[0]);
	close(out[1]);
	close(log);
	r->in_fd = in[1];
	r->out_fd = out[0];
	if (r->pid < 0)
		rc = cuco_errf(err, CUCO_EENV, "fork: %s", strerror(e));
	else if (a->remote)
		rc = await_ready(r, a, err);
	/* A remote stage's group is the one made there (as root), else none:
	 * then the referee cannot freeze the stage (the verdict says "frozen":
	 * false). Told only now: the script's ssh before the referee's would
	 * read it. */
	char line[sizeof r->far.cgroup + 16];
	snprintf(line, sizeof line, "cgroup none\n");
	if (*r->far.cgroup)
		snprintf(line, sizeof line, "cgroup %s %s\n", r->far.v2 ? "v2" : "v1", r->far.cgroup);
	if (rc == CUCO_OK && a->remote && write(r->in_fd, line, strlen(line)) != (ssize_t)strlen(line))
		rc = cuco_errf(err, CUCO_EENV, "referee: %s", strerror(errno));
	if (rc != CUCO_OK)
		eval_referee_free(r);
	return rc;
}

void eval_referee_started(const eval_cgroup *cg, void *arg)
{
	eval_referee *r = arg;
	char line[3 * PATH_MAX];
	eval_cgroup_describe(cg, line, sizeof line);
	if (r->in_fd >= 0 && write(r->in_fd, line, strlen(line)) < 0)
		cuco_log(CUCO_LOG_WARN, "referee: %s", strerror(errno));
}

/* Read the referee's stdout until it closes or the deadline passes. */
static void drain(eval_referee *r, cuco_buf *out, double deadline)
{
	char buf[4096];
	for (;;) {
		double left = deadline - cuco_mono();
		struct pollfd p = { .fd = r->out_fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return;
		ssize_t n = read(r->out_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || out->len > (64u << 10))
			return;
		cuco_buf_append(out, buf, (size_t)n);
	}
}

int eval_referee_finish(eval_referee *r, char **json, char *why, size_t size)
{
	*json = NULL;
	why[0] = '\0';
	if (r->in_fd >= 0) {
		close(r->in_fd);  /* the stage has ended */
		r->in_fd = -1;
	}
	cuco_buf out = { 0 };
	double deadline = cuco_mono() + FINISH_S;
	drain(r, &out, deadline);
	/* Its pipe closes as it exits; the exit itself may come a moment
	 * later. */
	int status = 0;
	pid_t got;
	while ((got = waitpid(r->pid, &status, WNOHANG)) == 0 && cuco_mono() < deadline)
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	if (got != r->pid) {
		kill(-r->pid, SIGKILL);
		kill(r->pid, SIGKILL);
		waitpid(r->pid, &status, 0);
		snprintf(why, size, "the referee gave no verdict within %.0f s of the stage's end, and was "
			"killed", FINISH_S);
	}
	r->pid = -1;
	/* One verdict, from a referee that ended on its own: a second line, or
	 * one from a referee killed, is not the referee's word. */
	const char *line = out.data ? strstr(out.data, VERDICT_TAG) : NULL;
	bool second = line && strstr(line + 1, VERDICT_TAG);
	bool clean = !*why && WIFEXITED(status) && WEXITSTATUS(status) <= 1;
	if (line && !second && clean) {
		line += strlen(VERDICT_TAG);
		size_t n = strcspn(line, "\n");
		*json = cuco_xmalloc(n + 1);
		memcpy(*json, line, n);
		(*json)[n] = '\0';
	} else if (second) {
		snprintf(why, size, "more than one verdict on the referee's pipe: one is not the referee's");
	} else if (!*why) {
		snprintf(why, size, "the referee gave no verdict (exit status %d; its log says why)",
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	cuco_buf_free(&out);
	return *json ? CUCO_OK : CUCO_EENV;
}

void eval_referee_free(eval_referee *r)
{
	if (r->in_fd >= 0)
		close(r->in_fd);
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->pid > 0) {
		kill(-r->pid, SIGKILL);
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	if (r->cleanup) {  /* whatever the stage's end: its host keeps nothing of it */
		char *argv[] = { "/bin/sh", "-c", r->cleanup, NULL };
		if (eval_query(argv, CLEANUP_S, NULL) != 0)
			cuco_log(CUCO_LOG_WARN, "referee: could not remove its folder and channel (%s) on the stage's "
				"host", r->dir);
		free(r->cleanup);
	} else if (*r->dir) {
		cuco_remove_tree(r->dir);
	}
	memset(r, 0, sizeof *r);
	r->pid = -1;
	r->in_fd = r->out_fd = -1;
}
