/* engine_trust.c — what a run may claim (docs/trust.md): the watch for a
 * noisy machine, and the confirmation that makes a best.
 *
 * Every candidate is screened once; at the end the best few screens are
 * the contenders. A contender is never judged on the measurement that
 * selected it: the top of many noisy screens is biased up by the selection
 * itself (the winner's curse). It is judged on fresh rounds instead, each
 * benchmarking the baseline, the contender and — once one is crowned — the
 * best, in an order drawn at random. It is crowned when its interval over
 * the baseline and its interval over the best both lie above 1 at
 * confirmation j's share of the run's false-crown rate, CUCO_TRUST_ALPHA /
 * (j (j + 1)), so that all of a run's confirmations together crown noise
 * at most CUCO_TRUST_ALPHA of the time. How many rounds a confirmation may
 * take is fixed before its first round (more once the machine was found
 * noisy); it stops early only when passing has become impossible, so
 * neither rule can help noise pass, and never before its interval has the
 * confidence asked for.
 */
#include "engine/engine_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define EXTRA_ROUNDS 4      /* past the fewest rounds that could pass at all; twice
                               as many on a noisy machine */
#define MIN_DRIFT 4         /* baseline measurements before drift is judged */
#define LOAD_TAU_S 60.0     /* the 1-minute load average's time constant */
#define ROUNDING 1e-9       /* relative: two estimates of one ratio that differ by no more
                               are the same (the intervals are taken in logs) */

/* ---- the noise watch ------------------------------------------------------- */

static double cpu_seconds(void)
{
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);  /* every stage, once it has ended */
	return self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
		kids.ru_stime.tv_sec + 1e-6 * (self.ru_utime.tv_usec + self.ru_stime.tv_usec +
		kids.ru_utime.tv_usec + kids.ru_stime.tv_usec);
}

void engine_noise_start(cuco_engine *e)
{
	engine_noise *n = &e->noise;
	memset(n, 0, sizeof *n);
	n->start = n->last = cuco_mono();
	n->cpu_last = cpu_seconds();
}

/* This run's own CPU use in cores, averaged as the load average is, so
 * that the load average less it is what the rest of the machine runs. */
static void sample_own_load(engine_noise *n)
{
	double now = cuco_mono(), cpu = cpu_seconds(), dt = now - n->last;
	if (dt <= 0)
		return;
	double w = exp(-dt / LOAD_TAU_S);
	n->own = n->own * w + (cpu - n->cpu_last) / dt * (1 - w);
	n->last = now;
	n->cpu_last = cpu;
}

/* Why the machine is too noisy to trust a single measurement, or "". */
static void judge(cuco_engine *e, const cuco_eval_result *res, char *why, size_t size)
{
	engine_noise *n = &e->noise;
	double max_spread = e->wl->max_spread;
	why[0] = '\0';
	if (res->timing.spread > max_spread) {
		snprintf(why, size, "the baseline's own spread is %.0f%%, past the workload's max_spread "
			"of %.0f%%", 100 * res->timing.spread, 100 * max_spread);
		return;
	}
	/* Drift is judged within one slot: nodes of a cluster differ. */
	double lo = INFINITY, hi = 0;
	int k = 0, ring = n->nbase < ENGINE_DRIFT_WINDOW ? n->nbase : ENGINE_DRIFT_WINDOW;
	for (int i = 0; i < ring; i++) {
		if (n->base_slot[i] != res->slot)
			continue;
		lo = fmin(lo, n->base_us[i]);
		hi = fmax(hi, n->base_us[i]);
		k++;
	}
	if (k >= MIN_DRIFT && (hi - lo) / lo > max_spread) {
		snprintf(why, size, "the re-measured baseline drifts, %.0f to %.0f us over its last %d "
			"measurements (past max_spread %.0f%%)", lo, hi, k, 100 * max_spread);
		return;
	}
	/* The first minute's load average still holds the minute before the run. */
	double load;
	int cores = e->hw.cpus > 0 ? e->hw.cpus : 1;
	int device = e->wl->ranks < cores ? e->wl->ranks : cores;
	if (cuco_mono() - n->start < LOAD_TAU_S || getloadavg(&load, 1) != 1)
		return;
	double others = load - n->own;
	if (others >= cores - device + 1)
		snprintf(why, size, "load average %.1f on %d cores, %.1f of it not this run's: more than "
			"the %d core%s its %d rank%s leave free", load, cores, others, cores - device,
			cores - device == 1 ? "" : "s", device, device == 1 ? "" : "s");
}

