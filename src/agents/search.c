/* search.c — what the LLM strategies share: their knobs (defaults, the
 * config file's [evolve], [beam] and [fastpath] sections), their access to
 * the models (config, choice by weight or bandit, budgets), and the few
 * store steps every strategy takes (events, sources, keeping an edit's
 * prompt and reply with its proposal).
 */
#include "agents/search_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- knobs ------------------------------------------------------------- */

void cuco_search_config_defaults(cuco_search_config *c)
{
	memset(c, 0, sizeof *c);
	cuco_evolve_config *e = &c->evolve;
	e->islands = 2;
	e->explore_fraction = 0.4;
	e->explore_p[CUCO_OP_FULL] = 0.70;
	e->explore_p[CUCO_OP_DIFF] = 0.15;
	e->explore_p[CUCO_OP_CROSS] = 0.15;
	e->exploit_p[CUCO_OP_FULL] = 0.60;
	e->exploit_p[CUCO_OP_DIFF] = 0.25;
	e->exploit_p[CUCO_OP_CROSS] = 0.15;
	e->explore_temps[0] = 0.2, e->explore_temps[1] = 0.5, e->explore_temps[2] = 0.8;
	e->exploit_temps[0] = 0.0, e->exploit_temps[1] = 0.2, e->exploit_temps[2] = 0.5;
	e->parent_rule = CUCO_PARENT_WEIGHTED;
	e->lambda = 8.0;
	e->alpha = 1.0;
	e->inspirations = 3;
	e->failures = 3;
	e->migration_interval = 8;
	e->migration_rate = 0.15;
	e->meta_interval = 8;
	e->meta_max = 5;
	e->novelty_attempts = 3;
	e->fastpath = true;
	cuco_beam_config *b = &c->beam;
	b->width = 6;
	b->plans = 12;
	b->samples = 2;
	b->iterations = 15;
	b->max_new = 8;
	b->capacity = 16;
	b->positive = 1.04;
	b->negative = 1.15;
	c->fastpath.stage_a_max = 5;
	c->fastpath.stage_b_max = 10;
}

typedef enum knob_kind { K_INT, K_REAL, K_BOOL, K_REALS3, K_RULE } knob_kind;

typedef struct knob {
	const char *key;
	knob_kind kind;
	size_t off;
	double min, max;
} knob;

#define EV(f) offsetof(cuco_search_config, evolve.f)
#define BM(f) offsetof(cuco_search_config, beam.f)
#define FP(f) offsetof(cuco_search_config, fastpath.f)

static const knob knobs[] = {
	{ "evolve.islands", K_INT, EV(islands), 1, SEARCH_MAX_ISLANDS },
	{ "evolve.generations", K_INT, EV(generations), 0, 1e7 },
	{ "evolve.explore_fraction", K_REAL, EV(explore_fraction), 0, 1 },
	{ "evolve.explore_p", K_REALS3, EV(explore_p), 0, 1 },
	{ "evolve.exploit_p", K_REALS3, EV(exploit_p), 0, 1 },
	{ "evolve.explore_temperatures", K_REALS3, EV(explore_temps), 0, 2 },
	{ "evolve.exploit_temperatures", K_REALS3, EV(exploit_temps), 0, 2 },
	{ "evolve.parent_selection", K_RULE, EV(parent_rule), 0, 0 },
	{ "evolve.lambda", K_REAL, EV(lambda), 0, 1e3 },
	{ "evolve.alpha", K_REAL, EV(alpha), 0, 10 },
	{ "evolve.inspirations", K_INT, EV(inspirations), 0, 32 },
	{ "evolve.failures", K_INT, EV(failures), 0, 32 },
	{ "evolve.migration_interval", K_INT, EV(migration_interval), 0, 1e6 },
	{ "evolve.migration_rate", K_REAL, EV(migration_rate), 0, 1 },
	{ "evolve.meta_interval", K_INT, EV(meta_interval), 0, 1e6 },
	{ "evolve.meta_max", K_INT, EV(meta_max), 0, 20 },
	{ "evolve.novelty_attempts", K_INT, EV(novelty_attempts), 1, 20 },
	{ "evolve.tune_rate", K_REAL, EV(tune_rate), 0, 1 },
	{ "evolve.fastpath", K_BOOL, EV(fastpath), 0, 0 },
	{ "beam.width", K_INT, BM(width), 1, 256 },
	{ "beam.plans", K_INT, BM(plans), 1, 256 },
	{ "beam.samples", K_INT, BM(samples), 1, 64 },
	{ "beam.iterations", K_INT, BM(iterations), 1, 1e6 },
	{ "beam.max_new", K_INT, BM(max_new), 0, 256 },
	{ "beam.capacity", K_INT, BM(capacity), 0, 4096 },
	{ "beam.positive", K_REAL, BM(positive), 1, 100 },
	{ "beam.negative", K_REAL, BM(negative), 1, 100 },
	{ "beam.shared_memory", K_BOOL, BM(shared_memory), 0, 0 },
	{ "fastpath.stage_a_max", K_INT, FP(stage_a_max), 0, 100 },
	{ "fastpath.stage_b_max", K_INT, FP(stage_b_max), 0, 100 },
};

