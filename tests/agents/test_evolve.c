/* test_evolve.c — the rules of the islands: parent selection (weights
 * against their formulas, and sampled frequencies against the weights),
 * the explore→exploit switch and its operator mix, migration, duplicate
 * detection by normal form, and the knobs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "strategies/search_int.h"
#include "strategies/strategies.h"
#include "text.h"

#define DRAWS 200000

static uint64_t rng_state = 42;

static double unit(void)
{
	/* xorshift64*: the test's own draws, independent of the code's RNG. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

static double sigmoid(double x)
{
	return 1 / (1 + exp(-x));
}

static void test_weighted_formula(void **state)
{
	(void)state;
	const double scores[] = { 1, 2, 3, 5 };
	const int children[] = { 0, 1, 0, 3 };
	double w[4];
	cuco_parent_weights(CUCO_PARENT_WEIGHTED, 2.0, 1.0, scores, children, 4, w);
	const double median = 2.5, mad = 1.0;  /* of 1,2,3,5: (2+3)/2; |d| .5,.5,1.5,2.5 → 1 */
	for (int i = 0; i < 4; i++)
		assert_float_equal(w[i], sigmoid(2.0 * (scores[i] - median) / mad) / (1 + children[i]),
			1e-12);
	/* Equal scores: a MAD of zero counts as one, the weights are 1/2 over
	 * one plus the children. */
	const double flat[] = { 3, 3, 3 };
	const int kids[] = { 0, 1, 4 };
	cuco_parent_weights(CUCO_PARENT_WEIGHTED, 10, 1, flat, kids, 3, w);
	assert_float_equal(w[0], 0.5, 1e-12);
	assert_float_equal(w[1], 0.25, 1e-12);
	assert_float_equal(w[2], 0.1, 1e-12);
	/* A failed (NAN) score counts as the median. */
	const double some[] = { 1, NAN, 3 };
	const int none[] = { 0, 0, 0 };
	cuco_parent_weights(CUCO_PARENT_WEIGHTED, 10, 1, some, none, 3, w);
	assert_float_equal(w[1], 0.5, 1e-12);
	assert_true(w[2] > 0.99 && w[0] < 0.01);
}

static void test_power_law_formula(void **state)
{
	(void)state;
	const double scores[] = { 0.5, 2.0, 1.0, 4.0 };
	const int children[] = { 9, 9, 9, 9 };  /* the power law ignores children */
	double w[4];
	cuco_parent_weights(CUCO_PARENT_POWER_LAW, 10, 1.5, scores, children, 4, w);
	assert_float_equal(w[3], 1.0, 1e-12);             /* rank 1 */
	assert_float_equal(w[1], pow(2, -1.5), 1e-12);    /* rank 2 */
	assert_float_equal(w[2], pow(3, -1.5), 1e-12);
	assert_float_equal(w[0], pow(4, -1.5), 1e-12);
	cuco_parent_weights(CUCO_PARENT_POWER_LAW, 10, 0, scores, children, 4, w);
	for (int i = 0; i < 4; i++)
		assert_float_equal(w[i], 1.0, 1e-12);  /* alpha 0: uniform */
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double sorted_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Against the formulas computed the slow way (sorting, pairwise ranks) on
 * random islands with ties and failures. */
static void test_weights_match_naive(void **state)
{
	(void)state;
	for (int round = 0; round < 400; round++) {
		size_t n = 1 + (size_t)(unit() * 40);
		double scores[40], w[40], v[40];
		int children[40];
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			double u = unit();
			scores[i] = u < 0.1 ? NAN : (double)(int)(u * 8) / 4;  /* many ties */
			children[i] = (int)(unit() * 4);
			if (!isnan(scores[i]))
				v[k++] = scores[i];
		}
		double med = k ? sorted_median(v, k) : 0;
		for (size_t i = 0; i < k; i++)
			v[i] = fabs(v[i] - med);
		double mad = k ? sorted_median(v, k) : 0;
		if (!(mad > 0))
			mad = 1;
		cuco_parent_weights(CUCO_PARENT_WEIGHTED, 5, 1, scores, children, n, w);
		for (size_t i = 0; i < n; i++) {
			double sc = isnan(scores[i]) ? med : scores[i];
			assert_float_equal(w[i], sigmoid(5 * (sc - med) / mad) / (1 + children[i]), 1e-12);
		}
		cuco_parent_weights(CUCO_PARENT_POWER_LAW, 5, 1.3, scores, children, n, w);
		for (size_t i = 0; i < n; i++) {
			double si = isnan(scores[i]) ? med : scores[i];
			size_t rank = 1;
			for (size_t j = 0; j < n; j++) {
				double sj = isnan(scores[j]) ? med : scores[j];
				rank += sj > si || (sj == si && j < i);
			}
			assert_float_equal(w[i], pow((double)rank, -1.3), 1e-12);
		}
	}
}