static int noise_txn(cuco_txn *txn, void *arg)
{
	const char *reason = arg;
	int rc = cuco_meta_noise_put(txn, reason);
	cuco_event ev;
	engine_event_init(&ev, CUCO_EVENT_NOISE, 0, NULL);
	snprintf(ev.text, sizeof ev.text, "a noisy machine: %.300s; confirmations take more "
		"rounds, and an interval still wide reads inconclusive", reason);
	return rc == CUCO_OK ? cuco_event_add(txn, &ev) : rc;
}

void engine_noise_baseline(cuco_engine *e, const cuco_eval_result *res)
{
	char why[256];
	pthread_mutex_lock(&e->lock);
	engine_noise *n = &e->noise;
	n->base_slot[n->nbase % ENGINE_DRIFT_WINDOW] = res->slot;
	n->base_us[n->nbase++ % ENGINE_DRIFT_WINDOW] = res->timing.median_us;
	sample_own_load(n);
	bool said = n->noisy;
	judge(e, res, why, sizeof why);
	if (!said && why[0]) {
		n->noisy = true;
		if (e->cfg.progress) {  /* said once: here, in the log and in the event log */
			fprintf(e->cfg.progress, "noise: %s; confirmations take more rounds, and an "
				"interval still wide reads inconclusive\n", why);
			fflush(e->cfg.progress);
		}
	}
	pthread_mutex_unlock(&e->lock);
	if (said || !why[0])
		return;
	cuco_log(CUCO_LOG_INFO, "engine: a noisy machine: %s", why);  /* the progress says it */
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, noise_txn, why, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: noise: %s", err.msg);
	engine_wake(e);
}

/* ---- the rounds ------------------------------------------------------------- */

enum { ARM_BASE, ARM_CAND, ARM_BEST, ARMS };

static const char *const arm_names[ARMS] = { "the baseline", "the contender", "the best" };

/* One program of a confirmation and its measurement in every round. */
typedef struct arm {
	cuco_candidate c;
	char *src;
	size_t len;
	cuco_eval_result res[CUCO_PAIRED_MAX];
} arm;

typedef struct confirmation {
	arm arms[ARMS];
	int narms;               /* 3 when a best other than the baseline stands */
	int slot;                /* where every round runs: the contender's screening slot */
	int j;                   /* this run's confirmation number, from 1 */
	double alpha;            /* its share of CUCO_TRUST_ALPHA */
	int min_rounds;          /* the fewest that give an interval at alpha */
	int max_rounds;
	int rounds;              /* taken */
	int best_rounds;         /* of them, with the best (until it could no longer lose) */
	bool behind;             /* it can no longer beat the best */
	bool best_lapsed;        /* the best's crown lapsed on these rounds */
	double vs_base[CUCO_PAIRED_MAX], vs_best[CUCO_PAIRED_MAX];
	cuco_interval base_iv, best_iv;
	cuco_verdict verdict;
	bool crown;
	char why[448];           /* why it ended without a verdict; "" when it did not */
} confirmation;

