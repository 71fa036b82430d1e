/* test_kill.c — processes killed from outside.
 *
 *   test_kill cycles   `cuco run` SIGKILLed at random moments, mid-evaluation
 *                      and mid-write, and resumed each time: the store opens,
 *                      nothing committed changes, every candidate caught in
 *                      flight is evaluated again under its own id, nothing
 *                      is evaluated twice; a second session on the same run is
 *                      refused while one lives; what killed sessions left in
 *                      RUN/work and $TMPDIR is gone after the next.
 *   test_kill loop     `cuco run` SIGKILLed every few seconds, 8 times over: it
 *                      still makes progress, since a session resumed soon after
 *                      the last goes on with the baseline and seed already
 *                      measured instead of measuring them again; every
 *                      measurement of a killed session is kept, and the
 *                      baseline's row is done throughout.
 *   test_kill eval     a rank, then mpirun, SIGKILLed while the evaluator
 *                      watches them in the run stage (a copy of
 *                      tests/faults/fixtures/hold, which says so): the
 *                      candidate fails as a crash by signal 9, no process of
 *                      the stage outlives it, its work and temporary folders
 *                      are gone, and the run goes on. Needs mpirun and
 *                      mpicc; else exit 77. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

#define SKIP 77
#define CYCLES 6

/* ---- processes and folders --------------------------------------------------------- */

typedef struct proc {
	pid_t pid, sid;
	char argv0[512];
} proc;

/* The live processes whose environment carries `marker` (the hold file's
 * variable, which only the run under test and its stages have). */
static size_t find_procs(const char *marker, proc *out, size_t max)
{
	DIR *d = opendir("/proc");
	assert_non_null(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[300], stat_text[1024];
		snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
		char *env = NULL;
		size_t len = 0;
		if (cuco_read_file(path, 1 << 20, &env, &len, NULL) != CUCO_OK)
			continue;
		bool mine = false;
		for (size_t off = 0; off < len; off += strlen(env + off) + 1)
			mine |= strcmp(env + off, marker) == 0;
		free(env);
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY);
		ssize_t got = fd >= 0 ? read(fd, stat_text, sizeof stat_text - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (!mine || got <= 0)
			continue;
		stat_text[got] = '\0';
		char state, *rp = strrchr(stat_text, ')');
		int ppid, pgrp, sid;
		if (!rp || sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4 || state == 'Z')
			continue;
		proc *p = &out[n++];
		p->pid = (pid_t)atoi(e->d_name);
		p->sid = sid;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY);
		got = fd >= 0 ? read(fd, p->argv0, sizeof p->argv0 - 1) : -1;
		if (fd >= 0)
			close(fd);
		p->argv0[got > 0 ? got : 0] = '\0';
	}
	closedir(d);
	return n;
}

static size_t count_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}


/* A killed session's stages live on as orphans until they end by
 * themselves (nothing watches them now); wait for that. */
static void wait_orphans(const char *marker)
{
	proc ps[64];
	for (double t = 0; t < 30; t += 0.05, sleep_s(0.05))
		if (find_procs(marker, ps, 64) == 0)
			return;
	fail_msg("processes with %s still alive after 30 s", marker);
}

/* ---- SIGKILL and resume, over and over --------------------------------------------- */

