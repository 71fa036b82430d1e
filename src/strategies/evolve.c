/* evolve.c — CUCo's slow path: a multi-island evolutionary search whose
 * mutations are LLM edits (full rewrite, diff, crossover, fix).
 *
 * Each generation goes to the next island in turn. Its parent is drawn by
 * ShinkaEvolve's weighted rule (or a power law) among the island's correct
 * members and every pinned candidate; an island whose members all failed
 * is in fix mode. The operator and temperature come from the phase: the
 * first explore_fraction of the generations explore, the rest exploit
 * (CUCo's two runner invocations, here one switch). Every migration_interval
 * generations a share of each island moves to another island, and a meta
 * summary of recent candidates becomes the islands' recommendations.
 * Children whose normalised source and directive are already known are
 * refused and the model is asked again. With GIN usable, island 1 starts
 * from the seed with a GIN directive and islands 0 and 1 each keep their
 * backend in their prompts.
 *
 * Several proposals may be in the making at once (the engine's llm_jobs):
 * each plans under the strategy lock — its island is the next one after
 * those of the proposals in flight, its parent, operator and phase come
 * from what has been committed — calls the model with the lock let go,
 * and commits under the lock. Generations, migrations, meta summaries and
 * the explore→exploit switch count committed proposals only, so a resumed
 * run (which replays what was stored) rebuilds the same state. A result
 * may arrive after later proposals: the population is what has been
 * observed, and a child's parent is looked up when it lands.
 */
#include "strategies/search_int.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HINTS_KEPT 4         /* per island, newest first out */
#define META_SHOWN 16        /* recent candidates a meta summary reads */

/* ---- the pure rules ----------------------------------------------------- */

/* The k-th smallest of v[0..n) (0-based), reordering v so that nothing
 * before k is larger: Wirth's selection, linear on average, so a
 * generation stays cheap with thousands of members. */
static double kth_smallest(double *v, size_t n, size_t k)
{
	ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	while (l < m) {
		double x = v[kk];
		ptrdiff_t i = l, j = m;
		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				double t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			m = j;
	}
	return v[k];
}

static double median_of(double *v, size_t n)
{
	double upper = kth_smallest(v, n, n / 2);
	if (n % 2)
		return upper;
	/* After the selection everything before n/2 is no larger. */
	double lower = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lower)
			lower = v[i];
	return (lower + upper) / 2;
}

typedef struct ranked {
	double score;
	size_t index;
} ranked;

static int by_score_then_index(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return (x->index > y->index) - (x->index < y->index);
}

void cuco_parent_weights(cuco_parent_rule rule, double lambda, double alpha,
	const double *scores, const int *children, size_t n, double *w)
{
	if (n == 0)
		return;
	double *v = cuco_xmalloc(n * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(scores[i]))
			v[k++] = scores[i];
	double med = k ? median_of(v, k) : 0;
	for (size_t i = 0; i < k; i++)
		v[i] = fabs(v[i] - med);
	double mad = k ? median_of(v, k) : 0;
	free(v);
	if (!(mad > 0))
		mad = 1;
	if (rule == CUCO_PARENT_WEIGHTED) {
		for (size_t i = 0; i < n; i++) {
			double s = isnan(scores[i]) ? med : scores[i];
			w[i] = 1 / (1 + exp(-lambda * (s - med) / mad)) / (1 + children[i]);
		}
		return;
	}
	/* rank 1 = the best; NAN scores rank as the median; ties by order. */
	ranked *r = cuco_xmalloc(n * sizeof *r);
	for (size_t i = 0; i < n; i++)
		r[i] = (ranked){ isnan(scores[i]) ? med : scores[i], i };
	qsort(r, n, sizeof *r, by_score_then_index);
	for (size_t i = 0; i < n; i++)
		w[r[i].index] = pow((double)(i + 1), -alpha);
	free(r);
}

size_t cuco_pick_index(const double *w, size_t n, double u)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += w[i];
	double at = u * sum, acc = 0;
	size_t last = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(w[i] > 0))
			continue;
		acc += w[i];
		last = i;
		if (at < acc)
			return i;
	}
	return last;
}

bool cuco_evolve_exploring(const cuco_evolve_config *c, int g, int total)
{
	return (double)g < c->explore_fraction * total;
}

int cuco_evolve_operator(const cuco_evolve_config *c, int g, int total, double u, double v,
	double *temperature)
{
	bool explore = cuco_evolve_exploring(c, g, total);
	const double *p = explore ? c->explore_p : c->exploit_p;
	const double *t = explore ? c->explore_temps : c->exploit_temps;
	int ti = (int)(v * 3);
	*temperature = t[ti > 2 ? 2 : ti];
	return (int)cuco_pick_index(p, CUCO_OP_COUNT, u);
}

size_t cuco_migration_plan(const cuco_member *m, size_t n, int islands, double rate,
	uint64_t *rng, cuco_move *out)
{
	size_t nout = 0;
	if (islands < 2)
		return 0;
	size_t *eligible = cuco_xmalloc((n ? n : 1) * sizeof *eligible);
	for (int isl = 0; isl < islands; isl++) {
		size_t size = 0, best = n, ne = 0;
		for (size_t i = 0; i < n; i++) {
			if (m[i].island != isl)
				continue;
			size++;
			if (!isnan(m[i].score) && (best == n || m[i].score > m[best].score))
				best = i;
		}
		for (size_t i = 0; i < n; i++)
			if (m[i].island == isl && i != best && !isnan(m[i].score) && m[i].generation > 0 &&
					!m[i].pinned)
				eligible[ne++] = i;
		size_t want = (size_t)(rate * (double)size + 0.5);
		if (want < 1)
			want = 1;
		/* A partial Fisher-Yates shuffle picks `want` distinct members. */
		for (size_t k = 0; k < want && k < ne; k++) {
			size_t j = k + cuco_rng_next(rng) % (ne - k);
			size_t t = eligible[k];
			eligible[k] = eligible[j];
			eligible[j] = t;
			int to = (int)(cuco_rng_next(rng) % (uint64_t)(islands - 1));
			out[nout++] = (cuco_move){ m[eligible[k]].id, isl, to >= isl ? to + 1 : to };
		}
	}
	free(eligible);
	return nout;
}

