/* test_disk.c — `cuco run` when a write fails for want of room: the disk
 * fills (a small tmpfs, in a mount namespace of the test's own), or the
 * store grows past the file-size limit (RLIMIT_FSIZE, SIGXFSZ left at its
 * default). Each time: one clear error naming the file, exit 3, the store
 * opens with every committed candidate as it was, `cuco ls`/`cuco show`
 * read it, and a resumed run with room goes on — the candidate that was in
 * flight evaluated again, nothing evaluated twice.
 *
 * A new run on a disk already full gets the same error (no SIGBUS).
 *
 *   test_disk disk-full   needs mount namespaces (root); else exit 77
 *   test_disk fsize */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

#define SKIP 77

static char toy[1024];

/* Start a headless run of the toy workload; budget "0" runs until stopped. */
static pid_t start_run(const char *run, const char *budget, const spawn_opts *o)
{
	const char *argv[] = { "run", toy, "--run", run, "--headless", "--jobs", "1", "--rebench", "0",
		"--budget", budget, NULL };
	return spawn_cuco(argv, o);
}

/* Wait for the run to end by itself, keeping the last snapshot it
 * committed: what must survive the failure. */
static int watch_until_exit(pid_t pid, const char *run, snapshot *last, double timeout_s)
{
	snapshot s = { 0 };
	for (double t = 0; t < timeout_s; t += 0.05) {
		if (!alive(pid))
			break;
		if (snap_read(run, &s)) {
			snapshot tmp = *last;
			*last = s;
			s = tmp;
		}
		sleep_s(0.05);
	}
	snap_free(&s);
	return wait_exit(pid, 5);
}

/* The last line of the error stream: one "cuco: PATH…: …" line that names
 * a file under `under` and says `what`. */
static void assert_error_line(const char *err_path, const char *under, const char *what)
{
	char *text = slurp(err_path);
	size_t len = strlen(text);
	while (len && text[len - 1] == '\n')
		text[--len] = '\0';
	char *line = strrchr(text, '\n');
	line = line ? line + 1 : text;
	char prefix[600];
	snprintf(prefix, sizeof prefix, "cuco: %s/", under);
	if (strncmp(line, prefix, strlen(prefix)) != 0 || !strstr(line, what))
		fail_msg("expected an error naming a file under %s and saying '%s', got: %s", under, what, line);
	free(text);
}

/* After the failure: the store opens, holds what was committed, the CLI
 * reads it; then a resumed run with room adds 3 candidates and
 * finishes the ones left in flight under their own ids. */
static void check_and_resume(const char *run, const snapshot *committed, const char *out_path)
{
	snapshot after = { 0 }, resumed = { 0 };
	assert_true(snap_read(run, &after));
	assert_kept(committed, &after);
	/* The disk's fault is no candidate's: none was failed for it. */
	for (size_t i = 0; i < after.n; i++)
		if (strstr(after.c[i].failure.excerpt, "No space left")
			|| strstr(after.c[i].failure.excerpt, "too large"))
			fail_msg("#%llu was failed for the disk: %s", (unsigned long long)after.c[i].id,
				after.c[i].failure.error_class);
	assert_cli_reads(run, &after);

	char budget[16];
	snprintf(budget, sizeof budget, "%zu", after.tune + 3);
	spawn_opts o = { .out = out_path };
	assert_int_equal(wait_exit(start_run(run, budget, &o), 60), 0);
	assert_true(snap_read(run, &resumed));
	assert_int_equal(resumed.unfinished, 0);
	assert_int_equal(resumed.tune, after.tune + 3);
	for (size_t i = 0; i < after.n; i++)
		if (after.c[i].status < CUCO_STATUS_DONE) {
			const cuco_candidate *c = snap_find(&resumed, after.c[i].id);
			assert_non_null(c);
			assert_true(c->status >= CUCO_STATUS_DONE);
		}
	assert_kept(&after, &resumed);
	assert_no_duplicates(&resumed);
	snap_free(&after);
	snap_free(&resumed);
}

/* ---- disk full -------------------------------------------------------------------- */

static char mnt[64];

static int mount_tmpfs(const char *size)
{
	char opts[32];
	snprintf(opts, sizeof opts, "size=%s", size);
	return mount("tmpfs", mnt, "tmpfs", 0, opts);
}

/* Fill the mount to the last block with a file. */
static void fill(const char *filler)
{
	int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	static char block[4096];
	while (write(fd, block, sizeof block) > 0 || errno == EINTR)
		continue;
	assert_int_equal(errno, ENOSPC);
	close(fd);
}

