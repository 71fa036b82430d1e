/* tune.c — the directive tuner: random sampling, simulated annealing and
 * greedy iterated local search over a workload's design space, and the
 * "tune" strategy that drives it for the engine.
 *
 * A point is one value index per dimension. Every point proposed or
 * observed is an entry, found by its canonical key through an
 * open-addressing table, so nothing is ever proposed twice. Evaluations run
 * concurrently, so proposals are made before earlier results are known:
 * both local searches move from whatever is their current point when a
 * result arrives (the schedule of Kernel Tuner's strategies, made
 * asynchronous; defaults from its simulated_annealing and greedy_ils).
 */
#include "strategies/strategies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ANNEAL_T0 0.1         /* a 10 % loss is taken with p = 1/e at first */
#define ANNEAL_TMIN 1e-3
#define ILS_KICK_SHARE 0.3    /* of the dimensions changed by a perturbation */
#define ILS_RESTART_AFTER 50  /* evaluations without a new best */
#define DRAW_TRIES 64         /* random draws before an ordered scan */
#define SCAN_LIMIT 1000000    /* points an ordered scan looks at */
#define KEY_MAX 1024

typedef struct entry {
	char *key;
	int point[CUCO_MAX_DIMS];
	uint64_t id;       /* candidate, 0 until observed */
	double score;      /* NAN until observed or when failed */
	int base;          /* entry it was made from, -1 for a draw */
	int step;          /* proposal number, for the temperature */
	bool observed;
	bool forbidden;
	bool kick;         /* an ILS perturbation */
} entry;

struct cuco_tuner {
	const cuco_workload *wl;
	cuco_tuner_algo algo;
	uint64_t rng;
	int horizon;
	size_t counts[CUCO_MAX_DIMS];  /* values per dimension */
	entry *entries;
	size_t nentries, cap;
	int *table;                     /* entry index + 1; 0 = empty */
	size_t table_cap;               /* power of two */
	int cur;                        /* the local searches' current point */
	int best;
	int since_best;                 /* ILS: observations without a new best */
	int moves_for;                  /* ILS: entry whose neighbourhood is listed */
	int (*moves)[2];                /* ILS: (dimension, value) in random order */
	size_t nmoves, next_move;
};

/* ---- names ---------------------------------------------------------------- */

static const char *const algo_names[] = {
#define X(e, name) name,
	CUCO_TUNER_ALGOS(X)
#undef X
};
#define ALGO_COUNT (sizeof algo_names / sizeof algo_names[0])

const char *cuco_tuner_algo_name(cuco_tuner_algo a)
{
	return (unsigned)a < ALGO_COUNT ? algo_names[a] : "?";
}

int cuco_tuner_algo_parse(const char *name, cuco_tuner_algo *out)
{
	int i = cuco_name_index(algo_names, ALGO_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_tuner_algo)i;
	return CUCO_OK;
}

/* ---- randomness (splitmix64: small, seedable, good enough) ---------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(rng_next(s) % n) : 0;
}

static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* ---- dimensions ------------------------------------------------------------- */

static size_t dim_count(const cuco_dim *d)
{
	if (d->nvalues > 0)
		return (size_t)d->nvalues;
	if (d->kind != CUCO_DIM_INT || d->max < d->min)
		return 1;
	if (d->pow2) {
		size_t n = 0;
		for (long v = 1; v <= d->max && v > 0; v *= 2)
			n += v >= d->min;
		return n ? n : 1;
	}
	long step = d->step > 0 ? d->step : 1;
	return (size_t)((d->max - d->min) / step) + 1;
}

static long pow2_first(const cuco_dim *d)
{
	long v = 1;
	while (v < d->min)
		v *= 2;
	return v;
}

static void dim_value(const cuco_dim *d, int i, char *buf, size_t size)
{
	if (d->nvalues > 0) {
		cuco_strlcpy(buf, d->values[i], size);
		return;
	}
	long v = d->pow2 ? pow2_first(d) << i : d->min + (long)i * (d->step > 0 ? d->step : 1);
	snprintf(buf, size, "%ld", v);
}

/* Index of a value text, -1 when outside the dimension. */
static int dim_index(const cuco_dim *d, const char *text)
{
	if (d->nvalues > 0) {
		for (int i = 0; i < d->nvalues; i++)
			if (strcmp(d->values[i], text) == 0)
				return i;
		return -1;
	}
	char *end = NULL;
	long v = strtol(text, &end, 10);
	if (!*text || *end || v < d->min || v > d->max)
		return -1;
	if (d->pow2) {
		int i = 0;
		for (long p = pow2_first(d); p <= v; p *= 2, i++)
			if (p == v)
				return i;
		return -1;
	}
	long step = d->step > 0 ? d->step : 1;
	return (v - d->min) % step ? -1 : (int)((v - d->min) / step);
}

