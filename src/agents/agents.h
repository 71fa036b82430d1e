/* agents.h — search strategies, mutation operators, the LLM client.
 *
 * The agents propose candidates and the engine drives them: it takes
 * proposals, hands them to the evaluator (eval.h), and records every
 * candidate, result and event in the store (store.h). Agents never touch
 * the screen; the screen learns everything from the store.
 *
 * The part's public header: it includes one header per API, each the
 * manual of its own. Include this one; the others are its chapters.
 */
#ifndef CUCO_AGENTS_H
#define CUCO_AGENTS_H

/* the engine and what it drives */
#include "agents/engine.h"     /* the engine: threads, evaluations, commands */
#include "agents/strategy.h"   /* the strategy interface, the registered strategies */
#include "agents/tuner.h"      /* the directive tuner, no LLM */

/* models */
#include "agents/llm_config.h" /* models, the model bandit */
#include "agents/config.h"     /* the config file, every option in one table */
#include "agents/llm.h"        /* the LLM client */

/* turning a model's reply into a candidate */
#include "agents/prompt.h"     /* prompts */
#include "agents/reply.h"      /* replies and patches */
#include "agents/edit.h"       /* one edit: prompt → reply → patch */

/* the LLM strategies' parts */
#include "agents/search.h"     /* their knobs */
#include "agents/evolve.h"     /* islands: the pure rules */
#include "agents/memory.h"     /* the optimization memory */

#endif
