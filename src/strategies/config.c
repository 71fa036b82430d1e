/* config.c — the configuration: the config file and `--llm` specs (the
 * models' providers, prices and choice: models/llm_config.c).
 *
 * The file (config.h): one table of every option, in every section, and
 * one reader. The format is deliberately small (docs/configuration.md):
 * `key = value` lines, `#` comments, `[section]` and `[model NAME]` lines.
 * Every error names file:line and the key, so a typo is found at once.
 */
#include "strategies/search_int.h"
#include "strategies/strategies.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cuco_llm_config_path(char *buf, size_t size)
{
	const cuco_paths *p = cuco_paths_get();
	return p->config[0] && cuco_strlcpy(buf, p->config, size);
}

/* A [model] that names no provider is OpenAI's. */
static const cuco_provider_alias *default_provider(void)
{
	return cuco_provider_find("openai", strlen("openai"));
}

/* ---- the file ---------------------------------------------------------- */

static bool to_double(const char *v, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || end == v || *end || !isfinite(d) || d < min || d > max)
		return false;
	*out = d;
	return true;
}

static bool to_int(const char *v, int min, int max, int *out)
{
	char *end;
	errno = 0;
	long l = strtol(v, &end, 10);
	if (errno || end == v || *end || l < min || l > max)
		return false;
	*out = (int)l;
	return true;
}

/* A whole number written as a number: "4096", "4e6", "2.0". */
static bool to_whole(const char *v, double min, double max, double *out)
{
	return to_double(v, min, max, out) && *out == floor(*out);
}

/* "a, b, c": three numbers in range. */
static bool to_reals3(const char *v, double min, double max, double *out)
{
	double d[3];
	char part[64];
	for (int i = 0; i < 3; i++) {
		size_t n = strcspn(v, ",");
		if (n >= sizeof part || (i < 2) != (v[n] == ','))
			return false;
		memcpy(part, v, n);
		part[n] = '\0';
		if (!to_double(cuco_trim(part), min, max, &d[i]))
			return false;
		v += n + (v[n] == ',');
	}
	memcpy(out, d, sizeof d);
	return true;
}

/* A model server is reached over HTTP: any other scheme (file://, a bare
 * path) would be handed to libcurl as is. */
