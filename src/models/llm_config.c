/* llm_config.c — the models: the providers a spec or the config file may
 * name and the defaults each implies, the published prices and what a
 * call costs, and how a model is chosen (by weight, or by a cost-aware
 * UCB bandit rewarded with each child's improvement over its parent).
 *
 * DESIGN: the config file's reader (strategies/config.c) fills a
 * cuco_llm_config; everything here reads one, so the client and the
 * strategies price and choose alike.
 */
#include "models/models.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The OpenAI-compatible servers differ only in URL and key; the first is
 * the default. */
static const cuco_provider_alias aliases[] = {
	{ "openai", CUCO_PROVIDER_OPENAI, "https://api.openai.com/v1", "OPENAI_API_KEY", true, 16384,
		false, CUCO_SERVER_HOSTED, false },
	{ "anthropic", CUCO_PROVIDER_ANTHROPIC, "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY",
		false, 16384, false, CUCO_SERVER_HOSTED, false },
	{ "openrouter", CUCO_PROVIDER_OPENAI, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
		false, 16384, false, CUCO_SERVER_HOSTED, false },
	/* The laptop servers: a few tokens a second, and a context of a few
	 * thousand, so a reply of 16 k tokens would never come. */
	{ "ollama", CUCO_PROVIDER_OPENAI, "http://127.0.0.1:11434/v1", "", false, 4096, true,
		CUCO_SERVER_OLLAMA, true },
	{ "vllm", CUCO_PROVIDER_OPENAI, NULL, "", false, 16384, true, CUCO_SERVER_VLLM, true },
	{ "sglang", CUCO_PROVIDER_OPENAI, NULL, "", false, 16384, true, CUCO_SERVER_SGLANG, true },
	{ "llamacpp", CUCO_PROVIDER_OPENAI, NULL, "", false, 4096, true, CUCO_SERVER_LLAMACPP, true },
};

bool cuco_model_hosted(const cuco_model *m)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (aliases[i].url && aliases[i].key_env[0] && strcmp(aliases[i].url, m->url) == 0)
			return true;
	return false;
}

const cuco_provider_alias *cuco_provider_find(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strlen(aliases[i].name) == n && strncmp(aliases[i].name, name, n) == 0)
			return &aliases[i];
	return NULL;
}

void cuco_provider_names(char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0] && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", aliases[i].name);
}

void cuco_model_defaults(cuco_model *m, const cuco_provider_alias *a)
{
	memset(m, 0, sizeof *m);
	m->provider = a->provider;
	if (a->url)
		cuco_strlcpy(m->url, a->url, sizeof m->url);
	cuco_strlcpy(m->api_key_env, a->key_env, sizeof m->api_key_env);
	m->weight = 1;
	m->price_in = m->price_cached = m->price_out = a->own ? 0 : NAN;
	m->temperature = NAN;
	m->max_tokens = a->max_tokens;
	m->completion_tokens = a->completion_tokens;
	m->server = a->server;
	m->structured = a->structured;
}

int cuco_model_choice_parse(const char *name, cuco_model_choice *out)
{
	static const char *const names[CUCO_CHOICE_COUNT] = {
#define X(e, name, help) name,
		CUCO_MODEL_CHOICES(X)
#undef X
	};
	int i = cuco_name_index(names, CUCO_CHOICE_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_model_choice)i;
	return CUCO_OK;
}

/* ---- prices ---------------------------------------------------------------- */

#define OPENAI_PRICES "https://openai.com/api/pricing"
#define ANTHROPIC_PRICES "https://www.anthropic.com/pricing"

/* USD per million tokens: prompt, cached prompt, completion. Written down
 * on 2026-12-01 from the providers' public price pages as the author knew
 * them at the dates given, not fetched by cuco and not re-checked since:
 * prices change, so a config's price_in, price_cached and price_out win. */
static const cuco_price prices[] = {
	{ "gpt-5", 1.25, 0.125, 10.00, "2025-08", OPENAI_PRICES },
	{ "gpt-5-mini", 0.25, 0.025, 2.00, "2025-08", OPENAI_PRICES },
	{ "gpt-5-nano", 0.05, 0.005, 0.40, "2025-08", OPENAI_PRICES },
	{ "gpt-4.1", 2.00, 0.50, 8.00, "2025-08", OPENAI_PRICES },
	{ "gpt-4.1-mini", 0.40, 0.10, 1.60, "2025-08", OPENAI_PRICES },
	{ "gpt-4.1-nano", 0.10, 0.025, 0.40, "2025-08", OPENAI_PRICES },
	{ "gpt-4o", 2.50, 1.25, 10.00, "2025-08", OPENAI_PRICES },
	{ "gpt-4o-mini", 0.15, 0.075, 0.60, "2025-08", OPENAI_PRICES },
	{ "o1", 15.00, 7.50, 60.00, "2025-08", OPENAI_PRICES },
	{ "o3", 2.00, 0.50, 8.00, "2025-08", OPENAI_PRICES },
	{ "o3-mini", 1.10, 0.55, 4.40, "2025-08", OPENAI_PRICES },
	{ "o4-mini", 1.10, 0.275, 4.40, "2025-08", OPENAI_PRICES },
	{ "claude-opus-4", 15.00, 1.50, 75.00, "2025-08", ANTHROPIC_PRICES },
	{ "claude-opus-4-5", 5.00, 0.50, 25.00, "2025-11", ANTHROPIC_PRICES },
	{ "claude-sonnet-4", 3.00, 0.30, 15.00, "2025-08", ANTHROPIC_PRICES },
	{ "claude-3-7-sonnet", 3.00, 0.30, 15.00, "2025-08", ANTHROPIC_PRICES },
	{ "claude-3-5-sonnet", 3.00, 0.30, 15.00, "2025-08", ANTHROPIC_PRICES },
	{ "claude-haiku-4-5", 1.00, 0.10, 5.00, "2025-11", ANTHROPIC_PRICES },
	{ "claude-3-5-haiku", 0.80, 0.08, 4.00, "2025-08", ANTHROPIC_PRICES },
};