/* ---- the "evolve" strategy ------------------------------------------------ */

typedef struct member {
	uint64_t id;
	uint64_t parent;
	int island;
	int generation;
	int children;
	cuco_origin origin;
	cuco_status status;
	double score;             /* fraction of peak, else speedup; NAN unless done */
	bool pinned;
	bool suspect;             /* refused by a defence: never a parent, pinned or not */
	char source_hash[CUCO_HASH_LEN + 1];
	/* Not the directive (1.7 KiB with its knobs): a run keeps a member per
	 * candidate for its whole life, so a parent's is read from the store
	 * when a child is asked for. */
} member;

typedef struct evolve_state {
	cuco_strategy_env env;
	cuco_search_config k;
	search_llm llm;
	fastpath *fp;
	search_start start;         /* the seed, or the fast path's program */
	cuco_tuner *tuners[SEARCH_MAX_ISLANDS];
	member *m;                  /* by id, ascending */
	size_t n, cap;
	search_known known;         /* every candidate seen, and those in flight */
	int gen;                    /* island generations committed, resumed ones included */
	int planning;               /* island proposals being made now */
	int total;                  /* generations the phases are laid over */
	bool live;                  /* the first propose happened (replay is over) */
	int migrated_at, meta_at;   /* generation of the last migration and summary */
	bool exploring;
	char *meta;                 /* the latest recommendations, or NULL */
	cuco_hardware hw;           /* for the prompts, and whether GIN is usable */
	bool gin_island;            /* island 1 starts from a GIN directive (set with the start) */
	cuco_directive gin_dir;
	char *hints[SEARCH_MAX_ISLANDS + 1][HINTS_KEPT];  /* [islands] = for every island */
	uint64_t rng;
	uint64_t rng_directive;     /* the directive-only operator's draws */
	int templated;              /* the start names a define: 1, 0, or -1 not known yet */
	uint64_t *repairs;          /* failed LLM children waiting for their repair turn */
	size_t nrepairs, repairs_cap;
} evolve_state;

static member *find(evolve_state *s, uint64_t id)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->m[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->m[lo].id == id ? &s->m[lo] : NULL;
}

static member *insert(evolve_state *s, uint64_t id)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->m = cuco_xrealloc(s->m, s->cap * sizeof *s->m);
	}
	size_t at = s->n;
	while (at > 0 && s->m[at - 1].id > id)
		at--;
	memmove(&s->m[at + 1], &s->m[at], (s->n - at) * sizeof *s->m);
	s->n++;
	memset(&s->m[at], 0, sizeof s->m[at]);
	s->m[at].id = id;
	return &s->m[at];
}

static bool island_origin(cuco_origin o)
{
	return o == CUCO_ORIGIN_LLM_DIFF || o == CUCO_ORIGIN_LLM_FULL || o == CUCO_ORIGIN_LLM_CROSS ||
		o == CUCO_ORIGIN_TUNE;
}

static void remember(char **ring, const char *text)
{
	free(ring[HINTS_KEPT - 1]);
	memmove(ring + 1, ring, (HINTS_KEPT - 1) * sizeof *ring);
	ring[0] = cuco_xstrdup(text);
}

static int model_index(const search_llm *l, const char *name)
{
	for (int i = 0; i < l->cfg.nmodels; i++)
		if (strcmp(l->cfg.models[i].name, name) == 0)
			return i;
	return -1;
}

/* Whether island 1 starts from a GIN directive: GIN usable here, in the
 * design space, and two islands at least; once the start is known. */
static void gin_setup(evolve_state *s)
{
	const cuco_dim *backend = cuco_workload_dim(s->env.wl, "backend");
	for (int v = 0; backend && s->hw.gin && s->k.evolve.islands >= 2 && v < backend->nvalues; v++)
		if (strcasecmp(backend->values[v], "gin") == 0)
			s->gin_island = cuco_directive_nearest(s->env.wl, &s->start.directive, "backend",
				backend->values[v], &s->gin_dir);
	if (s->gin_island)
		cuco_log(CUCO_LOG_INFO, "evolve: GIN is usable: island 1 starts from a GIN directive");
}

