/* test_stats.c — the paired comparison's interval, decision and text:
 * exact values from the signed-rank distribution's table, the false-crown
 * rate under "no difference" on simulated noisy machines, power on a real
 * speedup, and that stopping early never changes a decision. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"

static uint64_t rng_state;

static uint64_t next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(void)
{
	return (double)(next() >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
	double u = uniform(), v = uniform();
	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* A machine whose launches fall in a slow mode now and then (the 2-core
 * VM's 8 ms / 12 ms baseline): each side of a round is its own launch. */
static double launch_noise(void)
{
	return 0.03 * gauss() + (uniform() < 0.4 ? log(1.4) : 0);
}

/* One round's ratio, reference over candidate, for a true speedup s. */
static double round_ratio(double s)
{
	return exp(log(s) + launch_noise() - launch_noise());
}

/* n rounds of a candidate with true speedup s. */
static void draw_rounds(double *r, int n, double s)
{
	for (int i = 0; i < n; i++)
		r[i] = round_ratio(s);
}

static void test_table_values(void **state)
{
	(void)state;
	/* d = 0.01 .. 0.10: the 9th smallest Walsh average is 0.03, and n = 10
	 * puts P(T <= 8) = 25/1024 (the textbook's critical value 8). */
	double r[10];
	for (int i = 0; i < 10; i++)
		r[i] = exp(0.01 * (i + 1));
	cuco_interval iv;
	cuco_paired_interval(r, 10, 0.025, &iv);
	assert_int_equal(iv.rounds, 10);
	assert_true(fabs(log(iv.lo) - 0.03) < 1e-12);
	assert_true(fabs(log(iv.hi) - 0.08) < 1e-12);
	assert_true(fabs(iv.confidence - (1 - 2 * 25.0 / 1024)) < 1e-12);
	assert_true(fabs(log(iv.value) - 0.055) < 1e-12);  /* Hodges-Lehmann */
	assert_true(cuco_paired_faster(&iv, 0.025));
	/* Further into the tail: P(T <= 5) = 10/1024, the 6th average 0.025. */
	cuco_paired_interval(r, 10, 0.012, &iv);
	assert_true(fabs(log(iv.lo) - 0.025) < 1e-12);
	assert_true(fabs(iv.confidence - (1 - 2 * 10.0 / 1024)) < 1e-12);
}

static void test_too_few_rounds(void **state)
{
	(void)state;
	double r[3] = { 1.5, 1.6, 1.7 };
	cuco_interval iv;
	cuco_paired_interval(r, 3, 0.01, &iv);
	/* The widest interval there is, at the 75 % it has: never a crown. */
	assert_true(fabs(iv.lo - 1.5) < 1e-12 && fabs(iv.hi - 1.7) < 1e-12);
	assert_true(fabs(iv.confidence - 0.75) < 1e-12);
	assert_false(cuco_paired_faster(&iv, 0.01));
	cuco_paired_interval(r, 1, 0.01, &iv);
	assert_true(isnan(iv.lo) && isnan(iv.hi) && fabs(iv.value - 1.5) < 1e-12);
	assert_false(cuco_paired_faster(&iv, 0.01));
	cuco_paired_interval(r, 0, 0.01, &iv);
	assert_true(isnan(iv.value));
	assert_int_equal(cuco_paired_min_rounds(0.01), 7);
	assert_int_equal(cuco_paired_min_rounds(1.0 / 512), 9);
	assert_int_equal(cuco_paired_min_rounds(0.5), 1);
}

static void test_alpha_shares(void **state)
{
	(void)state;
	double sum = 0;
	for (int j = 1; j <= 100000; j++)
		sum += cuco_alpha_share(0.01, j);
	assert_true(sum < 0.01 && sum > 0.0099);
	assert_true(fabs(cuco_alpha_share(0.01, 1) - 0.005) < 1e-15);
	assert_true(fabs(cuco_alpha_share(0.01, 3) - 0.01 / 12) < 1e-15);
}

/* Under "no difference" (A/A), whatever the noise, a test at alpha passes
 * at most alpha of the time: the random order makes it exact. */
static void test_false_crown_rate(void **state)
{
	(void)state;
	rng_state = 12;
	const int trials = 20000, n = 12;
	int crowned05 = 0, crowned01 = 0;
	for (int t = 0; t < trials; t++) {
		double r[12];
		draw_rounds(r, n, 1.0);
		cuco_interval iv;
		cuco_paired_interval(r, n, 0.05, &iv);
		crowned05 += cuco_paired_faster(&iv, 0.05);
		cuco_paired_interval(r, n, 0.01, &iv);
		crowned01 += cuco_paired_faster(&iv, 0.01);
	}
	/* Exact levels at n = 12: P(T <= 17) = 0.0461, P(T <= 9) = 0.0081;
	 * the bounds allow four standard errors of the simulation. */
	assert_true(crowned05 <= trials * (0.0461 + 4 * sqrt(0.0461 / trials)));
	assert_true(crowned05 >= trials * (0.0461 - 4 * sqrt(0.0461 / trials)));
	assert_true(crowned01 <= trials * (0.0081 + 4 * sqrt(0.0081 / trials)));
}