static void shuffle(cuco_engine *e, int *order, int n)
{
	pthread_mutex_lock(&e->lock);
	for (int i = n - 1; i > 0; i--) {
		int k = (int)(cuco_rng_next(&e->rng) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[k];
		order[k] = t;
	}
	pthread_mutex_unlock(&e->lock);
}

static void interval_text(const cuco_interval *iv, char *buf, size_t size)
{
	cuco_speedup_text(iv->value, iv->lo, iv->hi, iv->rounds, !cuco_utf8_locale(), buf, size);
}

/* ---- crowns looked at again --------------------------------------------------- */

typedef struct revisit_arg {
	cuco_revisit r;
	cuco_candidate *rec;     /* the best's record with its new interval; NULL: as it is */
} revisit_arg;

/* The island a revisited crown championed (engine_crown_txn) shows what
 * stands now: the crown's new interval, or once it lapsed the best now
 * when that one is of the island, else no champion. */
static int island_txn(cuco_txn *txn, const cuco_revisit *r)
{
	cuco_candidate c, b;
	cuco_island isl;
	cuco_summary s;
	int rc = cuco_cand_get(txn, r->id, &c);
	if (rc != CUCO_OK || c.island < 0)
		return rc;
	if ((rc = cuco_island_get(txn, c.island, &isl)) != CUCO_OK || isl.champion != r->id)
		return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
	if (r->lapsed) {
		bool next = cuco_best(txn, &s) == CUCO_OK && cuco_cand_get(txn, s.id, &b) == CUCO_OK &&
			b.island == c.island;
		c = next ? b : (cuco_candidate){ .id = 0, .score = NAN, .speedup = NAN };
	}
	isl.champion = c.id;
	isl.best_score = c.score;
	isl.best_speedup = c.speedup;
	return cuco_island_put(txn, &isl);
}

static int revisit_txn(cuco_txn *txn, void *arg)
{
	revisit_arg *a = arg;
	int rc = a->rec ? cuco_cand_put(txn, a->rec) : CUCO_OK;
	if (rc == CUCO_OK)
		rc = cuco_crown_revisit(txn, &a->r);
	if (rc == CUCO_OK)
		rc = island_txn(txn, &a->r);
	cuco_event ev;
	engine_event_init(&ev, a->r.lapsed ? CUCO_EVENT_LAPSE : CUCO_EVENT_REVISIT, a->r.id, NULL);
	snprintf(ev.text, sizeof ev.text, "#%llu %.480s", (unsigned long long)a->r.id, a->r.why);
	return rc == CUCO_OK ? cuco_event_add(txn, &ev) : rc;
}

/* Keep a revisit of the best's crown with the chain, and say it. */
static void revisit(cuco_engine *e, const cuco_revisit *r, cuco_candidate *rec)
{
	revisit_arg a = { *r, rec };
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, revisit_txn, &a, &err) != CUCO_OK) {
		engine_fail(e, &err);
		return;
	}
	engine_wake(e);
	engine_refresh_best(e);
	cuco_candidate shown;
	if (!rec && engine_get(e, r->id, &shown, &err) == CUCO_OK)
		rec = &shown;
	pthread_mutex_lock(&e->lock);
	if (rec)
		engine_progress(e, rec, r->lapsed ? "its crown lapses" : "revisited: its crown stands");
	pthread_mutex_unlock(&e->lock);
}

/* The best's rounds against the baseline in this confirmation: when their
 * estimate lies outside the interval it was crowned with, the crown is
 * judged again on all its rounds, at the confidence it had. It stands
 * when they still say faster — with that interval from now on — and lapses
 * otherwise. Only a crown can be lost so, never won: the run's false-crown
 * rate holds. */