static void evolve_observe(void *state, const cuco_candidate *c)
{
	evolve_state *s = state;
	if (s->fp)
		fastpath_observe(s->fp, c);
	if (!s->start.id) {
		search_start_observe(&s->start, s->fp, c);
		if (s->start.id)
			gin_setup(s);
	}
	member *m = find(s, c->id);
	bool fresh = !m;
	if (fresh) {
		m = insert(s, c->id);
		m->parent = c->nparents ? c->parents[0] : 0;
		member *p = m->parent ? find(s, m->parent) : NULL;
		if (p)
			p->children++;
		if (!s->live && island_origin(c->origin))
			s->gen++;
	}
	bool finished_now = (fresh || m->status < CUCO_STATUS_DONE) && c->status >= CUCO_STATUS_DONE;
	m->island = c->island;
	m->generation = c->generation;
	m->origin = c->origin;
	m->status = c->status;
	m->pinned = c->pinned;
	m->suspect = cuco_cand_suspect(c);
	m->score = search_score(c);
	if (strcmp(m->source_hash, c->source_hash) != 0) {
		cuco_strlcpy(m->source_hash, c->source_hash, sizeof m->source_hash);
		if (m->source_hash[0])
			search_known_seen(&s->known, m->id);
	}
	if (c->island >= 0 && c->island < s->k.evolve.islands && s->tuners[c->island])
		cuco_tuner_observe(s->tuners[c->island], &c->directive, c->id,
			c->status == CUCO_STATUS_REJECTED ? NAN : m->score);
	if (c->status == CUCO_STATUS_REJECTED && c->island >= 0 && c->island < s->k.evolve.islands &&
			s->tuners[c->island])
		cuco_tuner_forbid(s->tuners[c->island], c->id);
	/* A failed LLM child of this session gets its repair turn; a repair
	 * is not repaired, so the turns are bounded. */
	if (finished_now && s->live && s->k.evolve.repair && c->status == CUCO_STATUS_FAILED &&
			island_origin(c->origin) && c->origin != CUCO_ORIGIN_TUNE &&
			strncmp(c->note, CUCO_REPAIR_NOTE, strlen(CUCO_REPAIR_NOTE)) != 0) {
		if (s->nrepairs == s->repairs_cap) {
			s->repairs_cap = s->repairs_cap ? 2 * s->repairs_cap : 8;
			s->repairs = cuco_xrealloc(s->repairs, s->repairs_cap * sizeof *s->repairs);
		}
		s->repairs[s->nrepairs++] = c->id;
	}
	/* The bandit learns each LLM child once, when it finishes. */
	int arm = model_index(&s->llm, c->model);
	member *p = find(s, m->parent);
	if (finished_now && arm >= 0 && s->llm.llm && p && island_origin(c->origin) &&
			c->origin != CUCO_ORIGIN_TUNE)
		cuco_bandit_update(&s->llm.bandit, arm, cuco_bandit_reward(p->score, m->score),
			c->cost_usd);
}

static void evolve_hint(void *state, int island, const char *text)
{
	evolve_state *s = state;
	int slot = island < 0 || island >= s->k.evolve.islands ? s->k.evolve.islands : island;
	remember(s->hints[slot], text);
}

/* Each island's own prompt when one island is GIN's (CUCo's per-island
 * task messages), then a person's hints (the prompt itself shows rejected
 * candidates with their reasons). */
static char *hints_for(const evolve_state *s, int island)
{
	cuco_buf b = { 0 };
	if (s->gin_island && island <= 1)
		cuco_buf_puts(&b, island == 1 ?
			"- This island's programs move bytes with GIN: puts and signals issued from the "
			"GPU through the NIC. Keep backend gin and improve within it.\n" :
			"- This island's programs move bytes with LSA: loads and stores through NVLink "
			"peer pointers. Keep backend lsa and improve within it.\n");
	const int slots[2] = { island, s->k.evolve.islands };
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < HINTS_KEPT; i++)
			if (s->hints[slots[k]][i])
				cuco_buf_printf(&b, "- %s\n", s->hints[slots[k]][i]);
	return b.data;
}

/* ---- island bookkeeping in the store ---------------------------------------- */

static void migrate(evolve_state *s)
{
	cuco_member *cm = cuco_xmalloc((s->n ? s->n : 1) * sizeof *cm);
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].island >= 0 && s->m[i].status != CUCO_STATUS_REJECTED)
			cm[n++] = (cuco_member){ s->m[i].id, s->m[i].island, s->m[i].generation,
				s->m[i].score, s->m[i].pinned };
	cuco_move *moves = cuco_xmalloc((n ? n : 1) * sizeof *moves);
	size_t nm = cuco_migration_plan(cm, n, s->k.evolve.islands, s->k.evolve.migration_rate,
		&s->rng, moves);
	if (nm > 0) {
		char text[512];
		cuco_port_islands a = { .n = s->k.evolve.islands, .moves = moves, .nmoves = nm,
			.author = "evolve", .text = text };
		int len = snprintf(text, sizeof text, "generation %d: %zu moved:", s->gen, nm);
		for (size_t k = 0; k < nm && len > 0 && (size_t)len < sizeof text - 24; k++)
			len += snprintf(text + len, sizeof text - (size_t)len, " #%llu %d->%d",
				(unsigned long long)moves[k].id, moves[k].from, moves[k].to);
		cuco_err err;
		if (s->env.port->islands(s->env.port->ctx, &a, &err) != CUCO_OK) {
			cuco_log(CUCO_LOG_WARN, "evolve: migration: %s", err.msg);
		} else {
			for (size_t k = 0; k < nm; k++)
				find(s, moves[k].id)->island = moves[k].to;
			cuco_log(CUCO_LOG_INFO, "evolve: %s", text);
		}
	}
	free(moves);
	free(cm);
}

