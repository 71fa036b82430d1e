/* search.c — the LLM strategies' gateway to the models: the models and
 * knobs the config file configured (config.h), the choice of a model (by
 * weight or by the bandit), the prompt's shape that fits a model's
 * context, and every call.
 *
 * DESIGN: every call goes through search_llm_call, which lets the
 * strategy lock go while the model answers and notes the call in the
 * proposal's ledger (ledger.c); the ledger and the budget live there, the
 * store steps in steps.c, where a search starts in start.c.
 */
#include "strategies/search_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int search_llm_open(const cuco_strategy_env *env, search_llm *s, cuco_search_config *knobs,
	cuco_err *err)
{
	memset(s, 0, sizeof *s);
	/* The command read the config file; without one, the defaults. */
	cuco_config *file = cuco_xmalloc(sizeof *file);
	if (env->cfg->config)
		*file = *env->cfg->config;
	else
		cuco_config_defaults(file);
	*knobs = file->search;
	s->cfg = file->llm;
	free(file);
	s->rng = env->cfg->seed ^ 0x6c6c6dull;
	s->port = env->port;
	s->lock = env->lock;
	s->calls_off = env->calls_off;
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
	/* The run's budgets are counted here, over the store's calls, so they
	 * count every call and survive a resume; the client keeps none. */
	s->budget_usd = ec->max_cost_usd > 0 ? ec->max_cost_usd : s->cfg.budget_usd;
	s->budget_tokens = ec->max_tokens > 0 ? ec->max_tokens : s->cfg.budget_tokens;
	s->cfg.budget_usd = 0;
	s->cfg.budget_tokens = 0;
	s->concurrency = ec->llm_jobs > 0 ? ec->llm_jobs : s->cfg.concurrency;
	if (env->model_outage_s)
		*env->model_outage_s = s->cfg.outage_s;
	int rc = search_budget_read(s, err);
	if (rc != CUCO_OK || s->cfg.nmodels == 0)
		return rc;
	for (int i = 0; i < s->cfg.nmodels; i++) {
		cuco_model *m = &s->cfg.models[i];
		cuco_model_prices(m);
		if (s->budget_usd > 0 && !cuco_model_priced(m))
			cuco_log(CUCO_LOG_WARN, "%s: model %s (%s) has no known price: its calls count as "
				"$0 (set price_in and price_out in its [model] section)",
				ec->max_cost_usd > 0 ? "--max-cost" : "budget_usd", m->name, m->model);
	}
	cuco_bandit_init(&s->bandit, &s->cfg);
	rc = cuco_llm_new(&s->cfg, &s->llm, err);
	/* Before the baseline: a dead server or a wrong name stops the run now. */
	int slots = 0;
	bool all_said = true;
	for (int i = 0; i < s->cfg.nmodels && rc == CUCO_OK; i++) {
		cuco_llm_served sv;
		rc = cuco_llm_check(s->llm, &s->cfg.models[i], &sv, err);
		slots += sv.slots;
		all_said &= sv.slots > 0;
	}
	/* More calls in flight than the servers run at once only queue there,
	 * silent until abandoned (issue 26: --llm-jobs 4 against one slot). */
	if (rc == CUCO_OK && all_said && slots < s->concurrency) {
		cuco_log(CUCO_LOG_INFO, "llm: at most %d model call%s in flight, not %d: the server%s "
			"run%s %d request%s at once", slots, slots == 1 ? "" : "s", s->concurrency,
			s->cfg.nmodels == 1 ? "" : "s", s->cfg.nmodels == 1 ? "s" : "", slots,
			slots == 1 ? "" : "s");
		s->concurrency = slots;
	}
	return rc;
}

void search_llm_close(search_llm *s)
{
	if (s->llm)
		cuco_llm_free(s->llm);
	s->llm = NULL;
}

int search_llm_concurrency(const search_llm *s)
{
	return s->llm ? s->concurrency : 0;
}