/* ---- points and keys -------------------------------------------------------- */

static void point_directive(const cuco_tuner *t, const int *point, const cuco_directive *base,
	cuco_directive *out)
{
	char value[64];
	*out = *base;
	for (int i = 0; i < t->wl->ndims; i++) {
		dim_value(&t->wl->dims[i], point[i], value, sizeof value);
		cuco_directive_set(out, t->wl->dims[i].name, value);
	}
}

/* false when some dimension's value lies outside the space. */
static bool directive_point(const cuco_tuner *t, const cuco_directive *d, int *point)
{
	bool inside = true;
	for (int i = 0; i < t->wl->ndims; i++) {
		point[i] = dim_index(&t->wl->dims[i], cuco_directive_value(d, t->wl->dims[i].name));
		if (point[i] < 0) {
			inside = false;
			point[i] = 0;
		}
	}
	return inside;
}

void cuco_tuner_key(const cuco_tuner *t, const cuco_directive *d, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < t->wl->ndims && used < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%s=%s", i ? ";" : "",
			t->wl->dims[i].name, cuco_directive_value(d, t->wl->dims[i].name));
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static uint64_t key_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int find(const cuco_tuner *t, const char *key)
{
	size_t mask = t->table_cap - 1;
	for (size_t i = key_hash(key) & mask;; i = (i + 1) & mask) {
		int slot = t->table[i];
		if (slot == 0)
			return -1;
		if (strcmp(t->entries[slot - 1].key, key) == 0)
			return slot - 1;
	}
}

static void table_insert(cuco_tuner *t, int index)
{
	size_t mask = t->table_cap - 1;
	size_t i = key_hash(t->entries[index].key) & mask;
	while (t->table[i])
		i = (i + 1) & mask;
	t->table[i] = index + 1;
}

static int add_entry(cuco_tuner *t, const char *key, const int *point, int base)
{
	if (t->nentries == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->entries = cuco_xrealloc(t->entries, t->cap * sizeof *t->entries);
	}
	if (2 * (t->nentries + 1) > t->table_cap) {  /* keep the load under 1/2 */
		free(t->table);
		t->table_cap = t->table_cap ? t->table_cap * 2 : 128;
		t->table = cuco_xcalloc(t->table_cap, sizeof *t->table);
		for (size_t i = 0; i < t->nentries; i++)
			table_insert(t, (int)i);
	}
	int index = (int)t->nentries++;
	entry *e = &t->entries[index];
	memset(e, 0, sizeof *e);
	e->key = cuco_xstrdup(key);
	memcpy(e->point, point, sizeof e->point);
	e->score = NAN;
	e->base = base;
	e->step = index;
	table_insert(t, index);
	return index;
}

/* ---- life cycle ----------------------------------------------------------- */

int cuco_tuner_new(const cuco_workload *wl, cuco_tuner_algo algo, uint64_t seed, int horizon,
	cuco_tuner **out, cuco_err *err)
{
	if (wl->ndims <= 0)
		return cuco_errf(err, CUCO_EDATA, "%s: the design space has no dimensions to tune",
			wl->name);
	cuco_tuner *t = cuco_xcalloc(1, sizeof *t);
	t->wl = wl;
	t->algo = algo;
	t->rng = seed;
	t->horizon = horizon > 0 ? horizon : 100;
	t->cur = t->best = t->moves_for = -1;
	for (int i = 0; i < wl->ndims; i++)
		t->counts[i] = dim_count(&wl->dims[i]);
	*out = t;
	return CUCO_OK;
}

void cuco_tuner_free(cuco_tuner *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nentries; i++)
		free(t->entries[i].key);
	free(t->entries);
	free(t->table);
	free(t->moves);
	free(t);
}

size_t cuco_tuner_seen_count(const cuco_tuner *t)
{
	return t->nentries;
}

size_t cuco_tuner_space_size(const cuco_tuner *t)
{
	size_t n = 1;
	for (int i = 0; i < t->wl->ndims; i++) {
		if (n > SIZE_MAX / t->counts[i])
			return SIZE_MAX;
		n *= t->counts[i];
	}
	return n;
}

bool cuco_tuner_seen(const cuco_tuner *t, const cuco_directive *d)
{
	char key[KEY_MAX];
	if (!t->table)
		return false;
	cuco_tuner_key(t, d, key, sizeof key);
	return find(t, key) >= 0;
}