/* A real 1.25x on the same moody machine is found at a strict level. */
static void test_power(void **state)
{
	(void)state;
	rng_state = 99;
	const int trials = 2000, n = 16;
	int found = 0;
	for (int t = 0; t < trials; t++) {
		double r[16];
		draw_rounds(r, n, 1.25);
		cuco_interval iv;
		cuco_paired_interval(r, n, 0.0025, &iv);
		found += cuco_paired_faster(&iv, 0.0025);
		assert_true(iv.lo <= iv.value && iv.value <= iv.hi);
	}
	assert_true(found > trials * 0.6);
}

/* Stopping at a futile prefix never loses a crown the full run would give. */
static void test_futility_is_safe(void **state)
{
	(void)state;
	rng_state = 5;
	const int n_max = 12;
	const double alpha = 0.005;
	int stopped = 0;
	for (int t = 0; t < 5000; t++) {
		double r[12];
		draw_rounds(r, n_max, t % 2 ? 1.0 : 1.1);
		cuco_interval full;
		cuco_paired_interval(r, n_max, alpha, &full);
		for (int k = 1; k <= n_max; k++)
			if (cuco_paired_futile(r, k, n_max, alpha)) {
				assert_false(cuco_paired_faster(&full, alpha));
				stopped += k < n_max;
				break;
			}
	}
	assert_true(stopped > 1000);  /* and it does stop, mostly under A/A */
	double r[2] = { 2, 2 };
	assert_true(cuco_paired_futile(r, 2, 5, 0.001));  /* 5 rounds can never reach 0.001 */
}

static void test_verdicts(void **state)
{
	(void)state;
	cuco_interval iv = { .value = 1.3, .lo = 1.2, .hi = 1.4, .confidence = 0.999, .rounds = 12 };
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_FASTER);
	iv = (cuco_interval){ .value = 0.7, .lo = 0.6, .hi = 0.8, .confidence = 0.999, .rounds = 12 };
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_SLOWER);
	iv = (cuco_interval){ .value = 1.0, .lo = 0.95, .hi = 1.06, .confidence = 0.999, .rounds = 12 };
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_NOISE);
	iv.lo = 0.7;
	iv.hi = 1.4;
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_INCONCLUSIVE);
	/* Above 1 but short of the confidence asked: no answer. */
	iv = (cuco_interval){ .value = 1.8, .lo = 1.7, .hi = 1.9, .confidence = 0.875, .rounds = 4 };
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_INCONCLUSIVE);
	iv = (cuco_interval){ .value = 1.0, .lo = 0.98, .hi = 1.03, .confidence = 0.875, .rounds = 4 };
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_NOISE);
	iv.rounds = 1;
	assert_int_equal(cuco_paired_verdict(&iv, 0.0025, 0.25), CUCO_VERDICT_NONE);
	cuco_verdict v;
	for (int i = 0; i < CUCO_VERDICT_COUNT; i++) {
		assert_int_equal(cuco_verdict_parse(cuco_verdict_name((cuco_verdict)i), &v), CUCO_OK);
		assert_int_equal(v, i);
	}
	assert_int_equal(cuco_verdict_parse("maybe", &v), CUCO_EDATA);
}

static void test_text(void **state)
{
	(void)state;
	char buf[64];
	cuco_speedup_text(1.271, 1.18, 1.364, 12, false, buf, sizeof buf);
	assert_string_equal(buf, "1.27x [1.18\u20131.36]");
	cuco_speedup_text(1.271, 1.18, 1.364, 12, true, buf, sizeof buf);
	assert_string_equal(buf, "1.27x [1.18-1.36]");
	cuco_speedup_text(1.271, NAN, NAN, 1, false, buf, sizeof buf);
	assert_string_equal(buf, "1.27x");
	cuco_speedup_text(1.271, 0, 0, 1, false, buf, sizeof buf);  /* a screening: no interval */
	assert_string_equal(buf, "1.27x");
	cuco_speedup_text(NAN, NAN, NAN, 0, false, buf, sizeof buf);
	assert_string_equal(buf, "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_values),
		cmocka_unit_test(test_too_few_rounds),
		cmocka_unit_test(test_alpha_shares),
		cmocka_unit_test(test_false_crown_rate),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_futility_is_safe),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