static void revisit_best(cuco_engine *e, confirmation *cf)
{
	cuco_candidate b = cf->arms[ARM_BEST].c;
	double alpha = (1 - b.confidence) / 2;
	if (cf->narms < ARMS || cf->best_rounds < 1 || b.rounds < 2 || !(alpha > 0 && alpha < 0.5))
		return;
	double all[2 * CUCO_PAIRED_MAX];
	int n = b.nratios < CUCO_PAIRED_MAX ? b.nratios : CUCO_PAIRED_MAX, later = cf->best_rounds;
	memcpy(all, b.ratios, (size_t)n * sizeof *all);
	for (int i = 0; i < later; i++)  /* each round's two medians, as the crown's were */
		all[n + i] = cf->arms[ARM_BASE].res[i].timing.median_us /
			cf->arms[ARM_BEST].res[i].timing.median_us;
	cuco_interval now, iv;
	cuco_paired_interval(all + n, later, alpha, &now);
	if (now.value >= b.speedup_lo * (1 - ROUNDING) && now.value <= b.speedup_hi * (1 + ROUNDING))
		return;
	int first = n + later > CUCO_PAIRED_MAX ? n + later - CUCO_PAIRED_MAX : 0;  /* the latest */
	cuco_paired_interval(all + first, n + later - first, alpha, &iv);
	bool stands = cuco_paired_faster(&iv, alpha);
	char t_now[64], t_was[64], t_all[64];
	interval_text(&now, t_now, sizeof t_now);
	cuco_speedup_text(b.speedup, b.speedup_lo, b.speedup_hi, b.rounds, !cuco_utf8_locale(), t_was,
		sizeof t_was);
	interval_text(&iv, t_all, sizeof t_all);
	b.speedup = b.score = iv.value;
	b.speedup_lo = iv.lo;
	b.speedup_hi = iv.hi;
	b.confidence = iv.confidence;
	b.rounds = b.nratios = iv.rounds;
	memcpy(b.ratios, all + first, (size_t)iv.rounds * sizeof *b.ratios);
	b.verdict = cuco_paired_verdict(&iv, alpha, e->wl->max_spread);
	cuco_revisit r = { .id = b.id, .lapsed = !stands };
	snprintf(r.why, sizeof r.why, "revisited: %d later paired round%s put it at %s the baseline, "
		"outside the %s it was crowned with; over all %d rounds %s (%.4g%% interval), %s: its "
		"crown %s", later, later == 1 ? "" : "s", t_now, t_was, iv.rounds, t_all,
		100 * iv.confidence, cuco_verdict_name(b.verdict), stands ? "stands" : "lapses");
	revisit(e, &r, &b);
	cf->best_lapsed = !stands;
}

/* ---- the rounds ------------------------------------------------------------- */

/* A program that fails in a round: its measurement is appended, and the
 * store's rule says whether that failure is in force — a contender's or
 * a best's own is, the baseline's is not, nor the environment's (the
 * earlier measurement stays). A best whose failure is in force loses its
 * crown. The confirmation ends without a verdict; cf->why says why. */
static void arm_failed(cuco_engine *e, confirmation *cf, int which, const cuco_eval_result *res)
{
	char line[360], who[48] = "the baseline";
	cuco_failure_line(&res->failure, line, sizeof line);
	if (which != ARM_BASE)
		snprintf(who, sizeof who, "%s, #%llu,", arm_names[which],
			(unsigned long long)cf->arms[which].c.id);
	snprintf(cf->why, sizeof cf->why, "%s failed in round %d at %s", who, cf->rounds + 1, line);
	cuco_candidate out;
	if (engine_record(e, cf->arms[which].c.id, res, NAN, CUCO_EVENT_CONFIRM, &out) != CUCO_OK)
		return;
	if (which == ARM_BEST && out.failure.error_class[0]) {  /* its failure is in force */
		cuco_revisit r = { .id = out.id, .lapsed = true };
		snprintf(r.why, sizeof r.why, "failed when measured again (confirmation %d, round %d) "
			"at %s: its crown lapses", cf->j, cf->rounds + 1, line);
		revisit(e, &r, NULL);
	}
	const cuco_candidate *cand = which == ARM_CAND ? &out : &cf->arms[ARM_CAND].c;
	engine_event(e, CUCO_EVENT_CONFIRM, cand->id, "#%llu no verdict: %.440s", (unsigned long long)cand->id,
		cf->why);
	char text[512];
	snprintf(text, sizeof text, "no verdict: %s", cf->why);
	pthread_mutex_lock(&e->lock);
	engine_progress(e, cand, text);
	pthread_mutex_unlock(&e->lock);
}

