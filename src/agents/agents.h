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
#include <stdio.h>

/* ==== engine and directive tuner (engine.c, tune.c) ===================== */

/* ---- directive tuner (tune.c) -------------------------------------------
 * The search that needs no LLM: it moves through the workload's design
 * space (every directive dimension and knob, cuco_workload.dims) keeping
 * the seed's source and changing only directive values. A configuration is
 * keyed by its canonical text ("backend=rma;issuer=one;…" over every
 * dimension in manifest order) and is never proposed twice; invalid points
 * (cuco_directive_valid) are never proposed at all. Not locked: the caller
 * serialises calls. */

typedef enum cuco_tuner_algo {
	CUCO_TUNER_RANDOM,  /* uniform sampling: the reference */
	CUCO_TUNER_ANNEAL,  /* simulated annealing: best under ~100 evaluations */
	CUCO_TUNER_ILS,     /* greedy iterated local search: best from ~200 */
} cuco_tuner_algo;

const char *cuco_tuner_algo_name(cuco_tuner_algo a);
int cuco_tuner_algo_parse(const char *name, cuco_tuner_algo *out);

typedef struct cuco_tuner cuco_tuner;

/* horizon: the evaluations expected in all (the budget), which sets the
 * annealing schedule; 0 = 100. seed seeds the tuner's own RNG. */
int cuco_tuner_new(const cuco_workload *wl, cuco_tuner_algo algo, uint64_t seed, int horizon,
	cuco_tuner **out, cuco_err *err);
void cuco_tuner_free(cuco_tuner *t);
/* The canonical key of a directive over this design space. */
void cuco_tuner_key(const cuco_tuner *t, const cuco_directive *d, char *buf, size_t size);
bool cuco_tuner_seen(const cuco_tuner *t, const cuco_directive *d);
/* The next configuration: an unseen valid point built on base (the seed's
 * directive) and *parent, the id of the evaluated candidate it mutates
 * (0 when drawn from scratch). CUCO_ENOTFOUND when nothing is left. */
int cuco_tuner_propose(cuco_tuner *t, const cuco_directive *base, cuco_directive *out,
	uint64_t *parent);
/* Learn an evaluated configuration: its candidate id and score (higher is
 * better; NAN for a failure). Also how a resumed run rebuilds the seen set:
 * replay every stored candidate in id order. A later call for the same key
 * replaces the score (a re-measure). */
void cuco_tuner_observe(cuco_tuner *t, const cuco_directive *d, uint64_t id, double score);
/* Never use this candidate as a parent again (a person rejected it). */
void cuco_tuner_forbid(cuco_tuner *t, uint64_t id);
size_t cuco_tuner_seen_count(const cuco_tuner *t);
/* Valid and invalid points of the whole space (saturates at SIZE_MAX). */
size_t cuco_tuner_space_size(const cuco_tuner *t);
/* Simulated annealing's acceptance probability of a move from score cur to
 * score next at temperature temp: 1 when not worse, exp(-relative loss /
 * temp) when worse, 0 when next failed (NAN), 1 when cur failed. */
double cuco_tune_accept_prob(double cur, double next, double temp);

/* ---- search strategies ---------------------------------------------------
 * A strategy proposes candidates and learns their results; the engine owns
 * threads, the evaluator, the store and the command queue. The engine
 * calls a strategy's functions one at a time (under its strategy lock),
 * never while holding its own state lock, so propose() may block (an LLM
 * call). Register a strategy by adding it to the table in engine.c. */

typedef struct cuco_engine_config cuco_engine_config;

typedef struct cuco_strategy_env {
	cuco_store *st;
	const cuco_workload *wl;
	const cuco_engine_config *cfg;
	uint64_t baseline_id;
	uint64_t seed_id;
	const cuco_directive *seed_directive;
	const char *seed_hash;       /* the seed's source in the store */
	const atomic_bool *stop;     /* set when a person stops the run: the cancel
	                                flag of every model call a strategy makes */
} cuco_strategy_env;

typedef struct cuco_proposal {
	cuco_candidate cand;  /* origin, parents, island, generation, directive,
	                         note, model/tokens; the engine sets id and status */
	char *source;         /* malloc'd new text, or NULL when cand.source_hash
	                         names a stored source */
	size_t len;
} cuco_proposal;