static bool parse_real(const char *v, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || end == v || *end || !(d >= min && d <= max))
		return false;
	*out = d;
	return true;
}

/* "a, b, c": three numbers in range. */
static bool parse_reals3(const char *v, double min, double max, double *out)
{
	double d[3];
	char part[64];
	for (int i = 0; i < 3; i++) {
		size_t n = strcspn(v, ",");
		if (n >= sizeof part || (i < 2) != (v[n] == ','))
			return false;
		memcpy(part, v, n);
		part[n] = '\0';
		if (!parse_real(part, min, max, &d[i]))
			return false;
		v += n + (v[n] == ',');
	}
	memcpy(out, d, sizeof d);
	return true;
}

static int set_knob(cuco_search_config *c, const knob *k, const char *v, cuco_err *err)
{
	void *p = (char *)c + k->off;
	double d;
	switch (k->kind) {
	case K_INT:
		if (!parse_real(v, k->min, k->max, &d) || d != floor(d))
			break;
		*(int *)p = (int)d;
		return CUCO_OK;
	case K_REAL:
		if (!parse_real(v, k->min, k->max, &d))
			break;
		*(double *)p = d;
		return CUCO_OK;
	case K_REALS3:
		if (!parse_reals3(v, k->min, k->max, (double *)p))
			break;
		return CUCO_OK;
	case K_BOOL:
		if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "yes") && strcmp(v, "no"))
			break;
		*(bool *)p = v[0] == 't' || v[0] == 'y';
		return CUCO_OK;
	case K_RULE:
		if (strcmp(v, "weighted") == 0)
			*(cuco_parent_rule *)p = CUCO_PARENT_WEIGHTED;
		else if (strcmp(v, "power_law") == 0)
			*(cuco_parent_rule *)p = CUCO_PARENT_POWER_LAW;
		else
			break;
		return CUCO_OK;
	}
	static const char *const want[] = { "an integer", "a number", "true or false",
		"three numbers a, b, c", "weighted or power_law" };
	return cuco_errf(err, CUCO_EDATA, "%s = %s: not %s%s", k->key, v, want[k->kind],
		k->kind == K_INT || k->kind == K_REAL || k->kind == K_REALS3 ? " in range" : "");
}

int cuco_search_config_set(cuco_search_config *c, const char *key, const char *value,
	cuco_err *err)
{
	for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
		if (strcmp(knobs[i].key, key) == 0)
			return set_knob(c, &knobs[i], value, err);
	return cuco_errf(err, CUCO_EDATA, "%s: unknown knob", key);
}

int cuco_search_config_load(const char *path, cuco_search_config *c, cuco_err *err)
{
	char *text;
	int rc = cuco_read_file(path, 1 << 20, &text, NULL, err);
	if (rc != CUCO_OK)
		return rc;
	char section[16] = "";
	int line = 0;
	for (char *s = text, *next; s && rc == CUCO_OK; s = next) {
		next = strchr(s, '\n');
		if (next)
			*next++ = '\0';
		line++;
		char *hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		s = cuco_trim(s);
		if (*s == '[') {
			char *body = cuco_trim(s + 1);
			size_t n = strcspn(body, "] \t");
			section[0] = '\0';
			if (n < sizeof section && body[n] == ']' &&
					(!strncmp(body, "evolve", n) || !strncmp(body, "beam", n) ||
					!strncmp(body, "fastpath", n)))
				memcpy(section, body, n), section[n] = '\0';
			continue;
		}
		char *eq = strchr(s, '=');
		if (!section[0] || !*s)
			continue;
		if (!eq) {
			rc = cuco_errf(err, CUCO_EDATA, "%s:%d: [%s]: expected key = value", path, line,
				section);
			break;
		}
		*eq = '\0';
		char key[96];
		snprintf(key, sizeof key, "%s.%s", section, cuco_trim(s));
		cuco_err e2;
		if ((rc = cuco_search_config_set(c, key, cuco_trim(eq + 1), &e2)) != CUCO_OK)
			cuco_errf(err, rc, "%s:%d: %s", path, line, e2.msg);
	}
	free(text);
	return rc;
}