/* Draw many parents; each frequency must sit within 5 standard errors of
 * its share of the weights. */
static void check_frequencies(const double *w, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += w[i];
	long *hits = calloc(n, sizeof *hits);
	for (int d = 0; d < DRAWS; d++)
		hits[cuco_pick_index(w, n, unit())]++;
	for (size_t i = 0; i < n; i++) {
		double p = w[i] / sum, f = (double)hits[i] / DRAWS;
		double se = sqrt(p * (1 - p) / DRAWS);
		if (fabs(f - p) > 5 * se + 1e-9)
			fail_msg("parent %zu: drawn %.5f of the time, the formula says %.5f", i, f, p);
	}
	free(hits);
}

static void test_selection_distribution(void **state)
{
	(void)state;
	const double scores[] = { 1.00, 1.10, 1.25, 0.90, 1.40, 1.05, NAN, 1.30 };
	const int children[] = { 5, 0, 2, 0, 7, 1, 0, 3 };
	double w[8];
	cuco_parent_weights(CUCO_PARENT_WEIGHTED, 8, 1, scores, children, 8, w);
	check_frequencies(w, 8);
	cuco_parent_weights(CUCO_PARENT_POWER_LAW, 8, 1, scores, children, 8, w);
	check_frequencies(w, 8);
	/* A zero weight is never drawn, even at the edges of [0,1). */
	const double gaps[] = { 0, 1, 0, 2, 0 };
	for (int d = 0; d < 1000; d++) {
		size_t i = cuco_pick_index(gaps, 5, unit());
		assert_true(i == 1 || i == 3);
	}
	assert_int_equal(cuco_pick_index(gaps, 5, 0.0), 1);
	assert_int_equal(cuco_pick_index(gaps, 5, 0.9999999), 3);
}

static void test_explore_exploit_switch(void **state)
{
	(void)state;
	cuco_search_config k;
	cuco_search_config_defaults(&k);
	const cuco_evolve_config *e = &k.evolve;
	/* 40 % of 25 generations: 0..9 explore, 10.. exploit. */
	for (int g = 0; g < 25; g++)
		assert_int_equal(cuco_evolve_exploring(e, g, 25), g < 10);
	/* The operator mix and the temperatures of each phase. */
	const struct { int g; double p[3]; double t[3]; } phase[2] = {
		{ 0, { .70, .15, .15 }, { 0.2, 0.5, 0.8 } },
		{ 24, { .60, .25, .15 }, { 0.0, 0.2, 0.5 } },
	};
	for (int ph = 0; ph < 2; ph++) {
		long ops[CUCO_OP_COUNT] = { 0 }, temps[3] = { 0 };
		for (int d = 0; d < DRAWS; d++) {
			double t;
			int op = cuco_evolve_operator(e, phase[ph].g, 25, unit(), unit(), &t);
			assert_true(op >= 0 && op < CUCO_OP_COUNT);
			ops[op]++;
			int ti = -1;
			for (int i = 0; i < 3; i++)
				if (t == phase[ph].t[i])
					ti = i;
			if (ti < 0)
				fail_msg("phase %d drew temperature %g, not one of its three", ph, t);
			temps[ti]++;
		}
		for (int op = 0; op < CUCO_OP_COUNT; op++) {
			double p = phase[ph].p[op], f = (double)ops[op] / DRAWS;
			if (fabs(f - p) > 5 * sqrt(p * (1 - p) / DRAWS))
				fail_msg("phase %d: operator %d drawn %.4f, configured %.2f", ph, op, f, p);
		}
		for (int i = 0; i < 3; i++)
			assert_true(fabs((double)temps[i] / DRAWS - 1.0 / 3) < 0.01);
	}
}

static int moved_from(const cuco_move *mv, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (mv[i].id == id)
			return (int)i;
	return -1;
}

