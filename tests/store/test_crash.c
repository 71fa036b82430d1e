/* test_crash.c — a writer killed with SIGKILL at random moments loses
 * nothing it reported committed, and leaves nothing half-written.
 *
 * Each cycle forks a writer that opens the store and inserts candidates in
 * small transactions (a 4 KiB source each, so commits span several pages),
 * reporting every committed id on a pipe only after the commit returned.
 * The parent kills it after a random delay, reopens the store and checks:
 * every reported id is present, its record parses, its fields and its
 * source match what the writer derived from the id; summaries and
 * candidates hold the same ids; no candidate exists beyond the last one
 * the writer could have committed. CUCO_CRASH_CYCLES overrides the count.
 *
 * Then the damage no kill makes: copies of a store cut at random offsets
 * and with single bits flipped at random offsets, each read whole by a
 * child (every table, every record): a child must end by itself, either
 * having read the store or having refused it with one line as corrupt —
 * never killed by a signal (a truncated store used to be a SIGBUS in
 * every command). CUCO_DAMAGE_CASES overrides the number of each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "util.h"

#define SOURCE_BYTES 4096

static void source_for(uint64_t id, char *buf)
{
	int n = snprintf(buf, SOURCE_BYTES, "// candidate %llu\n", (unsigned long long)id);
	for (int i = n; i < SOURCE_BYTES - 1; i++)
		buf[i] = (char)('a' + (id * 31 + (uint64_t)i) % 26);
	buf[SOURCE_BYTES - 1] = '\0';
}

struct batch { uint64_t first; int count; char *src; };

static int insert(cuco_txn *txn, void *arg)
{
	struct batch *b = arg;
	for (int i = 0; i < b->count; i++) {
		cuco_candidate c;
		memset(&c, 0, sizeof c);
		c.id = b->first + (uint64_t)i;
		if (c.id > 1) {
			c.nparents = 1;
			c.parents[0] = c.id - 1;
		}
		c.status = CUCO_STATUS_DONE;
		c.origin = CUCO_ORIGIN_TUNE;
		c.score = (double)c.id;
		c.timing.median_us = 1000.0 / (double)c.id;
		snprintf(c.note, sizeof c.note, "note of %llu", (unsigned long long)c.id);
		source_for(c.id, b->src);
		int rc = cuco_source_put(txn, b->src, SOURCE_BYTES - 1, c.source_hash);
		if (!rc)
			rc = cuco_cand_put(txn, &c);
		cuco_event ev = { .kind = CUCO_EVENT_CANDIDATE, .candidate = c.id };
		if (!rc)
			rc = cuco_event_add(txn, &ev);
		if (rc)
			return rc;
	}
	return CUCO_OK;
}

static int last_id(cuco_txn *txn, void *arg)
{
	*(uint64_t *)arg = cuco_cand_last_id(txn);
	return CUCO_OK;
}

static void writer(const char *dir, int fd)
{
	cuco_store *st;
	cuco_err err;
	if (cuco_store_open(dir, 0, &st, &err))
		_exit(10);
	uint64_t next = 0;
	if (cuco_store_read(st, last_id, &next, &err))
		_exit(11);
	struct batch b = { next + 1, 0, malloc(SOURCE_BYTES) };
	for (unsigned r = (unsigned)getpid();;) {
		r = r * 1103515245u + 12345u;
		b.count = 1 + (int)(r >> 16) % 6;
		if (cuco_store_write(st, insert, &b, &err))
			_exit(12);
		uint64_t last = b.first + (uint64_t)b.count - 1;
		if (write(fd, &last, sizeof last) != sizeof last)
			_exit(13);
		b.first = last + 1;
	}
}

struct verify { uint64_t reported, max_possible; char *src; int bad; char why[256]; };

static int verify_txn(cuco_txn *txn, void *arg)
{
	struct verify *v = arg;
	cuco_summary *sums;
	size_t n;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc)
		return rc;
	uint64_t last = cuco_cand_last_id(txn);
	if (last < v->reported || last > v->max_possible || n != last) {
		snprintf(v->why, sizeof v->why, "last id %llu, summaries %zu, reported %llu, possible %llu",
			(unsigned long long)last, n, (unsigned long long)v->reported,
			(unsigned long long)v->max_possible);
		v->bad = 1;
	}
	cuco_candidate *c = malloc(sizeof *c);
	for (size_t i = 0; i < n && !v->bad; i++) {
		uint64_t id = sums[i].id;
		char *text = NULL;
		if (id != i + 1 || cuco_cand_get(txn, id, c) != CUCO_OK ||
		    c->score != (double)id || strncmp(c->note, "note of ", 8) != 0 ||
		    strtoull(c->note + 8, NULL, 10) != id ||
		    (id > 1 && (c->nparents != 1 || c->parents[0] != id - 1)) ||
		    cuco_source_get(txn, c->source_hash, &text, NULL) != CUCO_OK) {
			snprintf(v->why, sizeof v->why, "candidate %llu torn or missing", (unsigned long long)id);
			v->bad = 1;
		} else {
			source_for(id, v->src);
			if (strcmp(text, v->src) != 0) {
				snprintf(v->why, sizeof v->why, "source of %llu differs", (unsigned long long)id);
				v->bad = 1;
			}
		}
		free(text);
	}
	free(c);
	free(sums);
	return CUCO_OK;
}

static void test_kill_and_reopen(void **state)
{
	(void)state;
	char dir[] = "/tmp/cuco-test-crash-XXXXXX";
	assert_non_null(mkdtemp(dir));
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err), CUCO_OK);
	cuco_store_close(st);  /* never keep an environment open across fork() */

	int cycles = getenv("CUCO_CRASH_CYCLES") ? atoi(getenv("CUCO_CRASH_CYCLES")) : 200;
	struct verify v = { 0 };
	v.src = malloc(SOURCE_BYTES);
	srand((unsigned)time(NULL));
	int killed_mid_write = 0;
	for (int cycle = 0; cycle < cycles; cycle++) {
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			writer(dir, fds[1]);
		}
		close(fds[1]);
		usleep((useconds_t)(2000 + rand() % 25000));
		kill(pid, SIGKILL);
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		uint64_t last;
		while (read(fds[0], &last, sizeof last) == sizeof last)
			v.reported = last;
		close(fds[0]);
		/* The writer may have committed one batch (≤ 6) it never reported. */
		v.max_possible = v.reported + 6;

		assert_int_equal(cuco_store_open(dir, 0, &st, &err), CUCO_OK);
		uint64_t before = 0;
		assert_int_equal(cuco_store_read(st, last_id, &before, &err), CUCO_OK);
		if (before > v.reported)
			killed_mid_write++;  /* committed but not yet reported: a kill between the two */
		assert_int_equal(cuco_store_read(st, verify_txn, &v, &err), CUCO_OK);
		cuco_store_close(st);
		if (v.bad)
			fail_msg("cycle %d: %s", cycle, v.why);
		v.reported = before;  /* what survived is the base of the next cycle */
	}
	print_message("%d kill/reopen cycles, %llu candidates intact, %d kills after a commit before its report\n",
		cycles, (unsigned long long)v.reported, killed_mid_write);
	assert_true(v.reported > 0);
	free(v.src);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- damage: truncations and bit flips ---------------------------------------- */