static void set_phase(evolve_state *s, bool exploring)
{
	char text[512];
	cuco_port_islands a = { .n = s->k.evolve.islands, .phase = exploring ? "explore" : "exploit",
		.author = "evolve", .text = text };
	snprintf(text, sizeof text, "generation %d of %d: every island %ss now", s->gen, s->total,
		a.phase);
	cuco_err err;
	if (s->env.port->islands(s->env.port->ctx, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "evolve: phase: %s", err.msg);
	s->exploring = exploring;
}

/* ---- meta summary ------------------------------------------------------------ */

static const char meta_system[] =
	"You review an evolutionary search for faster programs that overlap computation with "
	"communication. From the recent candidates below (directive, outcome, the author's note) "
	"write at most %d recommendations for the next generations, one per line, numbered, "
	"each one sentence: what to try or avoid, and why, judging only from these results.";

/* Numbered or bulleted lines of a reply, at most max, as "1. …" lines. */
static char *recommendations(const char *reply, int max)
{
	cuco_buf b = { 0 };
	int n = 0;
	for (const char *p = reply; *p && n < max;) {
		size_t len = strcspn(p, "\n");
		const char *q = p;
		while (q < p + len && isspace((unsigned char)*q))
			q++;
		const char *body = q;
		while (body < p + len && (isdigit((unsigned char)*body) || *body == '.' ||
				*body == ')' || *body == '-' || *body == '*'))
			body++;
		if (body > q && body < p + len && isspace((unsigned char)*body)) {
			while (body < p + len && isspace((unsigned char)*body))
				body++;
			cuco_buf_printf(&b, "%d. %.*s\n", ++n, (int)(p + len - body), body);
		}
		p += len + (p[len] == '\n');
	}
	return b.data;
}

/* meta "evolve-meta", {"generation": G, "recommendations": "…"}, with
 * the event that says it. */
static int meta_put(evolve_state *s, int generation, const char *recs, cuco_err *err)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "generation", generation);
	cJSON_AddStringToObject(o, "recommendations", recs);
	char *json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char text[512];
	snprintf(text, sizeof text, "generation %d: %.400s", generation, recs);
	int rc = s->env.port->event(s->env.port->ctx, "evolve-meta", json, CUCO_EVENT_META, "evolve", 0,
		text, err);
	free(json);
	return rc;
}

static int recent_one(const cuco_candidate *c, void *arg)
{
	cuco_buf *b = arg;
	if (!island_origin(c->origin) || c->status < CUCO_STATUS_DONE)
		return 0;
	char dir[96];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	cuco_buf_printf(b, "#%llu %s %s: ", (unsigned long long)c->id, cuco_origin_name(c->origin),
		dir);
	if (c->status == CUCO_STATUS_DONE)
		cuco_buf_printf(b, "%.3fx the baseline", c->speedup);
	else
		cuco_buf_printf(b, "%s %s", c->status == CUCO_STATUS_REJECTED ? "rejected:" :
			c->failure.stage,
			c->status == CUCO_STATUS_REJECTED ? c->reject_reason : c->failure.error_class);
	cuco_buf_printf(b, " — %.200s\n", c->note);
	return 0;
}

/* Every meta_interval generations: the recent candidates → at most
 * meta_max recommendations for every island's next prompts. */
static void meta_summary(evolve_state *s)
{
	int model = search_llm_pick(&s->llm);
	uint64_t from = s->n > META_SHOWN * 2 ? s->m[s->n - META_SHOWN * 2].id : 1;
	cuco_buf user = { 0 };
	cuco_err err;
	char system[sizeof meta_system + 16];
	snprintf(system, sizeof system, meta_system, s->k.evolve.meta_max);
	const cuco_port *port = s->env.port;
	if (model < 0 || port->candidates(port->ctx, from, recent_one, &user, &err) != CUCO_OK ||
			user.len == 0) {
		cuco_buf_free(&user);
		return;
	}
	int gen = s->gen;  /* others may commit while the model answers */
	search_ledger lg;
	search_ledger_init(&lg, CUCO_CALL_META, 0);
	char *reply = search_llm_ask(&s->llm, &lg, model, system, user.data, 0.0, SEARCH_PLAN_TOKENS,
		&err);
	bool answered = reply != NULL;
	char *recs = answered ? recommendations(reply, s->k.evolve.meta_max) : NULL;
	if (answered && !recs) {
		const char *why = "no numbered recommendation in the reply";
		search_ledger_refused(&lg, why);
		cuco_buf prompt = { 0 };
		cuco_buf_printf(&prompt, "=== system ===\n%s\n=== user ===\n%s\n", system, user.data);
		search_refuse(&s->llm, &lg, -1, s->llm.cfg.models[model].name, prompt.data, reply, why);
		cuco_buf_free(&prompt);
	}
	search_ledger_close(&s->llm, &lg);
	cuco_buf_free(&user);
	free(reply);
	if (!recs) {
		cuco_log(CUCO_LOG_WARN, "evolve: meta summary at generation %d: %s", gen,
			answered ? "no numbered recommendation in the reply" : err.msg);
		return;
	}
	if (meta_put(s, gen, recs, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "evolve: meta summary: %s", err.msg);
	free(s->meta);
	s->meta = recs;
}

/* ---- one generation ------------------------------------------------------------- */

static const cuco_prompt_kind op_prompt[] = {
	[CUCO_OP_FULL] = CUCO_PROMPT_FULL,
	[CUCO_OP_DIFF] = CUCO_PROMPT_DIFF,
	[CUCO_OP_CROSS] = CUCO_PROMPT_CROSS,
};

/* Eligible parents of an island: its correct members and every pinned
 * candidate; rejected and suspect ones never. Indexes into s->m. */
static size_t parent_pool(const evolve_state *s, int island, size_t *pool)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const member *m = &s->m[i];
		if (m->status == CUCO_STATUS_REJECTED || m->suspect || m->origin == CUCO_ORIGIN_BASELINE)
			continue;
		if (m->pinned || (m->island == island && m->status == CUCO_STATUS_DONE))
			pool[n++] = i;
	}
	return n;
}