static void test_migration(void **state)
{
	(void)state;
	/* Island 0: 20 members (the seed, a pinned one, a failure, the best);
	 * island 1: 4; island 2: none. */
	cuco_member m[24];
	for (int i = 0; i < 20; i++)
		m[i] = (cuco_member){ (uint64_t)i + 1, 0, i, 1.0 + 0.01 * i, false };
	m[0].generation = 0;           /* the seed: generation 0 never moves */
	m[5].pinned = true;
	m[7].score = NAN;              /* failed: not correct, never moves */
	m[19].score = 9.0;             /* the island's best: protected */
	for (int i = 20; i < 24; i++)
		m[i] = (cuco_member){ (uint64_t)i + 1, 1, 3, 2.0 + i, false };
	long moves_per_island[3] = { 0 };
	for (uint64_t seed = 1; seed <= 500; seed++) {
		uint64_t rng = seed;
		cuco_move mv[24];
		size_t n = cuco_migration_plan(m, 24, 3, 0.15, &rng, mv);
		/* round(0.15 × 20) = 3 from island 0; max(1, round(0.6)) = 1 from island 1. */
		assert_int_equal(n, 4);
		for (size_t k = 0; k < n; k++) {
			assert_int_not_equal(mv[k].from, mv[k].to);
			assert_true(mv[k].to >= 0 && mv[k].to < 3);
			assert_int_equal(m[mv[k].id - 1].island, mv[k].from);
			assert_int_equal(moved_from(mv, k, mv[k].id), -1);  /* distinct */
			moves_per_island[mv[k].from]++;
		}
		assert_int_equal(moved_from(mv, n, 1), -1);   /* generation 0 */
		assert_int_equal(moved_from(mv, n, 6), -1);   /* pinned */
		assert_int_equal(moved_from(mv, n, 8), -1);   /* failed */
		assert_int_equal(moved_from(mv, n, 20), -1);  /* island 0's best */
		assert_int_equal(moved_from(mv, n, 24), -1);  /* island 1's best */
	}
	assert_int_equal(moves_per_island[0], 1500);
	assert_int_equal(moves_per_island[1], 500);
	/* One island: nowhere to go. */
	uint64_t rng = 7;
	cuco_move mv[24];
	assert_int_equal(cuco_migration_plan(m, 20, 1, 0.5, &rng, mv), 0);
}

static void test_normalize(void **state)
{
	(void)state;
	const char *a = "int f(int x)\n{\n\treturn x + 1; // one more\n}\n";
	const char *b = "int f(int x) {   /* the same,\n   reformatted */ return x + 1;\n}";
	const char *c = "int f(int x)\n{\n\treturn x + 2;\n}\n";
	cuco_buf na = { 0 }, nb = { 0 }, nc = { 0 };
	cuco_text_normalize(a, strlen(a), &na);
	cuco_text_normalize(b, strlen(b), &nb);
	cuco_text_normalize(c, strlen(c), &nc);
	assert_string_equal(na.data, "int f(int x) { return x + 1; }");
	assert_string_equal(na.data, nb.data);
	assert_string_not_equal(na.data, nc.data);
	cuco_buf_free(&na);
	cuco_buf_free(&nb);
	cuco_buf_free(&nc);
}

/* A candidate is its source and its directive: a reformatted source with
 * the same directive (knobs in another order) is a duplicate; the same
 * source with another directive is not. */
static void test_duplicate_key(void **state)
{
	(void)state;
	const char *a = "int f(int x)\n{\n\treturn x + 1; // one more\n}\n";
	const char *b = "int f(int x) {   /* the same */ return x + 1;\n}";
	cuco_directive d, e, other;
	memset(&d, 0, sizeof d);
	cuco_directive_set(&d, "backend", "rma");
	cuco_directive_set(&d, "tile", "64");
	cuco_directive_set(&d, "unroll", "4");
	memset(&e, 0, sizeof e);
	cuco_directive_set(&e, "unroll", "4");
	cuco_directive_set(&e, "backend", "rma");
	cuco_directive_set(&e, "tile", "64");
	other = d;
	cuco_directive_set(&other, "backend", "shm");
	char ka[CUCO_HASH_LEN + 1], kb[CUCO_HASH_LEN + 1], kc[CUCO_HASH_LEN + 1];
	search_known_key(a, strlen(a), &d, ka);
	search_known_key(b, strlen(b), &e, kb);
	search_known_key(a, strlen(a), &other, kc);
	assert_string_equal(ka, kb);
	assert_string_not_equal(ka, kc);
	search_known k = { 0 };
	search_known_add(&k, ka, 0);         /* in flight */
	assert_non_null(search_known_find(&k, kb));
	assert_null(search_known_find(&k, kc));
	search_known_add(&k, ka, 42);        /* it landed */
	assert_int_equal(search_known_find(&k, ka)->id, 42);
	assert_int_equal(k.n, 1);
	search_known_free(&k);
}

