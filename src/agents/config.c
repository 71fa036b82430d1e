/* config.c — the LLM side's configuration: the config file, `--llm`
 * specs, prices, and how a model is chosen (by weight, or by a cost-aware
 * UCB bandit rewarded with each child's improvement over its parent).
 *
 * The file format is deliberately small (docs/configuration.md): `key =
 * value` lines, `#` comments, and `[model NAME]` sections. Every error
 * names file:line and the key, so a typo is found at once.
 */
#include "agents/agents.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cuco_llm_config_defaults(cuco_llm_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->choice = CUCO_CHOICE_WEIGHT;
	cfg->bandit_exploration = 1.0;
	cfg->bandit_cost_weight = 0.5;  /* ShinkaEvolve's cost coefficient */
	cfg->connect_timeout_s = 10;
	cfg->idle_timeout_s = 300;      /* reasoning models think silently */
	cfg->total_timeout_s = 1200;
	cfg->max_retries = 4;
	cfg->backoff_base_s = 1;
	cfg->backoff_max_s = 60;
	cfg->retry_time_s = 300;        /* whatever a Retry-After asks */
	cfg->outage_s = 300;            /* a server restart or a model load passes well within */
	cfg->max_reply_bytes = 4u << 20;
	cfg->patch_attempts = 4;        /* CUCo's max_patch_attempts */
	cfg->concurrency = 4;
}

bool cuco_llm_config_path(char *buf, size_t size)
{
	const cuco_paths *p = cuco_paths_get();
	return p->config[0] && cuco_strlcpy(buf, p->config, size);
}

const char *cuco_provider_name(cuco_provider p)
{
	return p == CUCO_PROVIDER_ANTHROPIC ? "anthropic" : "openai";
}

/* Provider names a spec or the config may use, with the defaults each
 * implies. The OpenAI-compatible servers differ only in URL and key. */
static const struct provider_alias {
	const char *name;
	cuco_provider provider;
	const char *url;      /* NULL: the spec must give @URL */
	const char *key_env;
	bool completion_tokens;  /* OpenAI's own API wants max_completion_tokens */
	int max_tokens;          /* the default completion limit */
	bool own;                /* a server of one's own: no price per token */
	cuco_server server;
	bool structured;         /* takes a JSON schema (response_format): `structured = auto` */
} aliases[] = {
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

static const struct provider_alias *find_alias(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strlen(aliases[i].name) == n && strncmp(aliases[i].name, name, n) == 0)
			return &aliases[i];
	return NULL;
}

static void model_defaults(cuco_model *m, const struct provider_alias *a)
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

/* ---- the file ---------------------------------------------------------- */

static bool to_double(const char *v, double min, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < min)
		return false;
	*out = d;
	return true;
}

static bool to_int(const char *v, int min, int *out)
{
	char *end;
	errno = 0;
	long l = strtol(v, &end, 10);
	if (errno || end == v || *end || l < min || l > 1 << 24)
		return false;
	*out = (int)l;
	return true;
}

/* Where a line of the file is, for error messages. */
typedef struct where {
	const char *path;
	int line;
	const char *key;
} where;

static int bad(cuco_err *err, const where *w, const char *what)
{
	return cuco_errf(err, CUCO_EDATA, "%s:%d: %s: %s", w->path, w->line, w->key, what);
}

/* A model server is reached over HTTP: any other scheme (file://, a bare
 * path) would be handed to libcurl as is. */
