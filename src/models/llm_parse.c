/* llm_parse.c — the wire formats of the two providers: request bodies,
 * whole replies, server-sent event streams and error bodies.
 *
 * OpenAI-compatible streams end with `data: [DONE]` and carry usage in a
 * last chunk when asked (stream_options.include_usage); Anthropic streams
 * are typed events (message_start … message_stop) with usage split between
 * message_start (input) and message_delta (output). A stream that stops
 * before its end event was cut off, whatever the bytes before it said.
 */
#include "models/llm_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A text of the conversation, as well-formed UTF-8: a prompt may hold
 * text cut at a byte count or a reply cut off inside a character, and a
 * strict server refuses the whole request for one such byte (llama.cpp:
 * HTTP 400, "ill-formed UTF-8 byte"). */
static void add_said(cJSON *o, const char *key, const char *text)
{
	char *clean = cuco_utf8_clean(text);
	cJSON_AddStringToObject(o, key, clean);
	free(clean);
}

char *llm_request_json(const cuco_llm_request *req, int max_tokens, bool temperature, bool schema)
{
	const cuco_model *m = req->model;
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", m->model);
	cJSON_AddNumberToObject(root, m->completion_tokens ? "max_completion_tokens" : "max_tokens",
		max_tokens);
	double t = !isnan(req->temperature) ? req->temperature : m->temperature;
	if (!isnan(t) && !m->no_temperature && temperature)
		cJSON_AddNumberToObject(root, "temperature", t);
	cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
	if (req->system && m->provider == CUCO_PROVIDER_ANTHROPIC)
		add_said(root, "system", req->system);
	if (req->system && m->provider == CUCO_PROVIDER_OPENAI) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "role", "system");
		add_said(s, "content", req->system);
		cJSON_AddItemToArray(msgs, s);
	}
	for (int i = 0; i < req->nmsgs; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "role", req->msgs[i].role);
		add_said(o, "content", req->msgs[i].content);
		cJSON_AddItemToArray(msgs, o);
	}
	if (req->stream) {
		cJSON_AddBoolToObject(root, "stream", true);
		if (m->provider == CUCO_PROVIDER_OPENAI)
			cJSON_AddBoolToObject(cJSON_AddObjectToObject(root, "stream_options"),
				"include_usage", true);
		/* llama.cpp then says how far it has read a long prompt: progress
		 * while a CPU reads 8 000 tokens for minutes. */
		if (m->server == CUCO_SERVER_LLAMACPP)
			cJSON_AddBoolToObject(root, "return_progress", true);
	}
	cJSON *parsed = schema && req->schema && m->provider == CUCO_PROVIDER_OPENAI
		? cJSON_Parse(req->schema) : NULL;
	if (parsed) {
		cJSON *rf = cJSON_AddObjectToObject(root, "response_format");
		cJSON_AddStringToObject(rf, "type", "json_schema");
		cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
		cJSON_AddStringToObject(js, "name", "cuco_reply");
		cJSON_AddBoolToObject(js, "strict", true);
		cJSON_AddItemToObject(js, "schema", parsed);
	}
	char *s = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return s;
}

static const cJSON *path(const cJSON *j, const char *a, const char *b)
{
	j = cJSON_GetObjectItemCaseSensitive(j, a);
	return b ? cJSON_GetObjectItemCaseSensitive(j, b) : j;
}

/* A server's token count, kept sane: negative, fractional-garbage or
 * astronomically large counts (found by tests/fuzz/fuzz_sse) become 0 or
 * a cap instead of undefined conversions and negative accounting. */
static int64_t token_count(double v)
{
	if (!(v > 0))
		return 0;
	return v > 1e15 ? (int64_t)1e15 : (int64_t)v;
}

static void take_tokens(const cJSON *usage, const char *in, const char *out, llm_read *r)
{
	const cJSON *v;
	if ((v = cJSON_GetObjectItemCaseSensitive(usage, in)) && cJSON_IsNumber(v))
		r->tokens_in = token_count(v->valuedouble);
	if ((v = cJSON_GetObjectItemCaseSensitive(usage, out)) && cJSON_IsNumber(v))
		r->tokens_out = token_count(v->valuedouble);
	/* Prompt tokens read from the provider's cache: part of OpenAI's
	 * prompt_tokens, beside Anthropic's input_tokens. */
	if (r->provider == CUCO_PROVIDER_OPENAI)
		v = path(usage, "prompt_tokens_details", "cached_tokens");
	else
		v = cJSON_GetObjectItemCaseSensitive(usage, "cache_read_input_tokens");
	if (!cJSON_IsNumber(v))
		return;
	r->tokens_cached = token_count(v->valuedouble);
	if (r->provider == CUCO_PROVIDER_ANTHROPIC)
		r->tokens_in += r->tokens_cached;
	if (r->tokens_cached > r->tokens_in)
		r->tokens_cached = r->tokens_in;
}

