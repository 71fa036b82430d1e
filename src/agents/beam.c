/* beam.c — AccelOpt's beam search with an optimization memory.
 *
 * An iteration takes the best `width` programs so far (the beam; the seed
 * at first, or for a workload without one the program the fast path makes
 * from the baseline, which runs first). For each, the planner proposes
 * `plans` single-step plans, reading the memory; the executor implements
 * each plan `samples` times (an LLM edit of the beam program); every
 * implementation is a candidate the engine evaluates. When an iteration has proposed everything, the
 * summarizer turns the selected slow→fast pairs of its results into new
 * memory entries (cuco_memory_pairs: positives, and negatives flipped into
 * "undo this"), the memory keeps `capacity` of them, and the next beam is
 * chosen. Score: the fraction of peak, else the speedup (search_score).
 *
 * With several workers a few results of an iteration may land after the
 * next one has started: they join the pool the next beam is chosen from,
 * but not the summarizer's pairs, which are made from what had landed.
 */
#include "agents/search_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_MAX 2000
#define PLAN_MAX 4096

typedef struct seen {
	uint64_t id;
	double score;           /* search_score; NAN unless done */
	double latency;         /* median µs; NAN unless done */
	bool usable;            /* done, not rejected, not the baseline */
	bool pinned;
	cuco_directive directive;
	char source_hash[CUCO_HASH_LEN + 1];
} seen;

typedef struct slot {
	uint64_t parent;        /* the beam program the plan is for */
	char *plan;             /* the planner's text; NULL until asked */
	int sent;               /* executor samples proposed */
} slot;

typedef struct flight {
	char source_hash[CUCO_HASH_LEN + 1];
	int iteration;
	int plan;
	uint64_t parent;
} flight;

typedef struct beam_state {
	cuco_strategy_env env;
	cuco_search_config k;
	search_llm llm;
	fastpath *fp;           /* only for a workload without a seed */
	search_start start;
	seen *seen;
	size_t nseen, seen_cap;
	int iteration;          /* the one being proposed; -1 before the first */
	slot *slots;
	size_t nslots, next;
	flight *flights;
	size_t nflights, flights_cap;
	cuco_beam_sample *samples;   /* the current iteration's landed results */
	size_t nsamples, samples_cap;
	char *hints;
	uint64_t rng;
} beam_state;

static seen *seen_find(beam_state *s, uint64_t id)
{
	for (size_t i = s->nseen; i-- > 0;)
		if (s->seen[i].id == id)
			return &s->seen[i];
	return NULL;
}

/* "beam iteration N, …": the iteration a stored candidate came from. */
static int iteration_of(const cuco_candidate *c)
{
	int it;
	return sscanf(c->note, "beam iteration %d", &it) == 1 ? it : -1;
}

static void beam_observe(void *state, const cuco_candidate *c)
{
	beam_state *s = state;
	if (s->fp)
		fastpath_observe(s->fp, c);
	search_start_observe(&s->start, s->fp, c);
	seen *m = seen_find(s, c->id);
	if (!m) {
		if (s->nseen == s->seen_cap) {
			s->seen_cap = s->seen_cap ? 2 * s->seen_cap : 64;
			s->seen = cuco_xrealloc(s->seen, s->seen_cap * sizeof *s->seen);
		}
		m = &s->seen[s->nseen++];
		memset(m, 0, sizeof *m);
		m->id = c->id;
	}
	m->score = search_score(c);
	m->latency = c->status == CUCO_STATUS_DONE ? c->latency_median_us : NAN;
	/* Stage A of the fast path still runs the host collectives. */
	m->usable = c->status == CUCO_STATUS_DONE && c->origin != CUCO_ORIGIN_BASELINE &&
		!(c->origin == CUCO_ORIGIN_FASTPATH && c->island < 0);
	m->pinned = c->pinned;
	cuco_strlcpy(m->source_hash, c->source_hash, sizeof m->source_hash);
	m->directive = c->directive;
	/* A resumed run starts after the last iteration it finds. */
	if (s->nslots == 0 && c->origin == CUCO_ORIGIN_BEAM_PLAN && iteration_of(c) >= s->iteration)
		s->iteration = iteration_of(c);
	if (c->origin != CUCO_ORIGIN_BEAM_PLAN || c->status < CUCO_STATUS_DONE)
		return;
	for (size_t i = 0; i < s->nflights; i++) {
		flight *f = &s->flights[i];
		if (strcmp(f->source_hash, c->source_hash) != 0)
			continue;
		const seen *p = seen_find(s, f->parent);
		if (f->iteration == s->iteration && p) {
			if (s->nsamples == s->samples_cap) {
				s->samples_cap = s->samples_cap ? 2 * s->samples_cap : 64;
				s->samples = cuco_xrealloc(s->samples, s->samples_cap * sizeof *s->samples);
			}
			s->samples[s->nsamples++] = (cuco_beam_sample){ c->id, f->parent, f->plan,
				p->latency / m->latency };
		}
		s->flights[i] = s->flights[--s->nflights];
		break;
	}
}