int search_llm_pick(search_llm *s)
{
	if (!s->llm)
		return -1;
	if (s->cfg.choice == CUCO_CHOICE_BANDIT)
		return cuco_bandit_pick(&s->bandit);
	return cuco_model_pick_weighted(&s->cfg, search_unit(&s->rng));
}

/* Bytes per token of a prompt as its server counts them, a little under:
 * llama.cpp's tokenizer, else what its earlier calls' usage showed, else
 * the default estimate. */
static double bytes_per_token(search_llm *s, cuco_model *m, const char *system, const char *user)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s\n%s", system ? system : "", user);
	int64_t tokens;
	cuco_err err;
	if (cuco_llm_tokenize(s->llm, m, b.data, &tokens, &err) == CUCO_OK && tokens > 0)
		m->bytes_per_token = 0.97 * (double)b.len / (double)tokens;
	cuco_buf_free(&b);
	return m->bytes_per_token > 0 ? m->bytes_per_token : CUCO_BYTES_PER_TOKEN;
}

int search_build(search_llm *s, int model, search_builder build, void *arg, search_shape *shape,
	cuco_err *err)
{
	cuco_model *m = &s->cfg.models[model];
	shape->json = m->structured && !s->no_schema[model];
	shape->too_long = false;
	int64_t need[CUCO_PROFILES] = { 0 };
	int64_t reserve = cuco_prompt_reserve(m->context, m->max_tokens);
	for (int p = 0; p < CUCO_PROFILES; p++) {
		shape->profile = (cuco_prompt_profile)p;
		const char *system, *user;
		const cuco_prompt_map *map;
		int rc = build(arg, shape, &system, &user, &map, err);
		if (rc != CUCO_OK || m->context <= 0)
			return rc;
		need[p] = cuco_prompt_floor(system, user, map, bytes_per_token(s, m, system, user));
		if (need[p] + reserve > m->context)
			continue;
		if (p != CUCO_PROFILE_FULL && !s->lean_said[model]) {
			s->lean_said[model] = true;
			cuco_log(CUCO_LOG_INFO, "llm: %s: prompts take the lean profile: the full one needs "
				"about %lld tokens that no cut removes, and a context of %lld keeps %lld for the "
				"reply", m->name, (long long)need[CUCO_PROFILE_FULL], (long long)m->context,
				(long long)reserve);
		}
		return CUCO_OK;
	}
	shape->too_long = true;
	return cuco_errf(err, CUCO_EENV, "llm %s: no prompt profile fits a context of %lld tokens: "
		"the full one needs about %lld tokens that no cut removes, the lean one %lld, and the "
		"reply %lld; give the model a longer context", m->name, (long long)m->context,
		(long long)need[CUCO_PROFILE_FULL], (long long)need[CUCO_PROFILE_LEAN], (long long)reserve);
}

/* What has streamed of a reply, for a call cut short: its tokens count. */
typedef struct stream_tap {
	cuco_buf text;
	void (*on_delta)(const char *text, size_t len, void *arg);
	void *arg;
} stream_tap;

static void tap_delta(const char *text, size_t len, void *arg)
{
	stream_tap *tap = arg;
	if (!text)
		tap->text.len = 0;  /* a retry starts the reply again */
	else
		cuco_buf_append(&tap->text, text, len);
	if (tap->on_delta)
		tap->on_delta(text, len, tap->arg);
}

/* One call; the reply as cuco_llm_complete gives it. CUCO_ENOTFOUND
 * (with the reason) when the model budget is spent, before or during the
 * call; CUCO_EENV when the run is ending or the call was cancelled. */