/* ---- candidates ------------------------------------------------------------- */

/* Build the point's directive and key; true when it is new and valid. */
static bool fresh(const cuco_tuner *t, const int *point, const cuco_directive *base,
	cuco_directive *d, char *key)
{
	point_directive(t, point, base, d);
	cuco_tuner_key(t, d, key, KEY_MAX);
	if (t->table && find(t, key) >= 0)
		return false;
	return cuco_directive_valid(t->wl, d, NULL);
}

static bool draw(cuco_tuner *t, const cuco_directive *base, int *point, cuco_directive *d,
	char *key)
{
	for (int tries = 0; tries < DRAW_TRIES; tries++) {
		for (int i = 0; i < t->wl->ndims; i++)
			point[i] = (int)rng_below(&t->rng, t->counts[i]);
		if (fresh(t, point, base, d, key))
			return true;
	}
	/* Dense or constrained space: walk it in order from a random start. */
	size_t size = cuco_tuner_space_size(t);
	size_t limit = size < SCAN_LIMIT ? size : SCAN_LIMIT;
	size_t start = rng_below(&t->rng, size);
	for (size_t k = 0; k < limit; k++) {
		size_t index = (start + k) % size;
		for (int i = 0; i < t->wl->ndims; i++) {
			point[i] = (int)(index % t->counts[i]);
			index /= t->counts[i];
		}
		if (fresh(t, point, base, d, key))
			return true;
	}
	return false;
}

/* Change dimension i at random: ordinal (integer) dimensions prefer a
 * neighbouring value, so the chunk size walks rather than jumps. */
static void mutate_dim(cuco_tuner *t, int *point, int i)
{
	int count = (int)t->counts[i], v = point[i];
	if (t->wl->dims[i].kind == CUCO_DIM_INT && rng_unit(&t->rng) < 0.5) {
		int next = v + (rng_next(&t->rng) & 1 ? 1 : -1);
		point[i] = next < 0 ? 1 : next >= count ? count - 2 : next;
	} else {
		point[i] = (v + 1 + (int)rng_below(&t->rng, (size_t)count - 1)) % count;
	}
}

/* A point `changes` distinct dimensions away from entry `from`. */
static bool neighbour(cuco_tuner *t, int from, int changes, const cuco_directive *base,
	int *point, cuco_directive *d, char *key)
{
	int dims[CUCO_MAX_DIMS], n = 0;
	for (int i = 0; i < t->wl->ndims; i++)
		if (t->counts[i] > 1)
			dims[n++] = i;
	if (changes > n)
		changes = n;
	if (changes == 0)
		return false;
	for (int tries = 0; tries < DRAW_TRIES; tries++) {
		memcpy(point, t->entries[from].point, sizeof t->entries[from].point);
		for (int c = 0; c < changes; c++) {  /* partial Fisher-Yates */
			int k = c + (int)rng_below(&t->rng, (size_t)(n - c));
			int dim = dims[k];
			dims[k] = dims[c];
			dims[c] = dim;
			mutate_dim(t, point, dim);
		}
		if (fresh(t, point, base, d, key))
			return true;
	}
	return false;
}

/* ILS: list every one-dimension move from cur in random order. */
static void list_moves(cuco_tuner *t)
{
	size_t n = 0;
	for (int i = 0; i < t->wl->ndims; i++)
		n += t->counts[i] - 1;
	t->moves = cuco_xrealloc(t->moves, (n ? n : 1) * sizeof *t->moves);
	n = 0;
	for (int i = 0; i < t->wl->ndims; i++)
		for (int v = 0; v < (int)t->counts[i]; v++)
			if (v != t->entries[t->cur].point[i]) {
				t->moves[n][0] = i;
				t->moves[n][1] = v;
				n++;
			}
	for (size_t k = n; k > 1; k--) {  /* Fisher-Yates */
		size_t j = rng_below(&t->rng, k);
		int a = t->moves[k - 1][0], b = t->moves[k - 1][1];
		t->moves[k - 1][0] = t->moves[j][0];
		t->moves[k - 1][1] = t->moves[j][1];
		t->moves[j][0] = a;
		t->moves[j][1] = b;
	}
	t->nmoves = n;
	t->next_move = 0;
	t->moves_for = t->cur;
}

static bool ils_next_move(cuco_tuner *t, const cuco_directive *base, int *point,
	cuco_directive *d, char *key)
{
	if (t->moves_for != t->cur)
		list_moves(t);
	while (t->next_move < t->nmoves) {
		const int *m = t->moves[t->next_move++];
		memcpy(point, t->entries[t->cur].point, sizeof t->entries[t->cur].point);
		point[m[0]] = m[1];
		if (fresh(t, point, base, d, key))
			return true;
	}
	return false;
}