/* ---- the models, shared by evolve, beam and fastpath ---------------------- */

int search_llm_open(const cuco_strategy_env *env, search_llm *s, cuco_search_config *knobs,
	cuco_err *err)
{
	memset(s, 0, sizeof *s);
	cuco_search_config_defaults(knobs);
	cuco_llm_config_defaults(&s->cfg);
	s->rng = env->cfg->seed ^ 0x6c6c6dull;
	s->cancel = env->stop;
	char path[1024];
	if (cuco_llm_config_path(path, sizeof path)) {
		int rc = cuco_llm_config_load(path, &s->cfg, err);
		if (rc == CUCO_OK)
			rc = cuco_search_config_load(path, knobs, err);
		if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
			return rc;
	}
	const cuco_engine_config *ec = env->cfg;
	if (ec->generations > 0) {
		knobs->evolve.generations = ec->generations;
		knobs->beam.iterations = ec->generations;
	}
	if (ec->nllm_specs > 0) {
		int rc = cuco_llm_use_specs(&s->cfg, ec->llm_specs, ec->nllm_specs, err);
		if (rc != CUCO_OK)
			return rc;
	}
	if (ec->max_cost_usd > 0)
		s->cfg.budget_usd = ec->max_cost_usd;
	if (ec->max_tokens > 0)
		s->cfg.budget_tokens = ec->max_tokens;
	if (env->model_outage_s)
		*env->model_outage_s = s->cfg.outage_s;
	if (s->cfg.nmodels == 0)
		return CUCO_OK;
	cuco_bandit_init(&s->bandit, &s->cfg);
	int rc = cuco_llm_new(&s->cfg, &s->llm, err);
	/* Before the baseline: a dead server or a wrong name stops the run now. */
	for (int i = 0; i < s->cfg.nmodels && rc == CUCO_OK; i++) {
		cuco_llm_served sv;
		rc = cuco_llm_check(s->llm, &s->cfg.models[i], &sv, err);
	}
	return rc;
}

void search_llm_close(search_llm *s)
{
	if (s->llm)
		cuco_llm_free(s->llm);
	s->llm = NULL;
}

bool search_llm_spent(search_llm *s)
{
	char why[256];
	if (!s->llm || !cuco_llm_spent(s->llm, why, sizeof why))
		return false;
	if (!s->spent)
		cuco_log(CUCO_LOG_INFO, "the model budget is spent (%s): no more proposals", why);
	s->spent = true;
	return true;
}

int search_llm_pick(search_llm *s)
{
	if (!s->llm)
		return -1;
	if (s->cfg.choice == CUCO_CHOICE_BANDIT)
		return cuco_bandit_pick(&s->bandit);
	return cuco_model_pick_weighted(&s->cfg, search_unit(&s->rng));
}

char *search_llm_ask(search_llm *s, int model, const char *system, const char *user,
	double temperature, cuco_candidate *c, cuco_err *err)
{
	cuco_llm_msg msg = { "user", user };
	cuco_llm_request req = { .model = &s->cfg.models[model], .system = system, .nmsgs = 1,
		.msgs = &msg, .temperature = temperature, .stream = true, .cancel = s->cancel };
	cuco_llm_reply r;
	memset(&r, 0, sizeof r);
	cuco_fitted sent;
	int rc = cuco_llm_ask_fitted(s->llm, NULL, NULL, &req, NULL, &sent, &r, err);
	cuco_fitted_free(&sent);
	if (c) {
		c->tokens_prompt += r.tokens_in;
		c->tokens_completion += r.tokens_out;
		c->cost_usd += r.cost_usd;
	}
	char *text = r.text;
	r.text = NULL;
	cuco_llm_reply_free(&r);
	if (rc != CUCO_OK) {
		free(text);
		return NULL;
	}
	return text;
}

int search_event_add(cuco_txn *txn, const char *kind, const char *author, uint64_t candidate,
	const char *text)
{
	cuco_event ev;
	memset(&ev, 0, sizeof ev);
	cuco_strlcpy(ev.kind, kind, sizeof ev.kind);
	cuco_strlcpy(ev.author, author, sizeof ev.author);
	ev.candidate = candidate;
	cuco_strlcpy(ev.text, text, sizeof ev.text);
	return cuco_event_add(txn, &ev);
}