static void test_kill_cycles(void **state)
{
	(void)state;
	char toy[1024], dir[] = "/tmp/cuco-test-kills-XXXXXX", run[128], out[128], budget[16];
	char tmp[128], env_tmp[160], work[160], err[128];
	source_path("tests/agents/fixtures/toy", toy, sizeof toy);
	assert_non_null(mkdtemp(dir));
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(err, sizeof err, "%s/err", dir);
	snprintf(tmp, sizeof tmp, "%s/tmp", dir);
	snprintf(work, sizeof work, "%s/work", run);
	snprintf(env_tmp, sizeof env_tmp, "TMPDIR=%s", tmp);
	assert_int_equal(mkdir(tmp, 0755), 0);
	spawn_opts o = { .out = out, .env = { env_tmp } };
	size_t leftovers = 0;
	snapshot prev = { 0 }, now = { 0 };
	uint64_t in_flight[CYCLES * 4];
	size_t nflight = 0;
	srand(7);
	for (int cycle = 0; cycle < CYCLES; cycle++) {
		const char *argv[] = { "run", toy, "--run", run, "--headless", "--jobs", "2", "--rebench", "0",
			"--budget", "0", NULL };
		pid_t pid = spawn_cuco(argv, &o);
		wait_for_tune(run, prev.tune + 2, 30);
		if (cycle == 0) {  /* a second session would evaluate the same things */
			spawn_opts o2 = { .out = out, .err = err, .env = { env_tmp } };
			assert_int_equal(wait_exit(spawn_cuco(argv, &o2), 30), 3);
			char *text = slurp(err);
			if (!strstr(text, "run.lock: another cuco run (pid "))
				fail_msg("second session: %s", text);
			free(text);
		}
		sleep_s((rand() % 300) / 1000.0);  /* anywhere in the next evaluations */
		kill(pid, SIGKILL);
		assert_int_equal(wait_exit(pid, 10), 128 + SIGKILL);
		leftovers += count_entries(work) + count_entries(tmp);
		wait_orphans(env_tmp);  /* or they could write into what the next session sweeps */
		assert_true(snap_read(run, &now));  /* opens: nothing torn */
		assert_kept(&prev, &now);
		for (size_t i = 0; i < now.n && nflight < CYCLES * 4; i++)
			if (now.c[i].status < CUCO_STATUS_DONE)
				in_flight[nflight++] = now.c[i].id;
		snapshot t = prev;
		prev = now;
		now = t;
	}
	/* Otherwise this test proved nothing about candidates in flight. */
	assert_true(nflight > 0);

	snprintf(budget, sizeof budget, "%zu", prev.tune + 2);
	const char *argv[] = { "run", toy, "--run", run, "--headless", "--jobs", "2", "--rebench", "0",
		"--budget", budget, NULL };
	assert_int_equal(wait_exit(spawn_cuco(argv, &o), 60), 0);
	assert_true(leftovers > 0);  /* else the sweep went untested */
	assert_int_equal(count_entries(work), 0);
	assert_int_equal(count_entries(tmp), 0);
	assert_true(snap_read(run, &now));
	assert_int_equal(now.unfinished, 0);
	assert_int_equal(now.tune, prev.tune + 2);
	assert_kept(&prev, &now);
	assert_no_duplicates(&now);
	for (size_t i = 0; i < nflight; i++) {
		const cuco_candidate *c = snap_find(&now, in_flight[i]);
		assert_non_null(c);
		assert_true(c->status >= CUCO_STATUS_DONE);
	}
	snap_free(&prev);
	snap_free(&now);
	rm_rf(dir);
}

/* ---- killed every few seconds --------------------------------------------------------- */

#define LOOP_SESSIONS 8

static size_t tune_done(const snapshot *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += s->c[i].origin == CUCO_ORIGIN_TUNE && s->c[i].status >= CUCO_STATUS_DONE;
	return n;
}

/* The longest a strategy candidate took from its proposal to its result. */
static double longest_evaluation(const snapshot *s)
{
	double d = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].origin == CUCO_ORIGIN_TUNE && s->c[i].status >= CUCO_STATUS_DONE &&
		    s->c[i].updated - s->c[i].created > d)
			d = s->c[i].updated - s->c[i].created;
	return d;
}

typedef struct counts {
	uint32_t baseline, seed;
} counts;

static int counts_txn(cuco_txn *txn, void *arg)
{
	counts *c = arg;
	int rc = cuco_measure_count(txn, 1, &c->baseline);
	return rc ? rc : cuco_measure_count(txn, 2, &c->seed);
}

