/* test_hangup.c — an SSH disconnect: the terminal hangs up (the test
 * closes the pseudo-terminal's master side, and the kernel sends SIGHUP to
 * the session on it).
 *
 *   headless `cuco run` on the terminal      stops cleanly: exit 0, nothing
 *                                            left unfinished, "stopped"
 *   the same started as nohup does           keeps running (SIGHUP ignored)
 *   `cuco tui` attached to a run             leaves; the run goes on
 *   `cuco run` with its screen               stops cleanly, like headless
 *   `cuco run | tee`, tee gone (SIGPIPE)     as without the pipe: stops
 *                                            cleanly, or goes on under nohup */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

static char toy[1024];

typedef struct hangup_run {
	char dir[64], run[128], out[128];
} hangup_run;

static void fixture_init(hangup_run *f)
{
	cuco_strlcpy(f->dir, "/tmp/cuco-test-hup-XXXXXX", sizeof f->dir);
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->run, sizeof f->run, "%s/run", f->dir);
	snprintf(f->out, sizeof f->out, "%s/out", f->dir);
}

static pid_t start_run(const hangup_run *f, bool headless, const spawn_opts *o)
{
	const char *argv[] = { "run", toy, "--run", f->run, "--jobs", "1", "--rebench", "0", "--budget", "0",
		headless ? "--headless" : NULL, NULL };
	return spawn_cuco(argv, o);
}

/* Drain the terminal (a screen blocks when nobody reads it) until the run
 * holds `tune` candidates and the screen showed `text` (each when set). */
static void drain_until(int master, const char *run, size_t tune, const char *text, double timeout_s)
{
	cuco_buf seen = { 0 };
	snapshot s = { 0 };
	fcntl(master, F_SETFL, O_NONBLOCK);
	for (double t = 0; t < timeout_s; t += 0.05, sleep_s(0.05)) {
		char buf[8192];
		ssize_t n;
		while ((n = read(master, buf, sizeof buf)) > 0)
			if (seen.len < (1u << 20))
				cuco_buf_append(&seen, buf, (size_t)n);
		bool text_ok = !text || (seen.data && strstr(seen.data, text));
		bool tune_ok = !run || (snap_read(run, &s) && s.tune >= tune);
		if (text_ok && tune_ok) {
			cuco_buf_free(&seen);
			snap_free(&s);
			return;
		}
	}
	fail_msg("after %.0f s: %zu candidates (wanted %zu), '%s' %s on the screen", timeout_s, s.tune,
		tune, text ? text : "", text && seen.data && strstr(seen.data, text) ? "seen" : "not seen");
}

/* Stopped cleanly: nothing left in flight, the stop recorded. */
static void assert_stopped(const char *run)
{
	snapshot s = { 0 };
	assert_true(snap_read(run, &s));
	assert_int_equal(s.unfinished, 0);
	assert_non_null(strstr(s.last_event, "stopped"));
	snap_free(&s);
}

/* Still running: more candidates within a few seconds. */
static void assert_goes_on(pid_t pid, const char *run)
{
	snapshot s = { 0 };
	assert_true(snap_read(run, &s));
	size_t had = s.tune;
	snap_free(&s);
	wait_for_tune(run, had + 2, 20);
	assert_true(alive(pid));
}

/* A run attached to the terminal, headless or with its screen: the
 * hang-up stops it cleanly. */
static void hangup_stops(bool headless)
{
	hangup_run f;
	fixture_init(&f);
	int master = -1;
	spawn_opts o = { .pty_master = &master };
	pid_t pid = start_run(&f, headless, &o);
	drain_until(master, f.run, 2, headless ? NULL : "lineage", 30);
	close(master);  /* the SSH connection drops */
	assert_int_equal(wait_exit(pid, 30), CUCO_EXIT_STOPPED);
	assert_stopped(f.run);
	rm_rf(f.dir);
}

static void test_headless_hangup(void **state)
{
	(void)state;
	hangup_stops(true);
}

static void test_screen_hangup(void **state)
{
	(void)state;
	hangup_stops(false);
}

static void test_nohup_survives(void **state)
{
	(void)state;
	hangup_run f;
	fixture_init(&f);
	int master = -1;
	spawn_opts o = { .pty_master = &master, .ignore_hup = true };
	pid_t pid = start_run(&f, true, &o);
	drain_until(master, f.run, 2, NULL, 30);
	close(master);
	assert_goes_on(pid, f.run);
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid, 30), CUCO_EXIT_STOPPED);
	assert_stopped(f.run);
	rm_rf(f.dir);
}

static void test_tui_detaches(void **state)
{
	(void)state;
	hangup_run f;
	fixture_init(&f);
	spawn_opts ro = { .out = f.out };
	pid_t run = start_run(&f, true, &ro);
	wait_for_tune(f.run, 2, 30);
	int master = -1;
	spawn_opts to = { .pty_master = &master };
	const char *argv[] = { "tui", "--run", f.run, NULL };
	pid_t tui = spawn_cuco(argv, &to);
	drain_until(master, NULL, 0, "lineage", 20);
	close(master);
	assert_int_equal(wait_exit(tui, 10), 0);
	assert_goes_on(run, f.run);
	kill(run, SIGTERM);
	assert_int_equal(wait_exit(run, 30), CUCO_EXIT_STOPPED);
	assert_stopped(f.run);
	rm_rf(f.dir);
}

/* `cuco run | tee log` and the connection drops: tee goes, and the run
 * writes into a pipe nobody reads. Hung up too, it still stops cleanly;
 * started as nohup does, it goes on. */
static void test_reader_gone(void **state)
{
	(void)state;
	for (int nohup = 0; nohup < 2; nohup++) {
		hangup_run f;
		fixture_init(&f);
		int out = -1;
		spawn_opts o = { .pipe_out = &out, .ignore_hup = nohup };
		pid_t pid = start_run(&f, true, &o);
		wait_for_tune(f.run, 2, 30);
		close(out);
		kill(pid, SIGHUP);
		if (nohup) {
			assert_goes_on(pid, f.run);
			kill(pid, SIGTERM);
		}
		assert_int_equal(wait_exit(pid, 30), CUCO_EXIT_STOPPED);
		assert_stopped(f.run);
		rm_rf(f.dir);
	}
}

int main(void)
{
	char buf[1024];
	cuco_strlcpy(toy, source_path("tests/agents/fixtures/toy", buf, sizeof buf), sizeof toy);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headless_hangup),
		cmocka_unit_test(test_nohup_survives),
		cmocka_unit_test(test_tui_detaches),
		cmocka_unit_test(test_screen_hangup),
		cmocka_unit_test(test_reader_gone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
