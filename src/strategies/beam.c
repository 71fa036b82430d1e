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
 * "undo this"; one call per pair, as many at once as calls may be in
 * flight), the memory keeps `capacity` of them, and the next beam is
 * chosen. Score: the fraction of peak, else the speedup (search_score).
 *
 * Several proposals may be in the making at once (planner and executor
 * calls, with the strategy lock let go while the model answers). The
 * iteration is a barrier on committed results: the next one opens only
 * when every plan of this one has been asked, every sample proposed and
 * every proposed sample's result has landed, so its pairs and the next
 * beam are the same whatever the concurrency. A resumed run rebuilds the
 * last iteration's results from the store and, unless meta "beam" says
 * it was closed, closes it before opening the next.
 */
#include "strategies/search_int.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
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
	bool planning;          /* the planner is being asked */
	bool dead;              /* no plan: the planner's reply was refused */
	int sent;               /* executor samples started */
} slot;

/* A sample proposed and not yet landed: its note names it. */
typedef struct flight {
	int iteration;
	uint64_t parent;
	int plan;               /* plan number within its program, from 1 */
	int sample;             /* from 1 */
	int group;              /* its slot: the samples of one plan */
} flight;

/* An iteration being closed: each pair is one summarizer call, and any
 * number are asked at once (the lock let go); the lessons keep the pairs'
 * order, so the memory is the same at any concurrency. */
typedef struct beam_close {
	cuco_memory_pair *pairs;
	cuco_memory *lessons;
	signed char *state;     /* per pair: 0 to ask, 1 asked, 2 a lesson, 3 none found */
	size_t n, done;
} beam_close;

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
	size_t nslots;
	flight *flights;
	size_t nflights, flights_cap;
	cuco_beam_sample *samples;   /* the current iteration's landed results */
	size_t nsamples, samples_cap;
	int calls;              /* planner and executor calls of this iteration in flight */
	bool closing;           /* the summarizer is at work between iterations */
	beam_close close;
	bool finished;          /* the last iteration is closed */
	bool live;              /* proposing: observations are no longer a replay */
	int closed;             /* the last iteration closed, its lessons in the memory */
	search_known known;     /* every candidate seen, and those in flight */
	uint64_t *replay;       /* the replayed iteration's beam programs, in order */
	size_t nreplay;
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

/* "beam iteration I, plan P/N, sample S/K": where a stored candidate came
 * from; false when its note says otherwise. */
static bool note_of(const cuco_candidate *c, int *it, int *plan, int *sample)
{
	int n, k;
	return c->origin == CUCO_ORIGIN_BEAM_PLAN && sscanf(c->note,
		"beam iteration %d, plan %d/%d, sample %d/%d", it, plan, &n, sample, &k) == 5;
}

static void add_sample(beam_state *s, const cuco_beam_sample *smp)
{
	if (s->nsamples == s->samples_cap) {
		s->samples_cap = s->samples_cap ? 2 * s->samples_cap : 64;
		s->samples = cuco_xrealloc(s->samples, s->samples_cap * sizeof *s->samples);
	}
	s->samples[s->nsamples++] = *smp;
}

/* A replayed sample's plan group: one per (program, plan number), as a
 * live sample's slot is. */
static int replay_group(beam_state *s, uint64_t parent, int plan)
{
	size_t rank = 0;
	while (rank < s->nreplay && s->replay[rank] != parent)
		rank++;
	if (rank == s->nreplay) {
		s->replay = cuco_xrealloc(s->replay, (s->nreplay + 1) * sizeof *s->replay);
		s->replay[s->nreplay++] = parent;
	}
	return (int)rank * s->k.beam.plans + plan - 1;
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
		search_known_seen(&s->known, c->id);
	}
	m->score = search_score(c);
	m->latency = c->status == CUCO_STATUS_DONE ? c->timing.median_us : NAN;
	/* Stage A of the fast path still runs the host collectives. */
	m->usable = c->status == CUCO_STATUS_DONE && c->origin != CUCO_ORIGIN_BASELINE &&
		!(c->origin == CUCO_ORIGIN_FASTPATH && c->island < 0);
	m->pinned = c->pinned;
	cuco_strlcpy(m->source_hash, c->source_hash, sizeof m->source_hash);
	m->directive = c->directive;
	int it, plan, sample;
	if (!note_of(c, &it, &plan, &sample))
		return;
	const seen *p = seen_find(s, c->parents[0]);
	double speedup = p && c->status == CUCO_STATUS_DONE ? p->latency / m->latency : NAN;
	if (!s->live) {
		/* A resumed run: the last iteration's results, as they landed. */
		if (it > s->iteration) {
			s->iteration = it;
			s->nsamples = s->nreplay = 0;
		}
		if (it == s->iteration && c->status >= CUCO_STATUS_DONE && p)
			add_sample(s, &(cuco_beam_sample){ c->id, c->parents[0],
				replay_group(s, c->parents[0], plan), speedup });
		return;
	}
	if (c->status < CUCO_STATUS_DONE)
		return;
	for (size_t i = 0; i < s->nflights; i++) {
		flight *f = &s->flights[i];
		if (f->iteration != it || f->parent != c->parents[0] || f->plan != plan ||
				f->sample != sample)
			continue;
		if (f->iteration == s->iteration && p)
			add_sample(s, &(cuco_beam_sample){ c->id, f->parent, f->group, speedup });
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
	bool lean;              /* the program as the lean profile shows it */
	cuco_buf system, user;
} planner_arg;

