/* search_int.h — inside the LLM strategies (evolve.c, beam.c, sample.c,
 * fastpath.c, memory.c) and what they share: random numbers, the model
 * gateway (search.c), the ledger and the budget (ledger.c), the store
 * steps (steps.c), the duplicates (known.c), one child (child.c), the fast path
 * (fastpath.c, reference.c) and where a search starts (start.c). */
#ifndef CUCO_STRATEGIES_SEARCH_INT_H
#define CUCO_STRATEGIES_SEARCH_INT_H

#include "strategies/strategies.h"

#include <math.h>

#define SEARCH_MAX_ISLANDS 16  /* the evolve.islands knob's limit */

/* Uniform in [0,1). */
static inline double search_unit(uint64_t *s)
{
	return (double)(cuco_rng_next(s) >> 11) * 0x1.0p-53;
}

/* What the strategies rank by: the fraction of the hardware's peak from
 * the workload's peak model, else the speedup; NAN unless done. */
static inline double search_score(const cuco_candidate *c)
{
	if (c->status != CUCO_STATUS_DONE)
		return NAN;
	return isnan(c->timing.peak_fraction) ? c->score : c->timing.peak_fraction;
}

/* The models a strategy calls, how it picks one, and what they cost.
 * Every call goes through search_llm_call(), the one place that: starts
 * no call once the run is ending (env.calls_off) or the model budget is
 * spent; lets go of the strategy lock while the model answers; honours a
 * model's own temperature over the strategy's; takes the usage the server
 * reports, else estimates it from the text (and says so); prices it; and
 * notes the call in the proposal's ledger, which goes into the store with
 * the candidate that came of it or with a refusal record. Every call of a
 * strategy streams its reply, so that a server that goes silent mid-reply
 * is dropped after idle_timeout rather than timeout; a call that gave up
 * on such a fault returns CUCO_EAGAIN, and the engine asks for the
 * proposal again. */
typedef struct search_llm {
	cuco_llm_config cfg;
	cuco_llm *llm;        /* NULL when no model is configured */
	cuco_bandit bandit;
	uint64_t rng;
	const cuco_port *port;      /* the run's store (strategy.h) */
	pthread_mutex_t *lock;      /* the strategy lock, let go while a call waits */
	atomic_bool *calls_off;     /* the run's cancel flag (cuco_strategy_env) */
	int concurrency;            /* model calls in flight at once */
	double budget_usd;          /* the run's model budget; 0 = none */
	int64_t budget_tokens;
	cuco_call_totals totals;    /* every call of the run, earlier sessions' too */
	bool spent;                 /* the budget is spent (said once in the log) */
	char spent_why[160];
	bool lean_said[CUCO_MAX_MODELS];   /* the log said the model gets lean prompts */
	bool no_schema[CUCO_MAX_MODELS];   /* its server refused a JSON schema: text replies */
} search_llm;

typedef struct search_ledger {
	cuco_call_kind kind;  /* of the calls made through it */
	uint64_t parent;      /* the candidate they are about */
	cuco_port_call *v;    /* its calls, not yet in the store; a reply's text
	                         is what had streamed when it broke off */
	size_t n, cap;
	bool cancelled;       /* a call was cancelled: a stop, a pause, the budget */
} search_ledger;

/* Models and knobs from the config file the command read (env->cfg->config);
 * none leaves the defaults and no model. The totals start from
 * the store's calls, so a resumed run's budget counts what came before. */
int search_llm_open(const cuco_strategy_env *env, search_llm *s, cuco_search_config *knobs,
	cuco_err *err);
void search_llm_close(search_llm *s);
/* The run's calls so far, earlier sessions' too, into s->totals: what
 * the budget counts from (ledger.c). */
int search_budget_read(search_llm *s, cuco_err *err);
/* Whether the run's token or cost budget is spent (logged once): the
 * strategy then proposes nothing more and the run ends cleanly. */
bool search_llm_spent(search_llm *s);
/* The model for the next call (by weight or by the bandit); -1 if none. */
int search_llm_pick(search_llm *s);
/* Proposals a strategy may have in the making: 0 without a model. */
int search_llm_concurrency(const search_llm *s);

/* How the prompts for a model are made: the full profile, or the lean one
 * when the full one's uncuttable part leaves the reply too little of the
 * model's context (prompt.h); and whether its replies come as structured
 * output's JSON (its `structured`, unless its server refused a schema). */