static bool usable(const entry *e)
{
	return e->observed && !e->forbidden && !isnan(e->score);
}

int cuco_tuner_propose(cuco_tuner *t, const cuco_directive *base, cuco_directive *out,
	uint64_t *parent)
{
	int point[CUCO_MAX_DIMS] = { 0 };
	char key[KEY_MAX];
	int from = -1;
	bool kick = false, found = false;

	if (t->cur >= 0 && !usable(&t->entries[t->cur]))
		t->cur = t->best;
	if (t->algo == CUCO_TUNER_ANNEAL && t->cur >= 0) {
		from = t->cur;
		found = neighbour(t, from, 1, base, point, out, key);
	} else if (t->algo == CUCO_TUNER_ILS && t->cur >= 0) {
		from = t->cur;
		found = ils_next_move(t, base, point, out, key);
		if (!found && t->since_best < ILS_RESTART_AFTER) {
			/* A local optimum: perturb the best one found so far. */
			from = t->best;
			int changes = (int)lround(ILS_KICK_SHARE * t->wl->ndims);
			found = neighbour(t, from, changes > 1 ? changes : 2, base, point, out, key);
			kick = true;
		}
		if (!found) {
			t->since_best = 0;  /* a restart from a random point */
			kick = true;
		}
	}
	if (!found) {
		from = -1;
		found = draw(t, base, point, out, key);
	}
	if (!found)
		return CUCO_ENOTFOUND;
	int index = add_entry(t, key, point, from);
	t->entries[index].kick = kick;
	*parent = from >= 0 ? t->entries[from].id : 0;
	return CUCO_OK;
}

/* ---- learning ----------------------------------------------------------------- */

double cuco_tune_accept_prob(double cur, double next, double temp)
{
	if (isnan(next))
		return 0.0;
	if (isnan(cur) || next >= cur)
		return 1.0;
	if (temp <= 0)
		return 0.0;
	return exp(-((cur - next) / fabs(cur)) / temp);
}

static double temperature(const cuco_tuner *t, int step)
{
	double x = (double)step / t->horizon;
	return ANNEAL_T0 * pow(ANNEAL_TMIN / ANNEAL_T0, x < 1 ? x : 1);
}

static void move_to(cuco_tuner *t, int index, double score)
{
	switch (t->algo) {
	case CUCO_TUNER_RANDOM:
		break;
	case CUCO_TUNER_ANNEAL:
		if (t->cur < 0 || rng_unit(&t->rng) <
				cuco_tune_accept_prob(t->entries[t->cur].score, score,
					temperature(t, t->entries[index].step)))
			t->cur = index;
		break;
	case CUCO_TUNER_ILS:
		/* A perturbation (or restart) becomes the next start whatever
		 * its score; any other point replaces cur only when strictly
		 * better (first improvement). */
		if (t->cur < 0 || t->entries[index].kick || score > t->entries[t->cur].score)
			t->cur = index;
		break;
	}
}

void cuco_tuner_observe(cuco_tuner *t, const cuco_directive *d, uint64_t id, double score)
{
	char key[KEY_MAX];
	int point[CUCO_MAX_DIMS];
	bool inside = directive_point(t, d, point);
	cuco_tuner_key(t, d, key, sizeof key);
	int index = t->table ? find(t, key) : -1;
	if (index < 0)
		index = add_entry(t, key, point, -1);
	entry *e = &t->entries[index];
	/* Another candidate at a point a scored one holds (a model's child
	 * with the seed's directive and its own code) takes it only when
	 * better: a failed or suspect one is never a parent. */
	if (e->observed && e->id != id && usable(e) && !(score > e->score))
		return;
	e->id = id;
	e->score = score;
	e->observed = true;
	if (!inside || !usable(e))
		return;
	if (t->best < 0 || !usable(&t->entries[t->best]) || score > t->entries[t->best].score) {
		t->best = index;
		t->since_best = 0;
	} else {
		t->since_best++;
	}
	move_to(t, index, score);
}

void cuco_tuner_forbid(cuco_tuner *t, uint64_t id)
{
	int best = -1;
	for (size_t i = 0; i < t->nentries; i++) {
		entry *e = &t->entries[i];
		if (e->id == id && id != 0)
			e->forbidden = true;
		else if (usable(e) && (best < 0 || e->score > t->entries[best].score))
			best = (int)i;
	}
	t->best = best;
	if (t->cur >= 0 && t->entries[t->cur].forbidden)
		t->cur = best;
}

