/* test_tune.c — the directive tuner on the toy fixture's design space:
 * 3 backends × 2 issuers × 2 placements × 2 syncs × 4 chunk sizes = 96
 * points, of which the constraint (no msg with flag) forbids 16. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/strategies.h"

#define SPACE 96
#define VALID 80

static cuco_workload *load_toy(void)
{
	char path[1024];
	const char *root = getenv("CUCO_SOURCE_ROOT");
	snprintf(path, sizeof path, "%s/tests/agents/fixtures/toy", root ? root : ".");
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(path, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return wl;
}

/* The fixture's modelled objective: speedup over a 1000 us baseline,
 * NAN where the seed gives a wrong answer (shm with fence). */
static double toy_score(const cuco_directive *d)
{
	double us = 1000;
	us *= !strcmp(d->backend, "rma") ? 0.8 : !strcmp(d->backend, "shm") ? 0.7 : 1.0;
	us *= !strcmp(d->issuer, "several") ? 0.9 : 1.0;
	us *= !strcmp(d->placement, "interleave") ? 0.85 : 1.0;
	int chunks = atoi(d->granularity);
	us *= chunks == 4 ? 0.8 : chunks == 2 ? 0.9 : chunks == 8 ? 0.95 : 1.0;
	if (!strcmp(d->backend, "shm") && !strcmp(d->sync, "fence"))
		return NAN;
	return 1000 / us;
}

static const double toy_best = 1000 / (1000 * 0.7 * 0.9 * 0.85 * 0.8);

static int differences(const cuco_directive *a, const cuco_directive *b)
{
	return !!strcmp(a->backend, b->backend) + !!strcmp(a->issuer, b->issuer) +
		!!strcmp(a->placement, b->placement) + !!strcmp(a->sync, b->sync) +
		!!strcmp(a->granularity, b->granularity);
}

static cuco_tuner *new_tuner(const cuco_workload *wl, cuco_tuner_algo algo, uint64_t seed,
	int horizon)
{
	cuco_tuner *t = NULL;
	cuco_err err = { 0 };
	if (cuco_tuner_new(wl, algo, seed, horizon, &t, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return t;
}

/* Every algorithm proposes each valid point once, never an invalid one,
 * and then says the space is exhausted. */
static void test_exhausts_without_repeats(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	for (int algo = CUCO_TUNER_RANDOM; algo <= CUCO_TUNER_ILS; algo++) {
		cuco_tuner *t = new_tuner(wl, (cuco_tuner_algo)algo, 7, 100);
		assert_int_equal(cuco_tuner_space_size(t), SPACE);
		cuco_directive base, d;
		cuco_directive_default(wl, &base);
		char keys[VALID][256];
		int n = 0;
		uint64_t parent;
		while (cuco_tuner_propose(t, &base, &d, &parent) == CUCO_OK) {
			assert_true(n < VALID);
			assert_true(cuco_directive_valid(wl, &d, NULL));
			assert_false(!strcmp(d.backend, "msg") && !strcmp(d.sync, "flag"));
			cuco_tuner_key(t, &d, keys[n], sizeof keys[n]);
			for (int i = 0; i < n; i++)
				assert_string_not_equal(keys[i], keys[n]);
			assert_true(cuco_tuner_seen(t, &d));
			cuco_tuner_observe(t, &d, (uint64_t)n + 10, toy_score(&d));
			n++;
		}
		assert_int_equal(n, VALID);
		assert_int_equal(cuco_tuner_seen_count(t), VALID);
		cuco_tuner_free(t);
	}
	cuco_workload_free(wl);
}

/* Random sampling spreads over the space: in its first 20 draws every
 * value of every enum dimension shows up. */
static void test_random_covers(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	cuco_tuner *t = new_tuner(wl, CUCO_TUNER_RANDOM, 3, 0);
	cuco_directive base, d;
	cuco_directive_default(wl, &base);
	int backends[3] = { 0 }, chunks[9] = { 0 };
	uint64_t parent = 1;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
		assert_int_equal(parent, 0);  /* drawn, not mutated */
		backends[!strcmp(d.backend, "rma") + 2 * !strcmp(d.backend, "shm")]++;
		chunks[atoi(d.granularity)]++;
	}
	for (int i = 0; i < 3; i++)
		assert_true(backends[i] > 0);
	assert_true(chunks[1] && chunks[2] && chunks[4] && chunks[8]);
	cuco_tuner_free(t);
	cuco_workload_free(wl);
}

static void test_accept_prob(void **state)
{
	(void)state;
	assert_true(cuco_tune_accept_prob(1.0, 1.2, 0.1) == 1.0);
	assert_true(cuco_tune_accept_prob(1.0, 1.0, 0.1) == 1.0);
	assert_true(fabs(cuco_tune_accept_prob(1.0, 0.9, 0.1) - exp(-1.0)) < 1e-12);
	assert_true(cuco_tune_accept_prob(2.0, 1.0, 1e-3) < 1e-100);
	assert_true(cuco_tune_accept_prob(1.0, NAN, 10) == 0.0);
	assert_true(cuco_tune_accept_prob(NAN, 0.5, 1e-3) == 1.0);
	assert_true(cuco_tune_accept_prob(1.0, 0.5, 0) == 0.0);
}

/* Annealing near the end of its schedule: a worse result is refused (the
 * next move starts from the same parent), a better one is taken. */
static void test_anneal_moves(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	cuco_tuner *t = new_tuner(wl, CUCO_TUNER_ANNEAL, 5, 1);  /* cold at once */
	cuco_directive base, d;
	cuco_directive_default(wl, &base);
	cuco_tuner_observe(t, &base, 1, 1.0);
	uint64_t parent = 0;
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 1);
	assert_int_equal(differences(&d, &base), 1);
	cuco_tuner_observe(t, &d, 2, 0.5);
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 1);
	cuco_tuner_observe(t, &d, 3, 2.0);
	cuco_directive moved = d;
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 3);
	assert_int_equal(differences(&d, &moved), 1);
	/* A rejected candidate is never a parent again. */
	cuco_tuner_forbid(t, 3);
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 1);
	cuco_tuner_free(t);
	cuco_workload_free(wl);
}