static int read_source(const cuco_candidate *c, void *arg)
{
	cuco_txn *txn = arg;
	char *text = NULL;
	int rc = cuco_source_get(txn, c->source_hash, &text, NULL);
	free(text);
	return rc == CUCO_ENOTFOUND ? cuco_txn_fail(txn, CUCO_EDATA, "a source is missing") : rc;
}

static int no_event(const cuco_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
	return 0;
}

static int no_island(const cuco_island *isl, void *arg)
{
	(void)isl;
	(void)arg;
	return 0;
}

static int no_measurement(const cuco_measurement *m, void *arg)
{
	(void)m;
	(void)arg;
	return 0;
}

static int each_measured(const cuco_candidate *c, void *arg)
{
	return cuco_measure_each(arg, c->id, no_measurement, NULL);
}

/* What `cuco ls`, `report` and `show` read, all of it. */
static int read_everything(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_summary *sums = NULL, best;
	size_t n;
	int rc = cuco_summary_all(txn, &sums, &n);
	free(sums);
	if (rc == CUCO_OK)
		rc = cuco_cand_each(txn, 1, read_source, txn);
	if (rc == CUCO_OK)
		rc = cuco_cand_each(txn, 1, each_measured, txn);
	if (rc == CUCO_OK)
		rc = cuco_event_each(txn, 1, no_event, NULL);
	if (rc == CUCO_OK)
		rc = cuco_island_each(txn, no_island, NULL);
	if (rc == CUCO_OK && (rc = cuco_best(txn, &best)) == CUCO_ENOTFOUND)
		rc = CUCO_OK;
	return rc;
}

/* In a child: open dir and read it all; exit 0 when read, the error's
 * code when refused, 9 when the refusal was not one line. */
