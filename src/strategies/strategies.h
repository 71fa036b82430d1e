/* strategies.h — the search strategies, the directive tuner, the config
 * file.
 *
 * A strategy proposes candidates and the engine drives it through the
 * interface in strategy.h (engine.h includes it): the engine takes its
 * proposals, hands them to the evaluator (eval.h) and records every
 * candidate, result and event in the store; a strategy writes and reads
 * the store only through the engine's port. The LLM strategies call
 * models through the model stack (models.h). Strategies never touch the
 * screen; the screen learns everything from the store.
 *
 * The part's public header: it includes one header per API, each the
 * manual of its own. Include this one; the others are its chapters.
 */
#ifndef CUCO_STRATEGIES_H
#define CUCO_STRATEGIES_H

#include "engine/engine.h"     /* the engine and the strategy interface */
#include "models/models.h"     /* the model stack */

#include "strategies/tuner.h"  /* the directive tuner, no LLM */
#include "strategies/config.h" /* the config file, every option in one table */
#include "strategies/search.h" /* the LLM strategies' knobs */
#include "strategies/evolve.h" /* islands: the pure rules */
#include "strategies/memory.h" /* the optimization memory */

/* The directive tuner alone (tuner.h); no model. */
extern const cuco_strategy cuco_strategy_tune;
/* evolve: CUCo's fast path (when evolve.fastpath is on), then its slow path
 * (islands). Without a model the fast path is skipped and the islands run
 * the directive tuner alone; the log says both.
 * beam: AccelOpt's planner → executor → summarizer over a beam, with the
 * optimization memory; it needs a model.
 * Both read their models and knobs from the config file (search.h). */
extern const cuco_strategy cuco_strategy_evolve;
extern const cuco_strategy cuco_strategy_beam;
/* sample: best-of-N edits of the start program with one prompt, no
 * population (sample.c): the control evolve and beam are measured
 * against. */
extern const cuco_strategy cuco_strategy_sample;
/* The strategy `--strategy NAME` names (strategies.c); NULL if unknown. */
const cuco_strategy *cuco_strategy_find(const char *name);

/* ---- sizes: each kind of prompt in each profile (survey.c) ---------------- */

typedef struct cuco_prompt_size {
	char kind[16];           /* a cuco_prompt_kind_name, "fastpath-a" or "fastpath-b" */
	int64_t floor[CUCO_PROFILES];  /* tokens no cut removes (cuco_prompt_floor) */
	int64_t whole[CUCO_PROFILES];  /* tokens before any cut */
} cuco_prompt_size;

#define CUCO_SURVEY_ROWS (CUCO_PROMPT_KINDS + 2)

/* The first prompts of a run of wl, each kind in each profile, built
 * from its baseline and seed as a run's store would hold them (json: as
 * structured output asks). rows holds CUCO_SURVEY_ROWS. */
int cuco_prompt_survey(const cuco_workload *wl, const cuco_hardware *hw, bool json,
	cuco_prompt_size *rows, int *n, cuco_err *err);
/* The least context, in steps of 256 tokens, that leaves a prompt whose
 * floor is `floor` its reply (cuco_prompt_reserve); 0 past 16 M. */
int64_t cuco_prompt_min_context(int64_t floor, int max_tokens);

#endif