static size_t pick_parent(evolve_state *s, const size_t *pool, size_t n)
{
	double *scores = cuco_xmalloc(n * sizeof *scores), *w = cuco_xmalloc(n * sizeof *w);
	int *children = cuco_xmalloc(n * sizeof *children);
	for (size_t i = 0; i < n; i++) {
		scores[i] = s->m[pool[i]].score;
		children[i] = s->m[pool[i]].children;
	}
	const cuco_evolve_config *e = &s->k.evolve;
	cuco_parent_weights(e->parent_rule, e->lambda, e->alpha, scores, children, n, w);
	size_t at = pool[cuco_pick_index(w, n, search_unit(&s->rng))];
	free(scores);
	free(w);
	free(children);
	return at;
}

typedef struct prompt_arg {
	cuco_prompt_spec *spec;
	cuco_prompt_kind asked;  /* the kind the plan asked for; the lean profile may ask less */
	size_t block_bytes;      /* of the parent's EVOLVE-BLOCKs */
	int64_t room;            /* tokens a reply may take */
	const cuco_port *port;
	cuco_buf system, user;
	cuco_prompt_map map;
	cuco_directive base;    /* out: the parent's directive */
} prompt_arg;

/* search_build's builder: the prompt in a shape. */
static int build_shaped(void *arg, const search_shape *shape, const char **system,
	const char **user, const cuco_prompt_map **map, cuco_err *err)
{
	prompt_arg *a = arg;
	a->spec->profile = shape->profile;
	a->spec->json = shape->json;
	a->spec->map = &a->map;
	/* A lean prompt's reply has little room: a crossover, or a rewrite of
	 * blocks longer than half of it, is asked as hunks instead. */
	a->spec->kind = a->asked;
	bool lean = shape->profile == CUCO_PROFILE_LEAN;
	if (lean && (a->asked == CUCO_PROMPT_CROSS || (a->asked == CUCO_PROMPT_FULL &&
			(double)a->block_bytes / CUCO_BYTES_PER_TOKEN > (double)a->room / 2))) {
		a->spec->kind = CUCO_PROMPT_DIFF;
		a->spec->other = 0;
	}
	int rc = search_prompt(a->port, a->spec, &a->base, &a->system, &a->user, err);
	*system = a->system.data;
	*user = a->user.data;
	*map = &a->map;
	return rc;
}

/* The directive tuner as a cheap operator: a new configuration of a
 * member's source, chosen by the island's own tuner. */
static int tune_child(evolve_state *s, int island, const char *why, cuco_proposal *out,
	cuco_err *err)
{
	uint64_t parent = 0;
	cuco_directive d;
	int rc = cuco_tuner_propose(s->tuners[island], &s->start.directive, &d, &parent);
	if (rc != CUCO_OK)
		return rc == CUCO_ENOTFOUND ? rc : cuco_errf(err, rc, "evolve: island %d: tuner failed",
			island);
	const member *p = parent ? find(s, parent) : NULL;
	memset(out, 0, sizeof *out);
	out->cand.origin = CUCO_ORIGIN_TUNE;
	out->cand.island = island;
	out->cand.nparents = 1;
	out->cand.parents[0] = p ? p->id : s->start.id;
	out->cand.directive = d;
	cuco_strlcpy(out->cand.source_hash, p ? p->source_hash : s->start.hash,
		sizeof out->cand.source_hash);
	snprintf(out->cand.note, sizeof out->cand.note, "directive tuner on island %d: %s", island, why);
	return CUCO_OK;
}

/* A child to ask for: copies, not pointers into the members, which may
 * move while the model is asked. */
typedef struct child_plan {
	int island;
	int op;                 /* CUCO_OP_*, or -1 for fix mode */
	cuco_prompt_kind kind;  /* what the model is asked for */
	bool fix;               /* fix mode: the island has no correct member */
	double temperature;
	uint64_t parent;
	char parent_hash[CUCO_HASH_LEN + 1];
	uint64_t other;         /* crossover's second parent; 0 when none */
} child_plan;

/* Bytes of a program's EVOLVE-BLOCKs, their markers' lines excluded. */
static size_t block_bytes(const char *src, size_t len)
{
	cuco_block *b;
	size_t n, bytes = 0;
	if (cuco_text_blocks(src, len, "parent", &b, &n, NULL) != CUCO_OK)
		return 0;
	for (size_t k = 0; k < n; k++)
		bytes += b[k].to - b[k].from;
	free(b);
	return bytes;
}

static const cuco_origin kind_origin[] = {
	[CUCO_PROMPT_DIFF] = CUCO_ORIGIN_LLM_DIFF, [CUCO_PROMPT_FULL] = CUCO_ORIGIN_LLM_FULL,
	[CUCO_PROMPT_CROSS] = CUCO_ORIGIN_LLM_CROSS, [CUCO_PROMPT_FIX] = CUCO_ORIGIN_LLM_FULL,
	[CUCO_PROMPT_DIRECTIVE] = CUCO_ORIGIN_LLM_DIFF, [CUCO_PROMPT_REPAIR] = CUCO_ORIGIN_LLM_DIFF,
};

/* Ask the model for a child of plan->parent (search_child: a reply that
 * repeats a known candidate is answered, up to novelty_attempts). */
