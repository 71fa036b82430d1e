/* test_memory.c — AccelOpt's memory rules: which results of a beam
 * iteration become lessons (per-plan representatives, the positive cap,
 * negatives flipped, thresholds), which old lessons survive, and the
 * update and rendering through the engine's port over a real store. */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/engine_int.h"
#include "strategies/strategies.h"

static cuco_beam_config defaults(void)
{
	cuco_search_config k;
	cuco_search_config_defaults(&k);
	return k.beam;
}

static const cuco_memory_pair *pair_of(const cuco_memory_pair *p, size_t n, uint64_t slow,
	uint64_t fast)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].slow == slow && p[i].fast == fast)
			return &p[i];
	return NULL;
}

static void test_representatives(void **state)
{
	(void)state;
	cuco_beam_config c = defaults();
	/* Parent 1. Plan 0: one sample beat the parent → the best speaks.
	 * Plan 1: none did → the worst speaks (a negative). Plan 2: failed
	 * samples only → nothing. Plan 3: 1.03 and 0.9: the best is 1.03, not
	 * enough for a positive, and being "better" hides the 0.9. */
	const cuco_beam_sample s[] = {
		{ 10, 1, 0, 1.30 }, { 11, 1, 0, 0.50 },
		{ 12, 1, 1, 0.95 }, { 13, 1, 1, 0.70 },
		{ 14, 1, 2, NAN }, { 15, 1, 2, NAN },
		{ 16, 1, 3, 1.03 }, { 17, 1, 3, 0.90 },
	};
	cuco_memory_pair p[8];
	size_t n = cuco_memory_pairs(s, 8, &c, p);
	assert_int_equal(n, 2);
	const cuco_memory_pair *pos = pair_of(p, n, 1, 10);
	assert_non_null(pos);
	assert_false(pos->negative);
	assert_float_equal(pos->speedup, 1.30, 1e-12);
	/* The negative is flipped: the child is the slow one, "undo this". */
	const cuco_memory_pair *neg = pair_of(p, n, 13, 1);
	assert_non_null(neg);
	assert_true(neg->negative);
	assert_float_equal(neg->speedup, 1 / 0.70, 1e-12);
	assert_null(pair_of(p, n, 1, 11));
	assert_null(pair_of(p, n, 17, 1));
}

static void test_caps_and_thresholds(void **state)
{
	(void)state;
	cuco_beam_config c = defaults();  /* max_new 8: at most 4 positives */
	cuco_beam_sample s[16];
	/* Ten plans that helped (1.05 … 1.50), six that hurt (0.50 … 0.75),
	 * each its own plan under parent 100. */
	for (int i = 0; i < 10; i++)
		s[i] = (cuco_beam_sample){ (uint64_t)(200 + i), 100, i, 1.05 + 0.05 * i };
	for (int i = 0; i < 6; i++)
		s[10 + i] = (cuco_beam_sample){ (uint64_t)(300 + i), 100, 10 + i, 0.50 + 0.05 * i };
	cuco_memory_pair p[16];
	size_t n = cuco_memory_pairs(s, 16, &c, p);
	assert_int_equal(n, 8);
	/* Positives first, best first: 1.50, 1.45, 1.40, 1.35. */
	for (int i = 0; i < 4; i++) {
		assert_false(p[i].negative);
		assert_float_equal(p[i].speedup, 1.50 - 0.05 * i, 1e-9);
	}
	/* Then negatives, most harmful first: 0.50, 0.55, 0.60, 0.65. */
	for (int i = 0; i < 4; i++) {
		assert_true(p[4 + i].negative);
		assert_int_equal(p[4 + i].slow, 300 + i);
		assert_float_equal(p[4 + i].speedup, 1 / (0.50 + 0.05 * i), 1e-9);
	}
	/* Few positives leave their room to negatives. */
	n = cuco_memory_pairs(s + 8, 8, &c, p);  /* 1.45, 1.50 and six negatives */
	assert_int_equal(n, 8);
	assert_int_equal(p[1].negative + p[2].negative, 1);
	/* Inside the thresholds nothing is a lesson: 1.04 is not > 1.04, and
	 * 0.87 is not below 1/1.15 = 0.8696. */
	const cuco_beam_sample mild[] = { { 1, 9, 0, 1.04 }, { 2, 9, 1, 0.87 }, { 3, 9, 2, 1.0 } };
	assert_int_equal(cuco_memory_pairs(mild, 3, &c, p), 0);
	c.max_new = 0;
	assert_int_equal(cuco_memory_pairs(s, 16, &c, p), 0);
}