static void beam_hint(void *state, int island, const char *text)
{
	(void)island;  /* one beam, no islands */
	beam_state *s = state;
	free(s->hints);
	s->hints = cuco_xstrdup(text);
}

/* ---- planner, executor, summarizer prompts -------------------------------- */

static const char planner_system[] =
	"You are a performance engineer planning one optimization of a program that overlaps "
	"computation with communication. Read the program, its measurements and the lessons "
	"below, then propose exactly one plan with one step: what to change, where, and why it "
	"should be faster. Use only the APIs the program already uses; never trade accuracy for "
	"speed. Answer with the plan in at most 150 words, starting with a one-line title. "
	"Do not write code.\n\n";

static const char summarizer_system[] =
	"You turn a pair of programs into a reusable optimization lesson. Given a slower and a "
	"faster version of the same program, answer with a bold one-line title, a short general "
	"description of the change that made the faster one faster, and two short snippets, "
	"\"original\" and \"optimized\", showing it. If the programs do the same thing, answer "
	"\"No optimization found\".";

typedef struct planner_arg {
	beam_state *s;
	uint64_t parent;
	cuco_buf system, user;
} planner_arg;

static int planner_txn(cuco_txn *txn, void *arg)
{
	planner_arg *a = arg;
	beam_state *s = a->s;
	const cuco_workload *wl = s->env.wl;
	a->system.len = a->user.len = 0;
	cuco_buf_puts(&a->system, planner_system);
	cuco_buf_printf(&a->system, "# %s\n\n%s\n\n", wl->title, wl->description);
	int rc = cuco_memory_render(txn, wl->name, s->k.beam.shared_memory, &a->system);
	cuco_candidate c;
	if (rc == CUCO_OK)
		rc = cuco_cand_get(txn, a->parent, &c);
	char *text = NULL;
	size_t len = 0;
	if (rc == CUCO_OK)
		rc = cuco_source_get(txn, c.source_hash, &text, &len);
	if (rc != CUCO_OK)
		return rc;
	char dir[160];
	cuco_directive_short(&c.directive, dir, sizeof dir);
	cuco_buf_printf(&a->user, "# The program (#%llu, directive %s)\nMedian %.1f us, %.3fx the "
		"baseline", (unsigned long long)c.id, dir, c.latency_median_us, c.speedup);
	if (!isnan(c.peak_fraction))
		cuco_buf_printf(&a->user, ", %.1f %% of the hardware's peak", 100 * c.peak_fraction);
	cuco_buf_puts(&a->user, ".\n");
	/* The phases in a random order each time: a cheap source of diverse
	 * plans (AccelOpt shuffles its profile fields the same way). */
	int order[CUCO_MAX_PHASES];
	for (int i = 0; i < c.nphases; i++)
		order[i] = i;
	for (int i = c.nphases - 1; i > 0; i--) {
		int j = (int)(search_next(&s->rng) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < c.nphases; i++)
		cuco_buf_printf(&a->user, "- %s: %.1f us\n", c.phases[order[i]].name,
			c.phases[order[i]].us);
	if (s->hints)
		cuco_buf_printf(&a->user, "\nA reviewer asks: %s\n", s->hints);
	cuco_buf_puts(&a->user, "\n```c\n");
	cuco_buf_append(&a->user, text, len);
	cuco_buf_puts(&a->user, "```\n");
	free(text);
	return CUCO_OK;
}

/* The planner's plan for a beam program; NULL (with err) when it failed. */
static char *plan_for(beam_state *s, uint64_t parent, int model, cuco_candidate *cost,
	cuco_err *err)
{
	planner_arg a = { .s = s, .parent = parent };
	char *plan = NULL;
	if (cuco_store_read(s->env.st, planner_txn, &a, err) == CUCO_OK)
		plan = search_llm_ask(&s->llm, model, a.system.data, a.user.data, 1.0, cost, err);
	cuco_buf_free(&a.system);
	cuco_buf_free(&a.user);
	if (plan && strlen(plan) > PLAN_MAX)
		plan[PLAN_MAX] = '\0';
	return plan;
}

typedef struct executor_arg {
	const cuco_prompt_spec *spec;
	const char *plan;
	cuco_buf system, user;
} executor_arg;

static int executor_txn(cuco_txn *txn, void *arg)
{
	executor_arg *a = arg;
	a->system.len = a->user.len = 0;
	int rc = cuco_prompt_build(txn, a->spec, &a->system, &a->user);
	if (rc == CUCO_OK)
		cuco_buf_printf(&a->user, "\n# The plan to implement\nImplement exactly this plan, "
			"nothing else:\n\n%s\n", a->plan);
	return rc;
}

/* ---- iterations ------------------------------------------------------------- */

static int by_pin_then_score(const void *a, const void *b)
{
	const seen *x = *(seen *const *)a, *y = *(seen *const *)b;
	if (x->pinned != y->pinned)
		return x->pinned ? -1 : 1;
	return (x->score < y->score) - (x->score > y->score);
}

/* The next beam: the pinned programs, then the best usable ones observed
 * so far, `width` in all. */
static size_t choose_beam(beam_state *s, uint64_t *beam)
{
	seen **v = cuco_xmalloc((s->nseen ? s->nseen : 1) * sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < s->nseen; i++)
		if (s->seen[i].usable && !isnan(s->seen[i].score))
			v[n++] = &s->seen[i];
	qsort(v, n, sizeof *v, by_pin_then_score);
	size_t width = (size_t)s->k.beam.width;
	for (size_t i = 0; i < n && i < width; i++)
		beam[i] = v[i]->id;
	free(v);
	if (n == 0) {
		beam[0] = s->start.id;
		return 1;
	}
	return n < width ? n : width;
}

static void free_slots(beam_state *s)
{
	for (size_t i = 0; i < s->nslots; i++)
		free(s->slots[i].plan);
	free(s->slots);
	s->slots = NULL;
	s->nslots = s->next = 0;
}

/* A lesson without the summarizer: what changed, from the author's note. */
static void plain_summary(const cuco_memory_pair *p, char *buf, size_t size)
{
	snprintf(buf, size, "**%s #%llu → #%llu** (%.2fx)", p->negative ?
		"A rewrite that made the program slower; undo it:" : "A rewrite that helped:",
		(unsigned long long)p->slow, (unsigned long long)p->fast, p->speedup);
}

/* The summarizer's lesson for a pair; false when it found none. */
static bool summarize(beam_state *s, const cuco_memory_pair *p, cuco_memory *m)
{
	const seen *slow = seen_find(s, p->slow), *fast = seen_find(s, p->fast);
	if (!slow || !fast)
		return false;
	memset(m, 0, sizeof *m);
	cuco_strlcpy(m->workload, s->env.wl->name, sizeof m->workload);
	cuco_strlcpy(m->slow_hash, slow->source_hash, sizeof m->slow_hash);
	cuco_strlcpy(m->fast_hash, fast->source_hash, sizeof m->fast_hash);
	m->speedup = p->speedup;
	m->negative = p->negative;
	char *a = NULL, *b = NULL, *reply = NULL;
	size_t la, lb;
	cuco_err err = { 0 };
	int model = search_llm_pick(&s->llm);
	if (model >= 0 && cuco_source_read(s->env.st, slow->source_hash, &a, &la, &err) == CUCO_OK &&
			cuco_source_read(s->env.st, fast->source_hash, &b, &lb, &err) == CUCO_OK) {
		cuco_buf user = { 0 };
		cuco_buf_printf(&user, "The faster version is %.2fx faster.\n\n# Slower\n```c\n%s```\n\n"
			"# Faster\n```c\n%s```\n", p->speedup, a, b);
		reply = search_llm_ask(&s->llm, model, summarizer_system, user.data, 0.0, NULL, &err);
		cuco_buf_free(&user);
	}
	free(a);
	free(b);
	bool found = true;
	if (reply && strstr(reply, "No optimization found"))
		found = false;
	else if (reply)
		snprintf(m->summary, sizeof m->summary, "%s%.*s", p->negative ? "Undo this: " : "",
			SUMMARY_MAX, reply);
	else {
		cuco_log(CUCO_LOG_WARN, "beam: summarizer: %s; a plain lesson is kept", err.msg);
		plain_summary(p, m->summary, sizeof m->summary);
	}
	free(reply);
	return found;
}

/* The end of an iteration: its pairs become lessons in the memory. */
static void close_iteration(beam_state *s)
{
	const cuco_beam_config *b = &s->k.beam;
	cuco_memory_pair *pairs = cuco_xmalloc((s->nsamples ? s->nsamples : 1) * sizeof *pairs);
	size_t np = cuco_memory_pairs(s->samples, s->nsamples, b, pairs);
	cuco_memory *fresh = cuco_xmalloc((np ? np : 1) * sizeof *fresh);
	size_t nf = 0, nneg = 0;
	for (size_t i = 0; i < np; i++)
		if (summarize(s, &pairs[i], &fresh[nf])) {
			nneg += fresh[nf].negative;
			nf++;
		}
	char text[512];
	snprintf(text, sizeof text, "iteration %d: %zu results, %zu new lessons (%zu to undo)",
		s->iteration, s->nsamples, nf, nneg);
	cuco_err err;
	if (nf > 0 && cuco_memory_update(s->env.st, s->env.wl->name, b->shared_memory, fresh, nf,
			(size_t)b->capacity, &s->rng, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "beam: memory: %s", err.msg);
	else
		search_event(s->env.st, "memory", "beam", 0, text);
	cuco_log(CUCO_LOG_INFO, "beam: %s", text);
	free(pairs);
	free(fresh);
	s->nsamples = 0;
}

static void open_iteration(beam_state *s)
{
	uint64_t *beam = cuco_xmalloc((size_t)s->k.beam.width * sizeof *beam);
	size_t n = choose_beam(s, beam);
	free_slots(s);
	s->nslots = n * (size_t)s->k.beam.plans;
	s->slots = cuco_xcalloc(s->nslots, sizeof *s->slots);
	for (size_t i = 0; i < s->nslots; i++)
		s->slots[i].parent = beam[i / (size_t)s->k.beam.plans];
	cuco_log(CUCO_LOG_INFO, "beam: iteration %d: %zu programs in the beam, best #%llu", s->iteration,
		n, (unsigned long long)beam[0]);
	free(beam);
}

/* One executor sample of the current slot. CUCO_EDATA when the model's
 * replies were all refused (the sample is spent), CUCO_EAGAIN when its
 * call gave up on a passing fault, CUCO_EENV when it could not be reached. */
static int execute(beam_state *s, slot *sl, int model, cuco_proposal *out, cuco_err *err)
{
	const seen *p = seen_find(s, sl->parent);
	if (!p)
		return cuco_errf(err, CUCO_EDATA, "beam: #%llu: not observed", (unsigned long long)sl->parent);
	char *src;
	size_t len;
	int rc = search_source_of(s->env.st, sl->parent, &src, &len, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_prompt_spec spec = { .wl = s->env.wl, .kind = CUCO_PROMPT_DIFF, .parent = sl->parent,
		.island = -1, .failures = 2 };
	cuco_prompt_map map;
	spec.map = &map;
	executor_arg a = { .spec = &spec, .plan = sl->plan };
	rc = cuco_store_read(s->env.st, executor_txn, &a, err);
	cuco_edit e = { .llm = s->llm.llm, .model = &s->llm.cfg.models[model], .wl = s->env.wl,
		.system = a.system.data, .user = a.user.data, .map = &map, .parent = src,
		.parent_len = len, .base = &p->directive, .temperature = NAN,
		.attempts = s->llm.cfg.patch_attempts,
		.stream = true, .cancel = s->llm.cancel };
	cuco_edit_result r;
	memset(&r, 0, sizeof r);
	if (rc == CUCO_OK)
		rc = cuco_llm_edit(&e, &r, err);
	out->cand.tokens_prompt += r.tokens_in;
	out->cand.tokens_completion += r.tokens_out;
	out->cand.cost_usd += r.cost_usd;
	r.tokens_in = r.tokens_out = 0;
	r.cost_usd = 0;
	if (rc == CUCO_OK)
		rc = search_fill(s->env.st, &s->llm.cfg.models[model], &r, out, err);
	cuco_edit_result_free(&r);
	cuco_buf_free(&a.system);
	cuco_buf_free(&a.user);
	free(src);
	return rc;
}

static void add_flight(beam_state *s, const cuco_proposal *p, int plan)
{
	if (s->nflights == s->flights_cap) {
		s->flights_cap = s->flights_cap ? 2 * s->flights_cap : 32;
		s->flights = cuco_xrealloc(s->flights, s->flights_cap * sizeof *s->flights);
	}
	flight *f = &s->flights[s->nflights++];
	cuco_source_hash(p->source, p->len, f->source_hash);
	f->iteration = s->iteration;
	f->plan = plan;
	f->parent = p->cand.parents[0];
}

static int beam_propose(void *state, cuco_proposal *out, cuco_err *err)
{
	beam_state *s = state;
	const cuco_beam_config *b = &s->k.beam;
	if (search_llm_spent(&s->llm))
		return CUCO_ENOTFOUND;
	int rc;
	if (s->fp && !fastpath_finished(s->fp)) {
		/* No seed: the fast path's attempts first, one at a time. */
		bool waiting = false;
		memset(out, 0, sizeof *out);
		rc = fastpath_propose(s->fp, out, &waiting, err);
		if (rc != CUCO_ENOTFOUND)
			return rc == CUCO_OK && waiting ? CUCO_EBUSY : rc;
	}
	if ((rc = search_start_ready(&s->start, s->fp, s->env.wl, err)) != CUCO_OK)
		return rc;
	for (;;) {
		memset(out, 0, sizeof *out);
		if (search_llm_spent(&s->llm))
			return CUCO_ENOTFOUND;
		if (s->next == s->nslots) {
			if (s->nslots > 0)
				close_iteration(s);
			if (++s->iteration >= b->iterations)
				return CUCO_ENOTFOUND;
			open_iteration(s);
		}
		slot *sl = &s->slots[s->next];
		int plan_no = (int)(s->next % (size_t)b->plans);
		int model = search_llm_pick(&s->llm);
		if (!sl->plan && !(sl->plan = plan_for(s, sl->parent, model, &out->cand, err))) {
			/* A plan call that gave up is asked again (CUCO_EAGAIN). */
			if (err->code == CUCO_EENV || err->code == CUCO_EAGAIN)
				return search_llm_spent(&s->llm) ? CUCO_ENOTFOUND : err->code;
			cuco_log(CUCO_LOG_WARN, "beam: plan %d for #%llu: %s", plan_no + 1,
				(unsigned long long)sl->parent, err->msg);
			s->next++;
			continue;
		}
		int sample = ++sl->sent;
		if (sl->sent == b->samples)
			s->next++;
		rc = execute(s, sl, model, out, err);
		if (rc == CUCO_EAGAIN && sl->sent-- == b->samples)
			s->next--;  /* the sample was never answered: the engine asks again */
		if (rc == CUCO_EDATA) {
			cuco_log(CUCO_LOG_WARN, "beam: plan %d sample %d for #%llu: %s", plan_no + 1,
				sample, (unsigned long long)sl->parent, err->msg);
			free(out->source);
			continue;
		}
		if (rc != CUCO_OK) {
			free(out->source);
			/* A budget spent by this very proposal's calls ends the run cleanly. */
			return rc == CUCO_EENV && search_llm_spent(&s->llm) ? CUCO_ENOTFOUND : rc;
		}
		char title[96];
		size_t tl = strcspn(sl->plan, "\n");
		snprintf(title, sizeof title, "%.*s", (int)(tl < 95 ? tl : 95), sl->plan);
		char note[sizeof out->cand.note];
		snprintf(note, sizeof note, "beam iteration %d, plan %d/%d, sample %d/%d: %s — %.300s",
			s->iteration, plan_no + 1, b->plans, sample, b->samples, title, out->cand.note);
		cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
		out->cand.origin = CUCO_ORIGIN_BEAM_PLAN;
		out->cand.island = 0;
		out->cand.nparents = 1;
		out->cand.parents[0] = sl->parent;
		add_flight(s, out, plan_no);
		return CUCO_OK;
	}
}

static void beam_free(void *state)
{
	beam_state *s = state;
	if (s->fp)
		fastpath_free(s->fp);
	free_slots(s);
	search_llm_close(&s->llm);
	free(s->seen);
	free(s->flights);
	free(s->samples);
	free(s->hints);
	free(s);
}

static int beam_init(const cuco_strategy_env *env, void **state, cuco_err *err)
{
	beam_state *s = cuco_xcalloc(1, sizeof *s);
	s->env = *env;
	s->rng = env->cfg->seed ^ 0xbea3ull;
	s->iteration = -1;
	int rc = search_llm_open(env, &s->llm, &s->k, err);
	if (rc == CUCO_OK && !s->llm.llm)
		rc = cuco_errf(err, CUCO_EUSAGE, "strategy beam needs a model: add a [model] section to "
			"the config file (docs/configuration.md)");
	if (rc == CUCO_OK)
		rc = search_start_init(&s->start, env, &s->llm, true, "beam", err);
	if (rc == CUCO_OK && !s->start.id)
		rc = fastpath_new(env, &s->llm, &s->k.fastpath, &s->fp, err);
	if (rc != CUCO_OK) {
		beam_free(s);
		return rc;
	}
	*state = s;
	return CUCO_OK;
}

const cuco_strategy cuco_strategy_beam = {
	.name = "beam",
	.init = beam_init,
	.propose = beam_propose,
	.observe = beam_observe,
	.hint = beam_hint,
	.free = beam_free,
};