typedef struct search_shape {
	cuco_prompt_profile profile;
	bool json;
	bool too_long;  /* search_build: no profile fits the model's context */
} search_shape;

/* Build a prompt in a shape: its system and user messages and the map of
 * what may be cut, valid until the next call. */
typedef int (*search_builder)(void *arg, const search_shape *shape, const char **system,
	const char **user, const cuco_prompt_map **map, cuco_err *err);
/* Build the prompt for a model in the first profile that fits its
 * context, the full one first (the first lean one is logged, once per
 * model); CUCO_EENV naming what each profile needs when none fits. */
int search_build(search_llm *s, int model, search_builder build, void *arg, search_shape *shape,
	cuco_err *err);

void search_ledger_init(search_ledger *lg, cuco_call_kind kind, uint64_t parent);
/* One plain call (planner, summarizer, meta): the reply text, malloc'd,
 * or NULL with err; a reply cut by the output limit is refused. Its
 * output is bounded by max_tokens (or the model's, if lower): a planner
 * asked for 150 words that writes 4 096 tokens is looping. */
char *search_llm_ask(search_llm *s, search_ledger *lg, int model, const char *system,
	const char *user, double temperature, int max_tokens, cuco_err *err);
/* Tokens a plain call's reply may take: a plan, a lesson, recommendations. */
#define SEARCH_PLAN_TOKENS 512
#define SEARCH_SUMMARY_TOKENS 1024
/* Whether a reply says nothing: fewer than three words once chat-template
 * tokens (<end_of_turn>, <|im_end|>, …), markdown and punctuation are set
 * aside (issue 26: a plan of three template tokens was used, and two
 * executor calls spent on it). */
bool search_says_nothing(const char *text);
/* cuco_llm_edit with every reply through search_llm_call and judged in
 * the ledger. */
int search_llm_edit(search_llm *s, search_ledger *lg, cuco_edit *e, cuco_edit_result *r,
	cuco_err *err);
/* A call as the ledger keeps it, priced, its tokens counted into the
 * run's totals (streamed: what had come of a reply cut short). */
void search_ledger_note(search_llm *s, search_ledger *lg, const cuco_llm_request *req,
	const cuco_llm_reply *r, const char *streamed, int rc, const cuco_err *err);
/* The last call's reply was refused, for this reason. */
void search_ledger_refused(search_ledger *lg, const char *why);
/* The last call's reply was used for its directive alone: its edits were
 * refused, for this reason (kept as the call's reason, its outcome used). */
void search_ledger_edits_refused(search_ledger *lg, const char *why);
/* No candidate came of the ledger's calls: store a refusal record (the
 * prompt, the transcript, the reason) and the calls linked to it; logged
 * when the store fails. island -1 when none. */
void search_refuse(search_llm *s, search_ledger *lg, int island, const char *model,
	const char *prompt, const char *transcript, const char *reason);
/* Store what is left in the ledger, linked to no candidate, and empty it. */
void search_ledger_close(search_llm *s, search_ledger *lg);

/* An event in the store's log, through the port (a failure is logged:
 * an event is never worth ending a run for). */
void search_event(const cuco_port *port, cuco_event_kind kind, const char *author,
	uint64_t candidate, const char *text);

/* spec's prompt (cuco_prompt_build) through the port, and the directive
 * of its parent into base. */
int search_prompt(const cuco_port *port, const cuco_prompt_spec *spec, cuco_directive *base,
	cuco_buf *system, cuco_buf *user, cuco_err *err);

/* Keep the prompt and reply of an edit in the store and fill the
 * proposal from the edit's result (source, directive, note) and from the
 * ledger (its calls, stored with the candidate, and their tokens). */
int search_fill(search_llm *s, search_ledger *lg, const cuco_model *m, cuco_edit_result *r,
	cuco_proposal *out, cuco_err *err);

/* ---- the duplicates (known.c) ----
 * A candidate is its source and its directive (the directive reaches the
 * build as defines): two with the same normal form of the source
 * (cuco_text_normalize) and the same directive are duplicates, and a
 * reply that reproduces a known one is refused. */
typedef struct search_known_entry {
	char key[CUCO_HASH_LEN + 1];
	uint64_t id;          /* 0 while the candidate is in flight */
} search_known_entry;

typedef struct search_known {
	search_known_entry *v;
	size_t n, cap;
	uint64_t *pending;    /* candidates observed and not read in yet */
	size_t npending, pending_cap;
} search_known;