static bool http_url(const char *url)
{
	return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* The types of values, each with its parser (set_value). */
enum {
	T_REAL,       /* a number in [min, max] */
	T_INT,        /* an integer in [min, max], into an int or an int64_t */
	T_WHOLE,      /* a whole number in [min, max], written as any number */
	T_TOKENS,     /* the same, into an int64_t */
	T_BYTES,      /* the same, into a size_t */
	T_BOOL,       /* true, false, yes or no */
	T_REALS3,     /* three numbers a, b, c in [min, max] */
	T_TEXT,       /* a string that fits its field */
	T_URL,        /* an http:// or https:// URL */
	T_CHOICE,     /* a CUCO_MODEL_CHOICES name */
	T_RULE,       /* weighted | power_law */
	T_PROVIDER,   /* one of the provider aliases */
	T_TEMP,       /* a temperature in [min, max], or none */
	T_STRUCTURED, /* auto | on | off */
	T_SANDBOX,    /* auto | bwrap | off */
	T_RUNNER,     /* read by the evaluator (cuco_runner_config_set) */
};

#define NO_MAX HUGE_VAL
#define INT_CAP (1 << 24)

/* Every option: section, key, type, the struct it is in and its field,
 * min, max, default (a value of its type; prose in brackets is said, not
 * set), what a bad value is not, help. docs/configuration.md documents
 * each in its section (tests/agents/test_llm_config.c holds it to this). */
#define CUCO_CONFIG_OPTIONS(X) \
	X(LLM, choice, CHOICE, cuco_llm_config, choice, 0, 0, "weight", "weight or bandit", \
		"how a model is chosen per call: by weight, or by a cost-aware UCB") \
	X(LLM, bandit_exploration, REAL, cuco_llm_config, bandit_exploration, 0, NO_MAX, "1.0", \
		"a number in range", "UCB's exploration constant c") \
	X(LLM, bandit_cost_weight, REAL, cuco_llm_config, bandit_cost_weight, 0, NO_MAX, "0.5", \
		"a number in range", "how much a model's relative mean cost lowers its score") \
	X(LLM, connect_timeout, REAL, cuco_llm_config, connect_timeout_s, 0.001, NO_MAX, "10", \
		"a number in range", "seconds to connect") \
	X(LLM, idle_timeout, REAL, cuco_llm_config, idle_timeout_s, 1, NO_MAX, "300", \
		"a number in range", "seconds a streamed reply may go without progress") \
	X(LLM, timeout, REAL, cuco_llm_config, total_timeout_s, 0.001, NO_MAX, "1200", \
		"a number in range", "seconds one whole (non-streamed) attempt may take") \
	X(LLM, retries, INT, cuco_llm_config, max_retries, 0, INT_CAP, "4", "an integer >= 0", \
		"attempts after the first") \
	X(LLM, backoff, REAL, cuco_llm_config, backoff_base_s, 0, NO_MAX, "1", "a number in range", \
		"seconds the first retry waits, about") \
	X(LLM, backoff_max, REAL, cuco_llm_config, backoff_max_s, 0, NO_MAX, "60", \
		"a number in range", "cap of a backoff and of a Retry-After") \
	X(LLM, retry_time, REAL, cuco_llm_config, retry_time_s, 1, NO_MAX, "300", \
		"a number in range", "seconds a call may spend retrying") \
	X(LLM, outage, REAL, cuco_llm_config, outage_s, 1, NO_MAX, "300", "a number in range", \
		"seconds no model may answer before the run waits for one") \
	X(LLM, max_reply, BYTES, cuco_llm_config, max_reply_bytes, 4096, 1 << 30, "4194304", \
		"a whole number of bytes in [4096, 1073741824]", "bytes a reply may hold") \
	X(LLM, patch_attempts, INT, cuco_llm_config, patch_attempts, 1, INT_CAP, "4", \
		"an integer >= 1", "replies per edit") \
	X(LLM, concurrency, INT, cuco_llm_config, concurrency, 1, CUCO_MAX_CONCURRENCY, "4", \
		"an integer from 1 to 16", "model calls in flight at once") \
	X(LLM, budget_usd, REAL, cuco_llm_config, budget_usd, 0, NO_MAX, "0", "a number in range", \
		"the run's model budget in USD; 0: none") \
	X(LLM, budget_tokens, TOKENS, cuco_llm_config, budget_tokens, 0, 9e15, "0", \
		"a whole number of tokens >= 0", "the run's budget of prompt + completion tokens") \
	X(MODEL, provider, PROVIDER, cuco_model, provider, 0, 0, "(openai)", "", \
		"openai, anthropic, or a compatible server: openrouter, ollama, vllm, sglang, llamacpp") \
	X(MODEL, model, TEXT, cuco_model, model, 0, 0, "(required)", "", "the id the server knows") \
	X(MODEL, url, URL, cuco_model, url, 0, 0, "(the provider's)", "", "base URL ending in /v1") \
	X(MODEL, api_key_env, TEXT, cuco_model, api_key_env, 0, 0, "(the provider's)", "", \
		"the name of the variable holding the key") \
	X(MODEL, weight, REAL, cuco_model, weight, 0, NO_MAX, "(1)", "a number >= 0", \
		"share of calls when choice = weight") \
	X(MODEL, price_in, REAL, cuco_model, price_in, 0, NO_MAX, "(the table's)", "a price >= 0", \
		"USD per million prompt tokens") \
	X(MODEL, price_out, REAL, cuco_model, price_out, 0, NO_MAX, "(the table's)", "a price >= 0", \
		"USD per million completion tokens") \
	X(MODEL, price_cached, REAL, cuco_model, price_cached, 0, NO_MAX, "(the table's)", \
		"a price >= 0", "USD per million prompt tokens read from the provider's cache") \
	X(MODEL, temperature, TEMP, cuco_model, temperature, 0, 2, "(the strategy's)", \
		"a temperature in [0, 2], or none", "the temperature of every call; none sends none") \
	X(MODEL, max_tokens, INT, cuco_model, max_tokens, 1, INT_CAP, "(the provider's)", \
		"a positive integer", "completion limit sent with every request") \
	X(MODEL, context, INT, cuco_model, context, 256, INT_CAP, "(the server's)", \
		"a whole number of tokens >= 256", "the model's context window in tokens") \
	X(MODEL, structured, STRUCTURED, cuco_model, structured, 0, 0, "(auto)", "auto, on or off", \
		"whether edits ask for JSON by a schema") \
	KNOBS(X) \
	X(SCREEN, theme, TEXT, cuco_config, theme, 0, 0, "(dark)", "", "the screen's theme") \
	X(EVAL, sandbox, SANDBOX, cuco_config, sandbox, 0, 0, "(auto)", "auto, bwrap or off", \
		"whether stages run inside bubblewrap") \
	X(RUNNER, kind, RUNNER, cuco_config, runner, 0, 0, "(local)", "", \
		"local, hostfile, slurm or ssh") \
	X(RUNNER, partition, RUNNER, cuco_config, runner, 0, 0, "()", "", "slurm's partition") \
	X(RUNNER, account, RUNNER, cuco_config, runner, 0, 0, "()", "", "slurm's --account") \
	X(RUNNER, time_limit, RUNNER, cuco_config, runner, 0, 0, "(the stage's)", "", \
		"slurm: each stage's --time in minutes") \
	X(RUNNER, gpus_per_task, RUNNER, cuco_config, runner, 0, 0, "()", "", \
		"slurm's --gpus-per-task") \
	X(RUNNER, hosts, RUNNER, cuco_config, runner, 0, 0, "()", "", \
		"slurm's nodes, or ssh's user@host[:port] list") \
	X(RUNNER, hostfile, RUNNER, cuco_config, runner, 0, 0, "()", "", "an Open MPI hostfile") \
	X(RUNNER, hosts_per_slot, RUNNER, cuco_config, runner, 0, 0, "(enough)", "", \
		"hosts a slot spans") \
	X(RUNNER, slots_per_host, RUNNER, cuco_config, runner, 0, 0, "(1)", "", \
		"slots on each host, for GPU workloads") \
	X(RUNNER, slots, RUNNER, cuco_config, runner, 0, 0, "(all)", "", "slots used at most") \
	X(RUNNER, options, RUNNER, cuco_config, runner, 0, 0, "()", "", \
		"extra words for the launcher") \
	X(RUNNER, retry_after, RUNNER, cuco_config, runner, 0, 0, "(30)", "", \
		"seconds a slot rests after an environment failure") \
	X(RUNNER, retire_after, RUNNER, cuco_config, runner, 0, 0, "(3)", "", \
		"environment failures in a row that retire a slot")

#define KINT "an integer in range"
#define KREAL "a number in range"
#define KBOOL "true or false"
#define KREALS3 "three numbers a, b, c in range"
#define KNOBS(X) \
	X(EVOLVE, islands, WHOLE, cuco_search_config, evolve.islands, 1, SEARCH_MAX_ISLANDS, "2", KINT, \
		"islands evolved side by side") \
	X(EVOLVE, generations, WHOLE, cuco_search_config, evolve.generations, 0, 1e7, "0", KINT, \
		"generations; 0: the run's budget, or 60 without one") \
	X(EVOLVE, explore_fraction, REAL, cuco_search_config, evolve.explore_fraction, 0, 1, "0.4", \
		KREAL, "the share of generations that explore") \
	X(EVOLVE, explore_p, REALS3, cuco_search_config, evolve.explore_p, 0, 1, "0.70, 0.15, 0.15", \
		KREALS3, "exploring: the full, diff and cross operators' odds") \
	X(EVOLVE, exploit_p, REALS3, cuco_search_config, evolve.exploit_p, 0, 1, "0.60, 0.25, 0.15", \
		KREALS3, "exploiting: the same") \
	X(EVOLVE, explore_temperatures, REALS3, cuco_search_config, evolve.explore_temps, 0, 2, \
		"0.2, 0.5, 0.8", KREALS3, "exploring: temperatures, one drawn per call") \
	X(EVOLVE, exploit_temperatures, REALS3, cuco_search_config, evolve.exploit_temps, 0, 2, \
		"0.0, 0.2, 0.5", KREALS3, "exploiting: the same") \
	X(EVOLVE, parent_selection, RULE, cuco_search_config, evolve.parent_rule, 0, 0, "weighted", \
		"weighted or power_law", "how a parent is drawn from its island") \
	X(EVOLVE, lambda, REAL, cuco_search_config, evolve.lambda, 0, 1e3, "8.0", KREAL, \
		"weighted selection's sharpness") \
	X(EVOLVE, alpha, REAL, cuco_search_config, evolve.alpha, 0, 10, "1.0", KREAL, \
		"power-law selection's exponent") \
	X(EVOLVE, inspirations, WHOLE, cuco_search_config, evolve.inspirations, 0, 32, "3", KINT, \
		"top candidates and archive shown to a prompt") \
	X(EVOLVE, failures, WHOLE, cuco_search_config, evolve.failures, 0, 32, "3", KINT, \
		"recent failures shown to a prompt") \
	X(EVOLVE, migration_interval, WHOLE, cuco_search_config, evolve.migration_interval, 0, 1e6, \
		"8", KINT, "generations between migrations; 0: none") \
	X(EVOLVE, migration_rate, REAL, cuco_search_config, evolve.migration_rate, 0, 1, "0.15", \
		KREAL, "the share of an island that migrates") \
	X(EVOLVE, meta_interval, WHOLE, cuco_search_config, evolve.meta_interval, 0, 1e6, "8", KINT, \
		"generations between meta summaries; 0: none") \
	X(EVOLVE, meta_max, WHOLE, cuco_search_config, evolve.meta_max, 0, 20, "5", KINT, \
		"recommendations a meta summary keeps") \
	X(EVOLVE, novelty_attempts, WHOLE, cuco_search_config, evolve.novelty_attempts, 1, 20, "3", \
		KINT, "tries at a child unlike its island's") \
	X(EVOLVE, tune_rate, REAL, cuco_search_config, evolve.tune_rate, 0, 1, "0", KREAL, \
		"the share of children made by the directive tuner") \
	X(EVOLVE, directive_rate, REAL, cuco_search_config, evolve.directive_rate, 0, 1, "0.2", KREAL, \
		"the share of children that change only the directive") \
	X(EVOLVE, repair, BOOL, cuco_search_config, evolve.repair, 0, 0, "true", KBOOL, \
		"a failed child gets one repair turn") \
	X(EVOLVE, fastpath, BOOL, cuco_search_config, evolve.fastpath, 0, 0, "true", KBOOL, \
		"a GPU workload's seed goes through the fast path first") \
	X(BEAM, width, WHOLE, cuco_search_config, beam.width, 1, 256, "6", KINT, "the beam's width") \
	X(BEAM, plans, WHOLE, cuco_search_config, beam.plans, 1, 256, "12", KINT, \
		"plans asked per iteration") \
	X(BEAM, samples, WHOLE, cuco_search_config, beam.samples, 1, 64, "2", KINT, \
		"samples per plan") \
	X(BEAM, iterations, WHOLE, cuco_search_config, beam.iterations, 1, 1e6, "15", KINT, \
		"iterations of the beam") \
	X(BEAM, max_new, WHOLE, cuco_search_config, beam.max_new, 0, 256, "8", KINT, \
		"memory entries added per iteration, at most") \
	X(BEAM, capacity, WHOLE, cuco_search_config, beam.capacity, 0, 4096, "16", KINT, \
		"memory entries kept") \
	X(BEAM, positive, REAL, cuco_search_config, beam.positive, 1, 100, "1.04", KREAL, \
		"a speedup past this is a positive pair") \
	X(BEAM, negative, REAL, cuco_search_config, beam.negative, 1, 100, "1.15", KREAL, \
		"a slowdown past this is a negative pair") \
	X(BEAM, shared_memory, BOOL, cuco_search_config, beam.shared_memory, 0, 0, "false", KBOOL, \
		"memory shared across workloads") \
	X(FASTPATH, stage_a_max, WHOLE, cuco_search_config, fastpath.stage_a_max, 0, 100, "5", KINT, \
		"iterations adding device infrastructure") \
	X(FASTPATH, stage_b_max, WHOLE, cuco_search_config, fastpath.stage_b_max, 0, 100, "10", KINT, \
		"iterations making communication device-initiated") \
	X(SAMPLE, temperature, REAL, cuco_search_config, sample.temperature, 0, 2, "0.8", KREAL, \
		"the temperature of every sample")

#define OPTION_ROW(sec, key, type, base, field, min, max, def, want, help) \
	{ CUCO_SEC_##sec, #key, T_##type, offsetof(base, field), sizeof(((base *)0)->field), \
		min, max, def, want, help },
static const cuco_config_option options[] = { CUCO_CONFIG_OPTIONS(OPTION_ROW) };
#define NOPTIONS (sizeof options / sizeof options[0])

const cuco_config_option *cuco_config_options(size_t *n)
{
	*n = NOPTIONS;
	return options;
}

/* Each section's name, and what an unknown key in it is told. */
static const struct { const char *name, *unknown; } sections[CUCO_SEC_COUNT] = {
	[CUCO_SEC_LLM] = { "llm", "unknown key" },
	[CUCO_SEC_MODEL] = { "model", "unknown key in a [model] section" },
	[CUCO_SEC_EVOLVE] = { "evolve", "unknown knob" },
	[CUCO_SEC_BEAM] = { "beam", "unknown knob" },
	[CUCO_SEC_FASTPATH] = { "fastpath", "unknown knob" },
	[CUCO_SEC_SAMPLE] = { "sample", "unknown knob" },
	[CUCO_SEC_SCREEN] = { "screen", "unknown key in [screen] (theme)" },
	[CUCO_SEC_EVAL] = { "eval", "unknown key in [eval] (sandbox)" },
	[CUCO_SEC_RUNNER] = { "runner", NULL },  /* the evaluator's own words */
};

const char *cuco_config_section_name(cuco_config_section s)
{
	return s < CUCO_SEC_COUNT ? sections[s].name : "?";
}

static bool knob_section(cuco_config_section s)
{
	return s >= CUCO_SEC_EVOLVE && s <= CUCO_SEC_SAMPLE;
}

static const cuco_config_option *find_option(cuco_config_section s, const char *key)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		if (options[i].section == s && strcmp(options[i].key, key) == 0)
			return &options[i];
	return NULL;
}