static void take_finish(const cJSON *v, llm_read *r)
{
	if (cJSON_IsString(v))
		cuco_strlcpy(r->finish, v->valuestring, sizeof r->finish);
}

static size_t cap(const llm_read *r)
{
	return r->max_bytes ? r->max_bytes : LLM_REPLY_MAX_DEFAULT;
}

/* Past the cap the attempt is over: what was read is kept for the error
 * only, and nothing more is buffered. */
static bool over_cap(llm_read *r, size_t len, const char *what)
{
	if (len <= cap(r))
		return false;
	r->too_big = true;
	snprintf(r->error, sizeof r->error, "%s larger than %zu bytes (max_reply)", what, cap(r));
	return true;
}

/* Whether a text's end repeats itself: its last bytes a period of 16 to
 * 1024 bytes over and over, at least 2048 bytes and four periods long; the
 * period and the length of the repetition. */
static bool llm_looping(const char *text, size_t len, size_t *period, size_t *run)
{
	for (size_t p = 16; p <= 1024 && 4 * p <= len; p++) {
		size_t k = 0;
		while (k + p < len && text[len - 1 - k] == text[len - 1 - k - p])
			k++;
		size_t need = 4 * p > 2048 ? 4 * p : 2048;
		if (k + p >= need) {
			*period = p;
			*run = k + p;
			return true;
		}
	}
	return false;
}

#define LOOP_STEP 256  /* bytes of new text between two looks for a loop */

static void add_text(llm_read *r, const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || over_cap(r, r->text.len + n, "reply"))
		return;
	cuco_buf_append(&r->text, s, n);
	r->text_seen = true;
	if (r->req->on_delta)
		r->req->on_delta(s, n, r->req->arg);
	size_t period, run;
	if (r->req->stream && r->text.len >= r->loop_checked + LOOP_STEP) {
		r->loop_checked = r->text.len;
		if (llm_looping(r->text.data, r->text.len, &period, &run)) {
			r->looped = true;
			snprintf(r->error, sizeof r->error, "reply loops: its last %zu bytes are the same %zu "
				"bytes over and over; stopped while it streamed", run, period);
		}
	}
}

/* llama.cpp's progress through a long prompt, and its timings. */
static void take_llamacpp(const cJSON *j, llm_read *r)
{
	const cJSON *pp = path(j, "prompt_progress", NULL), *t = path(j, "timings", NULL), *v;
	if (cJSON_IsObject(pp)) {
		if (cJSON_IsNumber(v = path(pp, "processed", NULL)))
			r->prompt_read = token_count(v->valuedouble);
		if (cJSON_IsNumber(v = path(pp, "cache", NULL)))
			r->prompt_cache = token_count(v->valuedouble);
		if (cJSON_IsNumber(v = path(pp, "total", NULL)))
			r->prompt_total = token_count(v->valuedouble);
	}
	if (cJSON_IsObject(t) && cJSON_IsNumber(v = path(t, "prompt_n", NULL))) {
		r->timed_prompt = token_count(v->valuedouble);
		v = path(t, "prompt_ms", NULL);
		r->timed_prompt_ms = cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
	}
}

static void stream_error(llm_read *r, const cJSON *j)
{
	const cJSON *e = path(j, "error", NULL);
	const cJSON *msg = path(e, "message", NULL), *type = path(e, "type", NULL);
	snprintf(r->error, sizeof r->error, "stream error: %s%s%s",
		cJSON_IsString(type) ? type->valuestring : "",
		cJSON_IsString(type) ? ": " : "",
		cJSON_IsString(msg) ? msg->valuestring : "(no message)");
}

static void openai_event(llm_read *r, const cJSON *j)
{
	if (path(j, "error", NULL)) {
		stream_error(r, j);
		return;
	}
	const cJSON *c0 = cJSON_GetArrayItem(path(j, "choices", NULL), 0);
	const cJSON *content = path(c0, "delta", "content");
	if (cJSON_IsString(content))
		add_text(r, content->valuestring);
	take_finish(path(c0, "finish_reason", NULL), r);
	const cJSON *usage = path(j, "usage", NULL);
	if (cJSON_IsObject(usage))
		take_tokens(usage, "prompt_tokens", "completion_tokens", r);
	take_llamacpp(j, r);
}