/* The key of a source and directive (knobs in name order). */
void search_known_key(const char *text, size_t len, const cuco_directive *d,
	char key[CUCO_HASH_LEN + 1]);
const search_known_entry *search_known_find(const search_known *k, const char *key);
/* Add a key; id 0 for a proposal in flight (a later add with its id, when
 * it lands, fills that in). */
void search_known_add(search_known *k, const char *key, uint64_t id);
/* A candidate observed, or its source changed: read in by the next
 * search_known_sync; one not stored yet stays pending. */
void search_known_seen(search_known *k, uint64_t id);
/* Read every pending candidate in through the port (search_child does,
 * before each lookup); a failure is logged under who. */
void search_known_sync(const cuco_port *port, search_known *k, const char *who);
void search_known_free(search_known *k);

/* ---- one child (child.c) ---- */

/* A child asked of a model, its prompt built (search_build) in shape. */
typedef struct search_ask {
	int model;
	const cuco_workload *wl;
	cuco_call_kind call;           /* the ledger's kind */
	uint64_t parent;
	int island;                    /* for a refusal record; -1 when none */
	const char *who;               /* "evolve: island 2", for the log and errors */
	const char *src;               /* the parent's source */
	size_t len;
	const cuco_directive *base;    /* its directive */
	cuco_prompt_kind kind;         /* what was asked: the reply's schema */
	search_shape shape;
	cuco_buf *system, *user;       /* user takes a note on each repeat */
	const cuco_prompt_map *map;
	double temperature;            /* NAN: the model's own */
	int attempts;                  /* replies that may repeat a known candidate */
} search_ask;
/* Ask for a child: each reply through the patcher; one that reproduces a
 * known candidate is refused and answered with that fact, up to
 * a->attempts. CUCO_OK with the proposal (carrying every call); CUCO_EDATA
 * when every reply was refused (a refusal record is stored); else the
 * call's error (CUCO_ENOTFOUND budget spent, CUCO_EENV cancelled or
 * unreachable, CUCO_EAGAIN a passing fault). got: the last reply's form. */
int search_child(search_llm *s, search_known *known, const search_ask *a, cuco_proposal *out,
	cuco_reply_kind *got, cuco_err *err);

/* ---- the fast path (fastpath.c), run alone or before the islands ---- */

/* The fast path's reference sections for program (reference.c), appended
 * to out's system message, marked and measured. */
int fp_reference(const cuco_workload *wl, const cuco_hardware *hw, const char *program,
	size_t len, bool lean, cuco_fp_prompt *out, cuco_err *err);

typedef struct fastpath fastpath;

/* llm stays the caller's. Without a model the fast path finishes at once
 * (the log says what the search starts from instead). */
int fastpath_new(const cuco_strategy_env *env, search_llm *llm, const cuco_fastpath_config *c,
	fastpath **out, cuco_err *err);
void fastpath_free(fastpath *f);
/* CUCO_OK with the next attempt, or with *waiting and no proposal while
 * an attempt is being evaluated (its result decides the next prompt);
 * CUCO_ENOTFOUND once finished. */
int fastpath_propose(fastpath *f, cuco_proposal *out, bool *waiting, cuco_err *err);
void fastpath_observe(fastpath *f, const cuco_candidate *c);
bool fastpath_finished(const fastpath *f);
/* The device-initiated seed it produced; 0 when none. */
uint64_t fastpath_result(const fastpath *f);

/* Where a search starts (start.c): the workload's seed, or, for a
 * workload without one, the fast path's device-initiated program once it
 * has made one. */
typedef struct search_start {
	uint64_t id;              /* 0 until there is one */
	char hash[CUCO_HASH_LEN + 1];
	cuco_directive directive;
} search_start;

/* From the seed; a strategy without a seed needs the fast path and a
 * model, else CUCO_EUSAGE saying so. */
int search_start_init(search_start *st, const cuco_strategy_env *env, const search_llm *l,
	bool fastpath_on, const char *strategy, cuco_err *err);
/* Take the fast path's program as the start when it is c (an observe). */
void search_start_observe(search_start *st, const fastpath *fp, const cuco_candidate *c);
/* CUCO_OK once there is a start; CUCO_EBUSY while the fast path works
 * towards one; CUCO_EDATA naming the workload when it ended without. */
int search_start_ready(const search_start *st, const fastpath *fp, const cuco_workload *wl,
	cuco_err *err);

#endif