static int read_in_child(const char *dir, unsigned flags)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka catches these to report a test; here they must kill. */
		static const int fatal[] = { SIGBUS, SIGSEGV, SIGILL, SIGFPE, SIGABRT };
		for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
			signal(fatal[i], SIG_DFL);
		cuco_store *st;
		cuco_err err = { 0 };
		int rc = cuco_store_open(dir, flags, &st, &err);
		if (rc == CUCO_OK) {
			rc = cuco_store_read(st, read_everything, NULL, &err);
			cuco_store_close(st);
		}
		if (rc != CUCO_OK && rc != CUCO_EDATA)
			fprintf(stderr, "child: %s\n", err.msg);
		_exit(rc != CUCO_OK && (!err.msg[0] || strchr(err.msg, '\n')) ? 9 : rc);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int build_store(cuco_txn *txn, void *arg)
{
	struct batch *b = arg;
	int rc = insert(txn, b);
	for (int i = 0; rc == CUCO_OK && i < b->count; i += 3) {
		cuco_measurement m;
		cuco_measurement_init(&m, b->first + (uint64_t)i, "measure");
		m.ok = true;
		m.timing.median_us = 100 + i;
		rc = cuco_measure_add(txn, &m, NULL);
	}
	cuco_island isl = { .id = 0, .phase = "explore" };
	return rc ? rc : cuco_island_put(txn, &isl);
}

static void copy_damaged(const char *from, const char *to, const char *data, size_t len,
	size_t cut, long flip_bit)
{
	char path[256];
	rmtree(to);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(path, sizeof path, "%s/data.mdb", to);
	char *copy = malloc(len);
	memcpy(copy, data, len);
	if (flip_bit >= 0)
		copy[flip_bit / 8] ^= (char)(1 << (flip_bit % 8));
	assert_int_equal(cuco_write_file(path, copy, cut, NULL), CUCO_OK);
	free(copy);
	(void)from;
}

static void test_truncations_and_flips(void **state)
{
	(void)state;
	char dir[64], scratch[64];
	tmpdir(dir);
	tmpdir(scratch);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	struct batch b = { 1, 150, malloc(SOURCE_BYTES) };
	assert_int_equal(cuco_store_write(st, build_store, &b, &err), CUCO_OK);
	free(b.src);
	cuco_store_close(st);
	char path[256], *data;
	size_t len;
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	assert_int_equal(cuco_read_file(path, 1u << 30, &data, &len, NULL), CUCO_OK);
	assert_int_equal(read_in_child(dir, CUCO_STORE_RDONLY), 0);

	int cases = getenv("CUCO_DAMAGE_CASES") ? atoi(getenv("CUCO_DAMAGE_CASES")) : 60;
	int cut_refused = 0, flips_read = 0, flips_refused = 0;
	unsigned seed = getenv("CUCO_DAMAGE_SEED") ? (unsigned)atoi(getenv("CUCO_DAMAGE_SEED"))
		: (unsigned)time(NULL);
	print_message("damage seed %u (CUCO_DAMAGE_SEED repeats it)\n", seed);
	srand(seed);
	for (int i = 0; i < cases; i++) {
		size_t cut = 1 + (size_t)rand() % (len - 1);
		copy_damaged(dir, scratch, data, len, cut, -1);
		int rc = read_in_child(scratch, i % 2 ? CUCO_STORE_RDONLY : 0);
		if (rc != CUCO_EDATA)
			fail_msg("cut at %zu of %zu bytes: exit %d, expected a refusal (2)", cut, len, rc);
		cut_refused++;
	}
	for (int i = 0; i < cases; i++) {
		long bit = (long)((unsigned long)rand() * (unsigned long)RAND_MAX + (unsigned long)rand())
			% (long)(len * 8);
		copy_damaged(dir, scratch, data, len, len, bit);
		int rc = read_in_child(scratch, CUCO_STORE_RDONLY);
		if (rc != CUCO_OK && rc != CUCO_EDATA)
			fail_msg("bit %ld (byte %ld of %zu) flipped: exit %d, expected 0 or 2", bit, bit / 8,
				len, rc);
		rc == CUCO_OK ? flips_read++ : flips_refused++;
	}
	print_message("%d cuts: %d refused; %d bit flips: %d read, %d refused; none killed\n", cases,
		cut_refused, cases, flips_read, flips_refused);
	free(data);
	rmtree(dir);
	rmtree(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill_and_reopen),
		cmocka_unit_test(test_truncations_and_flips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