/* The planner's system message: its task, the workload, the memory. */
static int planner_read(const cuco_reader *r, void *arg)
{
	planner_arg *a = arg;
	const cuco_workload *wl = a->s->env.wl;
	a->system.len = a->user.len = 0;
	cuco_buf_puts(&a->system, planner_system);
	cuco_buf_printf(&a->system, "# %s\n\n%s\n\n", wl->title, wl->description);
	return cuco_memory_render(r, wl->name, a->s->k.beam.shared_memory, &a->system);
}

/* The planner's user message: the program c, its source text. */
static void planner_user(planner_arg *a, const cuco_candidate *c, const char *text, size_t len)
{
	beam_state *s = a->s;
	const cuco_workload *wl = s->env.wl;
	char dir[160];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	cuco_buf_printf(&a->user, "# The program (#%llu, directive %s)\nMedian %.1f us, %.3fx the "
		"baseline", (unsigned long long)c->id, dir, c->timing.median_us, c->speedup);
	if (!isnan(c->timing.peak_fraction))
		cuco_buf_printf(&a->user, ", %.1f %% of the hardware's peak", 100 * c->timing.peak_fraction);
	cuco_buf_puts(&a->user, ".\n");
	/* The phases in a random order each time: a cheap source of diverse
	 * plans (AccelOpt shuffles its profile fields the same way). */
	cuco_phase ph[CUCO_MAX_PHASES];
	int nph = cuco_phases_view(c, ph, NULL);  /* no part larger than its whole */
	int order[CUCO_MAX_PHASES];
	for (int i = 0; i < nph; i++)
		order[i] = i;
	for (int i = nph - 1; i > 0; i--) {
		int j = (int)(cuco_rng_next(&s->rng) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < nph; i++)
		cuco_buf_printf(&a->user, "- %s: %.1f us\n", ph[order[i]].name, ph[order[i]].us);
	if (s->hints)
		cuco_buf_printf(&a->user, "\nA reviewer asks: %s\n", s->hints);
	cuco_buf_puts(&a->user, "\n```c\n");
	if (a->lean)
		cuco_prompt_lean_code(wl, &c->directive, text, len, &a->user);
	else
		cuco_buf_append(&a->user, text, len);
	cuco_buf_puts(&a->user, "```\n");
}

/* search_build's builder for the planner's prompt (nothing in it is cut). */
static int planner_shaped(void *arg, const search_shape *shape, const char **system,
	const char **user, const cuco_prompt_map **map, cuco_err *err)
{
	planner_arg *a = arg;
	a->lean = shape->profile == CUCO_PROFILE_LEAN;
	const cuco_port *port = a->s->env.port;
	cuco_candidate c;
	char *text = NULL;
	size_t len = 0;
	int rc = port->read(port->ctx, planner_read, a, err);
	if (rc == CUCO_OK)
		rc = port->candidate(port->ctx, a->parent, &c, &text, &len, err);
	if (rc == CUCO_OK)
		planner_user(a, &c, text, len);
	free(text);
	*system = a->system.data;
	*user = a->user.data;
	*map = NULL;
	return rc;
}

/* The planner's plan for a beam program, asked with the lock let go; NULL
 * (with err) when it failed. Its call is stored at once: plans make no
 * candidate of their own. */
static char *plan_for(beam_state *s, uint64_t parent, int model, cuco_err *err)
{
	planner_arg a = { .s = s, .parent = parent };
	char *plan = NULL;
	search_ledger lg;
	search_ledger_init(&lg, CUCO_CALL_PLANNER, parent);
	search_shape shape;
	if (search_build(&s->llm, model, planner_shaped, &a, &shape, err) == CUCO_OK)
		plan = search_llm_ask(&s->llm, &lg, model, a.system.data, a.user.data, 1.0,
			SEARCH_PLAN_TOKENS, err);
	if (plan && search_says_nothing(plan)) {
		cuco_errf(err, CUCO_EDATA, "the plan says nothing (%zu bytes, fewer than three words)",
			strlen(plan));
		search_ledger_refused(&lg, err->msg);
		free(plan);
		plan = NULL;
	}
	if (!plan && err->code == CUCO_EDATA) {
		cuco_buf prompt = { 0 };
		cuco_buf_printf(&prompt, "=== system ===\n%s\n=== user ===\n%s\n", a.system.data,
			a.user.data);
		search_refuse(&s->llm, &lg, -1, s->llm.cfg.models[model].name, prompt.data, NULL,
			err->msg);
		cuco_buf_free(&prompt);
	}
	search_ledger_close(&s->llm, &lg);
	cuco_buf_free(&a.system);
	cuco_buf_free(&a.user);
	if (plan && strlen(plan) > PLAN_MAX)
		plan[PLAN_MAX] = '\0';
	return plan;
}

typedef struct executor_arg {
	cuco_prompt_spec *spec;
	const char *plan;
	const cuco_port *port;
	cuco_buf system, user;
	cuco_prompt_map map;
} executor_arg;

static int executor_read(const cuco_reader *r, void *arg)
{
	executor_arg *a = arg;
	a->system.len = a->user.len = 0;
	int rc = cuco_prompt_build(r, a->spec, &a->system, &a->user);
	if (rc == CUCO_OK)
		cuco_buf_printf(&a->user, "\n# The plan to implement\nImplement exactly this plan, "
			"nothing else:\n\n%s\n", a->plan);
	return rc;
}

/* search_build's builder for the executor's prompt. */
static int executor_shaped(void *arg, const search_shape *shape, const char **system,
	const char **user, const cuco_prompt_map **map, cuco_err *err)
{
	executor_arg *a = arg;
	a->spec->profile = shape->profile;
	a->spec->json = shape->json;
	a->spec->map = &a->map;
	int rc = a->port->read(a->port->ctx, executor_read, a, err);
	*system = a->system.data;
	*user = a->user.data;
	*map = &a->map;
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
	s->nslots = 0;
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
	const cuco_port *port = s->env.port;
	if (model >= 0 && port->source(port->ctx, slow->source_hash, &a, &la, &err) == CUCO_OK &&
			port->source(port->ctx, fast->source_hash, &b, &lb, &err) == CUCO_OK) {
		cuco_buf user = { 0 };
		cuco_buf_printf(&user, "The faster version is %.2fx faster.\n\n# Slower\n```c\n%s```\n\n"
			"# Faster\n```c\n%s```\n", p->speedup, a, b);
		search_ledger lg;
		search_ledger_init(&lg, CUCO_CALL_SUMMARIZER, p->fast);
		reply = search_llm_ask(&s->llm, &lg, model, summarizer_system, user.data, 0.0,
			SEARCH_SUMMARY_TOKENS, &err);
		search_ledger_close(&s->llm, &lg);
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

/* The end of an iteration: its pairs, to become lessons in the memory. */
static void close_begin(beam_state *s)
{
	beam_close *c = &s->close;
	size_t room = s->nsamples ? s->nsamples : 1;
	c->pairs = cuco_xmalloc(room * sizeof *c->pairs);
	c->n = cuco_memory_pairs(s->samples, s->nsamples, &s->k.beam, c->pairs);
	c->lessons = cuco_xcalloc(c->n ? c->n : 1, sizeof *c->lessons);
	c->state = cuco_xcalloc(c->n ? c->n : 1, 1);
	c->done = 0;
	s->closing = true;
}

static void close_free(beam_state *s)
{
	beam_close *c = &s->close;
	free(c->pairs);
	free(c->lessons);
	free(c->state);
	memset(c, 0, sizeof *c);
	s->closing = false;
}

/* meta "beam", what a resumed run reads back: {"closed": I}, the last
 * iteration whose lessons are in the memory (-1: none yet). Written with
 * that iteration's memory event, in one transaction. */
typedef struct beam_resume {
	int closed;
} beam_resume;

static int resume_put(beam_state *s, const beam_resume *r, const char *text, cuco_err *err)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "closed", r->closed);
	char *json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	int rc = s->env.port->event(s->env.port->ctx, "beam", json, CUCO_EVENT_MEMORY, "beam", 0, text,
		err);
	free(json);
	return rc;
}

/* Every pair summarized: the lessons into the memory, in the pairs' order.
 * False when the run is stopping or pausing under the summarizer: nothing
 * is written, and a resumed run closes the iteration again. */
static bool close_finish(beam_state *s)
{
	beam_close *c = &s->close;
	if (s->llm.calls_off && atomic_load(s->llm.calls_off)) {
		close_free(s);
		return false;
	}
	size_t nf = 0, nneg = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->state[i] == 2) {
			nneg += c->lessons[i].negative;
			c->lessons[nf++] = c->lessons[i];
		}
	char text[512];
	snprintf(text, sizeof text, "iteration %d: %zu results, %zu new lessons (%zu to undo)",
		s->iteration, s->nsamples, nf, nneg);
	cuco_err err;
	if ((nf > 0 && cuco_memory_update(s->env.port, s->env.wl->name, s->k.beam.shared_memory,
			c->lessons, nf, (size_t)s->k.beam.capacity, &s->rng, &err) != CUCO_OK) ||
			resume_put(s, &(beam_resume){ s->iteration }, text, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "beam: memory: %s", err.msg);
	cuco_log(CUCO_LOG_INFO, "beam: %s", text);
	close_free(s);
	s->nsamples = 0;
	return true;
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

/* One executor sample of slot sl, asked with the lock let go. CUCO_EDATA
 * when the model's replies were all refused or reproduced a known
 * candidate (the sample is spent), CUCO_EAGAIN when its call gave up on a
 * passing fault, CUCO_EENV when it could not be reached or was cancelled,
 * CUCO_ENOTFOUND when the model budget is spent. */
static int execute(beam_state *s, uint64_t parent, const char *plan, int model,
	cuco_proposal *out, cuco_err *err)
{
	const seen *p = seen_find(s, parent);
	if (!p)
		return cuco_errf(err, CUCO_EDATA, "beam: #%llu: not observed", (unsigned long long)parent);
	cuco_directive base = p->directive;  /* the seen list may move meanwhile */
	char *src;
	size_t len;
	const cuco_port *port = s->env.port;
	int rc = port->candidate(port->ctx, parent, NULL, &src, &len, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_prompt_spec spec = { .wl = s->env.wl, .kind = CUCO_PROMPT_DIFF, .parent = parent,
		.island = -1, .failures = 2 };
	executor_arg a = { .spec = &spec, .plan = plan, .port = port };
	search_shape shape;
	rc = search_build(&s->llm, model, executor_shaped, &a, &shape, err);
	if (rc == CUCO_OK) {
		search_ask ask = { .model = model, .wl = s->env.wl, .call = CUCO_CALL_EXECUTOR,
			.parent = parent, .island = -1, .who = "beam: executor", .src = src, .len = len,
			.base = &base, .kind = CUCO_PROMPT_DIFF, .shape = shape, .system = &a.system,
			.user = &a.user, .map = &a.map, .temperature = NAN, .attempts = 1 };
		rc = search_child(&s->llm, &s->known, &ask, out, NULL, err);
	}
	cuco_buf_free(&a.system);
	cuco_buf_free(&a.user);
	free(src);
	return rc;
}

static void add_flight(beam_state *s, uint64_t parent, int plan, int sample, int group)
{
	if (s->nflights == s->flights_cap) {
		s->flights_cap = s->flights_cap ? 2 * s->flights_cap : 32;
		s->flights = cuco_xrealloc(s->flights, s->flights_cap * sizeof *s->flights);
	}
	s->flights[s->nflights++] = (flight){ s->iteration, parent, plan, sample, group };
}

/* Results of this iteration still to land: calls in flight and samples
 * proposed but not observed. */
static bool iteration_pending(const beam_state *s)
{
	if (s->calls > 0)
		return true;
	for (size_t i = 0; i < s->nflights; i++)
		if (s->flights[i].iteration == s->iteration)
			return true;
	return false;
}

/* The next slot with work for a proposer: a sample to send, its plan
 * there or nobody asking for it yet. */
static slot *next_slot(beam_state *s)
{
	for (size_t i = 0; i < s->nslots; i++) {
		slot *sl = &s->slots[i];
		if (!sl->dead && sl->sent < s->k.beam.samples && (sl->plan || !sl->planning))
			return sl;
	}
	return NULL;
}

/* The next iteration, this one closed: CUCO_OK, or CUCO_ENOTFOUND when
 * the last one is done. */
static int open_next(beam_state *s)
{
	s->closed = s->iteration;
	if (++s->iteration >= s->k.beam.iterations) {
		s->finished = true;
		return CUCO_ENOTFOUND;
	}
	open_iteration(s);
	return CUCO_OK;
}

/* One step of closing: ask the summarizer for the next pair (the lock let
 * go), or, once every pair is answered, close the iteration and open the
 * next. CUCO_OK when it did either, CUCO_EBUSY while the last answers are
 * out, CUCO_ENOTFOUND after the last iteration, CUCO_EENV when the run
 * stopped meanwhile. */
static int close_step(beam_state *s, cuco_err *err)
{
	beam_close *c = &s->close;
	size_t i = 0;
	while (i < c->n && c->state[i] != 0)
		i++;
	if (i < c->n) {
		c->state[i] = 1;
		cuco_memory lesson;
		bool found = summarize(s, &c->pairs[i], &lesson);
		c->lessons[i] = lesson;  /* the arrays stay put until every pair is done */
		c->state[i] = found ? 2 : 3;
		c->done++;
		return CUCO_OK;
	}
	if (c->done < c->n)
		return CUCO_EBUSY;
	if (!close_finish(s))
		return cuco_errf(err, CUCO_EENV, "beam: iteration %d not closed: the run is ending",
			s->iteration);
	return open_next(s);
}

/* For a workload without a seed, the fast path's attempts first, one at a
 * time (*made when this call made one). CUCO_OK once the beam has its
 * start; CUCO_EBUSY while an attempt is out. */
static int start_first(beam_state *s, cuco_proposal *out, bool *made, cuco_err *err)
{
	*made = false;
	if (search_llm_spent(&s->llm))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
	if (s->fp && !fastpath_finished(s->fp)) {
		bool waiting = false;
		memset(out, 0, sizeof *out);
		int rc = fastpath_propose(s->fp, out, &waiting, err);
		if (rc != CUCO_ENOTFOUND) {
			*made = rc == CUCO_OK && !waiting;
			return rc == CUCO_OK && waiting ? CUCO_EBUSY : rc;
		}
		/* Ended: its attempts spent the model budget, or it finished. */
		if (search_llm_spent(&s->llm))
			return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
	}
	return search_start_ready(&s->start, s->fp, s->env.wl, err);
}

static int beam_propose(void *state, cuco_proposal *out, cuco_err *err)
{
	beam_state *s = state;
	const cuco_beam_config *b = &s->k.beam;
	s->live = true;
	bool made;
	int first = start_first(s, out, &made, err);
	if (first != CUCO_OK || made)
		return first;
	for (;;) {
		memset(out, 0, sizeof *out);
		if (search_llm_spent(&s->llm))
			return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
		if (s->finished)
			return CUCO_ENOTFOUND;
		if (s->closing) {
			int rc = close_step(s, err);
			if (rc != CUCO_OK)
				return rc;
			continue;
		}
		slot *sl = next_slot(s);
		if (!sl) {
			/* The barrier: every result of this iteration first. */
			if (iteration_pending(s))
				return CUCO_EBUSY;
			if (s->iteration >= 0 && s->closed < s->iteration) {
				close_begin(s);
				continue;
			}
			int rc = open_next(s);
			if (rc != CUCO_OK)
				return rc;
			continue;
		}
		size_t at = (size_t)(sl - s->slots);
		int plan_no = (int)(at % (size_t)b->plans) + 1;
		uint64_t parent = sl->parent;
		int iteration = s->iteration;
		int model = search_llm_pick(&s->llm);
		if (!sl->plan) {
			sl->planning = true;
			s->calls++;
			char *plan = plan_for(s, parent, model, err);
			s->calls--;
			sl = &s->slots[at];  /* the iteration cannot change while calls are out */
			sl->planning = false;
			sl->plan = plan;
			if (!plan && (err->code == CUCO_EENV || err->code == CUCO_EAGAIN ||
					err->code == CUCO_ENOTFOUND))
				return err->code;  /* asked again, or the end */
			if (!plan) {
				cuco_log(CUCO_LOG_WARN, "beam: plan %d for #%llu: %s", plan_no,
					(unsigned long long)parent, err->msg);
				sl->dead = true;
			}
			continue;
		}
		int sample = ++sl->sent;
		char *plan = cuco_xstrdup(sl->plan);
		s->calls++;
		int rc = execute(s, parent, plan, model, out, err);
		s->calls--;
		sl = &s->slots[at];
		if (rc == CUCO_EDATA) {
			cuco_log(CUCO_LOG_WARN, "beam: plan %d sample %d for #%llu: %s", plan_no, sample,
				(unsigned long long)parent, err->msg);
			free(plan);
			continue;
		}
		if (rc != CUCO_OK) {
			free(plan);
			free(out->source);
			free(out->calls);
			memset(out, 0, sizeof *out);
			/* Never answered: the sample goes back, and the engine asks again. */
			sl->sent--;
			return rc;
		}
		char title[96];
		size_t tl = strcspn(plan, "\n");
		snprintf(title, sizeof title, "%.*s", (int)(tl < 95 ? tl : 95), plan);
		free(plan);
		char note[sizeof out->cand.note];
		snprintf(note, sizeof note, "beam iteration %d, plan %d/%d, sample %d/%d: %s — %.300s",
			iteration, plan_no, b->plans, sample, b->samples, title, out->cand.note);
		cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
		out->cand.origin = CUCO_ORIGIN_BEAM_PLAN;
		out->cand.island = 0;
		out->cand.nparents = 1;
		out->cand.parents[0] = parent;
		add_flight(s, parent, plan_no, sample, (int)at);
		return CUCO_OK;
	}
}

static void beam_free(void *state)
{
	beam_state *s = state;
	if (s->fp)
		fastpath_free(s->fp);
	free_slots(s);
	close_free(s);
	search_llm_close(&s->llm);
	search_known_free(&s->known);
	free(s->seen);
	free(s->flights);
	free(s->samples);
	free(s->replay);
	free(s->hints);
	free(s);
}

/* The last iteration closed by a session of a cuco from before meta
 * "beam", as its memory events say it: "iteration I: …". */
static int closed_one(const cuco_event *ev, void *arg)
{
	int *closed = arg, it;
	if (ev->kind == CUCO_EVENT_MEMORY && strcmp(ev->author, "beam") == 0 &&
			sscanf(ev->text, "iteration %d:", &it) == 1 && it > *closed)
		*closed = it;
	return 0;
}

static int closed_read(const cuco_reader *r, void *arg)
{
	return r->events(r->ctx, 1, closed_one, arg);
}

/* The last iteration a session closed: meta "beam", else its events. */
static int resume_read(const cuco_port *port, int *closed_out, cuco_err *err)
{
	char *json = NULL;
	int rc = port->meta(port->ctx, "beam", &json, err);
	if (rc == CUCO_OK && !json)
		return port->read(port->ctx, closed_read, closed_out, err);
	cJSON *j = rc == CUCO_OK ? cJSON_Parse(json) : NULL;
	const cJSON *closed = cJSON_GetObjectItemCaseSensitive(j, "closed");
	if (cJSON_IsNumber(closed) && closed->valuedouble >= -1 && closed->valuedouble < 1e6)
		*closed_out = (int)closed->valuedouble;
	cJSON_Delete(j);
	free(json);
	return rc;
}

static int beam_concurrency(void *state)
{
	return search_llm_concurrency(&((beam_state *)state)->llm);
}

static int beam_init(const cuco_strategy_env *env, void **state, cuco_err *err)
{
	beam_state *s = cuco_xcalloc(1, sizeof *s);
	s->env = *env;
	s->rng = env->cfg->seed ^ 0xbea3ull;
	int closed = -1;
	s->iteration = -1;
	int rc = search_llm_open(env, &s->llm, &s->k, err);
	if (rc == CUCO_OK && !s->llm.llm)
		rc = cuco_errf(err, CUCO_EUSAGE, "strategy beam needs a model: add a [model] section to "
			"the config file (docs/configuration.md)");
	if (rc == CUCO_OK)
		rc = search_start_init(&s->start, env, &s->llm, true, "beam", err);
	if (rc == CUCO_OK && !s->start.id)
		rc = fastpath_new(env, &s->llm, &s->k.fastpath, &s->fp, err);
	if (rc == CUCO_OK)
		rc = resume_read(env->port, &closed, err);
	s->closed = closed;
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
	.concurrency = beam_concurrency,
	.propose = beam_propose,
	.observe = beam_observe,
	.hint = beam_hint,
	.free = beam_free,
};