static void anthropic_event(llm_read *r, const cJSON *j)
{
	const cJSON *type = path(j, "type", NULL);
	const char *t = cJSON_IsString(type) ? type->valuestring : "";
	if (strcmp(t, "message_start") == 0) {
		take_tokens(path(j, "message", "usage"), "input_tokens", "output_tokens", r);
	} else if (strcmp(t, "content_block_delta") == 0) {
		const cJSON *text = path(j, "delta", "text");
		if (cJSON_IsString(text))
			add_text(r, text->valuestring);
	} else if (strcmp(t, "message_delta") == 0) {
		take_finish(path(j, "delta", "stop_reason"), r);
		/* Only output tokens here; keep message_start's input count. */
		const cJSON *out = path(j, "usage", "output_tokens");
		if (cJSON_IsNumber(out))
			r->tokens_out = token_count(out->valuedouble);
	} else if (strcmp(t, "message_stop") == 0) {
		r->done = true;
	} else if (strcmp(t, "error") == 0) {
		stream_error(r, j);
	}
}

static void dispatch(llm_read *r)
{
	if (r->data.len == 0 || r->error[0])
		return;
	if (r->provider == CUCO_PROVIDER_OPENAI && strcmp(r->data.data, "[DONE]") == 0) {
		r->done = true;
		return;
	}
	r->events++;
	cJSON *j = cJSON_ParseWithLength(r->data.data, r->data.len);
	if (!j) {
		snprintf(r->error, sizeof r->error, "stream event is not JSON: %.60s", r->data.data);
		return;
	}
	if (r->provider == CUCO_PROVIDER_OPENAI)
		openai_event(r, j);
	else
		anthropic_event(r, j);
	cJSON_Delete(j);
}

/* One line of the event stream (without its ending). */
static void sse_line(llm_read *r, const char *s, size_t n)
{
	if (n == 0) {
		dispatch(r);
		r->data.len = 0;
		if (r->data.data)
			r->data.data[0] = '\0';
		r->event[0] = '\0';
		return;
	}
	if (s[0] == ':')
		return;
	const char *colon = memchr(s, ':', n);
	size_t fn = colon ? (size_t)(colon - s) : n;
	const char *v = colon ? colon + 1 : s + n;
	size_t vn = (size_t)(s + n - v);
	if (vn > 0 && *v == ' ') {
		v++;
		vn--;
	}
	if (fn == 4 && memcmp(s, "data", 4) == 0) {
		if (over_cap(r, r->data.len + vn + 1, "stream event"))
			return;
		if (r->data.len > 0)
			cuco_buf_puts(&r->data, "\n");
		cuco_buf_append(&r->data, v, vn);
	} else if (fn == 5 && memcmp(s, "event", 5) == 0) {
		snprintf(r->event, sizeof r->event, "%.*s", (int)vn, v);
	}
}

/* The last line end in bytes, or NULL. */
static const char *last_newline(const char *bytes, size_t n)
{
	while (n > 0)
		if (bytes[--n] == '\n')
			return bytes + n;
	return NULL;
}

void llm_sse_feed(llm_read *r, const char *bytes, size_t n)
{
	if (r->error[0])
		return;
	/* Comments and empty events carry no text: without this bound a
	 * server could keep one attempt alive for ever. */
	r->streamed += n;
	if (over_cap(r, r->streamed / 4, "stream (a quarter of it)"))
		return;
	/* The complete lines first, then the unfinished rest, which is
	 * measured before it is buffered: a line with no end never holds
	 * more than the cap (found by tests/fuzz/fuzz_sse's flood). */
	const char *nl = last_newline(bytes, n);
	size_t whole = nl ? (size_t)(nl - bytes) + 1 : 0;
	if (whole > 0) {
		cuco_buf_append(&r->line, bytes, whole);
		/* Only the new bytes are searched for line ends: rescanning a
		 * long unfinished line on every chunk made a 48 MB line cost
		 * 45 s. */
		size_t start = 0;
		for (const char *e; !r->error[0] && (e = memchr(r->line.data + r->scanned, '\n',
			r->line.len - r->scanned));) {
			size_t i = (size_t)(e - r->line.data), end = i;
			if (end > start && r->line.data[end - 1] == '\r')
				end--;
			sse_line(r, r->line.data + start, end - start);
			start = r->scanned = i + 1;
		}
		r->line.len = 0;
		r->line.data[0] = '\0';
		r->scanned = 0;
		if (r->error[0])
			return;
	}
	if (over_cap(r, r->line.len + (n - whole), "stream line"))
		return;
	cuco_buf_append(&r->line, bytes + whole, n - whole);
	r->scanned = r->line.len;
}

