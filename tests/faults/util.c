/* util.c — see util.h. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

const char *cuco_bin(void)
{
	const char *bin = getenv("CUCO_BIN");
	return bin ? bin : "build/cuco";
}

const char *source_path(const char *rel, char *buf, size_t size)
{
	const char *root = getenv("CUCO_SOURCE_ROOT");
	snprintf(buf, size, "%s/%s", root ? root : ".", rel);
	return buf;
}

void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
	nanosleep(&ts, NULL);
}

/* In the child, before exec: only what the fault needs. */
static void child_setup(const spawn_opts *o)
{
	if (o->out) {
		int fd = open(o->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(100);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	if (o->err) {
		int fd = open(o->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(100);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	if (o->fsize) {
		struct rlimit rl = { o->fsize, o->fsize };
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(102);
	}
	/* SIGXFSZ keeps its default (killing): cuco must cope on its own. */
	signal(SIGXFSZ, SIG_DFL);
	signal(SIGHUP, o->ignore_hup ? SIG_IGN : SIG_DFL);
	for (int i = 0; i < 4 && o->env[i]; i++)
		putenv((char *)o->env[i]);
}

pid_t spawn_cuco(const char *const *argv, const spawn_opts *o)
{
	const char *args[32] = { "cuco" };
	int n = 1;
	for (; argv[n - 1] && n < 31; n++)
		args[n] = argv[n - 1];
	args[n] = NULL;
	int fds[2] = { -1, -1 };
	if (o->pipe_out)
		assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid_t pid;
	if (o->pty_master) {
		struct winsize ws = { .ws_row = 40, .ws_col = 120 };
		pid = forkpty(o->pty_master, NULL, NULL, &ws);
	} else {
		pid = fork();
	}
	assert_true(pid >= 0);
	if (pid == 0) {
		if (o->pty_master)
			setenv("TERM", "xterm-256color", 1);
		if (o->pipe_out) {
			dup2(fds[1], STDOUT_FILENO);
			dup2(fds[1], STDERR_FILENO);
		}
		child_setup(o);
		execv(cuco_bin(), (char *const *)args);
		_exit(101);
	}
	if (o->pipe_out) {
		close(fds[1]);
		*o->pipe_out = fds[0];
	}
	return pid;
}

bool alive(pid_t pid)
{
	siginfo_t info = { 0 };  /* WNOWAIT: wait_exit still gets the status */
	return waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

int wait_exit(pid_t pid, double timeout_s)
{
	int status = 0;
	for (double t = 0; t < timeout_s; t += 0.05, sleep_s(0.05))
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("pid %d did not end within %.0f s", (int)pid, timeout_s);
	return -1;
}

/* ---- the store ------------------------------------------------------------------- */

static int snap_one(const cuco_candidate *c, void *arg)
{
	snapshot *s = arg;
	if (s->n == MAX_CANDS)
		return 0;
	s->c[s->n++] = *c;
	s->tune += c->origin == CUCO_ORIGIN_TUNE;
	s->unfinished += c->status < CUCO_STATUS_DONE;
	return 0;
}

static int snap_event(const cuco_event *ev, void *arg)
{
	snapshot *s = arg;
	cuco_strlcpy(s->last_event, ev->text, sizeof s->last_event);
	return 0;
}

static int snap_txn(cuco_txn *txn, void *arg)
{
	snapshot *s = arg;
	s->n = s->tune = s->unfinished = 0;
	int rc = cuco_cand_each(txn, 1, snap_one, s);
	return rc ? rc : cuco_event_each(txn, 1, snap_event, s);
}

bool snap_read(const char *run, snapshot *s)
{
	if (!s->c)
		s->c = calloc(MAX_CANDS, sizeof *s->c);
	s->n = s->tune = s->unfinished = 0;
	cuco_store *st = NULL;
	cuco_err err = { 0 };
	if (cuco_store_open(run, CUCO_STORE_RDONLY, &st, &err) != CUCO_OK)
		return false;
	int rc = cuco_store_read(st, snap_txn, s, &err);
	cuco_store_close(st);
	return rc == CUCO_OK;
}

void snap_free(snapshot *s)
{
	free(s->c);
	s->c = NULL;
}

const cuco_candidate *snap_find(const snapshot *s, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].id == id)
			return &s->c[i];
	return NULL;
}

void wait_for_tune(const char *run, size_t tune, double timeout_s)
{
	snapshot s = { 0 };
	for (double t = 0; t < timeout_s; t += 0.05, sleep_s(0.05))
		if (snap_read(run, &s) && s.tune >= tune) {
			snap_free(&s);
			return;
		}
	snap_free(&s);
	fail_msg("%s: fewer than %zu tune candidates after %.0f s", run, tune, timeout_s);
}

static bool same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

void assert_kept(const snapshot *before, const snapshot *after)
{
	for (size_t i = 0; i < before->n; i++) {
		const cuco_candidate *b = &before->c[i];
		if (b->status < CUCO_STATUS_DONE)
			continue;
		const cuco_candidate *a = snap_find(after, b->id);
		if (!a)
			fail_msg("#%llu was committed, then lost", (unsigned long long)b->id);
		/* The baseline is measured again (each measurement appended): its
		 * figures move, its status never goes back. */
		if (b->origin == CUCO_ORIGIN_BASELINE) {
			if (a->status != b->status)
				fail_msg("the baseline #%llu went from %s to %s", (unsigned long long)b->id,
					cuco_status_name(b->status), cuco_status_name(a->status));
			continue;
		}
		if (a->status != b->status || strcmp(a->source_hash, b->source_hash) != 0 ||
		    strcmp(a->failure.error_class, b->failure.error_class) != 0 ||
		    !same_double(a->timing.median_us, b->timing.median_us) ||
		    memcmp(&a->directive, &b->directive, sizeof a->directive) != 0)
			fail_msg("#%llu changed after it was committed (%s -> %s)", (unsigned long long)b->id,
				cuco_status_name(b->status), cuco_status_name(a->status));
	}
}

void assert_no_duplicates(const snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->c[i].origin != CUCO_ORIGIN_TUNE)
			continue;
		for (size_t j = i + 1; j < s->n; j++)
			if (s->c[j].origin == CUCO_ORIGIN_TUNE &&
			    strcmp(s->c[i].source_hash, s->c[j].source_hash) == 0 &&
			    memcmp(&s->c[i].directive, &s->c[j].directive, sizeof s->c[i].directive) == 0)
				fail_msg("#%llu and #%llu are the same candidate", (unsigned long long)s->c[i].id,
					(unsigned long long)s->c[j].id);
	}
}

void assert_cli_reads(const char *run, const snapshot *s)
{
	char cmd[1200];
	int status;
	snprintf(cmd, sizeof cmd, "'%s' ls --json --run '%s'", cuco_bin(), run);
	char *out = capture_output(cmd, &status);
	assert_int_equal(status, 0);
	cJSON *list = cJSON_Parse(out);
	assert_true(cJSON_IsArray(list));
	assert_int_equal((size_t)cJSON_GetArraySize(list), s->n);
	cJSON_Delete(list);
	free(out);
	for (size_t i = 0; i < s->n; i++) {
		if (s->c[i].status < CUCO_STATUS_DONE)
			continue;
		snprintf(cmd, sizeof cmd, "'%s' show %llu --source --run '%s'", cuco_bin(),
			(unsigned long long)s->c[i].id, run);
		out = capture_output(cmd, &status);
		if (status != 0)
			fail_msg("cuco show %llu: exit %d", (unsigned long long)s->c[i].id, status);
		free(out);
	}
}

char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	cuco_err err = { 0 };
	if (cuco_read_file(path, 1 << 22, &text, &len, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return text;
}