typedef struct cuco_strategy {
	const char *name;
	int (*init)(const cuco_strategy_env *env, void **state, cuco_err *err);
	/* CUCO_OK with a proposal, CUCO_ENOTFOUND when nothing is left to
	 * propose, another code to end the run with err. */
	int (*propose)(void *state, cuco_proposal *out, cuco_err *err);
	/* A finished candidate (done, failed or rejected), and at start every
	 * stored one in id order, so a resumed run knows its history. */
	void (*observe)(void *state, const cuco_candidate *c);
	/* A person's hint for an island (-1: all); NULL when the strategy has
	 * no prompts to put it in. */
	void (*hint)(void *state, int island, const char *text);
	void (*free)(void *state);
} cuco_strategy;

extern const cuco_strategy cuco_strategy_tune;
const cuco_strategy *cuco_strategy_find(const char *name);  /* NULL if unknown */

/* ---- the engine (engine.c) ------------------------------------------------
 * Runs a search in background threads: measures the baseline and the seed
 * (every session, a resumed one too), then a pool of `jobs` workers takes
 * proposals from the strategy, evaluates them (cuco_eval_candidate) and
 * records every status, result and event in the store; re-measures the
 * baseline every `baseline_every` benchmarks, benchmarks a new best again
 * right after a fresh baseline measurement before announcing it, applies
 * the store's command queue, and at the end re-times the best few in
 * paired (baseline, candidate) rounds, ending on the best's pair. Speedup
 * = the latest baseline median of this session / the candidate's median;
 * score = speedup. An evaluation the environment failed gives its budget
 * slot back; three in a row end the run with CUCO_EENV. */

struct cuco_engine_config {
	char strategy[16];      /* "tune" (default) or a registered strategy */
	char tuner[16];         /* random | anneal (default) | ils */
	int budget;             /* strategy candidates over the whole run, resumed
	                           sessions included; 0 = no limit */
	double minutes;         /* this session's wall-clock limit; 0 = none */
	char size[32];          /* problem size; "" = the workload's default */
	uint64_t seed;          /* RNG seed of the strategy */
	int jobs;               /* evaluation workers (2) */
	int baseline_every;     /* re-measure the baseline every K benchmarks (8) */
	int rebench_top;        /* re-time the best N at the end (3) */
	FILE *progress;         /* one line per evaluated candidate; NULL = none */
	cuco_eval_config eval;  /* run_dir, size and jobs are filled from above */
	/* LLM strategies: `--llm PROVIDER:MODEL[@URL][*WEIGHT]` specs replacing
	 * the config file's models (cuco_llm_use_specs), and the run's model
	 * budgets; 0 = none. The specs must outlive the engine. */
	int nllm_specs;
	char *const *llm_specs;
	int generations;        /* --generations: evolve's generations and beam's
	                           iterations, over the config's knobs; 0 = theirs */
	int ranks;              /* --ranks: run the workload on this many ranks
	                           instead of its manifest's; 0 = the manifest's */
	double max_cost_usd;
	int64_t max_tokens;
};

void cuco_engine_config_init(cuco_engine_config *cfg);

typedef struct cuco_engine cuco_engine;

/* Record the run's meta and its baseline and seed rows (once per run
 * directory), then start the search in background threads. */
int cuco_engine_start(cuco_store *st, const cuco_workload *wl, const cuco_engine_config *cfg,
	cuco_engine **out, cuco_err *err);
/* Readable after every event the engine appends (drain it). */
int cuco_engine_wake_fd(const cuco_engine *e);
/* Finish evaluations in flight, then end (no final re-timing). */
void cuco_engine_request_stop(cuco_engine *e);
bool cuco_engine_done(const cuco_engine *e);
/* Wait for the end and free. CUCO_OK, or the error that ended the run
 * (CUCO_EENV when the baseline could not run in this environment). */
int cuco_engine_join(cuco_engine *e, cuco_err *err);

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
	bool no_temperature;     /* send none: OpenAI's reasoning models refuse one */
	int max_tokens;          /* completion limit sent with each request */
	bool completion_tokens;  /* name it max_completion_tokens (OpenAI's own API) */
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
	double budget_usd;           /* spend at most this over the client's life; 0 = no limit */
	int64_t budget_tokens;       /* prompt + completion tokens at most; 0 = no limit */
	char theme[64];              /* [screen] theme = NAME; "" = not set */
	cuco_sandbox_mode sandbox;   /* [eval] sandbox = auto|bwrap|off; DEFAULT = not set */
	cuco_runner_config runner;   /* [runner] (cuco_runner_config_set); zero = local */
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
/* One call. On failure out->text is NULL and attempts/cancelled are set;
 * CUCO_EAGAIN when the retries were spent on faults that may pass (network,
 * 408, 429, 5xx, cut or unreadable replies), CUCO_EENV otherwise. */
