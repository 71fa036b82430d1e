/* agents.h — search strategies, mutation operators, the LLM client.
 *
 * The agents propose candidates and the engine drives them: it takes
 * proposals, hands them to the evaluator (eval.h), and records every
 * candidate, result and event in the store (store.h). Agents never touch
 * the screen; the screen learns everything from the store.
 */
#ifndef CUCO_AGENTS_H
#define CUCO_AGENTS_H

#include "core.h"
#include "eval/eval.h"
#include "store/store.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ==== engine and directive tuner (engine.c, tune.c) ===================== */

/* ==== LLM client, prompts, replies and patches (llm*.c, reply.c, patch.c) = */

/* ---- models and configuration (config.c) --------------------------------
 * Models come from $XDG_CONFIG_HOME/cuco/config (docs/configuration.md) and
 * from `--llm PROVIDER:MODEL@URL*WEIGHT` specs. Keys are never read here:
 * a model names the environment variable that holds its key, and the
 * client reads it at request time. */

#define CUCO_MAX_MODELS 8

typedef enum cuco_provider {
	CUCO_PROVIDER_OPENAI,     /* chat completions: OpenAI, vLLM, SGLang, llama.cpp, Ollama */
	CUCO_PROVIDER_ANTHROPIC,  /* Messages API */
} cuco_provider;

typedef struct cuco_model {
	char name[64];           /* the config section's NAME, or MODEL for a spec */
	cuco_provider provider;
	char model[128];         /* the id the server knows */
	char url[512];           /* base URL, ".../v1" */
	char api_key_env[64];    /* variable holding the key; "" sends none */
	double weight;           /* share when models are mixed by weight */
	double price_in;         /* USD per million prompt tokens */
	double price_out;        /* USD per million completion tokens */
	double temperature;      /* NAN: the strategy's choice */
	int max_tokens;          /* completion limit sent with each request */
} cuco_model;

typedef enum cuco_model_choice { CUCO_CHOICE_WEIGHT, CUCO_CHOICE_BANDIT } cuco_model_choice;

typedef struct cuco_llm_config {
	int nmodels;
	cuco_model models[CUCO_MAX_MODELS];
	cuco_model_choice choice;
	double bandit_exploration;   /* UCB's c */
	double bandit_cost_weight;   /* how much a model's mean cost lowers its score */
	double connect_timeout_s;
	double idle_timeout_s;       /* abandon a stream silent this long */
	double total_timeout_s;      /* one attempt, end to end */
	int max_retries;             /* after the first attempt */
	double backoff_base_s;       /* first retry waits about this long */
	double backoff_max_s;        /* cap of a backoff and of a Retry-After */
	int patch_attempts;          /* replies per edit, errors answered in the same chat */
} cuco_llm_config;

void cuco_llm_config_defaults(cuco_llm_config *cfg);
/* The config file's path: $XDG_CONFIG_HOME/cuco/config, else
 * ~/.config/cuco/config. False when neither variable is set. */
bool cuco_llm_config_path(char *buf, size_t size);
/* Read a config file into cfg (models are appended). A missing file is
 * CUCO_ENOTFOUND; a bad line is CUCO_EDATA naming "file:line: key". */
int cuco_llm_config_load(const char *path, cuco_llm_config *cfg, cuco_err *err);
/* Make `--llm PROVIDER:MODEL[@URL][*WEIGHT]` specs the models in use. The
 * configured models then serve as a table: a spec naming the same model id
 * takes its prices, key variable, token limit and temperature. PROVIDER is
 * openai or anthropic, or an OpenAI-compatible server: vllm, sglang,
 * llamacpp, ollama, openrouter. n == 0 leaves cfg as it is. */
int cuco_llm_use_specs(cuco_llm_config *cfg, char *const *specs, int n, cuco_err *err);
const char *cuco_provider_name(cuco_provider p);
/* USD for a call from its token counts and the model's prices. */
double cuco_model_cost(const cuco_model *m, int64_t tokens_in, int64_t tokens_out);
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

/* ---- the client (llm.c, llm_sse.c) --------------------------------------
 * One libcurl easy handle per call, so several threads may call
 * cuco_llm_complete() at once on one client. Retries 429, 5xx, network
 * errors, cut-off streams and unreadable replies with exponential backoff
 * and jitter, honouring Retry-After; other errors end the call at once.
 * Error text names the URL, status and the server's message, never a
 * header or the key. */

typedef struct cuco_llm cuco_llm;

typedef struct cuco_llm_msg {
	const char *role;     /* "user" or "assistant" */
	const char *content;
} cuco_llm_msg;