bool llm_parse_body(llm_read *r, const char *body, size_t n)
{
	cJSON *j = cJSON_ParseWithLength(body, n);
	if (!j) {
		/* body need not be NUL-terminated (found by tests/fuzz/fuzz_sse) */
		snprintf(r->error, sizeof r->error, "reply is not JSON: %.*s", (int)(n < 60 ? n : 60), body);
		return false;
	}
	bool ok = false;
	if (r->provider == CUCO_PROVIDER_OPENAI) {
		const cJSON *c0 = cJSON_GetArrayItem(path(j, "choices", NULL), 0);
		const cJSON *content = path(c0, "message", "content");
		if (cJSON_IsString(content) && !over_cap(r, strlen(content->valuestring), "reply")) {
			cuco_buf_puts(&r->text, content->valuestring);
			take_finish(path(c0, "finish_reason", NULL), r);
			ok = true;
		}
		/* Counted even when the text is refused: the server served it. */
		take_tokens(path(j, "usage", NULL), "prompt_tokens", "completion_tokens", r);
		take_llamacpp(j, r);
	} else {
		const cJSON *block;
		cJSON_ArrayForEach(block, path(j, "content", NULL)) {
			const cJSON *text = path(block, "text", NULL);
			if (cJSON_IsString(text) && !over_cap(r, r->text.len + strlen(text->valuestring), "reply")) {
				cuco_buf_puts(&r->text, text->valuestring);
				ok = true;
			}
		}
		take_finish(path(j, "stop_reason", NULL), r);
		take_tokens(path(j, "usage", NULL), "input_tokens", "output_tokens", r);
	}
	ok = ok && !r->too_big;
	if (!ok && !r->too_big)
		snprintf(r->error, sizeof r->error, "reply holds no text (%s)",
			r->provider == CUCO_PROVIDER_OPENAI ? "choices[0].message.content" : "content[].text");
	if (!r->text.data)
		cuco_buf_append(&r->text, "", 0);
	cJSON_Delete(j);
	return ok;
}

void llm_error_message(const char *body, size_t n, char *out, size_t size)
{
	out[0] = '\0';
	cJSON *j = cJSON_ParseWithLength(body, n);
	const cJSON *msg = path(path(j, "error", NULL), "message", NULL);
	const cJSON *code = path(path(j, "error", NULL), "code", NULL);
	if (cJSON_IsString(msg))
		snprintf(out, size, "%s", msg->valuestring);
	/* OpenAI names the kind of error in its code: context_length_exceeded. */
	if (cJSON_IsString(msg) && cJSON_IsString(code) && strlen(out) + 4 < size)
		snprintf(out + strlen(out), size - strlen(out), " (%s)", code->valuestring);
	cJSON_Delete(j);
}

/* A count after `key` in msg, as in "(8192 tokens)" or "is 4096 tokens". */
static int64_t number_after(const char *msg, const char *key)
{
	const char *p = strstr(msg, key);
	if (!p)
		return 0;
	p += strlen(key);
	while (*p && (*p < '0' || *p > '9') && p - msg < 4096)
		p++;
	return strtoll(p, NULL, 10);
}

bool llm_context_exceeded(const char *msg, int64_t *needed, int64_t *size)
{
	*needed = *size = 0;
	if (strstr(msg, "exceeds the available context size")) {        /* llama.cpp */
		*needed = number_after(msg, "request (");
		*size = number_after(msg, "context size (");
		return true;
	}
	if (strstr(msg, "maximum context length")) {                    /* OpenAI, vLLM */
		*size = number_after(msg, "maximum context length is");
		*needed = number_after(msg, "you requested");
		if (!*needed)
			*needed = number_after(msg, "resulted in");
		return true;
	}
	if (strstr(msg, "context_length_exceeded") || strstr(msg, "context window"))
		return true;
	if (strstr(msg, "prompt is too long")) {                        /* Anthropic */
		*needed = number_after(msg, "prompt is too long:");
		*size = number_after(msg, "tokens >");
		return true;
	}
	return false;
}

bool llm_schema_refused(const char *msg)
{
	return strstr(msg, "response_format") || strstr(msg, "json_schema") ||
		strstr(msg, "grammar") || strstr(msg, "JSON schema");
}

bool llm_temperature_refused(const char *msg)
{
	return strstr(msg, "temperature") && (strstr(msg, "nsupported") || strstr(msg, "not support") ||
		strstr(msg, "Only the default"));
}
