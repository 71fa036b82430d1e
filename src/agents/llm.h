/* llm.h — the LLM client (llm.c, llm_parse.c).
 *
 * One libcurl easy handle per call, so several threads may call
 * cuco_llm_complete() at once on one client. Retries 429, 5xx, network
 * errors, cut-off streams and unreadable replies with exponential backoff
 * and jitter, honouring Retry-After; other errors end the call at once.
 * Error text names the URL, status and the server's message, never a
 * header or the key.
 */
#ifndef CUCO_AGENTS_LLM_H
#define CUCO_AGENTS_LLM_H

#include "agents/llm_config.h"
#include "core.h"

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

#endif
