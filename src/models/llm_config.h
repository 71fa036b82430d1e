/* llm_config.h — models and their configuration, the model bandit
 * (llm_config.c; the config file's reader and `--llm` specs: config.h).
 *
 * Models come from $XDG_CONFIG_HOME/cuco/config (docs/configuration.md) and
 * from `--llm PROVIDER:MODEL@URL*WEIGHT` specs. Keys are never read here:
 * a model names the environment variable that holds its key, and the
 * client reads it at request time.
 */
#ifndef CUCO_MODELS_LLM_CONFIG_H
#define CUCO_MODELS_LLM_CONFIG_H

#include "core.h"
#include "eval/eval.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CUCO_MAX_MODELS 8

typedef enum cuco_provider {
	CUCO_PROVIDER_OPENAI,     /* chat completions: OpenAI, vLLM, SGLang, llama.cpp, Ollama */
	CUCO_PROVIDER_ANTHROPIC,  /* Messages API */
} cuco_provider;

/* The kind of server behind a model, from its provider's name: a hosted
 * API, or a server of one's own, which may be slow and run one request
 * at a time. */
typedef enum cuco_server {
	CUCO_SERVER_HOSTED,    /* openai, anthropic, openrouter */
	CUCO_SERVER_LLAMACPP,
	CUCO_SERVER_OLLAMA,
	CUCO_SERVER_VLLM,
	CUCO_SERVER_SGLANG,
} cuco_server;

typedef struct cuco_model {
	char name[64];           /* the config section's NAME, or MODEL for a spec */
	cuco_provider provider;
	char model[128];         /* the id the server knows */
	char url[512];           /* base URL, ".../v1" */
	char api_key_env[64];    /* variable holding the key; "" sends none */
	double weight;           /* share when models are mixed by weight */
	/* USD per million tokens: prompt, prompt read from the provider's cache,
	 * completion. NAN = unknown (cost 0, and the run says so): the config's,
	 * else the built-in table's (cuco_model_prices), else 0 for a server of
	 * one's own (ollama, vllm, sglang, llamacpp). */
	double price_in;
	double price_cached;
	double price_out;
	double temperature;      /* NAN: the strategy's choice */
	bool no_temperature;     /* send none: OpenAI's reasoning models refuse one */
	int max_tokens;          /* completion limit sent with each request */
	bool completion_tokens;  /* name it max_completion_tokens (OpenAI's own API) */
	int64_t context;         /* context window in tokens: the config's, else the server's
	                            (cuco_llm_check); 0 = not known, prompts are not fitted */
	cuco_server server;      /* what serves it, from the provider name */
	bool structured;         /* edits ask for JSON by a schema (`structured`; auto: on for
	                            the servers that take one, llama.cpp, vLLM, SGLang, Ollama) */
	int slots;               /* requests the server runs at once (llama.cpp's /props
	                            total_slots); 0 = not known */
	double bytes_per_token;  /* of prompts, as the server counted them (its tokenizer, or
	                            the usage it reported); 0 = not known: CUCO_BYTES_PER_TOKEN */
} cuco_model;

/* How a model is chosen per call: X(enum, the config's `choice` value,
 * what it does; docs/configuration.md, "[llm]"). */
#define CUCO_MODEL_CHOICES(X) \
	X(WEIGHT, "weight", "draws by the models' weights") \
	X(BANDIT, "bandit", "a cost-aware UCB over the models (cuco_bandit)")

typedef enum cuco_model_choice {
#define X(e, name, help) CUCO_CHOICE_##e,
	CUCO_MODEL_CHOICES(X)
#undef X
	CUCO_CHOICE_COUNT
} cuco_model_choice;

/* CUCO_OK, or CUCO_EDATA for a name not in the table. */
int cuco_model_choice_parse(const char *name, cuco_model_choice *out);