static counts measurements(const char *run)
{
	counts c = { 0 };
	cuco_store *st;
	cuco_err err = { 0 };
	if (cuco_store_open(run, CUCO_STORE_RDONLY, &st, &err) != CUCO_OK ||
	    cuco_store_read(st, counts_txn, &c, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_store_close(st);
	return c;
}

static void test_kill_loop(void **state)
{
	(void)state;
	char toy[1024], dir[] = "/tmp/cuco-test-killloop-XXXXXX", run[128], out[128];
	source_path("tests/agents/fixtures/toy", toy, sizeof toy);
	assert_non_null(mkdtemp(dir));
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	spawn_opts o = { .out = out };
	const char *argv[] = { "run", toy, "--run", run, "--headless", "--jobs", "1", "--rebench", "0",
		"--budget", "0", NULL };
	/* The first session measures the baseline and the seed and two
	 * candidates; how long one took sets the pace of the kills. */
	pid_t pid = spawn_cuco(argv, &o);
	wait_for_tune(run, 3, 60);
	kill(pid, SIGKILL);
	assert_int_equal(wait_exit(pid, 10), 128 + SIGKILL);
	snapshot prev = { 0 }, now = { 0 };
	assert_true(snap_read(run, &prev));
	counts start = measurements(run);
	assert_int_equal(start.seed, 1);
	double every = 2.5 * longest_evaluation(&prev);
	every = every < 1 ? 1 : every > 10 ? 10 : every;
	size_t before = tune_done(&prev);

	for (int i = 0; i < LOOP_SESSIONS; i++) {
		pid = spawn_cuco(argv, &o);
		sleep_s(every);
		kill(pid, SIGKILL);
		assert_int_equal(wait_exit(pid, 10), 128 + SIGKILL);
		assert_true(snap_read(run, &now));
		assert_kept(&prev, &now);
		counts c = measurements(run);
		assert_true(c.baseline >= start.baseline);
		start = c;
		snapshot t = prev;
		prev = now;
		now = t;
	}
	counts end = measurements(run);
	size_t gained = tune_done(&prev) - before;
	print_message("%d sessions killed every %.1f s: %zu new candidates; the baseline measured %u "
		"times in all, the seed %u\n", LOOP_SESSIONS, every, gained, end.baseline, end.seed);
	/* Measuring the seed again in each session would have taken the time
	 * these sessions had (and they would have measured it 8 more times). */
	assert_int_equal(end.seed, 1);
	assert_true(gained >= LOOP_SESSIONS / 2);

	/* Stopped at once (SIGTERM while it starts), a session leaves nothing
	 * mid-evaluation: what the killed ones left is queued again. */
	pid = spawn_cuco(argv, &o);
	sleep_s(0.3);
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid, 60), CUCO_EXIT_STOPPED);
	assert_true(snap_read(run, &now));
	for (size_t i = 0; i < now.n; i++)
		if (now.c[i].status > CUCO_STATUS_QUEUED && now.c[i].status < CUCO_STATUS_DONE)
			fail_msg("#%llu left %s by a stopped session", (unsigned long long)now.c[i].id,
				cuco_status_name(now.c[i].status));
	assert_kept(&prev, &now);

	/* A session that stops by itself leaves nothing unfinished. */
	char budget[16];
	snprintf(budget, sizeof budget, "%zu", prev.tune + 1);
	const char *last[] = { "run", toy, "--run", run, "--headless", "--jobs", "1", "--rebench", "0",
		"--budget", budget, NULL };
	assert_int_equal(wait_exit(spawn_cuco(last, &o), 120), 0);
	assert_true(snap_read(run, &now));
	assert_int_equal(now.unfinished, 0);
	assert_kept(&prev, &now);
	snap_free(&prev);
	snap_free(&now);
	rm_rf(dir);
}

/* ---- a rank or mpirun killed during the run stage ------------------------------------ */

/* The one entry of a folder, as a path, for checking it is gone later. */
static void only_entry(const char *path, char *out, size_t size)
{
	assert_int_equal(count_entries(path), 1);
	DIR *d = opendir(path);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			snprintf(out, size, "%s/%s", path, e->d_name);
	closedir(d);
}

typedef struct hold_run {
	char dir[64], run[128], tmp[128], work[160], hold[128], marker[160], cache[160];
	pid_t pid;
} hold_run;

/* The candidate being evaluated (jobs 1: one at a time). */
static uint64_t in_flight(const hold_run *h)
{
	snapshot s = { 0 };
	uint64_t id = 0;
	assert_true(snap_read(h->run, &s));
	for (size_t i = 0; i < s.n; i++)
		if (s.c[i].origin == CUCO_ORIGIN_TUNE && s.c[i].status > CUCO_STATUS_QUEUED &&
		    s.c[i].status < CUCO_STATUS_DONE)
			id = s.c[i].id;
	snap_free(&s);
	return id;
}