/* Whether id is entry, or entry followed by "-" and a digit: a dated
 * snapshot or a minor version ("gpt-4o-2024-08-06", "claude-sonnet-4-5"),
 * not another model ("o3-pro" is not "o3"). */
static bool price_covers(const char *entry, const char *id)
{
	size_t n = strlen(entry);
	return strncmp(entry, id, n) == 0 &&
		(id[n] == '\0' || (id[n] == '-' && isdigit((unsigned char)id[n + 1])));
}

const cuco_price *cuco_price_find(const char *model)
{
	const char *slash = strrchr(model, '/');
	const char *id = slash ? slash + 1 : model;
	const cuco_price *best = NULL;
	for (size_t i = 0; i < sizeof prices / sizeof prices[0]; i++)
		if (price_covers(prices[i].model, id) &&
				(!best || strlen(prices[i].model) > strlen(best->model)))
			best = &prices[i];
	return best;
}

void cuco_model_prices(cuco_model *m)
{
	const cuco_price *p = cuco_price_find(m->model);
	/* Prices the config gave are the config's, all of them: the table's
	 * cached price belongs with the table's prompt price. */
	if (!p || !isnan(m->price_in) || !isnan(m->price_out) || !isnan(m->price_cached))
		return;
	m->price_in = p->in;
	m->price_cached = p->cached;
	m->price_out = p->out;
}

bool cuco_model_priced(const cuco_model *m)
{
	return !isnan(m->price_in) && !isnan(m->price_out);
}

static double per_million(double price)
{
	return isnan(price) ? 0 : price / 1e6;
}

double cuco_model_cost(const cuco_model *m, int64_t tokens_in, int64_t tokens_cached,
	int64_t tokens_out)
{
	/* A cached token is billed at the cached price where there is one. */
	double cached_price = isnan(m->price_cached) ? m->price_in : m->price_cached;
	int64_t fresh = tokens_in - tokens_cached;
	return (double)(fresh > 0 ? fresh : 0) * per_million(m->price_in) +
		(double)tokens_cached * per_million(cached_price) +
		(double)tokens_out * per_million(m->price_out);
}

int cuco_model_pick_weighted(const cuco_llm_config *cfg, double u)
{
	double total = 0;
	for (int i = 0; i < cfg->nmodels; i++)
		total += cfg->models[i].weight > 0 ? cfg->models[i].weight : 0;
	double at = u * total, sum = 0;
	int last = 0;
	for (int i = 0; i < cfg->nmodels; i++) {
		if (cfg->models[i].weight <= 0)
			continue;
		sum += cfg->models[i].weight;
		last = i;
		if (at < sum)
			return i;
	}
	return last;
}

/* ---- bandit -------------------------------------------------------------- */

void cuco_bandit_init(cuco_bandit *b, const cuco_llm_config *cfg)
{
	memset(b, 0, sizeof *b);
	b->narms = cfg->nmodels;
	b->exploration = cfg->bandit_exploration;
	b->cost_weight = cfg->bandit_cost_weight;
}

int cuco_bandit_pick(const cuco_bandit *b)
{
	double max_cost = 0;
	for (int i = 0; i < b->narms; i++) {
		if (b->pulls[i] == 0)
			return i;
		if (b->cost[i] / b->pulls[i] > max_cost)
			max_cost = b->cost[i] / b->pulls[i];
	}
	int best = 0;
	double best_score = -INFINITY;
	for (int i = 0; i < b->narms; i++) {
		double mean = b->reward[i] / b->pulls[i];
		/* Cost counts relative to the dearest arm, so the weight is unitless. */
		double cost = max_cost > 0 ? b->cost[i] / b->pulls[i] / max_cost : 0;
		double bonus = b->exploration * sqrt(2 * log(b->total) / b->pulls[i]);
		double score = mean - b->cost_weight * cost + bonus;
		if (score > best_score) {
			best_score = score;
			best = i;
		}
	}
	return best;
}

void cuco_bandit_update(cuco_bandit *b, int arm, double reward, double cost_usd)
{
	if (arm < 0 || arm >= b->narms)
		return;
	b->pulls[arm] += 1;
	b->total += 1;
	b->reward[arm] += reward;
	b->cost[arm] += cost_usd;
}

double cuco_bandit_reward(double parent_score, double child_score)
{
	if (isnan(parent_score) || isnan(child_score))
		return 0;
	double r = parent_score == 0 ? (child_score > 0 ? 1 : 0)
		: (child_score - parent_score) / fabs(parent_score);
	return r < 0 ? 0 : r > 1 ? 1 : r;
}