/* Between two rounds (never inside one) a person's commands are applied:
 * a pause holds the confirmation until a resume, a stop ends it. False
 * when it must end. */
static bool between_rounds(cuco_engine *e)
{
	for (;;) {
		engine_poll_commands(e);
		pthread_mutex_lock(&e->lock);
		bool hold = e->paused && !e->stop, stop = e->stop;
		if (hold)
			engine_wait(e, POLL_S);
		pthread_mutex_unlock(&e->lock);
		if (!hold)
			return !stop;
	}
}

/* Rounds until max_rounds, or until passing has become impossible — but
 * never fewer than min_rounds, so that every interval a confirmation
 * reports has the confidence it asks for. Once the contender can no longer
 * beat the best, the best drops out of the rounds. False when the
 * confirmation ended for a failure (cf->why) or the run is stopping. */
static bool run_rounds(cuco_engine *e, confirmation *cf)
{
	for (int r = 0; r < cf->max_rounds; r++) {
		int order[ARMS] = { ARM_BASE, ARM_CAND, ARM_BEST };
		int narms = cf->behind ? ARM_BEST : cf->narms;
		shuffle(e, order, narms);
		if (!between_rounds(e))
			return false;
		for (int k = 0; k < narms; k++) {
			arm *a = &cf->arms[order[k]];
			if (engine_stopping(e) || engine_remeasure(e, cf->slot, a->src, a->len,
					&a->c.directive, &a->res[r]) != CUCO_OK)
				return false;
			if (!a->res[r].ok) {
				arm_failed(e, cf, order[k], &a->res[r]);
				return false;
			}
		}
		engine_noise_baseline(e, &cf->arms[ARM_BASE].res[r]);
		double cand = cf->arms[ARM_CAND].res[r].timing.median_us;
		cf->vs_base[r] = cf->arms[ARM_BASE].res[r].timing.median_us / cand;
		if (narms == ARMS)
			cf->vs_best[cf->best_rounds++] = cf->arms[ARM_BEST].res[r].timing.median_us / cand;
		cf->rounds = r + 1;
		cf->behind = cf->behind || (narms == ARMS &&
			cuco_paired_futile(cf->vs_best, cf->best_rounds, cf->max_rounds, cf->alpha));
		bool out = cf->behind || cuco_paired_futile(cf->vs_base, cf->rounds, cf->max_rounds,
			cf->alpha);
		if (out && cf->rounds >= cf->min_rounds)
			break;
	}
	return true;
}

/* The round whose ratio over the baseline is the median one (the lower
 * middle of an even count): the measurements the rows keep. */
static int median_round(const confirmation *cf)
{
	int below[CUCO_PAIRED_MAX];
	for (int i = 0; i < cf->rounds; i++) {
		below[i] = 0;
		for (int k = 0; k < cf->rounds; k++)
			below[i] += cf->vs_base[k] < cf->vs_base[i] || (cf->vs_base[k] == cf->vs_base[i] && k < i);
	}
	for (int i = 0; i < cf->rounds; i++)
		if (below[i] == (cf->rounds - 1) / 2)
			return i;
	return 0;
}

/* ---- the verdict ----------------------------------------------------------- */