static void test_knobs(void **state)
{
	(void)state;
	cuco_search_config k;
	cuco_search_config_defaults(&k);
	assert_int_equal(k.evolve.islands, 2);
	assert_float_equal(k.evolve.explore_fraction, 0.4, 1e-12);
	assert_float_equal(k.evolve.lambda, 8.0, 1e-12);
	assert_int_equal(k.evolve.parent_rule, CUCO_PARENT_WEIGHTED);
	assert_int_equal(k.evolve.meta_interval, 8);
	assert_int_equal(k.evolve.meta_max, 5);
	assert_true(k.evolve.fastpath);
	assert_float_equal(k.beam.positive, 1.04, 1e-12);
	assert_float_equal(k.beam.negative, 1.15, 1e-12);
	assert_int_equal(k.beam.max_new, 8);
	assert_int_equal(k.evolve.migration_interval, 8);
	assert_float_equal(k.evolve.migration_rate, 0.15, 1e-12);
	assert_int_equal(k.beam.width, 6);
	assert_int_equal(k.beam.plans, 12);
	assert_int_equal(k.beam.samples, 2);
	assert_int_equal(k.beam.iterations, 15);
	assert_int_equal(k.beam.capacity, 16);
	assert_int_equal(k.fastpath.stage_a_max, 5);
	assert_int_equal(k.fastpath.stage_b_max, 10);
	cuco_err err = { 0 };
	assert_int_equal(cuco_search_config_set(&k, "evolve.explore_p", "0.5, 0.25,0.25", &err),
		CUCO_OK);
	assert_float_equal(k.evolve.explore_p[CUCO_OP_DIFF], 0.25, 1e-12);
	assert_int_equal(cuco_search_config_set(&k, "evolve.parent_selection", "power_law", &err),
		CUCO_OK);
	assert_int_equal(k.evolve.parent_rule, CUCO_PARENT_POWER_LAW);
	assert_int_equal(cuco_search_config_set(&k, "evolve.islands", "0", &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "evolve.islands = 0"));
	assert_int_equal(cuco_search_config_set(&k, "evolve.islands", "2.5", &err), CUCO_EDATA);
	assert_int_equal(cuco_search_config_set(&k, "beam.nope", "1", &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "beam.nope"));

	/* The file, read whole: [model] sections and top keys are the LLM client's. */
	char path[] = "/tmp/cuco-test-knobs-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "retries = 2\n[model m]\nmodel = x\n[evolve]\nislands = 4  # four\n"
		"fastpath = false\n[beam]\nwidth = 3\n[model n]\nmodel = y\n";
	assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	cuco_config *file = malloc(sizeof *file);  /* the knobs are read with the rest */
	cuco_config_defaults(file);
	assert_int_equal(cuco_config_load(path, file, &err), CUCO_OK);
	k = file->search;
	assert_int_equal(k.evolve.islands, 4);
	assert_false(k.evolve.fastpath);
	assert_int_equal(k.beam.width, 3);
	FILE *f = fopen(path, "a");
	fputs("[beam]\nplans = many\n", f);
	fclose(f);
	cuco_config_defaults(file);
	assert_int_equal(cuco_config_load(path, file, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, ":12: beam.plans = many"));
	/* A knob given twice, even in a second [evolve], is refused: the second would win. */
	assert_int_equal(truncate(path, (off_t)(sizeof text - 1)), 0);
	f = fopen(path, "a");
	fputs("[evolve]\nislands = 2\n", f);
	fclose(f);
	cuco_config_defaults(file);
	assert_int_equal(cuco_config_load(path, file, &err), CUCO_EDATA);
	if (!strstr(err.msg, ":12: evolve.islands: given twice"))
		fail_msg("%s", err.msg);
	free(file);
	unlink(path);
}

static void test_directive_nearest(void **state)
{
	(void)state;
	char path[1200];
	const char *w = getenv("CUCO_WORKLOADS");
	snprintf(path, sizeof path, "%s/gemm-allgather", w ? w : "workloads");
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(path, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_directive base, out;
	cuco_directive_default(wl, &base);  /* lsa/cta/overlap/barrier/1 */
	assert_true(cuco_directive_nearest(wl, &base, "backend", "gin", &out));
	assert_string_equal(out.backend, "gin");
	assert_string_equal(out.issuer, "cta");  /* nothing else had to change */
	assert_string_equal(out.sync, "barrier");
	/* GIN forbids warp issuers and flags: both must change, nothing more. */
	cuco_directive_set(&base, "issuer", "warp");
	cuco_directive_set(&base, "sync", "flag");
	cuco_directive_set(&base, "placement", "pipelined");
	assert_true(cuco_directive_nearest(wl, &base, "backend", "gin", &out));
	assert_true(cuco_directive_valid(wl, &out, NULL));
	assert_string_equal(out.backend, "gin");
	assert_string_equal(out.issuer, "cta");
	assert_string_equal(out.sync, "barrier");
	assert_string_equal(out.placement, "pipelined");
	assert_string_equal(out.granularity, base.granularity);
	assert_false(cuco_directive_nearest(wl, &base, "backend", "nvshmem", &out));
	assert_false(cuco_directive_nearest(wl, &base, "colour", "gin", &out));
	cuco_workload_free(wl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weighted_formula),
		cmocka_unit_test(test_power_law_formula),
		cmocka_unit_test(test_weights_match_naive),
		cmocka_unit_test(test_selection_distribution),
		cmocka_unit_test(test_explore_exploit_switch),
		cmocka_unit_test(test_migration),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_knobs),
		cmocka_unit_test(test_directive_nearest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
