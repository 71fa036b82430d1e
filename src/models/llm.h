/* llm.h — the LLM client (llm.c, llm_parse.c).
 *
 * One libcurl easy handle per call, so several threads may call
 * cuco_llm_complete() at once on one client. Retries 429, 5xx, network
 * errors, cut-off streams and unreadable replies with exponential backoff
 * and jitter, honouring Retry-After; other errors end the call at once.
 * Error text names the URL, status and the server's message, never a
 * header or the key.
 */
#ifndef CUCO_MODELS_LLM_H
#define CUCO_MODELS_LLM_H

#include "core.h"
#include "models/llm_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	int max_tokens;       /* completion limit; 0: the model's */
	const char *schema;   /* JSON schema the reply must follow (structured output); NULL: none */
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
	int64_t tokens_cached;  /* of tokens_in, read from the provider's cache */
	double cost_usd;
	int attempts;         /* HTTP requests made, also on failure */
	bool cancelled;
	double seconds;
	/* The server refused the request as longer than its context (HTTP
	 * 400: llama.cpp's "exceeds the available context size", OpenAI's
	 * context_length_exceeded, Anthropic's "prompt is too long"), with the
	 * counts it gave, 0 where it gave none. The call is CUCO_EDATA. */
	bool context_exceeded;
	int64_t context_needed, context_size;
	/* The reply repeated itself and was stopped while it streamed (the
	 * call is CUCO_EDATA, its tokens counted). */
	bool looped;
	/* The server refused the JSON schema; the reply was asked again
	 * without one, and is free text. */
	bool schema_refused;
} cuco_llm_reply;

/* What cuco_llm_check learnt about a model's server. */
typedef struct cuco_llm_served {
	char serves[256];     /* the ids /models lists, comma-separated; "" if not listed */
	bool any_name;        /* the server answers whatever name is asked (llama-server) */
	int64_t context;      /* the server's context window in tokens; 0 if it did not say */
	char context_from[32];/* where it was read: "/props", "/models", "/api/show", "config" */
	int slots;            /* requests it runs at once (llama.cpp's total_slots); 0: not said */
} cuco_llm_served;

int cuco_llm_new(const cuco_llm_config *cfg, cuco_llm **out, cuco_err *err);
void cuco_llm_free(cuco_llm *c);
/* One call. A streamed call may wait for its first event (the server
 * reading the prompt, or the request waiting for a slot) idle_timeout
 * plus twice the prompt's tokens over the server's measured prompt speed
 * (its earlier calls'; before any, 25 tokens a second for a server of
 * one's own and 2 000 for a hosted one); then idle_timeout between
 * events. llama.cpp's progress events through a long prompt are events.
 * A reply that repeats itself is stopped while it streams (llm_looping).
 * A call that stops before it is done still counts the prompt tokens the
 * server said it had read. On failure out->text is NULL and attempts/cancelled are set;
 * CUCO_EAGAIN when the retries were spent on faults that may pass (network,
 * 408, 429, 5xx, cut or unreadable replies) or retry_time passed,
 * CUCO_EDATA for a reply the server sent but that cannot be used (past
 * max_reply, looping: out->looped, or a request beyond the context:
 * out->context_exceeded), CUCO_EENV otherwise. A server that refuses the
 * temperature parameter, or the JSON schema, is asked once more without
 * it. */
int cuco_llm_complete(cuco_llm *c, const cuco_llm_request *req, cuco_llm_reply *out,
	cuco_err *err);
void cuco_llm_reply_free(cuco_llm_reply *r);
/* Before a run: is m's server up, does it serve m->model, and how long is
 * its context? Fills m->context from the server when the config left it 0.
 * CUCO_EENV with one line naming the model, the URL and what is wrong
 * (unreachable, the key refused, the model not served); a server that
 * lists no models or states no context is no error. */
int cuco_llm_check(cuco_llm *c, cuco_model *m, cuco_llm_served *out, cuco_err *err);
/* How many tokens the model's server makes of a text: llama.cpp's
 * POST /tokenize. CUCO_ENOTFOUND for a server without one. */
int cuco_llm_tokenize(cuco_llm *c, const cuco_model *m, const char *text, int64_t *tokens,
	cuco_err *err);
/* Totals over every call of this client (for budgets and the status line). */
void cuco_llm_totals(cuco_llm *c, int64_t *tokens_in, int64_t *tokens_out, double *cost_usd);
/* Whether a budget is spent; then why says which, and every further call
 * is refused at once (CUCO_EENV). Calls already in flight finish and count,
 * so a strategy checks this before proposing and ends its run cleanly. */
bool cuco_llm_spent(cuco_llm *c, char *why, size_t size);

#endif
