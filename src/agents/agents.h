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

/* ==== engine and directive tuner (engine.c, tune.c) ===================== */

/* ==== LLM client, prompts, replies and patches (llm*.c, reply.c, patch.c) = */

#endif
