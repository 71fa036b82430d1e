/* models.h — the model stack: the LLM client, prompts, replies and the
 * patcher that turns a reply into a program.
 *
 * The part's public header: it includes one header per API, each the
 * manual of its own. Include this one; the others are its chapters. The
 * model stack knows nothing of the engine or the strategies: the
 * strategies (strategies.h) call it, never the other way.
 */
#ifndef CUCO_MODELS_H
#define CUCO_MODELS_H

/* models */
#include "models/llm_config.h" /* models, the model bandit */
#include "models/llm.h"        /* the LLM client */

/* turning a model's reply into a candidate */
#include "models/prompt.h"     /* prompts */
#include "models/reply.h"      /* replies and patches */
#include "models/edit.h"       /* one edit: prompt → reply → patch */

#endif