/* What a [model] section said about its provider, applied at its end:
 * the provider's URL and key variable fill what the section left unset. */
typedef struct section_state {
	const cuco_provider_alias *alias;
	bool url_set, key_set, max_tokens_set;
	int structured;          /* -1: auto (the provider's), else 0 or 1 */
} section_state;

/* Set option o of the struct at base from v; NULL, or what is wrong
 * (why holds it when it names the value). */
static const char *set_value(const cuco_config_option *o, void *base, const char *v,
	section_state *ss, char *why, size_t size)
{
	void *p = (char *)base + o->off;
	double d;
	int n;
	switch (o->type) {
	case T_REAL:
		return to_double(v, o->min, o->max, (double *)p) ? NULL : o->want;
	case T_INT:
		if (!to_int(v, (int)o->min, (int)o->max, &n))
			return o->want;
		if (o->size == sizeof(int64_t))
			*(int64_t *)p = n;
		else
			*(int *)p = n;
		return NULL;
	case T_WHOLE:
		return to_whole(v, o->min, o->max, &d) ? (*(int *)p = (int)d, NULL) : o->want;
	case T_TOKENS:
		return to_whole(v, o->min, o->max, &d) ? (*(int64_t *)p = (int64_t)d, NULL) : o->want;
	case T_BYTES:
		return to_whole(v, o->min, o->max, &d) ? (*(size_t *)p = (size_t)d, NULL) : o->want;
	case T_BOOL:
		if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "yes") && strcmp(v, "no"))
			return o->want;
		*(bool *)p = v[0] == 't' || v[0] == 'y';
		return NULL;
	case T_REALS3:
		return to_reals3(v, o->min, o->max, (double *)p) ? NULL : o->want;
	case T_URL:
		ss->url_set = true;
		if (!http_url(v))
			return "expected an http:// or https:// URL";
		/* fall through */
	case T_TEXT:
		return cuco_strlcpy(p, v, o->size) ? NULL : "value too long";
	case T_CHOICE:
		return cuco_model_choice_parse(v, p) == CUCO_OK ? NULL : o->want;
	case T_RULE: {
		static const char *const rules[] = {
#define X(e, name, help) name,
			CUCO_PARENT_RULES(X)
#undef X
		};
		int i = cuco_name_index(rules, CUCO_PARENT_RULE_COUNT, v);
		if (i < 0)
			return o->want;
		*(cuco_parent_rule *)p = (cuco_parent_rule)i;
		return NULL;
	}
	case T_PROVIDER:
		ss->alias = cuco_provider_find(v, strlen(v));
		if (!ss->alias) {
			char names[96];
			cuco_provider_names(names, sizeof names);
			snprintf(why, size, "unknown provider (%s)", names);
			return why;
		}
		*(cuco_provider *)p = ss->alias->provider;
		return NULL;
	case T_TEMP: {
		cuco_model *m = base;
		m->no_temperature = strcmp(v, "none") == 0;
		return m->no_temperature || to_double(v, o->min, o->max, &m->temperature) ? NULL : o->want;
	}
	case T_STRUCTURED:
		ss->structured = strcmp(v, "on") == 0 ? 1 : strcmp(v, "off") == 0 ? 0
			: strcmp(v, "auto") == 0 ? -1 : -2;
		return ss->structured > -2 ? NULL : o->want;
	case T_SANDBOX:
		if (cuco_sandbox_mode_parse(v, p))
			return NULL;
		snprintf(why, size, "%.40s: not %s", v, o->want);
		return why;
	}
	return o->want;
}

