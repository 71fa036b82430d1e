/* stats.c — paired comparisons: the interval of a speedup measured in
 * rounds, the decision it supports, and how it is written.
 *
 * Round i timed the reference (the baseline, or the best so far) and the
 * candidate one right after the other, in an order drawn at random, and
 * gives ratio r_i = reference / candidate. On d_i = log r_i the interval is
 * the one that inverts Wilcoxon's signed-rank test: with the n(n+1)/2 Walsh
 * averages (d_i + d_j)/2, i <= j, sorted, [W_(k), W_(N+1-k)] where k is the
 * largest rank with P(T <= k-1) <= alpha for the signed-rank statistic T of
 * n rounds under "no difference". The estimate is their median (Hodges and
 * Lehmann). Why this and not a bootstrap: under "no difference" the random
 * order makes each d_i's sign a fair coin whatever the load of the machine
 * does to its size, so T's null distribution is known exactly at any n —
 * and a crown needs confidence far out in the tail (docs/trust.md), where a
 * bootstrap of 10-20 rounds promises more coverage than it has.
 */
#include "core.h"
#include "env.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WALSH_MAX (CUCO_PAIRED_MAX * (CUCO_PAIRED_MAX + 1) / 2)

/* P(T <= w) for w = 0..N under the null, n rounds: the number of subsets
 * of {1..n} summing to w, over 2^n. Doubles hold the counts exactly enough
 * (2^64 at most) for tail probabilities. */
static void null_cdf(int n, double *cdf)
{
	int total = n * (n + 1) / 2;
	for (int w = 0; w <= total; w++)
		cdf[w] = w == 0;
	for (int r = 1; r <= n; r++)
		for (int w = r * (r + 1) / 2; w >= r; w--)
			cdf[w] += cdf[w - r];
	double scale = ldexp(1.0, -n), sum = 0;
	for (int w = 0; w <= total; w++) {
		sum += cdf[w] * scale;
		cdf[w] = sum;
	}
}

/* The largest k >= 1 with P(T <= k-1) <= alpha (1 when even k = 1 is too
 * likely: too few rounds for alpha); *tail gets P(T <= k-1). */
static int lower_rank(int n, double alpha, double *tail)
{
	static _Thread_local double cdf[WALSH_MAX + 1];
	null_cdf(n, cdf);
	int k = 1;
	while (k < n * (n + 1) / 2 && cdf[k] <= alpha)
		k++;
	*tail = cdf[k - 1];
	return k;
}

int cuco_paired_min_rounds(double alpha)
{
	for (int n = 1; n <= CUCO_PAIRED_MAX; n++)
		if (ldexp(1.0, -n) <= alpha)
			return n;
	return CUCO_PAIRED_MAX + 1;
}

double cuco_alpha_share(double alpha, int j)
{
	return j < 1 ? alpha : alpha / ((double)j * (j + 1));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The sorted Walsh averages of the log-ratios; returns how many. */
static int walsh(const double *ratio, int n, double *out)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		for (int j = i; j < n; j++)
			out[m++] = (log(ratio[i]) + log(ratio[j])) / 2;
	qsort(out, (size_t)m, sizeof *out, cmp_double);
	return m;
}

void cuco_paired_interval(const double *ratio, int n, double alpha, cuco_interval *out)
{
	static _Thread_local double w[WALSH_MAX];
	if (n > CUCO_PAIRED_MAX)
		n = CUCO_PAIRED_MAX;
	*out = (cuco_interval){ .value = NAN, .lo = NAN, .hi = NAN, .rounds = n };
	if (n < 1)
		return;
	int m = walsh(ratio, n, w);
	out->value = exp(m % 2 ? w[m / 2] : (w[m / 2 - 1] + w[m / 2]) / 2);
	if (n < 2)
		return;
	double tail;
	int k = lower_rank(n, alpha, &tail);
	out->lo = exp(w[k - 1]);
	out->hi = exp(w[m - k]);
	out->confidence = 1 - 2 * tail;
}

bool cuco_paired_faster(const cuco_interval *iv, double alpha)
{
	/* Too few rounds for alpha widen the interval but not its confidence. */
	return iv->rounds >= 2 && iv->lo > 1 && iv->confidence >= 1 - 2 * alpha - 1e-12;
}

bool cuco_paired_futile(const double *ratio, int n, int n_max, double alpha)
{
	if (n_max > CUCO_PAIRED_MAX)
		n_max = CUCO_PAIRED_MAX;
	if (n_max < cuco_paired_min_rounds(alpha) || n > n_max)
		return true;
	double tail;
	int k = lower_rank(n_max, alpha, &tail);
	/* The lower bound is the k-th smallest Walsh average of all n_max
	 * rounds; more rounds only add averages, so k of them at or below 0
	 * already keep it there. */
	int low = 0;
	for (int i = 0; i < n; i++)
		for (int j = i; j < n; j++)
			low += log(ratio[i]) + log(ratio[j]) <= 0;
	return low >= k;
}

static const char *const verdict_names[CUCO_VERDICT_COUNT] = {
#define X(e, name) name,
	CUCO_VERDICTS(X)
#undef X
};

const char *cuco_verdict_name(cuco_verdict v)
{
	return v >= 0 && v < CUCO_VERDICT_COUNT ? verdict_names[v] : "";
}

int cuco_verdict_parse(const char *name, cuco_verdict *out)
{
	int v = cuco_name_index(verdict_names, CUCO_VERDICT_COUNT, name);
	if (v < 0)
		return CUCO_EDATA;
	*out = (cuco_verdict)v;
	return CUCO_OK;
}

cuco_verdict cuco_paired_verdict(const cuco_interval *iv, double alpha, double wide)
{
	if (iv->rounds < 2 || isnan(iv->lo))
		return CUCO_VERDICT_NONE;
	if (cuco_paired_faster(iv, alpha))
		return CUCO_VERDICT_FASTER;
	cuco_interval flipped = { .lo = 1 / iv->hi, .rounds = iv->rounds, .confidence = iv->confidence };
	if (cuco_paired_faster(&flipped, alpha))
		return CUCO_VERDICT_SLOWER;
	/* Noise: 1 inside a narrow interval. Wide, or 1 outside it at less
	 * confidence than asked (too few rounds), is no answer either way. */
	bool narrow = iv->hi / iv->lo <= 1 + wide, holds_one = iv->lo <= 1 && iv->hi >= 1;
	return narrow && holds_one ? CUCO_VERDICT_NOISE : CUCO_VERDICT_INCONCLUSIVE;
}

bool cuco_utf8_locale(void)
{
	const cuco_env *env = cuco_env_get();
	const char *vars[] = { env->lc_all, env->lc_ctype, env->lang };  /* in POSIX's order */
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = vars[i];
		if (v && *v)
			return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
	}
	return false;
}

bool cuco_speedup_elsewhere(double speedup, double latency_us, double baseline_us)
{
	double implied = speedup * latency_us;
	return isfinite(implied) && isfinite(baseline_us) && baseline_us > 0 &&
		fabs(implied - baseline_us) / baseline_us > 0.05;
}

void cuco_speedup_text(double value, double lo, double hi, int rounds, bool ascii, char *buf,
	size_t size)
{
	if (!isfinite(value))
		snprintf(buf, size, "-");
	else if (rounds < 2 || !isfinite(lo) || !isfinite(hi))
		snprintf(buf, size, "%.2fx", value);
	else
		snprintf(buf, size, "%.2fx [%.2f%s%.2f]", value, lo, ascii ? "-" : "\u2013", hi);
}