typedef struct event_arg {
	const char *kind, *author, *text;
	uint64_t candidate;
} event_arg;

static int event_txn(cuco_txn *txn, void *arg)
{
	event_arg *a = arg;
	return search_event_add(txn, a->kind, a->author, a->candidate, a->text);
}

void search_event(cuco_store *st, const char *kind, const char *author, uint64_t candidate,
	const char *text)
{
	event_arg a = { kind, author, text, candidate };
	cuco_err err;
	if (cuco_store_write(st, event_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "%s: event: %s", author, err.msg);
}

typedef struct source_of_arg {
	uint64_t id;
	char *text;
	size_t len;
} source_of_arg;

static int source_of_txn(cuco_txn *txn, void *arg)
{
	source_of_arg *a = arg;
	cuco_candidate c;
	free(a->text);
	a->text = NULL;
	int rc = cuco_cand_get(txn, a->id, &c);
	return rc == CUCO_OK ? cuco_source_get(txn, c.source_hash, &a->text, &a->len) : rc;
}

int search_source_of(cuco_store *st, uint64_t id, char **text, size_t *len, cuco_err *err)
{
	source_of_arg a = { .id = id };
	int rc = cuco_store_read(st, source_of_txn, &a, err);
	*text = a.text;
	*len = a.len;
	return rc;
}

typedef struct keep_arg {
	cuco_edit_result *r;
	cuco_candidate *c;
} keep_arg;

static int keep_txn(cuco_txn *txn, void *arg)
{
	keep_arg *a = arg;
	return cuco_prompt_keep(txn, a->r->prompt, a->r->transcript, a->c);
}

int search_fill(cuco_store *st, const cuco_model *m, cuco_edit_result *r, cuco_proposal *out,
	cuco_err *err)
{
	cuco_candidate *c = &out->cand;
	keep_arg a = { r, c };
	int rc = cuco_store_write(st, keep_txn, &a, err);
	if (rc != CUCO_OK)
		return rc;
	out->source = r->source;
	out->len = r->len;
	r->source = NULL;
	c->directive = r->directive;
	snprintf(c->note, sizeof c->note, "%s%s%.440s", r->name, r->name[0] && r->note[0] ? ": " : "",
		r->note);
	cuco_strlcpy(c->model, m->name, sizeof c->model);
	c->tokens_prompt += r->tokens_in;
	c->tokens_completion += r->tokens_out;
	c->cost_usd += r->cost_usd;
	return CUCO_OK;
}

/* ---- where a search starts ---------------------------------------------------- */

int search_start_init(search_start *st, const cuco_strategy_env *env, const search_llm *l,
	bool fastpath_on, const char *strategy, cuco_err *err)
{
	memset(st, 0, sizeof *st);
	st->id = env->seed_id;
	cuco_strlcpy(st->hash, env->seed_hash, sizeof st->hash);
	st->directive = *env->seed_directive;
	if (st->id)
		return CUCO_OK;
	if (!l->llm)
		return cuco_errf(err, CUCO_EUSAGE, "%s has no seed: strategy %s starts from the program "
			"the fast path makes, which needs a model (--llm, or a [model] section: "
			"docs/configuration.md)", env->wl->name, strategy);
	if (!fastpath_on)
		return cuco_errf(err, CUCO_EUSAGE, "%s has no seed: strategy %s starts from the program "
			"the fast path makes, and evolve.fastpath is off", env->wl->name, strategy);
	return CUCO_OK;
}

void search_start_observe(search_start *st, const fastpath *fp, const cuco_candidate *c)
{
	if (st->id || !fp || !fastpath_finished(fp) || fastpath_result(fp) != c->id)
		return;
	st->id = c->id;
	cuco_strlcpy(st->hash, c->source_hash, sizeof st->hash);
	st->directive = c->directive;
}

int search_start_ready(const search_start *st, const fastpath *fp, const cuco_workload *wl,
	cuco_err *err)
{
	if (st->id)
		return CUCO_OK;
	if (fp && !fastpath_finished(fp))
		return CUCO_EBUSY;
	return cuco_errf(err, CUCO_EDATA, "%s has no seed and the fast path made no device-initiated "
		"program (its event says why): there is nothing to search from", wl->name);
}