/* ---- the "tune" strategy ---------------------------------------------------- */

typedef struct tune_state {
	cuco_strategy_env env;
	cuco_tuner *tuner;
	char seed_failed[160];  /* why the seed failed, "" when it did not */
} tune_state;

static int tune_init(const cuco_strategy_env *env, void **state, cuco_err *err)
{
	cuco_tuner_algo algo;
	if (cuco_tuner_algo_parse(env->cfg->tuner, &algo) != CUCO_OK)
		return cuco_errf(err, CUCO_EUSAGE, "--tuner %s: not random, anneal or ils",
			env->cfg->tuner);
	if (!env->seed_id)
		return cuco_errf(err, CUCO_EUSAGE, "%s has no seed, and the directive tuner varies a "
			"seed's directive: run --strategy evolve or beam with a model (--llm), whose fast path "
			"makes the first one", env->wl->name);
	tune_state *ts = cuco_xcalloc(1, sizeof *ts);
	ts->env = *env;
	int rc = cuco_tuner_new(env->wl, algo, env->cfg->seed, env->cfg->budget, &ts->tuner, err);
	if (rc != CUCO_OK) {
		free(ts);
		return rc;
	}
	*state = ts;
	return CUCO_OK;
}

static int tune_propose(void *state, cuco_proposal *out, cuco_err *err)
{
	tune_state *ts = state;
	uint64_t parent = 0;
	memset(out, 0, sizeof *out);
	/* Every child is the seed's source under another directive: a seed
	 * that failed on its own makes children that fail the same way. */
	if (ts->seed_failed[0])
		return cuco_errf(err, CUCO_ENOTFOUND, "the seed failed (%s): nothing to tune from; "
			"fix the seed ('cuco check --try' runs it as a run would)", ts->seed_failed);
	int rc = cuco_tuner_propose(ts->tuner, ts->env.seed_directive, &out->cand.directive, &parent);
	if (rc != CUCO_OK)
		return rc == CUCO_ENOTFOUND ? rc : cuco_errf(err, rc, "tuner: cannot propose");
	out->cand.origin = CUCO_ORIGIN_TUNE;
	out->cand.nparents = 1;
	out->cand.parents[0] = parent ? parent : ts->env.seed_id;
	out->cand.island = 0;
	cuco_strlcpy(out->cand.source_hash, ts->env.seed_hash, sizeof out->cand.source_hash);
	snprintf(out->cand.note, sizeof out->cand.note, "%s tuner: %s",
		cuco_tuner_algo_name(ts->tuner->algo),
		parent ? "one step from its parent" : "drawn from the whole space");
	return CUCO_OK;
}

/* Only configurations of the seed's own source are points of the space;
 * a person's edit with the same directive is a different program. */
static void tune_observe(void *state, const cuco_candidate *c)
{
	tune_state *ts = state;
	cuco_fail_class cls;
	if (c->id == ts->env.seed_id && c->status == CUCO_STATUS_FAILED &&
	    !(cuco_fail_parse(c->failure.error_class, &cls) == CUCO_OK && cls == CUCO_FAIL_ENVIRONMENT))
		snprintf(ts->seed_failed, sizeof ts->seed_failed, "%s: %.*s", c->failure.error_class,
			(int)(strcspn(c->failure.excerpt, "\n") < 120 ? strcspn(c->failure.excerpt, "\n") : 120),
			c->failure.excerpt);
	else if (c->id == ts->env.seed_id)
		ts->seed_failed[0] = '\0';  /* measured again, and passed */
	if (strcmp(c->source_hash, ts->env.seed_hash) != 0)
		return;
	if (c->status == CUCO_STATUS_REJECTED) {
		cuco_tuner_observe(ts->tuner, &c->directive, c->id, NAN);
		cuco_tuner_forbid(ts->tuner, c->id);
		return;
	}
	bool finished = c->status == CUCO_STATUS_DONE || c->status == CUCO_STATUS_FAILED;
	cuco_tuner_observe(ts->tuner, &c->directive, c->id,
		finished && c->status == CUCO_STATUS_DONE ? c->score : NAN);
}

static void tune_free(void *state)
{
	tune_state *ts = state;
	cuco_tuner_free(ts->tuner);
	free(ts);
}

const cuco_strategy cuco_strategy_tune = {
	.name = "tune",
	.init = tune_init,
	.propose = tune_propose,
	.observe = tune_observe,
	.hint = NULL,
	.free = tune_free,
};