/* Iterated local search: first improvement moves at once; when every
 * one-step neighbour is worse it perturbs several dimensions at a time. */
static void test_ils_moves_and_kicks(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	cuco_tuner *t = new_tuner(wl, CUCO_TUNER_ILS, 9, 0);
	cuco_directive base, d;
	cuco_directive_default(wl, &base);
	cuco_tuner_observe(t, &base, 1, 1.0);
	uint64_t parent = 0, id = 2;
	/* The seed (msg/one/after/fence/1) has 2+1+1+3 valid neighbours
	 * (msg with flag is forbidden); all worse keeps it the parent. */
	for (int i = 0; i < 7; i++) {
		assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
		assert_int_equal(parent, 1);
		assert_int_equal(differences(&d, &base), 1);
		cuco_tuner_observe(t, &d, id++, 0.5);
	}
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 1);
	assert_true(differences(&d, &base) >= 2);  /* the kick */
	cuco_tuner_observe(t, &d, 100, 0.4);      /* taken although worse */
	cuco_directive kicked = d;
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 100);
	assert_int_equal(differences(&d, &kicked), 1);
	cuco_tuner_observe(t, &d, 101, 3.0);       /* better: moves at once */
	cuco_directive better = d;
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 101);
	assert_int_equal(differences(&d, &better), 1);
	cuco_tuner_free(t);
	cuco_workload_free(wl);
}

/* In evolve, a model's child can land on a point of the design space a
 * scored candidate holds (its directive the seed's, its code another). In
 * a Qwen run (this stop) such a child, refused as suspect, took the seed's
 * place at that point, and the tuner made a child of it: a suspect is
 * never a parent, nor is a failed program. The point keeps its best; the
 * same candidate seen again (its status moved) still updates it. */
static void test_point_keeps_its_best(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	cuco_tuner *t = new_tuner(wl, CUCO_TUNER_ILS, 9, 0);
	cuco_directive base, d;
	cuco_directive_default(wl, &base);
	cuco_tuner_observe(t, &base, 2, 1.2);
	cuco_tuner_observe(t, &base, 4, NAN);   /* another code at the seed's point, failed */
	cuco_tuner_observe(t, &base, 5, 0.9);   /* another, worse */
	uint64_t parent = 0;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
		assert_int_equal(parent, 2);
		cuco_tuner_observe(t, &d, 10 + (uint64_t)i, 0.5);
	}
	cuco_tuner_observe(t, &base, 6, 1.5);   /* better: it holds the point now */
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_int_equal(parent, 6);
	cuco_tuner_observe(t, &base, 6, NAN);   /* the same one, rejected */
	cuco_tuner_forbid(t, 6);
	assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
	assert_true(parent != 6);
	cuco_tuner_free(t);
	cuco_workload_free(wl);
}

