/* llm_int.h — inside the LLM client: what llm.c (transport, retries) and
 * llm_parse.c (the two providers' reply formats, streamed or not) share. */
#ifndef CUCO_LLM_INT_H
#define CUCO_LLM_INT_H

#include "agents/agents.h"

/* What one HTTP attempt has read so far. */
typedef struct llm_read {
	cuco_provider provider;
	const cuco_llm_request *req;
	cuco_buf text;          /* the reply's text */
	char finish[32];
	int64_t tokens_in, tokens_out;
	int64_t tokens_cached;  /* of tokens_in, read from the provider's cache */
	bool done;              /* the stream's end event arrived */
	char error[256];        /* a stream error event or unreadable data, "" if none */
	/* server-sent events being assembled */
	cuco_buf line;
	cuco_buf data;
	char event[48];
} llm_read;

/* Feed streamed bytes; complete events update r. */
void llm_sse_feed(llm_read *r, const char *bytes, size_t n);
/* A whole non-streamed reply body; false (with r->error) when unreadable. */
bool llm_parse_body(llm_read *r, const char *body, size_t n);
/* The message of an error body ({"error": {"message": …}}), or "". */
void llm_error_message(const char *body, size_t n, char *out, size_t size);
/* The request body for a provider; malloc'd JSON text. */
char *llm_request_json(const cuco_llm_request *req, int max_tokens);

#endif