/* Whether a rank is in hold.c's wait, which names it "cuco-holding": past
 * MPI_Init (a rank killed while MPI still starts up can leave its peer
 * waiting for it until the stage's limit, instead of mpirun ending the
 * job) and in the run stage, not the benchmark. */
static bool holding(pid_t pid)
{
	char path[64], comm[32] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(comm, 1, sizeof comm - 1, f);
	fclose(f);
	comm[n] = '\0';
	return strcmp(comm, "cuco-holding\n") == 0;
}

/* Wait for the held stage's two ranks, both holding; returns the process
 * to kill: a rank, or mpirun (argv[0] ending in "mpirun"). */
static proc find_target(const hold_run *h, bool launcher)
{
	proc ps[64];
	for (double t = 0; t < 30; t += 0.05, sleep_s(0.05)) {
		size_t n = find_procs(h->marker, ps, 64), ranks = 0;
		proc target = { 0 };
		for (size_t i = 0; i < n; i++) {
			bool rank = strncmp(ps[i].argv0, h->cache, strlen(h->cache)) == 0 && holding(ps[i].pid);
			size_t len = strlen(ps[i].argv0);
			bool mpirun = len >= 6 && strcmp(ps[i].argv0 + len - 6, "mpirun") == 0;
			ranks += rank;
			if ((launcher && mpirun) || (!launcher && rank))
				target = ps[i];
		}
		if (ranks == 2 && target.pid)
			return target;
	}
	fail_msg("the held stage's ranks never showed up");
	return (proc){ 0 };
}

static void kill_and_check(const hold_run *h, bool launcher)
{
	proc target = find_target(h, launcher);
	uint64_t id = in_flight(h);
	assert_true(id > 0);
	char tmp[400], work[400];  /* this evaluation's own folders */
	only_entry(h->tmp, tmp, sizeof tmp);
	only_entry(h->work, work, sizeof work);
	kill(target.pid, SIGKILL);

	/* Classified: a crash, by signal 9, at the run stage. */
	snapshot s = { 0 };
	const cuco_candidate *c = NULL;
	for (double t = 0; t < 30 && !(c && c->status >= CUCO_STATUS_DONE); t += 0.05, sleep_s(0.05))
		c = snap_read(h->run, &s) ? snap_find(&s, id) : NULL;
	assert_non_null(c);
	assert_int_equal(c->status, CUCO_STATUS_FAILED);
	assert_string_equal(c->failure.error_class, "crash");
	assert_string_equal(c->failure.stage, "run");
	if (!strstr(c->failure.excerpt, "signal 9"))
		fail_msg("#%llu: %s", (unsigned long long)id, c->failure.excerpt);
	snap_free(&s);

	/* Cleaned up: its folders are gone, nothing of its session lives on. */
	struct stat sb;
	assert_int_not_equal(stat(tmp, &sb), 0);
	assert_int_not_equal(stat(work, &sb), 0);
	proc ps[64];
	size_t n = find_procs(h->marker, ps, 64);
	for (size_t i = 0; i < n; i++)
		if (ps[i].sid == target.sid)
			fail_msg("pid %d (%s) outlived its stage", (int)ps[i].pid, ps[i].argv0);
}

/* tests/faults/fixtures/hold copied to DIR/shelf/hold, its build line's
 * relative include made absolute. The stage's sandbox shows the folder a
 * workload sits in and hides the rest of /tmp: the hold file must lie
 * there, beside the workload, for the ranks to see it. */