typedef struct cuco_llm_request {
	const cuco_model *model;
	const char *system;   /* may be NULL */
	int nmsgs;
	const cuco_llm_msg *msgs;
	double temperature;   /* NAN: the model's, else the server's default */
	bool stream;
	/* Streaming: each text delta as it arrives; a call with len 0 and
	 * text NULL means "start again" (a retry after a cut-off stream). */
	void (*on_delta)(const char *text, size_t len, void *arg);
	void *arg;
	const atomic_bool *cancel;  /* set from any thread to abandon the call */
} cuco_llm_request;

typedef struct cuco_llm_reply {
	char *text;           /* malloc'd; NULL on failure */
	char finish[32];      /* stop, length, … as the server said */
	int64_t tokens_in;
	int64_t tokens_out;
	double cost_usd;
	int attempts;         /* HTTP requests made, also on failure */
	bool cancelled;
	double seconds;
} cuco_llm_reply;

int cuco_llm_new(const cuco_llm_config *cfg, cuco_llm **out, cuco_err *err);
void cuco_llm_free(cuco_llm *c);
/* One call. On failure out->text is NULL and attempts/cancelled are set. */
int cuco_llm_complete(cuco_llm *c, const cuco_llm_request *req, cuco_llm_reply *out,
	cuco_err *err);
void cuco_llm_reply_free(cuco_llm_reply *r);
/* Totals over every call of this client (for budgets and the status line). */
void cuco_llm_totals(cuco_llm *c, int64_t *tokens_in, int64_t *tokens_out, double *cost_usd);

/* ---- replies (reply.c) ----------------------------------------------------
 * A reply states its directive first, then its code as SEARCH/REPLACE
 * hunks, one fenced full file, or CUCo's tagged form:
 *
 *   DIRECTIVE:
 *   backend: rma
 *   granularity: 8
 *
 *   <NAME>short_name</NAME>
 *   <DESCRIPTION>why</DESCRIPTION>
 *   <DIFF>
 *   <<<<<<< SEARCH
 *   old lines
 *   =======
 *   new lines
 *   >>>>>>> REPLACE
 *   </DIFF>                       (or <CODE>full file</CODE>)
 */

typedef enum cuco_reply_kind { CUCO_REPLY_DIFF, CUCO_REPLY_FULL } cuco_reply_kind;

typedef struct cuco_hunk {
	char *search;   /* lines, each ending in '\n' */
	char *replace;
	int line;       /* of the SEARCH marker in the reply, from 1 */
} cuco_hunk;

typedef struct cuco_reply {
	cuco_reply_kind kind;
	char name[64];
	char description[512];
	bool has_directive;
	cuco_directive directive;  /* the base with the stated fields over it */
	int nhunks;
	cuco_hunk *hunks;
	char *code;                /* FULL: the whole file */
} cuco_reply;

/* Parse a reply. base is the directive fields not stated keep (the
 * parent's); with a workload the directive is required, its names must be
 * dimensions and the result must lie in the design space
 * (cuco_directive_valid). wl may be NULL (no directive check). */
int cuco_reply_parse(const char *text, const cuco_workload *wl, const cuco_directive *base,
	cuco_reply *out, cuco_err *err);
void cuco_reply_free(cuco_reply *r);

/* ---- patches (patch.c) ----------------------------------------------------
 * Every hunk is located in the same unedited parent and must match exactly
 * once; matching loosens in this order and stops at the first level that
 * finds anything. A reply applies all or nothing. When the parent has
 * EVOLVE-BLOCK-START/END markers only the lines between them may change;
 * a file without markers may change anywhere (the fast path's input). */

typedef enum cuco_match {
	CUCO_MATCH_EXACT,
	CUCO_MATCH_TRAILING_SPACE,  /* trailing whitespace ignored */
	CUCO_MATCH_INDENT,          /* plus one indentation shift for the whole hunk */
	CUCO_MATCH_TYPOGRAPHY,      /* plus curly quotes, dashes, nbsp as ASCII */
	CUCO_MATCH_COUNT
} cuco_match;

const char *cuco_match_name(cuco_match m);  /* "exact", "trailing-space", … */

typedef struct cuco_patched {
	char *text;                /* the new file, malloc'd, NUL-terminated */
	size_t len;
	int nhunks;
	cuco_match *levels;        /* per hunk; NULL for a full rewrite */
	cuco_match loosest;
} cuco_patched;

int cuco_patch_apply(const char *parent, size_t len, const cuco_reply *reply,
	cuco_patched *out, cuco_err *err);
void cuco_patched_free(cuco_patched *p);


#endif