/* The event's words: what the rounds said and how sure they are. */
static void verdict_text(const confirmation *cf, char *buf, size_t size)
{
	char base[64], best[64], best_part[160] = "";
	interval_text(&cf->base_iv, base, sizeof base);
	interval_text(&cf->best_iv, best, sizeof best);
	if (cf->narms == ARMS)
		snprintf(best_part, sizeof best_part, " and %s the best (#%llu, %d rounds%s)", best,
			(unsigned long long)cf->arms[ARM_BEST].c.id, cf->best_rounds,
			cf->best_lapsed ? "; its crown lapsed on them" : "");
	/* Lost to the best: the comparison with the baseline may be undecided. */
	bool behind = !cf->crown && cf->narms == ARMS && (cf->verdict == CUCO_VERDICT_FASTER ||
		cf->behind);
	const char *what = cf->crown ? "new best" : behind && cf->best_lapsed ?
		"not crowned: the best it was paired with lapsed, and the best now was not in its rounds" :
		behind ? "not faster than the best" : cuco_verdict_name(cf->verdict);
	snprintf(buf, size, "%s: %s the baseline%s in %d paired round%s (%.4g%% interval)%s", what,
		base, best_part, cf->rounds, cf->rounds == 1 ? "" : "s", 100 * cf->base_iv.confidence,
		cf->rounds < cf->max_rounds ? ", stopped early: it could no longer pass" : "");
}

typedef struct confirm_arg {
	cuco_engine *e;
	const confirmation *cf;
	int round;               /* the median one */
	char text[512];
	cuco_candidate out;
} confirm_arg;

/* The baseline's and the contender's measurements of the median round are
 * appended (and so in force); the contender's speedup is then the interval
 * over all rounds, with their ratios. */
static int confirm_txn(cuco_txn *txn, void *arg)
{
	confirm_arg *a = arg;
	const confirmation *cf = a->cf;
	const cuco_eval_result *base = &cf->arms[ARM_BASE].res[a->round];
	cuco_measurement m;
	cuco_candidate b, c;
	engine_measurement_of(a->e, cf->arms[ARM_BASE].c.id, base, NAN, "confirm", &m);
	int rc = cuco_measure_add(txn, &m, &b);
	if (rc != CUCO_OK)
		return rc;
	engine_measurement_of(a->e, cf->arms[ARM_CAND].c.id, &cf->arms[ARM_CAND].res[a->round],
		base->timing.median_us, "confirm", &m);
	if ((rc = cuco_measure_add(txn, &m, &c)) != CUCO_OK)
		return rc;
	c.speedup = c.score = cf->base_iv.value;
	c.speedup_lo = cf->base_iv.lo;
	c.speedup_hi = cf->base_iv.hi;
	c.confidence = cf->base_iv.confidence;
	c.rounds = c.nratios = cf->base_iv.rounds;
	memcpy(c.ratios, cf->vs_base, (size_t)cf->rounds * sizeof *c.ratios);
	c.verdict = cf->verdict;
	if ((rc = cuco_cand_put(txn, &c)) != CUCO_OK)
		return rc;
	a->out = c;
	if (cf->crown) {
		/* Only a contender its paired rounds found faster is crowned. */
		CUCO_ASSERT(c.verdict == CUCO_VERDICT_FASTER && c.id != a->e->baseline_id);
		return engine_crown_txn(txn, &c, a->text);
	}
	cuco_event ev;
	engine_event_init(&ev, CUCO_EVENT_CONFIRM, c.id, NULL);
	snprintf(ev.text, sizeof ev.text, "#%llu %.480s", (unsigned long long)c.id, a->text);
	return cuco_event_add(txn, &ev);
}

/* The intervals, the verdict and the crown. A contender must beat the
 * best it was paired with, unless that crown lapsed on these rounds and
 * the baseline stands again (base_stands): it beat the baseline alone. */
static void decide(cuco_engine *e, confirmation *cf, bool base_stands)
{
	cuco_paired_interval(cf->vs_base, cf->rounds, cf->alpha, &cf->base_iv);
	cuco_paired_interval(cf->vs_best, cf->best_rounds, cf->alpha, &cf->best_iv);
	cf->verdict = cuco_paired_verdict(&cf->base_iv, cf->alpha, e->wl->max_spread);
	cf->crown = cf->verdict == CUCO_VERDICT_FASTER && (cf->narms < ARMS ||
		cuco_paired_faster(&cf->best_iv, cf->alpha) || (cf->best_lapsed && base_stands));
}

