/* engine_retime.c — the end of a run: the best few re-timed in paired
 * (baseline, candidate) rounds, each candidate's on the slot it was
 * measured on. */
#include "agents/engine_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REBENCH_MAX 64
#define RETIME_ROUNDS 5  /* paired (baseline, candidate) rounds per re-timing */

typedef struct top_arg {
	const uint64_t *skip;   /* already re-timed in this pass */
	int nskip;
	cuco_summary best;      /* out: the best other one; id 0 when none */
} top_arg;

static int top_txn(cuco_txn *txn, void *arg)
{
	top_arg *a = arg;
	cuco_summary *sums = NULL;
	size_t n = 0;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	memset(&a->best, 0, sizeof a->best);
	for (size_t i = 0; i < n; i++) {
		const cuco_summary *s = &sums[i];
		bool skip = s->status != CUCO_STATUS_DONE || s->origin == CUCO_ORIGIN_BASELINE ||
			isnan(s->score) || (a->best.id && s->score <= a->best.score);
		for (int k = 0; k < a->nskip && !skip; k++)
			skip = a->skip[k] == s->id;
		if (!skip)
			a->best = *s;
	}
	free(sums);
	return CUCO_OK;
}

/* The round whose ratio baseline/candidate is the median (the lower
 * middle one of an even count). */