static int search_llm_call(search_llm *s, search_ledger *lg, const cuco_llm_request *req,
	cuco_llm_reply *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	const cuco_model *m = req->model;
	if (search_llm_spent(s))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->spent_why);
	if (s->calls_off && atomic_load(s->calls_off))
		return cuco_errf(err, CUCO_EENV, "llm %s: not called: the run is ending or paused",
			m->name);
	cuco_llm_request r = *req;
	/* A model's own temperature (its [model] section) wins over the
	 * strategy's choice: NAN hands the choice to the client. */
	if (!isnan(m->temperature))
		r.temperature = NAN;
	r.cancel = s->calls_off;
	stream_tap tap = { .on_delta = req->on_delta, .arg = req->arg };
	r.on_delta = tap_delta;
	r.arg = &tap;
	if (s->lock)
		pthread_mutex_unlock(s->lock);
	int rc = cuco_llm_complete(s->llm, &r, out, err);
	if (s->lock)
		pthread_mutex_lock(s->lock);
	search_ledger_note(s, lg, &r, out, tap.text.data, rc, err);
	cuco_buf_free(&tap.text);
	out->cost_usd = lg->v[lg->n - 1].call.cost_usd;
	if (rc != CUCO_OK && out->cancelled && search_llm_spent(s))
		return cuco_errf(err, CUCO_ENOTFOUND, "%s", s->spent_why);
	search_llm_spent(s);  /* this call may have spent it: the others end now */
	return rc;
}

typedef struct edit_hook {
	search_llm *s;
	search_ledger *lg;
} edit_hook;

static int hook_complete(void *arg, const cuco_llm_request *req, cuco_llm_reply *out,
	cuco_err *err)
{
	edit_hook *h = arg;
	return search_llm_call(h->s, h->lg, req, out, err);
}

static void hook_judged(void *arg, bool used, const char *why)
{
	edit_hook *h = arg;
	if (!used)
		search_ledger_refused(h->lg, why);
	else if (*why)
		search_ledger_edits_refused(h->lg, why);
}

char *search_llm_ask(search_llm *s, search_ledger *lg, int model, const char *system,
	const char *user, double temperature, int max_tokens, cuco_err *err)
{
	cuco_llm_msg msg = { "user", user };
	const cuco_model *m = &s->cfg.models[model];
	cuco_llm_request req = { .model = m, .system = system, .nmsgs = 1, .msgs = &msg,
		.temperature = temperature, .stream = true,
		.max_tokens = max_tokens < m->max_tokens ? max_tokens : m->max_tokens };
	cuco_llm_reply r;
	edit_hook h = { s, lg };
	cuco_fitted sent;
	int rc = cuco_llm_ask_fitted(s->llm, hook_complete, &h, &req, NULL, &sent, &r, err);
	cuco_fitted_free(&sent);
	char *text = r.text;
	r.text = NULL;
	if (rc == CUCO_OK && cuco_edit_cut_off(r.finish)) {
		rc = cuco_errf(err, CUCO_EDATA, "reply cut off by the output limit (finish reason %s)",
			r.finish);
		search_ledger_refused(lg, err->msg);
	}
	cuco_llm_reply_free(&r);
	if (rc != CUCO_OK) {
		free(text);
		return NULL;
	}
	return text;
}

bool search_says_nothing(const char *text)
{
	int words = 0;
	for (const char *p = text; *p && words < 3;) {
		if (*p == '<') {
			/* A template token or tag: <end_of_turn>, <|im_end|>, <eos>. */
			const char *close = strchr(p, '>');
			if (close && close - p < 32) {
				p = close + 1;
				continue;
			}
		}
		if (!isalnum((unsigned char)*p)) {
			p++;
			continue;
		}
		const char *start = p;
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '\'')
			p++;
		words += p - start >= 2;
	}
	return words < 3;
}

int search_llm_edit(search_llm *s, search_ledger *lg, cuco_edit *e, cuco_edit_result *r,
	cuco_err *err)
{
	edit_hook h = { s, lg };
	e->llm = s->llm;
	e->complete = hook_complete;
	e->judged = hook_judged;
	e->hook = &h;
	e->stream = true;
	int rc = cuco_llm_edit(e, r, err);
	int model = (int)(e->model - s->cfg.models);
	if (r->schema_refused && model >= 0 && model < s->cfg.nmodels && !s->no_schema[model]) {
		/* Its server takes no JSON schema: text replies from now on. */
		s->no_schema[model] = true;
		cuco_log(CUCO_LOG_INFO, "llm: %s: its server takes no JSON schema; its replies are free "
			"text from now on", e->model->name);
	}
	return rc;
}