/* A resumed tuner replays the history and never proposes it again. */
static void test_replay_rebuilds_seen(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	cuco_directive base, d, done[30];
	cuco_directive_default(wl, &base);
	uint64_t parent;
	cuco_tuner *first = new_tuner(wl, CUCO_TUNER_ANNEAL, 11, 30);
	cuco_tuner_observe(first, &base, 1, 1.0);
	for (int i = 0; i < 30; i++) {
		assert_int_equal(cuco_tuner_propose(first, &base, &done[i], &parent), CUCO_OK);
		cuco_tuner_observe(first, &done[i], (uint64_t)i + 2, toy_score(&done[i]));
	}
	cuco_tuner_free(first);

	cuco_tuner *again = new_tuner(wl, CUCO_TUNER_ANNEAL, 11, 30);
	cuco_tuner_observe(again, &base, 1, 1.0);
	for (int i = 0; i < 30; i++)
		cuco_tuner_observe(again, &done[i], (uint64_t)i + 2, toy_score(&done[i]));
	int fresh = 0;
	while (cuco_tuner_propose(again, &base, &d, &parent) == CUCO_OK) {
		for (int i = 0; i < 30; i++)
			assert_true(differences(&d, &done[i]) > 0);
		assert_true(differences(&d, &base) > 0);
		cuco_tuner_observe(again, &d, 1000 + (uint64_t)fresh, toy_score(&d));
		fresh++;
	}
	assert_int_equal(fresh, VALID - 31);
	cuco_tuner_free(again);
	cuco_workload_free(wl);
}

/* On the modelled objective with 30 evaluations, over 20 seeds: both local
 * searches do better on average than random sampling (the reference), and
 * annealing, the one meant for small budgets, nearly always gets within 5 %
 * of the optimum. */
static void test_searches_beat_random(void **state)
{
	(void)state;
	cuco_workload *wl = load_toy();
	cuco_directive base, d;
	cuco_directive_default(wl, &base);
	double mean[3] = { 0 };
	int near[3] = { 0 };
	for (int algo = CUCO_TUNER_RANDOM; algo <= CUCO_TUNER_ILS; algo++)
		for (uint64_t seed = 1; seed <= 20; seed++) {
			cuco_tuner *t = new_tuner(wl, (cuco_tuner_algo)algo, seed, 30);
			cuco_tuner_observe(t, &base, 1, 1.0);
			double best = 1.0;
			uint64_t parent;
			for (int i = 0; i < 30; i++) {
				assert_int_equal(cuco_tuner_propose(t, &base, &d, &parent), CUCO_OK);
				double s = toy_score(&d);
				cuco_tuner_observe(t, &d, (uint64_t)i + 2, s);
				if (s > best)
					best = s;
			}
			mean[algo] += best / 20;
			near[algo] += best >= 0.95 * toy_best;
			cuco_tuner_free(t);
		}
	if (!(mean[CUCO_TUNER_ANNEAL] > mean[CUCO_TUNER_RANDOM] &&
			mean[CUCO_TUNER_ILS] > mean[CUCO_TUNER_RANDOM] && near[CUCO_TUNER_ANNEAL] >= 18))
		fail_msg("mean best random %.3f anneal %.3f ils %.3f; anneal near the optimum %d/20",
			mean[0], mean[1], mean[2], near[CUCO_TUNER_ANNEAL]);
	cuco_workload_free(wl);
}

static void test_algo_names(void **state)
{
	(void)state;
	cuco_tuner_algo a;
	assert_int_equal(cuco_tuner_algo_parse("ils", &a), CUCO_OK);
	assert_int_equal(a, CUCO_TUNER_ILS);
	assert_string_equal(cuco_tuner_algo_name(CUCO_TUNER_ANNEAL), "anneal");
	assert_int_equal(cuco_tuner_algo_parse("genetic", &a), CUCO_EDATA);
	assert_non_null(cuco_strategy_find("tune"));
	assert_null(cuco_strategy_find("nope"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exhausts_without_repeats),
		cmocka_unit_test(test_random_covers),
		cmocka_unit_test(test_accept_prob),
		cmocka_unit_test(test_anneal_moves),
		cmocka_unit_test(test_ils_moves_and_kicks),
		cmocka_unit_test(test_point_keeps_its_best),
		cmocka_unit_test(test_replay_rebuilds_seen),
		cmocka_unit_test(test_searches_beat_random),
		cmocka_unit_test(test_algo_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