/* ---- one confirmation -------------------------------------------------------- */

static bool load_arm(cuco_engine *e, uint64_t id, arm *a, char *why, size_t size)
{
	cuco_err err = { 0 };
	if (engine_get(e, id, &a->c, &err) != CUCO_OK ||
			cuco_source_read(e->st, a->c.source_hash, &a->src, &a->len, &err) != CUCO_OK) {
		cuco_log(CUCO_LOG_WARN, "engine: confirm #%llu: %s", (unsigned long long)id, err.msg);
		snprintf(why, size, "#%llu could not be read: %.400s", (unsigned long long)id, err.msg);
		return false;
	}
	return true;
}

/* This confirmation's share of alpha, its rounds and its programs; false
 * when one of them cannot be read (cf->why). */
static bool plan(cuco_engine *e, confirmation *cf, uint64_t id)
{
	pthread_mutex_lock(&e->lock);
	cf->j = ++e->confirmations;
	bool noisy = e->noise.noisy;
	uint64_t best = e->best_id;
	pthread_mutex_unlock(&e->lock);
	cf->alpha = cuco_alpha_share(CUCO_TRUST_ALPHA, cf->j);
	cf->min_rounds = cuco_paired_min_rounds(cf->alpha);
	cf->max_rounds = cf->min_rounds + EXTRA_ROUNDS * (noisy ? 2 : 1);
	if (cf->max_rounds > CUCO_PAIRED_MAX)
		cf->max_rounds = cf->min_rounds = CUCO_PAIRED_MAX;
	cf->narms = best && best != e->baseline_id ? ARMS : ARM_BEST;
	cf->arms[ARM_CAND].c.id = id;
	if (!load_arm(e, e->baseline_id, &cf->arms[ARM_BASE], cf->why, sizeof cf->why) ||
			!load_arm(e, id, &cf->arms[ARM_CAND], cf->why, sizeof cf->why) ||
			(cf->narms == ARMS && !load_arm(e, best, &cf->arms[ARM_BEST], cf->why, sizeof cf->why)))
		return false;
	/* Every round on the slot the contender was screened on (the first
	 * slot when that one is not this session's): ratios within one node. */
	cf->slot = engine_slot_index(e, cf->arms[ARM_CAND].c.slot);
	if (cf->slot < 0)
		cf->slot = 0;
	return true;
}

static void say_start(cuco_engine *e, const confirmation *cf)
{
	char line[160], best_part[48] = "";
	if (cf->narms == ARMS)
		snprintf(best_part, sizeof best_part, " and the best, #%llu,",
			(unsigned long long)cf->arms[ARM_BEST].c.id);
	snprintf(line, sizeof line, "confirming against the baseline%s in up to %d paired rounds "
		"(confirmation %d, %.3g%% false-crown share)", best_part, cf->max_rounds, cf->j,
		100 * cf->alpha);
	pthread_mutex_lock(&e->lock);
	engine_progress(e, &cf->arms[ARM_CAND].c, line);
	pthread_mutex_unlock(&e->lock);
}

/* Look at the best's crown again, then write the verdict (and the crown)
 * and say it. */
static void conclude(cuco_engine *e, confirmation *cf)
{
	revisit_best(e, cf);
	pthread_mutex_lock(&e->lock);
	bool base_stands = !e->best_id || e->best_id == e->baseline_id;
	pthread_mutex_unlock(&e->lock);
	decide(e, cf, base_stands);
	confirm_arg a = { .e = e, .cf = cf, .round = median_round(cf) };
	verdict_text(cf, a.text, sizeof a.text);
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, confirm_txn, &a, &err) != CUCO_OK) {
		engine_fail(e, &err);
		return;
	}
	engine_wake(e);
	if (cf->crown)
		engine_refresh_best(e);
	pthread_mutex_lock(&e->lock);
	engine_progress(e, &a.out, a.text);
	pthread_mutex_unlock(&e->lock);
}