static bool http_url(const char *url)
{
	return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

static int set_string(char *dst, size_t size, const char *v, const where *w, cuco_err *err)
{
	if (!cuco_strlcpy(dst, v, size))
		return bad(err, w, "value too long");
	return CUCO_OK;
}

/* What a [model] section said about its provider, applied at its end:
 * the provider's URL and key variable fill what the section left unset. */
typedef struct section_state {
	const struct provider_alias *alias;
	bool url_set, key_set, max_tokens_set;
	int structured;          /* -1: auto (the provider's), else 0 or 1 */
} section_state;

static int model_key(cuco_model *m, section_state *ss, const char *k, const char *v,
	const where *w, cuco_err *err)
{
	if (strcmp(k, "provider") == 0) {
		ss->alias = find_alias(v, strlen(v));
		if (!ss->alias)
			return bad(err, w, "unknown provider (openai, anthropic, openrouter, ollama, vllm, "
				"sglang, llamacpp)");
		m->provider = ss->alias->provider;
		return CUCO_OK;
	}
	if (strcmp(k, "model") == 0)
		return set_string(m->model, sizeof m->model, v, w, err);
	if (strcmp(k, "url") == 0) {
		ss->url_set = true;
		if (!http_url(v))
			return bad(err, w, "expected an http:// or https:// URL");
		return set_string(m->url, sizeof m->url, v, w, err);
	}
	if (strcmp(k, "api_key_env") == 0) {
		ss->key_set = true;
		return set_string(m->api_key_env, sizeof m->api_key_env, v, w, err);
	}
	if (strcmp(k, "weight") == 0)
		return to_double(v, 0, &m->weight) ? CUCO_OK : bad(err, w, "not a number >= 0");
	if (strcmp(k, "price_in") == 0)
		return to_double(v, 0, &m->price_in) ? CUCO_OK : bad(err, w, "not a price >= 0");
	if (strcmp(k, "price_out") == 0)
		return to_double(v, 0, &m->price_out) ? CUCO_OK : bad(err, w, "not a price >= 0");
	if (strcmp(k, "price_cached") == 0)
		return to_double(v, 0, &m->price_cached) ? CUCO_OK : bad(err, w, "not a price >= 0");
	if (strcmp(k, "temperature") == 0) {
		m->no_temperature = strcmp(v, "none") == 0;
		return m->no_temperature || (to_double(v, 0, &m->temperature) && m->temperature <= 2)
			? CUCO_OK : bad(err, w, "not a temperature in [0, 2], or none");
	}
	if (strcmp(k, "max_tokens") == 0) {
		ss->max_tokens_set = true;
		return to_int(v, 1, &m->max_tokens) ? CUCO_OK : bad(err, w, "not a positive integer");
	}
	if (strcmp(k, "structured") == 0) {
		ss->structured = strcmp(v, "on") == 0 ? 1 : strcmp(v, "off") == 0 ? 0
			: strcmp(v, "auto") == 0 ? -1 : -2;
		return ss->structured > -2 ? CUCO_OK : bad(err, w, "not auto, on or off");
	}
	if (strcmp(k, "context") == 0) {
		int n;
		if (!to_int(v, 256, &n))
			return bad(err, w, "not a whole number of tokens >= 256");
		m->context = n;
		return CUCO_OK;
	}
	return bad(err, w, "unknown key in a [model] section");
}

static int global_key(cuco_llm_config *c, const char *k, const char *v, const where *w,
	cuco_err *err)
{
	static const struct { const char *key; size_t off; double min; } reals[] = {
		{ "connect_timeout", offsetof(cuco_llm_config, connect_timeout_s), 0.001 },
		{ "idle_timeout", offsetof(cuco_llm_config, idle_timeout_s), 1 },
		{ "timeout", offsetof(cuco_llm_config, total_timeout_s), 0.001 },
		{ "backoff", offsetof(cuco_llm_config, backoff_base_s), 0 },
		{ "backoff_max", offsetof(cuco_llm_config, backoff_max_s), 0 },
		{ "bandit_exploration", offsetof(cuco_llm_config, bandit_exploration), 0 },
		{ "bandit_cost_weight", offsetof(cuco_llm_config, bandit_cost_weight), 0 },
		{ "budget_usd", offsetof(cuco_llm_config, budget_usd), 0 },
		{ "retry_time", offsetof(cuco_llm_config, retry_time_s), 1 },
		{ "outage", offsetof(cuco_llm_config, outage_s), 1 },
	};
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
		if (strcmp(k, reals[i].key) == 0)
			return to_double(v, reals[i].min, (double *)((char *)c + reals[i].off)) ? CUCO_OK
				: bad(err, w, "not a number in range");
	if (strcmp(k, "retries") == 0)
		return to_int(v, 0, &c->max_retries) ? CUCO_OK : bad(err, w, "not an integer >= 0");
	if (strcmp(k, "budget_tokens") == 0) {
		double t;
		if (!to_double(v, 0, &t) || t != floor(t) || t > 9e15)
			return bad(err, w, "not a whole number of tokens >= 0");
		c->budget_tokens = (int64_t)t;
		return CUCO_OK;
	}
	if (strcmp(k, "max_reply") == 0) {
		double b;
		if (!to_double(v, 4096, &b) || b != floor(b) || b > (double)(1u << 30))
			return bad(err, w, "not a whole number of bytes in [4096, 1073741824]");
		c->max_reply_bytes = (size_t)b;
		return CUCO_OK;
	}
	if (strcmp(k, "patch_attempts") == 0)
		return to_int(v, 1, &c->patch_attempts) ? CUCO_OK : bad(err, w, "not an integer >= 1");
	if (strcmp(k, "concurrency") == 0)
		return to_int(v, 1, &c->concurrency) && c->concurrency <= CUCO_MAX_CONCURRENCY ? CUCO_OK
			: bad(err, w, "not an integer from 1 to 16");
	if (strcmp(k, "choice") == 0) {
		if (strcmp(v, "weight") == 0)
			c->choice = CUCO_CHOICE_WEIGHT;
		else if (strcmp(v, "bandit") == 0)
			c->choice = CUCO_CHOICE_BANDIT;
		else
			return bad(err, w, "not weight or bandit");
		return CUCO_OK;
	}
	return bad(err, w, "unknown key");
}

/* [eval]: only the sandbox for now (docs/configuration.md). */
static int eval_key(cuco_llm_config *c, const char *k, const char *v, const where *w,
	cuco_err *err)
{
	if (strcmp(k, "sandbox") != 0)
		return bad(err, w, "unknown key in [eval] (sandbox)");
	if (cuco_sandbox_mode_parse(v, &c->sandbox))
		return CUCO_OK;
	char what[96];
	snprintf(what, sizeof what, "%.40s: not auto, bwrap or off", v);
	return bad(err, w, what);
}

/* [runner]: where stages run, keys as the evaluator reads them. */
static int runner_key(cuco_llm_config *c, const char *k, const char *v, const where *w,
	cuco_err *err)
{
	char why[256];
	return cuco_runner_config_set(&c->runner, k, v, why, sizeof why) ? CUCO_OK : bad(err, w, why);
}

/* Which part of the file a line is in: the top (client settings), a
 * [model NAME], or a section the search reads (cuco_search_config_load). */
enum part { PART_TOP, PART_MODEL, PART_SEARCH, PART_SCREEN, PART_EVAL, PART_RUNNER };

/* A section line: `[model NAME]` opens a model, [screen] holds the
 * theme, [eval] the evaluator's sandbox, [runner] where stages run;
 * [evolve], [beam] and [fastpath] belong to the search and are skipped
 * here. */
static int section(cuco_llm_config *c, char *s, enum part *part, const where *w, cuco_err *err)
{
	char *close = strchr(s, ']');
	if (!close || cuco_trim(close + 1)[0])
		return bad(err, w, "a section line is [NAME] or [model NAME]");
	*close = '\0';
	char *body = cuco_trim(s + 1);
	if (strcmp(body, "llm") == 0) {  /* the client's keys, as at the top */
		*part = PART_TOP;
		return CUCO_OK;
	}
	if (strcmp(body, "screen") == 0 || strcmp(body, "eval") == 0 || strcmp(body, "runner") == 0) {
		*part = body[0] == 's' ? PART_SCREEN : body[0] == 'e' ? PART_EVAL : PART_RUNNER;
		return CUCO_OK;
	}
	*part = PART_SEARCH;
	if (strcmp(body, "evolve") == 0 || strcmp(body, "beam") == 0 || strcmp(body, "fastpath") == 0 ||
			strcmp(body, "sample") == 0)
		return CUCO_OK;
	if (strncmp(body, "model", 5) != 0 || !isspace((unsigned char)body[5]))
		return bad(err, w, "unknown section ([llm], [model NAME], [evolve], [beam], [fastpath], "
			"[sample], [screen], [eval], [runner])");
	*part = PART_MODEL;
	char *name = cuco_trim(body + 5);
	if (!*name)
		return bad(err, w, "[model NAME] needs a NAME");
	for (int i = 0; i < c->nmodels; i++)
		if (strcmp(c->models[i].name, name) == 0)
			return bad(err, w, "model defined twice");
	if (c->nmodels == CUCO_MAX_MODELS)
		return bad(err, w, "too many models");
	cuco_model *m = &c->models[c->nmodels++];
	model_defaults(m, &aliases[0]);
	m->url[0] = m->api_key_env[0] = '\0';
	return set_string(m->name, sizeof m->name, name, w, err);
}

/* Close a [model] section: the provider's defaults fill the gaps, and it
 * must then say which model and where. */
static int end_model(cuco_model *m, const section_state *ss, const char *path, cuco_err *err)
{
	const struct provider_alias *a = ss->alias ? ss->alias : &aliases[0];
	if (!ss->url_set && a->url)
		cuco_strlcpy(m->url, a->url, sizeof m->url);
	if (!ss->key_set)
		cuco_strlcpy(m->api_key_env, a->key_env, sizeof m->api_key_env);
	if (!ss->max_tokens_set)
		m->max_tokens = a->max_tokens;
	m->server = a->server;
	m->structured = ss->structured < 0 ? a->structured : ss->structured == 1;
	if (a->own && isnan(m->price_in) && isnan(m->price_out))
		m->price_in = m->price_out = m->price_cached = 0;
	/* Another server behind an OpenAI-style URL keeps the common name. */
	m->completion_tokens = a->completion_tokens && !ss->url_set;
	if (!m->model[0])
		return cuco_errf(err, CUCO_EDATA, "%s: [model %s]: model: missing", path, m->name);
	if (!m->url[0])
		return cuco_errf(err, CUCO_EDATA, "%s: [model %s]: url: missing", path, m->name);
	return CUCO_OK;
}

static int take_key(cuco_llm_config *cfg, enum part part, section_state *ss, const char *k,
	const char *v, const where *w, cuco_err *err)
{
	if (part == PART_SCREEN)
		return strcmp(k, "theme") == 0 ? set_string(cfg->theme, sizeof cfg->theme, v, w, err)
			: bad(err, w, "unknown key in [screen] (theme)");
	if (part == PART_EVAL)
		return eval_key(cfg, k, v, w, err);
	if (part == PART_RUNNER)
		return runner_key(cfg, k, v, w, err);
	return part == PART_MODEL ? model_key(&cfg->models[cfg->nmodels - 1], ss, k, v, w, err)
		: global_key(cfg, k, v, w, err);
}

int cuco_llm_config_load(const char *path, cuco_llm_config *cfg, cuco_err *err)
{
	char *text;
	int rc = cuco_read_text(path, 1 << 20, &text, NULL, err);
	if (rc != CUCO_OK)
		return rc;
	where w = { path, 0, "" };
	section_state ss = { .structured = -1 };
	enum part part = PART_TOP;
	char head[128];  /* section() cuts its line; errors quote it whole */
	cuco_buf seen = { 0 };  /* every part's keys, to refuse one given twice */
	/* strtok_r would skip blank lines and so miscount; walk by hand. */
	for (char *line = text, *next; line && rc == CUCO_OK; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		w.line++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = cuco_trim(line);
		if (!*s)
			continue;
		if (*s == '[') {
			if (part == PART_MODEL)
				rc = end_model(&cfg->models[cfg->nmodels - 1], &ss, path, err);
			snprintf(head, sizeof head, "%s", s);
			w.key = head;
			if (rc == CUCO_OK)
				rc = section(cfg, s, &part, &w, err);
			ss = (section_state){ .structured = -1 };
			continue;
		}
		if (part == PART_SEARCH)
			continue;
		char *eq = strchr(s, '=');
		w.key = s;
		if (!eq) {
			rc = bad(err, &w, "expected key = value");
			continue;
		}
		*eq = '\0';
		char *k = cuco_trim(s), *v = cuco_trim(eq + 1);
		w.key = k;
		rc = take_key(cfg, part, &ss, k, v, &w, err);
		/* A second value would silently win over the first (issue 18). */
		char name[160];
		snprintf(name, sizeof name, "%d %s %s", (int)part,
			part == PART_MODEL ? cfg->models[cfg->nmodels - 1].name : "", k);
		if (rc == CUCO_OK && !cuco_buf_add_once(&seen, name))
			rc = bad(err, &w, "given twice");
	}
	if (rc == CUCO_OK && part == PART_MODEL)
		rc = end_model(&cfg->models[cfg->nmodels - 1], &ss, path, err);
	cuco_buf_free(&seen);
	free(text);
	return rc;
}

/* ---- specs --------------------------------------------------------------- */

static int parse_spec(const char *spec, cuco_model *m, cuco_err *err)
{
	const char *colon = strchr(spec, ':');
	if (!colon)
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: expected PROVIDER:MODEL[@URL][*WEIGHT]", spec);
	const struct provider_alias *a = find_alias(spec, (size_t)(colon - spec));
	if (!a)
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: unknown provider `%.*s` (openai, anthropic, "
			"openrouter, ollama, vllm, sglang, llamacpp)", spec, (int)(colon - spec), spec);
	model_defaults(m, a);
	char rest[768];
	if (!cuco_strlcpy(rest, colon + 1, sizeof rest))
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: too long", spec);
	char *star = strrchr(rest, '*');
	if (star) {
		*star = '\0';
		if (!to_double(star + 1, 0, &m->weight) || m->weight <= 0)
			return cuco_errf(err, CUCO_EUSAGE, "--llm %s: weight `%s` is not a number > 0",
				spec, star + 1);
	}
	char *at = strchr(rest, '@');
	if (at) {
		*at = '\0';
		if (!at[1] || !http_url(at + 1) || !cuco_strlcpy(m->url, at + 1, sizeof m->url))
			return cuco_errf(err, CUCO_EUSAGE, "--llm %s: after @, an http:// or https:// URL",
				spec);
		m->completion_tokens = false;
	}
	if (!rest[0] || !cuco_strlcpy(m->model, rest, sizeof m->model))
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: missing or too long MODEL", spec);
	if (!m->url[0])
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: %s needs @URL", spec, a->name);
	cuco_strlcpy(m->name, m->model, sizeof m->name);
	return CUCO_OK;
}

int cuco_llm_use_specs(cuco_llm_config *cfg, char *const *specs, int n, cuco_err *err)
{
	if (n <= 0)
		return CUCO_OK;
	if (n > CUCO_MAX_MODELS)
		return cuco_errf(err, CUCO_EUSAGE, "--llm: at most %d models", CUCO_MAX_MODELS);
	cuco_model use[CUCO_MAX_MODELS];
	for (int i = 0; i < n; i++) {
		int rc = parse_spec(specs[i], &use[i], err);
		if (rc != CUCO_OK)
			return rc;
		for (int k = 0; k < cfg->nmodels; k++) {
			const cuco_model *t = &cfg->models[k];
			if (strcmp(t->model, use[i].model) != 0)
				continue;
			use[i].price_in = t->price_in;
			use[i].price_cached = t->price_cached;
			use[i].price_out = t->price_out;
			use[i].temperature = t->temperature;
			use[i].no_temperature = t->no_temperature;
			use[i].max_tokens = t->max_tokens;
			use[i].context = t->context;
			use[i].structured = t->structured;
			memcpy(use[i].api_key_env, t->api_key_env, sizeof t->api_key_env);
			memcpy(use[i].name, t->name, sizeof t->name);
			break;
		}
	}
	memcpy(cfg->models, use, (size_t)n * sizeof use[0]);
	cfg->nmodels = n;
	return CUCO_OK;
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