int cuco_llm_complete(cuco_llm *c, const cuco_llm_request *req, cuco_llm_reply *out,
	cuco_err *err);
void cuco_llm_reply_free(cuco_llm_reply *r);
/* Totals over every call of this client (for budgets and the status line). */
void cuco_llm_totals(cuco_llm *c, int64_t *tokens_in, int64_t *tokens_out, double *cost_usd);
/* Whether a budget is spent; then why says which, and every further call
 * is refused at once (CUCO_EENV). Calls already in flight finish and count,
 * so a strategy checks this before proposing and ends its run cleanly. */
bool cuco_llm_spent(cuco_llm *c, char *why, size_t size);

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

/* ---- prompts (prompt.c) ---------------------------------------------------*/

typedef enum cuco_prompt_kind {
	CUCO_PROMPT_DIFF,    /* SEARCH/REPLACE edits of the parent */
	CUCO_PROMPT_FULL,    /* a full rewrite */
	CUCO_PROMPT_CROSS,   /* combine the parent with a second parent */
	CUCO_PROMPT_FIX,     /* the island has no correct candidate: make it correct */
} cuco_prompt_kind;

typedef struct cuco_prompt_spec {
	const cuco_workload *wl;
	const cuco_hardware *hw;     /* may be NULL */
	cuco_prompt_kind kind;
	uint64_t parent;             /* candidate ids in the store */
	uint64_t other;              /* CROSS: the second parent */
	int island;                  /* inspirations from this island; -1 any */
	int inspirations;            /* top candidates shown, besides the parent */
	int failures;                /* recent failures shown */
	const char *meta;            /* meta recommendations; may be NULL */
	const char *hints;           /* human hints for this island; may be NULL */
	bool memory;                 /* include the optimization memory */
} cuco_prompt_spec;

/* Build the system and user messages inside a read (or write) txn. */
int cuco_prompt_build(cuco_txn *txn, const cuco_prompt_spec *spec, cuco_buf *system,
	cuco_buf *user);
/* Keep a prompt and its reply (deduplicated) and link them from c. */
int cuco_prompt_keep(cuco_txn *txn, const char *prompt, const char *reply, cuco_candidate *c);

/* ---- one edit: prompt → reply → patch, retried in the chat (edit.c) ------
 * A reply that does not parse or apply is answered in the same
 * conversation with the precise error, up to `attempts` replies. */

typedef struct cuco_edit {
	cuco_llm *llm;
	const cuco_model *model;
	const cuco_workload *wl;
	const char *system;          /* from cuco_prompt_build */
	const char *user;
	const char *parent;          /* the parent's source */
	size_t parent_len;
	const cuco_directive *base;  /* the parent's directive */
	double temperature;          /* NAN: the model's */
	int attempts;                /* replies at most; 0 = 1 */
	bool stream;
	/* As in cuco_llm_request; (NULL, 0) also starts each new reply. */
	void (*on_delta)(const char *text, size_t len, void *arg);
	void *arg;
	const atomic_bool *cancel;
} cuco_edit;

typedef struct cuco_edit_result {
	char *source;                /* the child's source; NULL when every reply failed */
	size_t len;
	cuco_directive directive;
	char name[64];
	char note[512];              /* the reply's description */
	cuco_match loosest;          /* how loosely its hunks matched */
	char *prompt;                /* system + user text, for cuco_prompt_keep */
	char *transcript;            /* every reply and every error answered */
	int replies;
	int64_t tokens_in;
	int64_t tokens_out;
	double cost_usd;
} cuco_edit_result;

/* CUCO_OK with a child; CUCO_EDATA when every reply was refused (err holds
 * the last refusal); CUCO_EENV when the model could not be reached. The
 * tokens, cost and transcript are filled in every case. */
int cuco_llm_edit(const cuco_edit *e, cuco_edit_result *out, cuco_err *err);
void cuco_edit_result_free(cuco_edit_result *r);