static void place_fixture(const char *dir, char *wl, size_t size)
{
	char src[1024], path[1200], common[1024];
	source_path("tests/faults/fixtures/hold", src, sizeof src);
	source_path("workloads/common", common, sizeof common);
	snprintf(wl, size, "%s/shelf/hold", dir);
	assert_int_equal(cuco_mkdir_p(wl, NULL), CUCO_OK);

	snprintf(path, sizeof path, "%s/hold.c", src);
	char *text = slurp(path);
	snprintf(path, sizeof path, "%s/hold.c", wl);
	assert_int_equal(cuco_write_file(path, text, strlen(text), NULL), CUCO_OK);
	free(text);

	snprintf(path, sizeof path, "%s/workload.json", src);
	text = slurp(path);
	static const char rel[] = "{workload}/../../../../workloads/common";
	char *at = strstr(text, rel);
	assert_non_null(at);
	cuco_buf json = { 0 };
	cuco_buf_printf(&json, "%.*s%s%s", (int)(at - text), text, common, at + strlen(rel));
	snprintf(path, sizeof path, "%s/workload.json", wl);
	assert_int_equal(cuco_write_file(path, json.data, json.len, NULL), CUCO_OK);
	cuco_buf_free(&json);
	free(text);
}

static void test_kill_eval(void **state)
{
	(void)state;
	hold_run h;
	char hold[1024];
	cuco_strlcpy(h.dir, "/tmp/cuco-test-killeval-XXXXXX", sizeof h.dir);
	assert_non_null(mkdtemp(h.dir));
	place_fixture(h.dir, hold, sizeof hold);
	snprintf(h.run, sizeof h.run, "%s/run", h.dir);
	snprintf(h.tmp, sizeof h.tmp, "%s/tmp", h.dir);
	snprintf(h.hold, sizeof h.hold, "%s/shelf/HOLD", h.dir);
	snprintf(h.cache, sizeof h.cache, "%s/cache/", h.run);
	assert_int_equal(mkdir(h.tmp, 0755), 0);
	char env_tmp[160], out[128];
	snprintf(h.marker, sizeof h.marker, "CUCO_HOLD=%s", h.hold);
	snprintf(env_tmp, sizeof env_tmp, "TMPDIR=%s", h.tmp);
	snprintf(out, sizeof out, "%s/out", h.dir);
	snprintf(h.work, sizeof h.work, "%s/work", h.run);
	spawn_opts o = { .out = out, .env = { h.marker, env_tmp, "CUCO_PASS_ENV=CUCO_HOLD" } };
	/* No baseline re-measure: the held program would be the baseline's. */
	const char *argv[] = { "run", hold, "--run", h.run, "--headless", "--jobs", "1", "--rebench", "0",
		"--baseline-every", "1000", "--budget", "0", NULL };
	h.pid = spawn_cuco(argv, &o);
	wait_for_tune(h.run, 1, 60);
	int fd = open(h.hold, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);

	kill_and_check(&h, false);
	kill_and_check(&h, true);

	/* The run went on; stopped, it leaves no process, work or temporary
	 * folder behind. */
	unlink(h.hold);
	wait_for_tune(h.run, 4, 60);
	kill(h.pid, SIGTERM);
	assert_int_equal(wait_exit(h.pid, 60), CUCO_EXIT_STOPPED);
	proc ps[8];
	assert_int_equal(find_procs(h.marker, ps, 8), 0);
	assert_int_equal(count_entries(h.work), 0);
	assert_int_equal(count_entries(h.tmp), 0);
	snapshot s = { 0 };
	assert_true(snap_read(h.run, &s));
	assert_int_equal(s.unfinished, 0);
	snap_free(&s);
	rm_rf(h.dir);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "";
	if (strcmp(which, "cycles") == 0) {
		const struct CMUnitTest tests[] = { cmocka_unit_test(test_kill_cycles) };
		return cmocka_run_group_tests(tests, NULL, NULL);
	}
	if (strcmp(which, "loop") == 0) {
		const struct CMUnitTest tests[] = { cmocka_unit_test(test_kill_loop) };
		return cmocka_run_group_tests(tests, NULL, NULL);
	}
	if (strcmp(which, "eval") == 0) {
		if (system("command -v mpirun >/dev/null && command -v mpicc >/dev/null") != 0) {
			fprintf(stderr, "test_kill: mpirun or mpicc not found: skipped\n");
			return SKIP;
		}
		const struct CMUnitTest tests[] = { cmocka_unit_test(test_kill_eval) };
		return cmocka_run_group_tests(tests, NULL, NULL);
	}
	fprintf(stderr, "usage: test_kill cycles|loop|eval\n");
	return 1;
}