typedef struct cuco_llm_config {
	int nmodels;
	cuco_model models[CUCO_MAX_MODELS];
	cuco_model_choice choice;
	double bandit_exploration;   /* UCB's c */
	double bandit_cost_weight;   /* how much a model's mean cost lowers its score */
	double connect_timeout_s;
	double idle_timeout_s;       /* abandon a stream that makes no progress this long */
	double total_timeout_s;      /* one whole (non-streamed) attempt, end to end */
	int max_retries;             /* after the first attempt */
	double backoff_base_s;       /* first retry waits about this long */
	double backoff_max_s;        /* cap of a backoff and of a Retry-After */
	double retry_time_s;         /* a call stops retrying once this long has passed */
	double outage_s;             /* no model answering this long pauses the run */
	size_t max_reply_bytes;      /* a reply's text at most; past it the reply is refused */
	int patch_attempts;          /* replies per edit, errors answered in the same chat */
	int concurrency;             /* model calls in flight at once (4) */
	double budget_usd;           /* spend at most this over the client's life; 0 = no limit */
	int64_t budget_tokens;       /* prompt + completion tokens at most; 0 = no limit */
} cuco_llm_config;

/* A provider a spec or the config may name ("openai", "vllm", …), with
 * the defaults it implies. */
typedef struct cuco_provider_alias {
	const char *name;
	cuco_provider provider;
	const char *url;         /* NULL: the spec must give @URL */
	const char *key_env;
	bool completion_tokens;  /* OpenAI's own API wants max_completion_tokens */
	int max_tokens;          /* the default completion limit */
	bool own;                /* a server of one's own: no price per token */
	cuco_server server;
	bool structured;         /* takes a JSON schema (response_format): `structured = auto` */
} cuco_provider_alias;

/* The provider the first n bytes of name name; NULL when none. The
 * default, for a [model] that names none, is "openai". */
const cuco_provider_alias *cuco_provider_find(const char *name, size_t n);
/* "openai, anthropic, …": every name a provider may be given, for the
 * messages that list them. */
void cuco_provider_names(char *buf, size_t size);
/* m, zeroed, with a's defaults. */
void cuco_model_defaults(cuco_model *m, const cuco_provider_alias *a);

/* USD for a call from its token counts (tokens_in counts the cached ones
 * too) and the model's prices; an unknown price counts as 0. */
double cuco_model_cost(const cuco_model *m, int64_t tokens_in, int64_t tokens_cached,
	int64_t tokens_out);
/* Whether the model's prices are known. */
bool cuco_model_priced(const cuco_model *m);
/* Whether the model is a provider's own service (its default URL, which
 * takes no request without a key), not a server of one's own. */
bool cuco_model_hosted(const cuco_model *m);

/* The built-in price table: a model's published prices, per million
 * tokens, with when and where they were read. */
typedef struct cuco_price {
	const char *model;       /* an id, or the start of ids: "gpt-4o" covers "gpt-4o-2024-08-06" */
	double in, cached, out;  /* USD per million tokens */
	const char *read;        /* the date the price was written down */
	const char *from;        /* the page it was read from */
} cuco_price;

/* The table's entry for a model id (a provider prefix "vendor/" is
 * skipped; the longest matching id wins); NULL when none. */
const cuco_price *cuco_price_find(const char *model);
/* A model whose config gave no price takes the table's (all three). */
void cuco_model_prices(cuco_model *m);
/* The model a draw u in [0,1) picks when models are mixed by weight. */
int cuco_model_pick_weighted(const cuco_llm_config *cfg, double u);

/* Cost-aware UCB over the configured models (ShinkaEvolve's idea): the
 * reward of a call is the child's relative improvement over its parent,
 * clipped to [0,1] (0 for a failed child). Not locked: the caller
 * serialises picks and updates. */
typedef struct cuco_bandit {
	int narms;
	double exploration;
	double cost_weight;
	double total;                   /* pulls so far */
	double pulls[CUCO_MAX_MODELS];
	double reward[CUCO_MAX_MODELS]; /* sums */
	double cost[CUCO_MAX_MODELS];   /* sums, USD */
} cuco_bandit;

void cuco_bandit_init(cuco_bandit *b, const cuco_llm_config *cfg);
/* Untried arms first (lowest index), then the best UCB score. */
int cuco_bandit_pick(const cuco_bandit *b);
void cuco_bandit_update(cuco_bandit *b, int arm, double reward, double cost_usd);
/* The reward for a child: (child-parent)/|parent| clipped to [0,1];
 * 0 when either score is NAN or the parent's is 0 and the child's not above. */
double cuco_bandit_reward(double parent_score, double child_score);

#endif