/* ==== strategies: evolve, beam, fast path (evolve.c, beam.c, memory.c, fastpath.c,
 * search.c) ==== */

/* ---- knobs (search.c) -----------------------------------------------------
 * Every knob of the LLM strategies, with the published defaults (CUCo's
 * slow path, ShinkaEvolve's selection, AccelOpt's beam). They are read from
 * the [evolve], [beam] and [fastpath] sections of the config file
 * (docs/configuration.md), as `key = value` lines, or set one by one as
 * "section.key" (e.g. "evolve.islands"); docs/strategies.md lists them. */

typedef enum cuco_parent_rule {
	CUCO_PARENT_WEIGHTED,   /* sigmoid of score vs the island median, / (1 + children) */
	CUCO_PARENT_POWER_LAW,  /* p(rank r) ∝ r^-alpha over the island ranked by score */
} cuco_parent_rule;

/* The mutation operators of an island, in this order in the probabilities. */
enum { CUCO_OP_FULL, CUCO_OP_DIFF, CUCO_OP_CROSS, CUCO_OP_COUNT };

typedef struct cuco_evolve_config {
	int islands;                    /* 2 */
	int generations;                /* 0 = the run's budget, or 60 without one */
	double explore_fraction;        /* 0.4: the first 40 % of generations explore */
	double explore_p[CUCO_OP_COUNT];    /* full .70, diff .15, cross .15 */
	double exploit_p[CUCO_OP_COUNT];    /* full .60, diff .25, cross .15 */
	double explore_temps[3];        /* 0.2, 0.5, 0.8: one drawn per call */
	double exploit_temps[3];        /* 0.0, 0.2, 0.5 */
	cuco_parent_rule parent_rule;   /* weighted */
	double lambda;                  /* sigmoid sharpness: 8 (CUCo's; ShinkaEvolve's 10) */
	double alpha;                   /* power-law exponent: 1 */
	int inspirations;               /* top candidates and archive shown: 3 */
	int failures;                   /* recent failures shown: 3 */
	int migration_interval;         /* generations between migrations: 8 */
	double migration_rate;          /* share of an island moved: 0.15 */
	int meta_interval;              /* generations between meta summaries: 8 */
	int meta_max;                   /* recommendations kept: 5 */
	int novelty_attempts;           /* new replies when a child duplicates: 3 */
	double tune_rate;               /* share of generations given to the directive
	                                   tuner, a cheap operator that needs no LLM: 0 */
	bool fastpath;                  /* run the fast path first: yes */
} cuco_evolve_config;

typedef struct cuco_beam_config {
	int width;                      /* B: 6 */
	int plans;                      /* N plans per beam candidate: 12 */
	int samples;                    /* K executor samples per plan: 2 */
	int iterations;                 /* 15 */
	int max_new;                    /* memory entries per iteration: 8 */
	int capacity;                   /* memory entries kept: 16 */
	double positive;                /* a positive pair's speedup exceeds 1.04 */
	double negative;                /* a negative pair's is below 1/1.15 */
	bool shared_memory;             /* memory across workloads (AccelOpt: per task) */
} cuco_beam_config;

typedef struct cuco_fastpath_config {
	int stage_a_max;                /* iterations adding device infrastructure: 5 */
	int stage_b_max;                /* iterations making communication device-initiated: 10 */
} cuco_fastpath_config;

typedef struct cuco_search_config {
	cuco_evolve_config evolve;
	cuco_beam_config beam;
	cuco_fastpath_config fastpath;
} cuco_search_config;

void cuco_search_config_defaults(cuco_search_config *c);
/* One knob by "section.key"; CUCO_EDATA naming the key and value. */
int cuco_search_config_set(cuco_search_config *c, const char *key, const char *value,
	cuco_err *err);
/* The [evolve], [beam] and [fastpath] sections of a config file; other
 * sections and the keys before any section are the LLM client's and are
 * skipped. CUCO_ENOTFOUND when the file is missing. */
int cuco_search_config_load(const char *path, cuco_search_config *c, cuco_err *err);

/* ---- islands (evolve.c): the pure rules, exposed for tests -------------- */

/* Selection weights of n candidates of one island: weighted gives
 * sigmoid(lambda * (score - median) / MAD) / (1 + children), with MAD the
 * median absolute deviation (a zero MAD counts as 1); power-law gives
 * rank^-alpha, rank 1 the best. NAN scores count as the median. */