static void test_survivors(void **state)
{
	(void)state;
	size_t keep[16];
	uint64_t rng = 5;
	/* 16 old, 8 new, capacity 16: 8 old ones survive, distinct, ascending. */
	long hits[16] = { 0 };
	for (int round = 0; round < 20000; round++) {
		size_t k = cuco_memory_survivors(16, 8, 16, &rng, keep);
		assert_int_equal(k, 8);
		for (size_t i = 0; i < k; i++) {
			assert_true(keep[i] < 16);
			if (i > 0)
				assert_true(keep[i] > keep[i - 1]);
			hits[keep[i]]++;
		}
	}
	/* A uniform sample: each survives half the time. */
	for (int i = 0; i < 16; i++)
		assert_true(fabs(hits[i] / 20000.0 - 0.5) < 0.02);
	assert_int_equal(cuco_memory_survivors(3, 2, 16, &rng, keep), 3);   /* room for all */
	assert_int_equal(cuco_memory_survivors(10, 16, 16, &rng, keep), 0); /* all replaced */
	assert_int_equal(cuco_memory_survivors(10, 20, 16, &rng, keep), 0);
	assert_int_equal(cuco_memory_survivors(0, 2, 16, &rng, keep), 0);
}

typedef struct count_arg {
	int total, of_w, fresh, of_other;
	cuco_buf text;
} count_arg;

static int count_one(const cuco_memory *m, void *arg)
{
	count_arg *a = arg;
	a->total++;
	a->of_w += strcmp(m->workload, "w") == 0;
	a->of_other += strcmp(m->workload, "other") == 0;
	a->fresh += strncmp(m->summary, "fresh", 5) == 0;
	return 0;
}

static int count_read(const cuco_reader *r, void *arg)
{
	count_arg *a = arg;
	memset(a, 0, offsetof(count_arg, text));
	a->text.len = 0;
	int rc = r->memories(r->ctx, count_one, a);
	return rc == CUCO_OK ? cuco_memory_render(r, "w", false, &a->text) : rc;
}

static cuco_memory entry(const char *workload, const char *summary, bool negative)
{
	cuco_memory m;
	memset(&m, 0, sizeof m);
	cuco_strlcpy(m.workload, workload, sizeof m.workload);
	cuco_strlcpy(m.summary, summary, sizeof m.summary);
	m.speedup = 1.25;
	m.negative = negative;
	return m;
}

/* The engine's port over a bare store: its wakes go to a pipe no screen
 * reads. */
static void port_open(cuco_engine *e, cuco_store *st)
{
	memset(e, 0, sizeof *e);
	e->st = st;
	assert_int_equal(pipe2(e->wake, O_CLOEXEC | O_NONBLOCK), 0);
	engine_port_init(e);
}

static void test_update_in_store(void **state)
{
	(void)state;
	char dir[] = "/tmp/cuco-test-memory-XXXXXX";
	assert_non_null(mkdtemp(dir));
	cuco_store *st = NULL;
	cuco_err err = { 0 };
	if (cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_engine e;
	port_open(&e, st);
	const cuco_port port = e.port;
	uint64_t rng = 11;
	/* 20 old lessons for w (4 over capacity) and 3 for another workload. */
	cuco_memory old[20];
	for (int i = 0; i < 20; i++)
		old[i] = entry("w", "old lesson", false);
	assert_int_equal(cuco_memory_update(&port, "w", false, old, 20, 16, &rng, &err), CUCO_OK);
	cuco_memory other[3] = { entry("other", "theirs", false), entry("other", "theirs", false),
		entry("other", "theirs", false) };
	assert_int_equal(cuco_memory_update(&port, "other", false, other, 3, 16, &rng, &err), CUCO_OK);
	count_arg a = { 0 };
	assert_int_equal(cuco_store_view(st, count_read, &a, &err), CUCO_OK);
	assert_int_equal(a.of_w, 16);  /* the capacity holds even for one batch */
	assert_int_equal(a.of_other, 3);
	assert_true(old[0].id > 0 && old[15].id > old[0].id);

	cuco_memory fresh[6];
	for (int i = 0; i < 6; i++)
		fresh[i] = entry("w", "fresh lesson", i % 2);
	assert_int_equal(cuco_memory_update(&port, "w", false, fresh, 6, 16, &rng, &err), CUCO_OK);
	assert_int_equal(cuco_store_view(st, count_read, &a, &err), CUCO_OK);
	assert_int_equal(a.of_w, 16);
	assert_int_equal(a.fresh, 6);       /* every fresh one is kept */
	assert_int_equal(a.of_other, 3);    /* another task's memory is untouched */
	assert_non_null(strstr(a.text.data, "# Experiences"));
	assert_non_null(strstr(a.text.data, "Undo this (it made a program 1.25x slower)"));
	assert_null(strstr(a.text.data, "theirs"));

	/* Shared: every workload's lessons compete for the capacity. */
	assert_int_equal(cuco_memory_update(&port, "w", true, fresh, 6, 16, &rng, &err), CUCO_OK);
	assert_int_equal(cuco_store_view(st, count_read, &a, &err), CUCO_OK);
	assert_int_equal(a.total, 16);
	cuco_buf_free(&a.text);
	close(e.wake[0]);
	close(e.wake[1]);
	cuco_store_close(st);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_representatives),
		cmocka_unit_test(test_caps_and_thresholds),
		cmocka_unit_test(test_survivors),
		cmocka_unit_test(test_update_in_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
