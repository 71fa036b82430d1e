/* search_int.h — inside the LLM strategies (evolve.c, beam.c, fastpath.c,
 * memory.c, and search.c, which holds what they share): random numbers,
 * model access, events and the step that turns an edit into a proposal. */
#ifndef CUCO_SEARCH_INT_H
#define CUCO_SEARCH_INT_H

#include "agents/agents.h"

#include <math.h>

#define SEARCH_MAX_ISLANDS 16  /* the evolve.islands knob's limit */

/* splitmix64: small, seedable, good enough for sampling. */
static inline uint64_t search_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0,1). */
static inline double search_unit(uint64_t *s)
{
	return (double)(search_next(s) >> 11) * 0x1.0p-53;
}

/* What the strategies rank by: the fraction of the hardware's peak from
 * the workload's peak model, else the speedup; NAN unless done. */
static inline double search_score(const cuco_candidate *c)
{
	if (c->status != CUCO_STATUS_DONE)
		return NAN;
	return isnan(c->peak_fraction) ? c->score : c->peak_fraction;
}

/* The models a strategy calls, how it picks one, and what they cost.
 * Every call of a strategy streams its reply, so that a server that goes
 * silent mid-reply is dropped after idle_timeout rather than timeout; a
 * call that gave up on such a fault returns CUCO_EAGAIN, and the engine
 * asks for the proposal again. */
typedef struct search_llm {
	cuco_llm_config cfg;
	cuco_llm *llm;        /* NULL when no model is configured */
	cuco_bandit bandit;
	uint64_t rng;
	bool spent;           /* said so in the log */
	const atomic_bool *cancel;  /* the run's stop flag, for every call */
} search_llm;

/* Models and knobs from the config file ($XDG_CONFIG_HOME/cuco/config);
 * a missing file leaves the defaults and no model. */
int search_llm_open(const cuco_strategy_env *env, search_llm *s, cuco_search_config *knobs,
	cuco_err *err);
void search_llm_close(search_llm *s);
/* Whether the client's token or cost budget is spent (logged once): the
 * strategy then proposes nothing more and the run ends cleanly. */
bool search_llm_spent(search_llm *s);
/* The model for the next call (by weight or by the bandit); -1 if none. */
int search_llm_pick(search_llm *s);
/* One plain call (planner, summarizer, meta): the reply text, malloc'd,
 * or NULL with err. Tokens and cost are added to *c when not NULL. */
char *search_llm_ask(search_llm *s, int model, const char *system, const char *user,
	double temperature, cuco_candidate *c, cuco_err *err);

/* An event in the store's log, inside a write or on its own (a failure
 * is logged: an event is never worth ending a run for). */
int search_event_add(cuco_txn *txn, const char *kind, const char *author, uint64_t candidate,
	const char *text);
void search_event(cuco_store *st, const char *kind, const char *author, uint64_t candidate,
	const char *text);

/* A candidate's source by id (malloc'd). */
int search_source_of(cuco_store *st, uint64_t id, char **text, size_t *len, cuco_err *err);

/* Keep the prompt and reply of an edit in the store and fill the
 * proposal from the edit's result (source, directive, note, tokens). */
int search_fill(cuco_store *st, const cuco_model *m, cuco_edit_result *r, cuco_proposal *out,
	cuco_err *err);

/* ---- the fast path (fastpath.c), run alone or before the islands ---- */

/* The fast path's reference sections for program (reference.c), appended
 * to out's system message, marked and measured. */
int fp_reference(const cuco_workload *wl, const cuco_hardware *hw, const char *program,
	size_t len, cuco_fp_prompt *out, cuco_err *err);

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

/* Where a search starts (search.c): the workload's seed, or, for a
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