static int llm_child(evolve_state *s, const child_plan *plan, cuco_proposal *out, cuco_err *err)
{
	char *src;
	size_t len;
	const cuco_port *port = s->env.port;
	int rc = port->source(port->ctx, plan->parent_hash, &src, &len, err);
	if (rc != CUCO_OK)
		return rc;
	int model = search_llm_pick(&s->llm);
	const cuco_model *m = &s->llm.cfg.models[model];
	char *hints = hints_for(s, plan->island);
	cuco_prompt_spec spec = { .wl = s->env.wl, .kind = plan->kind, .parent = plan->parent,
		.other = plan->other, .island = plan->island, .inspirations = s->k.evolve.inspirations,
		.failures = s->k.evolve.failures, .meta = s->meta, .hints = hints, .hw = &s->hw };
	int64_t room = m->context > 0 ? cuco_prompt_reserve(m->context, m->max_tokens) -
		m->context / 32 : m->max_tokens;
	prompt_arg pa = { .spec = &spec, .asked = plan->kind, .block_bytes = block_bytes(src, len),
		.room = room, .port = port };
	search_shape shape;
	rc = search_build(&s->llm, model, build_shaped, &pa, &shape, err);
	free(hints);
	/* A parent that grew past the model's context (a model's child longer
	 * than the start) costs its proposal, not the run; the start's own
	 * prompt not fitting still ends it. */
	if (rc == CUCO_EENV && shape.too_long && plan->parent != s->start.id) {
		char why[sizeof err->msg];
		cuco_strlcpy(why, err->msg, sizeof why);
		rc = cuco_errf(err, CUCO_EDATA, "parent #%llu: %s", (unsigned long long)plan->parent, why);
	}
	cuco_prompt_kind kind = spec.kind;
	cuco_reply_kind got = CUCO_REPLY_FULL;
	if (rc == CUCO_OK) {
		char who[32];
		snprintf(who, sizeof who, "evolve: island %d", plan->island);
		search_ask ask = { .model = model, .wl = s->env.wl, .call = plan->fix ? CUCO_CALL_FIX :
			plan->kind == CUCO_PROMPT_REPAIR ? CUCO_CALL_REPAIR : CUCO_CALL_PROPOSE,
			.parent = plan->parent, .island = plan->island, .who = who, .src = src,
			.len = len, .base = &pa.base, .kind = kind, .shape = shape, .system = &pa.system,
			.user = &pa.user, .map = &pa.map, .temperature = plan->temperature,
			.attempts = s->k.evolve.novelty_attempts };
		rc = search_child(&s->llm, &s->known, &ask, out, &got, err);
	}
	free(src);
	cuco_buf_free(&pa.system);
	cuco_buf_free(&pa.user);
	if (rc != CUCO_OK)
		return rc;
	/* What was asked names it (a crossover, a directive-only child, a
	 * repair), and a rewrite answered with SEARCH/REPLACE hunks is a
	 * diff whatever was asked for. */
	out->cand.origin = got == CUCO_REPLY_DIFF && kind_origin[kind] == CUCO_ORIGIN_LLM_FULL
		? CUCO_ORIGIN_LLM_DIFF : kind_origin[kind];
	out->cand.island = plan->island;
	out->cand.nparents = spec.other ? 2 : 1;
	out->cand.parents[0] = plan->parent;
	out->cand.parents[1] = spec.other;
	if (kind == CUCO_PROMPT_DIRECTIVE) {
		char note[sizeof out->cand.note];
		snprintf(note, sizeof note, "directive only: %.480s", out->cand.note);
		cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
	}
	return CUCO_OK;
}

/* Whether every committed generation's result has landed. */
static bool all_landed(const evolve_state *s)
{
	int landed = 0;
	for (size_t i = 0; i < s->n; i++)
		landed += island_origin(s->m[i].origin) && s->m[i].status >= CUCO_STATUS_DONE;
	return s->planning == 0 && landed >= s->gen;
}

static bool island_has_members(const evolve_state *s, int island)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].island == island)
			return true;
	return false;
}

/* Island 1's first member when GIN is usable: the start (the seed, or
 * the fast path's program) with the nearest valid GIN directive (CUCo
 * seeds one island from LSA, one from GIN). */
static void gin_seed(evolve_state *s, cuco_proposal *out)
{
	memset(out, 0, sizeof *out);
	out->cand.origin = CUCO_ORIGIN_TUNE;
	out->cand.island = 1;
	out->cand.nparents = 1;
	out->cand.parents[0] = s->start.id;
	out->cand.directive = s->gin_dir;
	cuco_strlcpy(out->cand.source_hash, s->start.hash, sizeof out->cand.source_hash);
	cuco_strlcpy(out->cand.note, "island 1's GIN seed: the start with the nearest GIN directive",
		sizeof out->cand.note);
}

/* Whether the start program is templated over the directive: its source
 * names a dimension's define, so a directive alone changes what it runs. */
static bool templated(evolve_state *s)
{
	if (s->templated >= 0 || !s->start.id)
		return s->templated > 0;
	char *src = NULL;
	size_t len = 0;
	cuco_err err;
	s->templated = 0;
	if (s->env.port->source(s->env.port->ctx, s->start.hash, &src, &len, &err) == CUCO_OK)
		for (int i = 0; i < s->env.wl->ndims && !s->templated; i++)
			s->templated = s->env.wl->dims[i].define[0] &&
				memmem(src, len, s->env.wl->dims[i].define, strlen(s->env.wl->dims[i].define));
	free(src);
	return s->templated > 0;
}

/* Parent, operator and temperature of generation s->gen on an island;
 * false when there is no parent (the start is missing). */
