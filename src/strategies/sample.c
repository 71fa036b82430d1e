/* sample.c — best-of-N sampling from the start program: the control an
 * evolutionary search is measured against (OpenEvolve's users found that
 * best-of-N tied evolution, openevolve #100).
 *
 * Every proposal is an independent edit of the start program (the
 * workload's seed, or for a workload without one the program the fast
 * path makes, which runs first), asked with one and the same diff prompt
 * at sample.temperature: no population, no history, no operator mix, no
 * memory. The best of N is what the engine crowns. A reply that
 * reproduces a known candidate is answered as evolve answers it, up to
 * evolve.novelty_attempts; a sample whose every reply was refused is a
 * refusal record and counts as a sample. The samples asked are N:
 * --generations, else the run's budget, else 60, refused ones included,
 * so a model that is never understood cannot spend calls without end.
 */
#include "strategies/search_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct sample_state {
	cuco_strategy_env env;
	cuco_search_config k;
	search_llm llm;
	fastpath *fp;              /* only for a workload without a seed */
	search_start start;
	search_known known;        /* every candidate seen, and those in flight */
	int asked;                 /* samples committed or refused */
	int planning;              /* samples being asked now */
	int total;                 /* samples at most */
	bool live;
} sample_state;

static void sample_observe(void *state, const cuco_candidate *c)
{
	sample_state *s = state;
	if (s->fp)
		fastpath_observe(s->fp, c);
	search_start_observe(&s->start, s->fp, c);
	if (!s->live && c->origin == CUCO_ORIGIN_LLM_DIFF)
		s->asked++;  /* a resumed run's samples */
	search_known_seen(&s->known, c->id);
}

typedef struct prompt_arg {
	cuco_prompt_spec spec;
	const cuco_port *port;
	cuco_buf system, user;
	cuco_prompt_map map;
	cuco_directive base;
} prompt_arg;

static int prompt_shaped(void *arg, const search_shape *shape, const char **system,
	const char **user, const cuco_prompt_map **map, cuco_err *err)
{
	prompt_arg *a = arg;
	a->spec.profile = shape->profile;
	a->spec.json = shape->json;
	a->spec.map = &a->map;
	int rc = search_prompt(a->port, &a->spec, &a->base, &a->system, &a->user, err);
	*system = a->system.data;
	*user = a->user.data;
	*map = &a->map;
	return rc;
}

/* One sample, asked with the lock let go: CUCO_OK with a proposal,
 * CUCO_EDATA when every reply was refused (the refusal is stored). */
static int one_sample(sample_state *s, int number, cuco_proposal *out, cuco_err *err)
{
	char *src;
	size_t len;
	const cuco_port *port = s->env.port;
	int rc = port->source(port->ctx, s->start.hash, &src, &len, err);
	if (rc != CUCO_OK)
		return rc;
	int model = search_llm_pick(&s->llm);
	prompt_arg pa = { .spec = { .wl = s->env.wl, .kind = CUCO_PROMPT_DIFF, .parent = s->start.id,
		.island = 0 }, .port = port };
	search_shape shape;
	rc = search_build(&s->llm, model, prompt_shaped, &pa, &shape, err);
	if (rc == CUCO_OK) {
		char who[32];
		snprintf(who, sizeof who, "sample %d", number);
		search_ask ask = { .model = model, .wl = s->env.wl, .call = CUCO_CALL_PROPOSE,
			.parent = s->start.id, .island = 0, .who = who, .src = src, .len = len,
			.base = &pa.base, .kind = CUCO_PROMPT_DIFF, .shape = shape, .system = &pa.system,
			.user = &pa.user, .map = &pa.map, .temperature = s->k.sample.temperature,
			.attempts = s->k.evolve.novelty_attempts };
		rc = search_child(&s->llm, &s->known, &ask, out, NULL, err);
	}
	free(src);
	cuco_buf_free(&pa.system);
	cuco_buf_free(&pa.user);
	if (rc != CUCO_OK)
		return rc;
	char note[sizeof out->cand.note];
	snprintf(note, sizeof note, "sample %d of %d from #%llu: %.440s", number, s->total,
		(unsigned long long)s->start.id, out->cand.note);
	cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
	out->cand.origin = CUCO_ORIGIN_LLM_DIFF;
	out->cand.island = 0;
	out->cand.nparents = 1;
	out->cand.parents[0] = s->start.id;
	return CUCO_OK;
}

static int sample_propose(void *state, cuco_proposal *out, cuco_err *err)
{
	sample_state *s = state;
	memset(out, 0, sizeof *out);
	s->live = true;
	if (search_llm_spent(&s->llm))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
	if (s->fp && !fastpath_finished(s->fp)) {
		bool waiting = false;
		int rc = fastpath_propose(s->fp, out, &waiting, err);
		if (rc == CUCO_OK && !waiting)
			return CUCO_OK;
		if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
			return rc;
		if (waiting)
			return CUCO_EBUSY;
	}
	int rc = search_start_ready(&s->start, s->fp, s->env.wl, err);
	while (rc == CUCO_OK) {
		if (s->asked + s->planning >= s->total)
			return s->planning > 0 ? CUCO_EBUSY : cuco_errf(err, CUCO_ENOTFOUND, "%d samples "
				"asked", s->asked);
		int number = s->asked + s->planning + 1;
		s->planning++;
		rc = one_sample(s, number, out, err);
		s->planning--;
		if (rc == CUCO_OK || rc == CUCO_EDATA)
			s->asked++;
		if (rc == CUCO_EDATA) {
			cuco_log(CUCO_LOG_WARN, "sample %d: %s", number, err->msg);
			rc = CUCO_OK;  /* spent: on to the next */
			continue;
		}
		if (rc == CUCO_OK)
			return CUCO_OK;
	}
	if ((rc == CUCO_EENV || rc == CUCO_ENOTFOUND) && search_llm_spent(&s->llm))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->llm.spent_why);
	return rc;
}

static int sample_concurrency(void *state)
{
	return search_llm_concurrency(&((sample_state *)state)->llm);
}

static void sample_free(void *state)
{
	sample_state *s = state;
	if (s->fp)
		fastpath_free(s->fp);
	search_llm_close(&s->llm);
	search_known_free(&s->known);
	free(s);
}

static int sample_init(const cuco_strategy_env *env, void **state, cuco_err *err)
{
	sample_state *s = cuco_xcalloc(1, sizeof *s);
	s->env = *env;
	int rc = search_llm_open(env, &s->llm, &s->k, err);
	if (rc == CUCO_OK && !s->llm.llm)
		rc = cuco_errf(err, CUCO_EUSAGE, "strategy sample needs a model: add a [model] section "
			"to the config file (docs/configuration.md), or --llm");
	const cuco_evolve_config *e = &s->k.evolve;
	s->total = e->generations > 0 ? e->generations : env->cfg->budget > 0 ? env->cfg->budget : 60;
	if (rc == CUCO_OK)
		rc = search_start_init(&s->start, env, &s->llm, true, "sample", err);
	if (rc == CUCO_OK && !s->start.id)
		rc = fastpath_new(env, &s->llm, &s->k.fastpath, &s->fp, err);
	if (rc != CUCO_OK) {
		sample_free(s);
		return rc;
	}
	*state = s;
	return CUCO_OK;
}

const cuco_strategy cuco_strategy_sample = {
	.name = "sample",
	.init = sample_init,
	.concurrency = sample_concurrency,
	.propose = sample_propose,
	.observe = sample_observe,
	.free = sample_free,
};
