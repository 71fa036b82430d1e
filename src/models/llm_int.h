/* llm_int.h — inside the LLM client: what llm.c (transport, retries) and
 * llm_parse.c (the two providers' reply formats, streamed or not) share. */
#ifndef CUCO_MODELS_LLM_INT_H
#define CUCO_MODELS_LLM_INT_H

#include "models/models.h"

#include <curl/curl.h>

/* A reply's text, an event's data and a line of the stream are each cut
 * at this many bytes unless the configuration says otherwise: a model
 * reply of megabytes is a broken or hostile server, not an answer. */
#define LLM_REPLY_MAX_DEFAULT (4u << 20)

/* What one HTTP attempt has read so far. */
typedef struct llm_read {
	cuco_provider provider;
	const cuco_llm_request *req;
	size_t max_bytes;       /* the cap on text, data and a line; 0: the default */
	bool too_big;           /* the cap was reached: error says which */
	cuco_buf text;          /* the reply's text */
	char finish[32];
	int64_t tokens_in, tokens_out;
	int64_t tokens_cached;  /* of tokens_in, read from the provider's cache */
	/* llama.cpp's prompt_progress events (asked for with return_progress):
	 * tokens of the prompt read so far, of them from its cache, and of how
	 * many; and its timings: prompt tokens evaluated and how long it took. */
	int64_t prompt_read, prompt_cache, prompt_total;
	int64_t timed_prompt;
	double timed_prompt_ms;
	bool text_seen;         /* a piece of the reply's text arrived */
	bool looped;            /* the text repeats itself: error says how */
	size_t loop_checked;    /* bytes of text when it was last looked at */
	bool done;              /* the stream's end event arrived */
	uint64_t events;        /* data events dispatched: a stream's progress */
	size_t streamed;        /* bytes fed, capped at a few times max_bytes */
	char error[256];        /* a stream error event or unreadable data, "" if none */
	/* server-sent events being assembled */
	cuco_buf line;          /* bytes after the last newline */
	size_t scanned;         /* of line, known to hold no newline: each byte is looked at once */
	cuco_buf data;
	char event[48];
} llm_read;

/* Feed streamed bytes; complete events update r. Linear in the bytes fed,
 * however they are cut; once r->error is set the rest is ignored. */
void llm_sse_feed(llm_read *r, const char *bytes, size_t n);
/* A whole non-streamed reply body; false (with r->error) when unreadable. */
bool llm_parse_body(llm_read *r, const char *body, size_t n);
/* The message of an error body ({"error": {"message": …}}), or "". */
void llm_error_message(const char *body, size_t n, char *out, size_t size);
/* The request body for a provider; malloc'd JSON text. Without
 * temperature, none is sent whatever the request and the model say;
 * without schema, no response_format. */
char *llm_request_json(const cuco_llm_request *req, int max_tokens, bool temperature, bool schema);
/* Whether an error message says the request was longer than the model's
 * context, and the token counts it names (0 where it names none). */
bool llm_context_exceeded(const char *msg, int64_t *needed, int64_t *size);
/* Whether an error message says the temperature parameter is refused. */
bool llm_temperature_refused(const char *msg);
/* Whether an error message says a JSON schema (response_format) is refused. */
bool llm_schema_refused(const char *msg);

/* The client's configuration (llm.c). */
const cuco_llm_config *llm_config(const cuco_llm *c);
/* A request's headers: the JSON type, the provider's version and the key,
 * read from the environment now (llm.c). */
struct curl_slist *llm_headers(const cuco_model *m);
/* Cut the model's key out of a message, should a server echo it (llm.c). */
void llm_scrub(const cuco_model *m, char *msg);

#endif