void cuco_parent_weights(cuco_parent_rule rule, double lambda, double alpha,
	const double *scores, const int *children, size_t n, double *w);
/* The index that a draw u in [0,1) picks from weights w (sum > 0). */
size_t cuco_pick_index(const double *w, size_t n, double u);
/* Whether generation g (from 0) of `total` explores. */
bool cuco_evolve_exploring(const cuco_evolve_config *c, int g, int total);
/* The operator (CUCO_OP_*) and temperature for generation g from two
 * draws in [0,1): u picks the operator, v the temperature. */
int cuco_evolve_operator(const cuco_evolve_config *c, int g, int total, double u, double v,
	double *temperature);

typedef struct cuco_member {
	uint64_t id;
	int island;
	int generation;
	double score;        /* NAN unless done and correct */
	bool pinned;
} cuco_member;

typedef struct cuco_move {
	uint64_t id;
	int from, to;
} cuco_move;

/* Plan one migration: from each island max(1, rate × members) random
 * correct members of generation > 0 move to a random other island. The
 * island's best, and pinned members, never move. Returns the moves written
 * to out (at most n). rng is a splitmix64 state. */
size_t cuco_migration_plan(const cuco_member *m, size_t n, int islands, double rate,
	uint64_t *rng, cuco_move *out);

/* The valid directive nearest to base with dimension dim set to value:
 * the fewest other dimensions changed (at most two, earlier dimensions and
 * values first). False when the value is not the dimension's or no such
 * directive is valid. How a GIN island gets its seed's directive. */
bool cuco_directive_nearest(const cuco_workload *wl, const cuco_directive *base,
	const char *dim, const char *value, cuco_directive *out);

/* Source text with comments dropped and whitespace runs folded into one
 * space: two candidates with the same normal form are duplicates. */
void cuco_source_normalize(const char *text, size_t len, cuco_buf *out);

/* ---- optimization memory (memory.c) --------------------------------------
 * AccelOpt's summarizer input: a beam iteration's samples, grouped by plan;
 * per plan the best sample if any beat its parent, else the worst. Of
 * those, positives (speedup > positive) best first fill at most half of
 * max_new; negatives (speedup < 1/negative) most harmful first fill the
 * rest. A negative pair is flipped — the child is the slow one and its
 * parent the fast one — so the memory says "undo this". */

typedef struct cuco_beam_sample {
	uint64_t id;
	uint64_t parent;
	int plan;                /* plan number within the iteration */
	double speedup;          /* parent latency / child latency; NAN when failed */
} cuco_beam_sample;

typedef struct cuco_memory_pair {
	uint64_t slow, fast;     /* candidate ids */
	double speedup;          /* ≥ 1: fast over slow */
	bool negative;           /* flipped: "undo this" */
} cuco_memory_pair;

size_t cuco_memory_pairs(const cuco_beam_sample *s, size_t n, const cuco_beam_config *c,
	cuco_memory_pair *out);
/* Which of nold entries survive next to nnew fresh ones in a memory of
 * `capacity`: a uniform random sample of max(0, capacity - nnew) of them
 * (AccelOpt's construct_experience). Writes their indexes to keep,
 * ascending, and returns how many. */
size_t cuco_memory_survivors(size_t nold, size_t nnew, size_t capacity, uint64_t *rng,
	size_t *keep);
/* Add fresh entries (ids assigned) and delete the old ones that do not
 * survive, in one write. workload "" or shared: every workload's entries
 * compete for the capacity. */
int cuco_memory_update(cuco_store *st, const char *workload, bool shared, cuco_memory *fresh,
	size_t nfresh, size_t capacity, uint64_t *rng, cuco_err *err);
/* The memory as the planner reads it: one lesson per entry. */
int cuco_memory_render(cuco_txn *txn, const char *workload, bool shared, cuco_buf *out);

/* ---- the strategies ------------------------------------------------------
 * evolve: CUCo's fast path (when evolve.fastpath is on), then its slow path
 * (islands). Without a model the fast path is skipped and the islands run
 * the directive tuner alone; the log says both.
 * beam: AccelOpt's planner → executor → summarizer over a beam, with the
 * optimization memory; it needs a model.
 * Both read their models and knobs from the config file. */
extern const cuco_strategy cuco_strategy_evolve;
extern const cuco_strategy cuco_strategy_beam;

#endif