static int median_round(const cuco_eval_result *base, const cuco_eval_result *cand, int n)
{
	int order[RETIME_ROUNDS];
	double ratio[RETIME_ROUNDS];
	for (int i = 0; i < n; i++) {
		ratio[i] = base[i].latency_median_us / cand[i].latency_median_us;
		int k = i;
		for (; k > 0 && ratio[order[k - 1]] > ratio[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	return order[(n - 1) / 2];
}

/* A baseline and a candidate measurement taken side by side. */
typedef struct pair {
	cuco_eval_result base, cand;
	bool have;
} pair;

/* Write a pair to the baseline row and the candidate's row, the baseline
 * first; false when the run must end. */
static bool record_pair(cuco_engine *e, uint64_t id, const pair *p, cuco_candidate *c)
{
	cuco_candidate b;
	if (engine_record(e, e->baseline_id, &p->base, NAN, "baseline", &b) != CUCO_OK ||
			engine_record(e, id, &p->cand, p->base.latency_median_us, "rebench", c) != CUCO_OK)
		return false;
	pthread_mutex_lock(&e->lock);
	int s = p->base.slot;
	if (s >= 0 && s < e->nslots) {  /* the slot's reference, as the rows now say */
		e->slots[s].baseline_us = p->base.latency_median_us;
		e->slots[s].baseline_res = p->base;
	}
	pthread_mutex_unlock(&e->lock);
	return true;
}

/* Re-time a candidate in `rounds` (at most RETIME_ROUNDS) rounds of
 * (baseline, candidate), all on the slot it was measured on (the first,
 * when that slot is not this session's) — the first round's baseline is
 * the slot's latest measurement when nothing was measured there since —
 * and keep the round with the median ratio: both rows get that round's
 * figures, so a load spike during one round moves neither. A candidate
 * that fails now is recorded failed. False when the run must end. */
static bool paired_retime(cuco_engine *e, uint64_t id, int rounds, pair *out)
{
	cuco_candidate c;
	cuco_err err = { 0 };
	if (engine_get(e, id, &c, &err) != CUCO_OK)
		return true;
	char *src = NULL;
	size_t src_len = 0;
	if (cuco_source_read(e->st, c.source_hash, &src, &src_len, &err) != CUCO_OK)
		return true;
	cuco_eval_result base[RETIME_ROUNDS], cand[RETIME_ROUNDS];
	double was = c.speedup;
	bool ok = true, failed = false;
	int n = 0, slot = engine_slot_index(e, c.slot);
	if (slot < 0)
		slot = 0;
	while (n < rounds && !failed) {
		pthread_mutex_lock(&e->lock);
		bool fresh = e->slots[slot].fresh && e->slots[slot].baseline_res.ok;
		pthread_mutex_unlock(&e->lock);
		if (!fresh && engine_measure_baseline(e, slot, ENGINE_BASE_QUIET) != CUCO_OK) {
			ok = false;
			break;
		}
		pthread_mutex_lock(&e->lock);
		base[n] = e->slots[slot].baseline_res;
		pthread_mutex_unlock(&e->lock);
		if (!base[n].ok)
			break;  /* the baseline never ran on this slot: no rounds */
		if (engine_evaluate(e, slot, src, src_len, &c.directive, &cand[n]) != CUCO_OK) {
			ok = false;
			break;
		}
		pthread_mutex_lock(&e->lock);
		engine_slot_benched(e, slot, false);
		pthread_mutex_unlock(&e->lock);
		failed = !cand[n].ok;
		n += !failed;
	}
	free(src);
	const char *what = "re-timed";
	if (failed) {
		if (engine_record(e, id, &cand[n], NAN, "rebench", &c) != CUCO_OK)
			return false;
		what = "failed when re-timed";
	} else if (n > 0) {
		int m = median_round(base, cand, n);
		*out = (pair){ .base = base[m], .cand = cand[m], .have = true };
		if (!record_pair(e, id, out, &c))
			return false;
	} else {
		return ok;
	}
	char line[128];
	if (failed)
		snprintf(line, sizeof line, "%s (was %.3fx)", what, was);
	else
		snprintf(line, sizeof line, "%s against %.1f us (was %.3fx; %d paired round%s)",
			what, c.speedup * c.latency_median_us, was, n, n == 1 ? "" : "s, the median kept");
	pthread_mutex_lock(&e->lock);
	engine_progress(e, &c, line);
	pthread_mutex_unlock(&e->lock);
	return ok;
}

/* The best by stored score (under no lock); 0 when none. */
static uint64_t current_best(cuco_engine *e, cuco_candidate *out)
{
	cuco_err err = { 0 };
	engine_refresh_best(e);
	pthread_mutex_lock(&e->lock);
	uint64_t id = e->best_id;
	pthread_mutex_unlock(&e->lock);
	return id && engine_get(e, id, out, &err) == CUCO_OK ? id : 0;
}

/* Re-time the best few, each in rounds paired with baseline measurements
 * (paired_retime), as the load of a shared machine drifts. Scores drift
 * too, so it goes on past the first N, one round each, until the best
 * score left belongs to a candidate re-timed here. It ends by writing the best's pair again,
 * so the baseline row and the best row, which `cuco report` divides, hold
 * measurements taken side by side. */
void engine_rebench_top(cuco_engine *e)
{
	int want = e->cfg.rebench_top < REBENCH_MAX ? e->cfg.rebench_top : REBENCH_MAX;
	uint64_t done[REBENCH_MAX], last = 0;
	pair *pairs = cuco_xcalloc(REBENCH_MAX, sizeof *pairs);
	double top = -INFINITY;
	cuco_err err = { 0 };
	cuco_candidate c;
	int n = 0;
	pthread_mutex_lock(&e->lock);
	uint64_t before = e->best_id;
	pthread_mutex_unlock(&e->lock);

	while (n < REBENCH_MAX && !engine_stopping(e)) {  /* the pass over the top */
		top_arg a = { .skip = done, .nskip = n };
		if (want <= 0 || cuco_store_read(e->st, top_txn, &a, &err) != CUCO_OK || !a.best.id ||
				(n >= want && a.best.score <= top))
			break;
		int rounds = n < want ? RETIME_ROUNDS : 1;
		if (!paired_retime(e, a.best.id, rounds, &pairs[n]))
			goto out;
		/* One round may only bring a score down: one that would lead
		 * gets the full rounds, like the first N. */
		if (rounds < RETIME_ROUNDS && engine_get(e, a.best.id, &c, &err) == CUCO_OK &&
				c.score > top && !paired_retime(e, a.best.id, RETIME_ROUNDS, &pairs[n]))
			goto out;
		done[n++] = last = a.best.id;
		if (engine_get(e, last, &c, &err) == CUCO_OK && c.score > top)
			top = c.score;
	}
	uint64_t best_id = current_best(e, &c);
	for (int i = 0; i < n; i++)  /* end on the best's pair */
		if (done[i] == best_id && best_id != last && pairs[i].have &&
				!record_pair(e, best_id, &pairs[i], &c))
			goto out;
	if (best_id && (best_id != before || c.origin != CUCO_ORIGIN_BASELINE))
		engine_announce_best(e, &c);
out:
	free(pairs);
}