static bool plan_child(evolve_state *s, int island, child_plan *plan)
{
	memset(plan, 0, sizeof *plan);
	plan->island = island;
	double u = search_unit(&s->rng), v = search_unit(&s->rng);
	plan->op = cuco_evolve_operator(&s->k.evolve, s->gen, s->total, u, v, &plan->temperature);
	size_t *pool = cuco_xmalloc((s->n ? s->n : 1) * sizeof *pool);
	size_t n = parent_pool(s, island, pool);
	const member *parent = NULL;
	if (n > 0) {
		parent = &s->m[pick_parent(s, pool, n)];
	} else {
		/* No correct member: fix a failed one (fix mode), or start an
		 * empty island from the start. */
		size_t nfailed = 0;
		for (size_t i = 0; i < s->n; i++)
			if (s->m[i].island == island && s->m[i].status == CUCO_STATUS_FAILED)
				pool[nfailed++] = i;
		if (nfailed > 0) {
			parent = &s->m[pool[cuco_rng_next(&s->rng) % nfailed]];
			plan->op = -1;
		} else {
			parent = find(s, s->start.id);
		}
	}
	if (parent && plan->op == CUCO_OP_CROSS) {
		/* The second parent: another correct candidate of any island. */
		size_t nother = 0;
		for (size_t i = 0; i < s->n; i++)
			if (s->m[i].status == CUCO_STATUS_DONE && &s->m[i] != parent &&
					s->m[i].island >= 0)
				pool[nother++] = i;
		if (nother > 0)
			plan->other = s->m[pool[cuco_rng_next(&s->rng) % nother]].id;
		else
			plan->op = CUCO_OP_FULL;
	}
	free(pool);
	if (!parent)
		return false;
	plan->parent = parent->id;
	cuco_strlcpy(plan->parent_hash, parent->source_hash, sizeof plan->parent_hash);
	plan->fix = plan->op < 0;
	plan->kind = plan->fix ? CUCO_PROMPT_FIX : op_prompt[plan->op];
	/* The directive-only operator, from its own draws so that the others
	 * stay as they were: a templated program's parent gets a new directive
	 * for its code, cheap and within a small model's reach. */
	if (!plan->fix && templated(s) && search_unit(&s->rng_directive) < s->k.evolve.directive_rate) {
		plan->kind = CUCO_PROMPT_DIRECTIVE;
		plan->other = 0;
	}
	return true;
}

/* The repair turn of a failed LLM child: the same model asked to mend it,
 * told its first error (call kind repair). CUCO_EDATA when every reply
 * was refused: the turn is spent. */
static int repair_child(evolve_state *s, uint64_t id, cuco_proposal *out, cuco_err *err)
{
	const member *m = find(s, id);
	if (!m)
		return cuco_errf(err, CUCO_EDATA, "evolve: repair of #%llu: not observed",
			(unsigned long long)id);
	child_plan plan = { .island = m->island, .op = CUCO_OP_DIFF, .kind = CUCO_PROMPT_REPAIR,
		.temperature = s->k.evolve.exploit_temps[0], .parent = id };
	cuco_strlcpy(plan.parent_hash, m->source_hash, sizeof plan.parent_hash);
	s->planning++;
	int rc = llm_child(s, &plan, out, err);
	s->planning--;
	if (rc != CUCO_OK)
		return rc;
	char note[sizeof out->cand.note];
	snprintf(note, sizeof note, CUCO_REPAIR_NOTE "%llu: %.440s", (unsigned long long)id,
		out->cand.note);
	cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
	return CUCO_OK;
}

/* An LLM child on an island, planned now and asked for with the lock let
 * go (the planning count keeps concurrent proposals on other islands). */
static int island_child(evolve_state *s, int island, cuco_proposal *out, cuco_err *err)
{
	child_plan plan;
	if (!plan_child(s, island, &plan))
		return cuco_errf(err, CUCO_EDATA, "evolve: island %d: no parent (the start #%llu is "
			"missing)", island, (unsigned long long)s->start.id);
	s->planning++;
	int rc = llm_child(s, &plan, out, err);
	s->planning--;
	if (rc == CUCO_OK && plan.fix) {
		char note[sizeof out->cand.note];
		snprintf(note, sizeof note, "fix mode (island %d had no correct candidate): %.440s",
			island, out->cand.note);
		cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
	}
	if (rc != CUCO_EDATA)
		return rc;
	/* Every reply was refused (the refusal record keeps them): the error
	 * is kept in the log and the generation goes to the tuner rather than
	 * being lost. */
	cuco_log(CUCO_LOG_WARN, "evolve: island %d: %s", island, err->msg);
	char why[200];
	snprintf(why, sizeof why, "the model's replies were refused (%.150s)", err->msg);
	return tune_child(s, island, why, out, err);
}