/* The disk fills while the run builds and records candidates. */
static void test_fills_while_running(void **state)
{
	(void)state;
	assert_int_equal(mount_tmpfs("400k"), 0);
	char run[128], out[128], err[128];
	snprintf(run, sizeof run, "%s/run", mnt);
	snprintf(out, sizeof out, "%s/out", mnt);  /* progress lines share the disk */
	snprintf(err, sizeof err, "%s.err", mnt);  /* outside, to read it whole */
	spawn_opts o = { .out = out, .err = err };
	snapshot committed = { 0 };
	int code = watch_until_exit(start_run(run, "0", &o), run, &committed, 50);
	assert_int_equal(code, 3);
	assert_true(committed.tune >= 3);
	assert_error_line(err, mnt, "No space left on device");
	unlink(err);

	/* The same disk, made bigger. */
	assert_int_equal(mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=16m"), 0);
	check_and_resume(run, &committed, out);
	snap_free(&committed);
	assert_int_equal(umount(mnt), 0);
}

/* The disk fills from outside mid-run: whichever write comes next fails. */
static void test_filled_from_outside(void **state)
{
	(void)state;
	assert_int_equal(mount_tmpfs("4m"), 0);
	char run[128], out[128], err[128], filler[128];
	snprintf(run, sizeof run, "%s/run", mnt);
	snprintf(out, sizeof out, "%s/out", mnt);
	snprintf(err, sizeof err, "%s.err", mnt);
	snprintf(filler, sizeof filler, "%s/filler", mnt);
	spawn_opts o = { .out = out, .err = err };
	pid_t pid = start_run(run, "0", &o);
	wait_for_tune(run, 3, 30);
	fill(filler);
	snapshot committed = { 0 };
	assert_int_equal(watch_until_exit(pid, run, &committed, 30), 3);
	assert_error_line(err, mnt, "No space left on device");
	unlink(err);

	unlink(filler);
	check_and_resume(run, &committed, out);
	snap_free(&committed);
	assert_int_equal(umount(mnt), 0);
}

/* A new run on a disk already full: the error, not a crash (LMDB writes
 * its lock file through a mapping, where a full disk is a SIGBUS). */
static void test_full_at_start(void **state)
{
	(void)state;
	assert_int_equal(mount_tmpfs("64k"), 0);
	char run[128], err[128], filler[128];
	snprintf(run, sizeof run, "%s/run", mnt);
	snprintf(err, sizeof err, "%s.err", mnt);
	snprintf(filler, sizeof filler, "%s/filler", mnt);
	fill(filler);
	spawn_opts o = { .out = err };
	assert_int_equal(wait_exit(start_run(run, "2", &o), 30), 3);
	assert_error_line(err, mnt, "No space left on device");

	unlink(filler);
	assert_int_equal(mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=16m"), 0);
	assert_int_equal(wait_exit(start_run(run, "2", &o), 60), 0);
	snapshot s = { 0 };
	assert_true(snap_read(run, &s));
	assert_int_equal(s.tune, 2);
	assert_int_equal(s.unfinished, 0);
	snap_free(&s);
	unlink(err);
	assert_int_equal(umount(mnt), 0);
}

/* A private mount namespace: the test's tmpfs vanishes with it, even if
 * the test dies, and nobody else sees it. */
static bool private_mounts(void)
{
	if (unshare(CLONE_NEWNS) != 0) {
		fprintf(stderr, "test_disk: cannot make a mount namespace (%s); the disk-full test "
			"needs root (CAP_SYS_ADMIN): skipped\n", strerror(errno));
		return false;
	}
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		fprintf(stderr, "test_disk: cannot make / private (%s): skipped\n", strerror(errno));
		return false;
	}
	char dir[] = "/tmp/cuco-test-full-XXXXXX";
	assert_non_null(mkdtemp(dir));
	cuco_strlcpy(mnt, dir, sizeof mnt);
	if (mount_tmpfs("64k") != 0) {
		fprintf(stderr, "test_disk: cannot mount a tmpfs (%s): skipped\n", strerror(errno));
		rmdir(mnt);
		return false;
	}
	umount(mnt);
	return true;
}

/* ---- file-size limit ----------------------------------------------------------- */

static void test_file_size_limit(void **state)
{
	(void)state;
	char dir[] = "/tmp/cuco-test-fsize-XXXXXX", run[128], out[128], err[128];
	assert_non_null(mkdtemp(dir));
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(err, sizeof err, "%s/err", dir);
	/* The store is cuco's biggest file: it reaches the limit first. */
	spawn_opts o = { .out = out, .err = err, .fsize = 192 << 10 };
	snapshot committed = { 0 };
	int code = watch_until_exit(start_run(run, "0", &o), run, &committed, 50);
	assert_int_equal(code, 3);  /* not 128 + SIGXFSZ */
	assert_true(committed.tune >= 3);
	assert_error_line(err, run, "data.mdb: commit: File too large (the file-size limit");

	/* Resumed under a limit below the store's size: the first write
	 * starts past it, which raises SIGXFSZ. Still an error, not a kill. */
	o.fsize = 64 << 10;
	assert_int_equal(wait_exit(start_run(run, "0", &o), 30), 3);
	assert_error_line(err, run, "data.mdb: commit: File too large (the file-size limit");
	check_and_resume(run, &committed, out);
	snap_free(&committed);
	rm_rf(dir);
}

int main(int argc, char **argv)
{
	char buf[1024];
	cuco_strlcpy(toy, source_path("tests/agents/fixtures/toy", buf, sizeof buf), sizeof toy);
	const char *which = argc > 1 ? argv[1] : "";
	if (strcmp(which, "disk-full") == 0) {
		if (!private_mounts())
			return SKIP;
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(test_fills_while_running),
			cmocka_unit_test(test_filled_from_outside),
			cmocka_unit_test(test_full_at_start),
		};
		int rc = cmocka_run_group_tests(tests, NULL, NULL);
		rmdir(mnt);
		return rc;
	}
	if (strcmp(which, "fsize") == 0) {
		const struct CMUnitTest tests[] = { cmocka_unit_test(test_file_size_limit) };
		return cmocka_run_group_tests(tests, NULL, NULL);
	}
	fprintf(stderr, "usage: test_disk disk-full|fsize\n");
	return 1;
}