/* What this session's confirmation did, for its summary (meta
 * "confirmation"); under e->lock. */
static void tally(cuco_engine *e, const confirmation *cf, bool judged)
{
	cuco_confirmation *t = &e->confirmed;
	t->contenders++;
	t->judged += judged;
	t->crowned += judged && cf->crown;
	if (judged || !cf->why[0] || t->nunjudged == CUCO_UNJUDGED_MAX)
		return;
	t->unjudged[t->nunjudged].id = cf->arms[ARM_CAND].c.id;
	cuco_strlcpy(t->unjudged[t->nunjudged++].why, cf->why, sizeof t->unjudged[0].why);
}

static void confirm_one(cuco_engine *e, uint64_t id)
{
	confirmation *cf = cuco_xcalloc(1, sizeof *cf);
	bool judged = false;
	if (plan(e, cf, id)) {
		say_start(e, cf);
		judged = run_rounds(e, cf) && cf->rounds > 0;
		if (judged)
			conclude(e, cf);
	}
	pthread_mutex_lock(&e->lock);
	tally(e, cf, judged && e->rc == CUCO_OK);
	pthread_mutex_unlock(&e->lock);
	for (int i = 0; i < ARMS; i++)
		free(cf->arms[i].src);
	free(cf);
}

/* ---- the contenders ---------------------------------------------------------- */

typedef struct top_arg {
	const uint64_t *skip;
	int nskip;
	uint64_t id;             /* out: the best screen left; 0 when none */
} top_arg;

/* The highest screening speedup above 1 among candidates done and not yet
 * confirmed. */
static int top_txn(cuco_txn *txn, void *arg)
{
	top_arg *a = arg;
	cuco_summary *sums = NULL;
	size_t n = 0;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	a->id = 0;
	double top = 1;
	for (size_t i = 0; i < n; i++) {
		const cuco_summary *s = &sums[i];
		bool skip = s->status != CUCO_STATUS_DONE || s->origin == CUCO_ORIGIN_BASELINE ||
			!(s->speedup > top);
		for (int k = 0; k < a->nskip && !skip; k++)
			skip = a->skip[k] == s->id;
		cuco_candidate c;
		if (!skip && cuco_cand_get(txn, s->id, &c) == CUCO_OK && c.rounds <= 1) {
			a->id = s->id;
			top = s->speedup;
		}
	}
	free(sums);
	return CUCO_OK;
}

void engine_confirm(cuco_engine *e)
{
	int want = e->cfg.rebench_top;
	uint64_t *tried = cuco_xcalloc(want > 0 ? (size_t)want : 1, sizeof *tried);
	for (int k = 0; k < want && !engine_stopping(e); k++) {
		top_arg a = { .skip = tried, .nskip = k };
		cuco_err err = { 0 };
		if (cuco_store_read(e->st, top_txn, &a, &err) != CUCO_OK || !a.id)
			break;
		tried[k] = a.id;
		/* It takes minutes: say so before the first round, not after it. */
		if (k == 0)
			engine_event(e, CUCO_EVENT_RETIME, 0, "confirming up to %d of the best screens in rounds "
				"paired with the baseline", want);
		confirm_one(e, a.id);
	}
	free(tried);
	pthread_mutex_lock(&e->lock);
	e->confirm_done = !e->stop;
	pthread_mutex_unlock(&e->lock);
}

void engine_confirm_outcome(cuco_engine *e, cuco_confirmation *out)
{
	pthread_mutex_lock(&e->lock);
	*out = e->confirmed;
	out->session = e->session;
	out->state = e->cfg.rebench_top <= 0 ? CUCO_CONFIRM_OFF : e->confirm_done ? CUCO_CONFIRM_DONE :
		e->rc != CUCO_OK ? CUCO_CONFIRM_ERROR : CUCO_CONFIRM_STOPPED;
	pthread_mutex_unlock(&e->lock);
}