static int evolve_propose(void *state, cuco_proposal *out, cuco_err *err)
{
	evolve_state *s = state;
	memset(out, 0, sizeof *out);
	s->live = true;
	if (search_llm_spent(&s->llm))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
	int rc;
	if (s->fp && !fastpath_finished(s->fp)) {
		bool waiting = false;
		rc = fastpath_propose(s->fp, out, &waiting, err);
		if (rc != CUCO_OK || !waiting)
			return rc == CUCO_ENOTFOUND ? evolve_propose(state, out, err) : rc;
		/* An attempt is in flight: meanwhile the islands work on the seed,
		 * if there is one (search_start_ready says to wait otherwise). */
	}
	if ((rc = search_start_ready(&s->start, s->fp, s->env.wl, err)) != CUCO_OK)
		return rc;
	/* Generations given (the config or --generations) are the search's
	 * length, as a beam's iterations are; the fast path's attempts are not
	 * generations. */
	if (s->k.evolve.generations > 0 && s->gen + s->planning >= s->k.evolve.generations)
		return s->planning > 0 || (s->fp && !fastpath_finished(s->fp)) ? CUCO_EBUSY
			: cuco_errf(err, CUCO_ENOTFOUND, "%d generations done", s->gen);
	const cuco_evolve_config *e = &s->k.evolve;
	bool migrate_due = e->migration_interval > 0 && s->gen > 0 &&
		s->gen % e->migration_interval == 0 && s->migrated_at != s->gen;
	bool meta_due = e->meta_interval > 0 && e->meta_max > 0 && s->gen > 0 &&
		s->gen % e->meta_interval == 0 && s->meta_at != s->gen;
	/* A migration and a meta summary read the results of every generation
	 * before theirs: wait for those in flight, so that they do not depend on
	 * how many calls were out at once. */
	if ((migrate_due || meta_due) && !all_landed(s))
		return CUCO_EBUSY;
	if (migrate_due) {
		s->migrated_at = s->gen;
		migrate(s);
	}
	if (meta_due) {
		s->meta_at = s->gen;
		meta_summary(s);
	}
	bool exploring = cuco_evolve_exploring(e, s->gen, s->total);
	if (exploring != s->exploring)
		set_phase(s, exploring);
	/* A failed child's repair turn comes first: it is a generation of
	 * its island. */
	while (s->llm.llm && s->nrepairs > 0) {
		uint64_t id = s->repairs[0];
		memmove(s->repairs, s->repairs + 1, --s->nrepairs * sizeof *s->repairs);
		rc = repair_child(s, id, out, err);
		if (rc == CUCO_OK) {
			s->gen++;
			return CUCO_OK;
		}
		if (rc != CUCO_EDATA)
			return rc;
		cuco_log(CUCO_LOG_WARN, "evolve: repair of #%llu: %s", (unsigned long long)id, err->msg);
	}
	/* The next island after those of the proposals in flight. */
	int island = (s->gen + s->planning) % e->islands;
	if (s->gin_island && island == 1 && !island_has_members(s, 1)) {
		gin_seed(s, out);
		rc = CUCO_OK;
	} else if (!s->llm.llm) {
		rc = tune_child(s, island, "no model is configured", out, err);
	} else if (e->tune_rate > 0 && search_unit(&s->rng) < e->tune_rate) {
		rc = tune_child(s, island, "the cheap operator's turn", out, err);
	} else {
		rc = island_child(s, island, out, err);
	}
	if (rc == CUCO_OK)
		s->gen++;
	/* A budget spent by this very proposal's calls ends the run cleanly. */
	if ((rc == CUCO_EENV || rc == CUCO_ENOTFOUND) && search_llm_spent(&s->llm))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
	return rc;
}

/* A resumed run's islands keep the recommendations the last summary gave. */
static int last_meta(const cuco_port *port, char **text, cuco_err *err)
{
	char *json = NULL;
	int rc = port->meta(port->ctx, "evolve-meta", &json, err);
	if (rc != CUCO_OK || !json)
		return rc;
	cJSON *o = cJSON_Parse(json);
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "recommendations");
	*text = cJSON_IsString(r) ? cuco_xstrdup(r->valuestring) : NULL;
	cJSON_Delete(o);
	free(json);
	return CUCO_OK;
}

static void evolve_free(void *state)
{
	evolve_state *s = state;
	if (s->fp)
		fastpath_free(s->fp);
	for (int i = 0; i < SEARCH_MAX_ISLANDS; i++)
		if (s->tuners[i])
			cuco_tuner_free(s->tuners[i]);
	for (int i = 0; i <= SEARCH_MAX_ISLANDS; i++)
		for (int k = 0; k < HINTS_KEPT; k++)
			free(s->hints[i][k]);
	search_llm_close(&s->llm);
	free(s->meta);
	free(s->repairs);
	free(s->m);
	search_known_free(&s->known);
	free(s);
}

static int evolve_init(const cuco_strategy_env *env, void **state, cuco_err *err)
{
	evolve_state *s = cuco_xcalloc(1, sizeof *s);
	s->env = *env;
	s->rng = env->cfg->seed;
	s->rng_directive = env->cfg->seed ^ 0xd1ec7ull;
	s->templated = -1;
	s->exploring = true;
	s->migrated_at = s->meta_at = -1;
	int rc = search_llm_open(env, &s->llm, &s->k, err);
	const cuco_evolve_config *e = &s->k.evolve;
	if (rc == CUCO_OK && !s->llm.llm)
		cuco_log(CUCO_LOG_WARN, "evolve: no model is configured (docs/configuration.md): the "
			"islands run the directive tuner alone");
	s->total = e->generations > 0 ? e->generations : env->cfg->budget > 0 ? env->cfg->budget : 60;
	for (int i = 0; rc == CUCO_OK && i < e->islands; i++)
		rc = cuco_tuner_new(env->wl, CUCO_TUNER_ANNEAL, env->cfg->seed + (uint64_t)i, s->total,
			&s->tuners[i], err);
	if (rc == CUCO_OK)
		rc = search_start_init(&s->start, env, &s->llm, e->fastpath, "evolve", err);
	if (rc == CUCO_OK && e->fastpath)
		rc = fastpath_new(env, &s->llm, &s->k.fastpath, &s->fp, err);
	s->hw = *env->hw;
	if (s->start.id)
		gin_setup(s);
	if (rc == CUCO_OK)
		rc = env->port->islands(env->port->ctx, &(cuco_port_islands){ .n = e->islands, .text = "" },
			err);
	if (rc == CUCO_OK)
		rc = last_meta(env->port, &s->meta, err);
	if (rc != CUCO_OK) {
		evolve_free(s);
		return rc;
	}
	*state = s;
	return CUCO_OK;
}

static int evolve_concurrency(void *state)
{
	return search_llm_concurrency(&((evolve_state *)state)->llm);
}

const cuco_strategy cuco_strategy_evolve = {
	.name = "evolve",
	.init = evolve_init,
	.concurrency = evolve_concurrency,
	.propose = evolve_propose,
	.observe = evolve_observe,
	.hint = evolve_hint,
	.free = evolve_free,
};