/* Apply the defaults of a section's options to the struct they are in. */
static void apply_defaults(cuco_config_section from, cuco_config_section to, void *base)
{
	char why[128];
	section_state ss = { 0 };
	for (size_t i = 0; i < NOPTIONS; i++)
		if (options[i].section >= from && options[i].section <= to && options[i].def[0] != '(')
			set_value(&options[i], base, options[i].def, &ss, why, sizeof why);
}

void cuco_llm_config_defaults(cuco_llm_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	apply_defaults(CUCO_SEC_LLM, CUCO_SEC_LLM, cfg);
}

void cuco_search_config_defaults(cuco_search_config *c)
{
	memset(c, 0, sizeof *c);
	apply_defaults(CUCO_SEC_EVOLVE, CUCO_SEC_SAMPLE, c);
}

void cuco_config_defaults(cuco_config *c)
{
	memset(c, 0, sizeof *c);
	cuco_llm_config_defaults(&c->llm);
	cuco_search_config_defaults(&c->search);
}

int cuco_search_config_set(cuco_search_config *c, const char *key, const char *value,
	cuco_err *err)
{
	size_t dot = strcspn(key, ".");
	for (int s = CUCO_SEC_EVOLVE; s <= CUCO_SEC_SAMPLE && key[dot]; s++) {
		if (strlen(sections[s].name) != dot || strncmp(sections[s].name, key, dot) != 0)
			continue;
		const cuco_config_option *o = find_option((cuco_config_section)s, key + dot + 1);
		section_state ss = { 0 };
		char why[128];
		if (!o)
			break;
		const char *what = set_value(o, c, value, &ss, why, sizeof why);
		return what ? cuco_errf(err, CUCO_EDATA, "%s = %s: not %s", key, value, what) : CUCO_OK;
	}
	return cuco_errf(err, CUCO_EDATA, "%s: unknown knob", key);
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

/* The file as it is read: the section a line is in, the [model] open. */
typedef struct reader {
	cuco_config *c;
	where w;
	cuco_config_section sec;
	section_state ss;
	char head[128];      /* the section line, whole: section() cuts it */
	char knob[96];       /* a knob's "section.key" */
	cuco_buf seen;       /* every section's keys, to refuse one given twice */
} reader;

/* A section line: [llm] holds the client's keys, as the top does;
 * `[model NAME]` opens a model. */
static int section(reader *r, char *s, cuco_err *err)
{
	cuco_config *c = r->c;
	const where *w = &r->w;
	char *close = strchr(s, ']');
	if (!close || cuco_trim(close + 1)[0])
		return bad(err, w, "a section line is [NAME] or [model NAME]");
	*close = '\0';
	char *body = cuco_trim(s + 1);
	for (int i = 0; i < CUCO_SEC_COUNT; i++)
		if (i != CUCO_SEC_MODEL && strcmp(body, sections[i].name) == 0) {
			r->sec = (cuco_config_section)i;
			return CUCO_OK;
		}
	if (strncmp(body, "model", 5) != 0 || !isspace((unsigned char)body[5]))
		return bad(err, w, "unknown section ([llm], [model NAME], [evolve], [beam], [fastpath], "
			"[sample], [screen], [eval], [runner])");
	r->sec = CUCO_SEC_MODEL;
	char *name = cuco_trim(body + 5);
	if (!*name)
		return bad(err, w, "[model NAME] needs a NAME");
	for (int i = 0; i < c->llm.nmodels; i++)
		if (strcmp(c->llm.models[i].name, name) == 0)
			return bad(err, w, "model defined twice");
	if (c->llm.nmodels == CUCO_MAX_MODELS)
		return bad(err, w, "too many models");
	cuco_model *m = &c->llm.models[c->llm.nmodels++];
	cuco_model_defaults(m, default_provider());
	m->url[0] = m->api_key_env[0] = '\0';
	return cuco_strlcpy(m->name, name, sizeof m->name) ? CUCO_OK : bad(err, w, "value too long");
}

/* Close a [model] section: the provider's defaults fill the gaps, and it
 * must then say which model and where. */
static int end_model(cuco_model *m, const section_state *ss, const char *path, cuco_err *err)
{
	const cuco_provider_alias *a = ss->alias ? ss->alias : default_provider();
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

/* The struct a section's options are in. */
static void *section_base(reader *r)
{
	switch (r->sec) {
	case CUCO_SEC_LLM:
		return &r->c->llm;
	case CUCO_SEC_MODEL:
		return &r->c->llm.models[r->c->llm.nmodels - 1];
	case CUCO_SEC_SCREEN:
	case CUCO_SEC_EVAL:
	case CUCO_SEC_RUNNER:
		return r->c;
	default:
		return &r->c->search;
	}
}

/* One `key = value` line. A knob is named "section.key" in errors, with
 * its value when the value is bad. */
static int take_key(reader *r, char *k, const char *v, cuco_err *err)
{
	bool knob = knob_section(r->sec);
	r->w.key = k;
	if (knob) {
		snprintf(r->knob, sizeof r->knob, "%s.%s", sections[r->sec].name, k);
		r->w.key = r->knob;
	}
	const cuco_config_option *o = find_option(r->sec, k);
	char why[256];
	const char *what = NULL;
	if (r->sec == CUCO_SEC_RUNNER) {  /* the evaluator reads them, and names those it knows */
		if (!cuco_runner_config_set(&r->c->runner, k, v, why, sizeof why))
			what = why;
	} else if (!o) {
		return bad(err, &r->w, sections[r->sec].unknown);
	} else {
		r->ss.key_set |= strcmp(k, "api_key_env") == 0 && r->sec == CUCO_SEC_MODEL;
		r->ss.max_tokens_set |= strcmp(k, "max_tokens") == 0 && r->sec == CUCO_SEC_MODEL;
		what = set_value(o, section_base(r), v, &r->ss, why, sizeof why);
	}
	if (what && knob)
		return cuco_errf(err, CUCO_EDATA, "%s:%d: %s = %s: not %s", r->w.path, r->w.line, r->knob,
			v, what);
	if (what && o && what == o->want)
		return cuco_errf(err, CUCO_EDATA, "%s:%d: %s: not %s", r->w.path, r->w.line, k, what);
	if (what)
		return bad(err, &r->w, what);
	/* A second value would silently win over the first (issue 18). */
	char name[160];
	snprintf(name, sizeof name, "%d %s %s", (int)r->sec,
		r->sec == CUCO_SEC_MODEL ? r->c->llm.models[r->c->llm.nmodels - 1].name : "", k);
	return cuco_buf_add_once(&r->seen, name) ? CUCO_OK : bad(err, &r->w, "given twice");
}

static int take_line(reader *r, char *s, cuco_err *err)
{
	int rc = CUCO_OK;
	if (*s == '[') {
		if (r->sec == CUCO_SEC_MODEL)
			rc = end_model(&r->c->llm.models[r->c->llm.nmodels - 1], &r->ss, r->w.path, err);
		snprintf(r->head, sizeof r->head, "%s", s);
		r->w.key = r->head;
		r->ss = (section_state){ .structured = -1 };
		return rc == CUCO_OK ? section(r, s, err) : rc;
	}
	char *eq = strchr(s, '=');
	r->w.key = s;
	if (!eq && knob_section(r->sec))
		return cuco_errf(err, CUCO_EDATA, "%s:%d: [%s]: expected key = value", r->w.path,
			r->w.line, sections[r->sec].name);
	if (!eq)
		return bad(err, &r->w, "expected key = value");
	*eq = '\0';
	return take_key(r, cuco_trim(s), cuco_trim(eq + 1), err);
}

int cuco_config_load(const char *path, cuco_config *c, cuco_err *err)
{
	char *text;
	int rc = cuco_read_text(path, 1 << 20, &text, NULL, err);
	if (rc != CUCO_OK)
		return rc;
	reader r = { .c = c, .w = { path, 0, "" }, .sec = CUCO_SEC_LLM,
		.ss = { .structured = -1 } };
	/* strtok_r would skip blank lines and so miscount; walk by hand. */
	for (char *line = text, *next; line && rc == CUCO_OK; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		r.w.line++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = cuco_trim(line);
		if (*s)
			rc = take_line(&r, s, err);
	}
	if (rc == CUCO_OK && r.sec == CUCO_SEC_MODEL)
		rc = end_model(&c->llm.models[c->llm.nmodels - 1], &r.ss, path, err);
	cuco_buf_free(&r.seen);
	free(text);
	return rc;
}

int cuco_config_read(cuco_config *c, cuco_err *err)
{
	cuco_config_defaults(c);
	char path[1024];
	if (!cuco_llm_config_path(path, sizeof path))
		return CUCO_OK;
	int rc = cuco_config_load(path, c, err);
	return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
}

/* ---- specs --------------------------------------------------------------- */

static int parse_spec(const char *spec, cuco_model *m, cuco_err *err)
{
	const char *colon = strchr(spec, ':');
	if (!colon)
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: expected PROVIDER:MODEL[@URL][*WEIGHT]", spec);
	const cuco_provider_alias *a = cuco_provider_find(spec, (size_t)(colon - spec));
	char names[96];
	cuco_provider_names(names, sizeof names);
	if (!a)
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: unknown provider `%.*s` (%s)", spec,
			(int)(colon - spec), spec, names);
	cuco_model_defaults(m, a);
	char rest[768];
	if (!cuco_strlcpy(rest, colon + 1, sizeof rest))
		return cuco_errf(err, CUCO_EUSAGE, "--llm %s: too long", spec);
	char *star = strrchr(rest, '*');
	if (star) {
		*star = '\0';
		if (!to_double(star + 1, 0, NO_MAX, &m->weight) || m->weight <= 0)
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
