/* test_llm.c — the LLM client against the scripted server: both
 * protocols, streamed and not, every fault, retries and their timing,
 * cancellation, accounting, parallel calls, and a planted key that must
 * never show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "strategies/strategies.h"
#include "test_llm_server.h"
#include "test_llm_toy.h"

#define PLANTED_KEY "sk-planted-7f3a9c1e5b"

static llm_server srv;
static cuco_llm_config cfg;
static cuco_model model;

/* Give the server (started once) a script, and set up a model at it. */
static void serve(const char *script, cuco_provider provider)
{
	if (srv.pid == 0 && llm_server_start(&srv, script) != 0)
		fail_msg("cannot start %s %s", llm_python, llm_server_py);
	if (llm_server_script(&srv, script) != 0)
		fail_msg("cannot write the script in %s", srv.dir);
	cuco_llm_config_defaults(&cfg);
	cfg.backoff_base_s = 0.01;
	cfg.backoff_max_s = 3;
	cfg.max_retries = 3;
	cfg.connect_timeout_s = 2;
	cfg.idle_timeout_s = 1;
	cfg.total_timeout_s = 10;
	memset(&model, 0, sizeof model);
	cuco_strlcpy(model.name, "test", sizeof model.name);
	model.provider = provider;
	cuco_strlcpy(model.model, "scripted-1", sizeof model.model);
	cuco_strlcpy(model.url, srv.url, sizeof model.url);
	cuco_strlcpy(model.api_key_env, "CUCO_TEST_KEY", sizeof model.api_key_env);
	model.price_in = 2;
	model.price_out = 10;
	model.temperature = NAN;
	model.max_tokens = 1000;
}

static int teardown(void **state)
{
	(void)state;
	if (srv.pid > 0)
		llm_server_stop(&srv);
	return 0;
}

/* What a streaming callback saw: the text since the last restart. */
typedef struct seen {
	cuco_buf text;
	int deltas;
	int restarts;
} seen;

static void on_delta(const char *text, size_t len, void *arg)
{
	seen *s = arg;
	if (!text) {
		s->restarts++;
		s->text.len = 0;
		return;
	}
	cuco_buf_append(&s->text, text, len);
	s->deltas++;
}

/* How many requests the server logged since its script was set. */
static int requests_logged(void)
{
	int n;
	free(llm_server_requests(&srv, &n));
	return n;
}

static int call(bool stream, seen *s, cuco_llm_reply *r, cuco_err *err, const atomic_bool *cancel)
{
	cuco_llm *c;
	assert_int_equal(cuco_llm_new(&cfg, &c, err), CUCO_OK);
	cuco_llm_msg msg = { "user", "write a kernel" };
	cuco_llm_request req = {
		.model = &model, .system = "you are terse", .nmsgs = 1, .msgs = &msg,
		.temperature = 0.5, .stream = stream, .on_delta = s ? on_delta : NULL,
		.arg = s, .cancel = cancel,
	};
	int rc = cuco_llm_complete(c, &req, r, err);
	cuco_llm_free(c);
	if (s && s->text.data == NULL)
		cuco_buf_append(&s->text, "", 0);
	return rc;
}

static void test_openai_whole(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"DIRECTIVE:\\nbackend: rma\", \"tokens_in\": 100, "
		"\"tokens_out\": 50}]}", CUCO_PROVIDER_OPENAI);
	setenv("CUCO_TEST_KEY", PLANTED_KEY, 1);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "DIRECTIVE:\nbackend: rma");
	assert_string_equal(r.finish, "stop");
	assert_int_equal(r.tokens_in, 100);
	assert_int_equal(r.tokens_out, 50);
	assert_float_equal(r.cost_usd, (100 * 2.0 + 50 * 10.0) / 1e6, 1e-12);
	assert_int_equal(r.attempts, 1);
	cuco_llm_reply_free(&r);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(log, "\"path\": \"/v1/chat/completions\""));
	assert_non_null(strstr(log, "\"Authorization\": \"Bearer " PLANTED_KEY "\""));
	assert_non_null(strstr(log, "\"messages\": [{\"role\": \"system\", \"content\": \"you are terse\"}, "
		"{\"role\": \"user\", \"content\": \"write a kernel\"}]"));
	assert_non_null(strstr(log, "\"temperature\": 0.5"));
	assert_non_null(strstr(log, "\"max_tokens\": 1000"));
	assert_null(strstr(log, "\"stream\""));
	free(log);
	/* OpenAI's reasoning models: max_completion_tokens, and no temperature. */
	serve("{\"replies\": [{\"text\": \"ok\"}]}", CUCO_PROVIDER_OPENAI);
	model.completion_tokens = true;
	model.no_temperature = true;
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	cuco_llm_reply_free(&r);
	log = llm_server_requests(&srv, &n);
	assert_non_null(strstr(log, "\"max_completion_tokens\": 1000"));
	assert_null(strstr(log, "\"max_tokens\""));
	assert_null(strstr(log, "\"temperature\""));
	free(log);
}

static void test_openai_stream(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"<<<<<<< SEARCH\\na\\n=======\\nb\\n>>>>>>> REPLACE\\n\", "
		"\"chunk\": 3, \"tokens_in\": 7, \"tokens_out\": 9, \"finish\": \"length\"}]}",
		CUCO_PROVIDER_OPENAI);
	seen s = { 0 };
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(true, &s, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n");
	assert_string_equal(s.text.data, r.text);
	assert_int_equal(s.deltas, 15);  /* 43 characters, 3 at a time */
	assert_string_equal(r.finish, "length");
	assert_int_equal(r.tokens_in, 7);
	assert_int_equal(r.tokens_out, 9);
	cuco_llm_reply_free(&r);
	cuco_buf_free(&s.text);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_non_null(strstr(log, "\"stream\": true, \"stream_options\": {\"include_usage\": true}"));
	free(log);
}

static void test_anthropic_whole(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"hello\", \"tokens_in\": 30, \"tokens_out\": 4}]}",
		CUCO_PROVIDER_ANTHROPIC);
	setenv("CUCO_TEST_KEY", PLANTED_KEY, 1);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "hello");
	assert_string_equal(r.finish, "end_turn");
	assert_int_equal(r.tokens_in, 30);
	assert_int_equal(r.tokens_out, 4);
	cuco_llm_reply_free(&r);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_non_null(strstr(log, "\"path\": \"/v1/messages\""));
	assert_non_null(strstr(log, "\"x-api-key\": \"" PLANTED_KEY "\""));
	assert_non_null(strstr(log, "\"anthropic-version\": \"2023-06-01\""));
	assert_non_null(strstr(log, "\"system\": \"you are terse\""));
	assert_null(strstr(log, "\"role\": \"system\""));
	free(log);
}

static void test_anthropic_stream(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"streamed reply text\", \"chunk\": 4, \"tokens_in\": 11, "
		"\"tokens_out\": 5}]}", CUCO_PROVIDER_ANTHROPIC);
	seen s = { 0 };
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(true, &s, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "streamed reply text");
	assert_int_equal(s.deltas, 5);
	assert_int_equal(r.tokens_in, 11);   /* from message_start */
	assert_int_equal(r.tokens_out, 5);   /* from message_delta */
	assert_string_equal(r.finish, "end_turn");
	cuco_llm_reply_free(&r);
	cuco_buf_free(&s.text);
}

static void test_retries_server_errors(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 500}, {\"status\": 503}, {\"text\": \"ok\"}]}",
		CUCO_PROVIDER_OPENAI);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "ok");
	assert_int_equal(r.attempts, 3);
	cuco_llm_reply_free(&r);
	int n;
	free(llm_server_requests(&srv, &n));
	assert_int_equal(n, 3);
}

/* Seconds between the first and the last request the server logged. */
static double logged_span(void)
{
	int n;
	char *log = llm_server_requests(&srv, &n);
	const char *first = strstr(log, "\"time\": "), *last = first;
	for (const char *p = first; p; p = strstr(p + 1, "\"time\": "))
		last = p;
	double span = atof(last + 8) - atof(first + 8);
	free(log);
	return span;
}

static void test_retry_after_honoured(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 429, \"retry_after\": \"1\"}, {\"text\": \"ok\"}]}",
		CUCO_PROVIDER_ANTHROPIC);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	assert_int_equal(r.attempts, 2);
	cuco_llm_reply_free(&r);
	/* Backoff alone would wait about 10 ms; the server asked for 1 s. */
	double span = logged_span();
	if (span < 0.95 || span > 1.8)
		fail_msg("second request %.3f s after the first, expected about 1 s", span);
}

static void test_gives_up(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 502}, {\"status\": 502}, {\"status\": 502}, "
		"{\"status\": 502, \"message\": \"upstream down\"}, {\"text\": \"too late\"}]}",
		CUCO_PROVIDER_OPENAI);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_EAGAIN);  /* may pass: ask later */
	assert_null(r.text);
	assert_int_equal(r.attempts, 4);  /* the first and 3 retries */
	assert_non_null(strstr(err.msg, "HTTP 502: upstream down"));
	assert_non_null(strstr(err.msg, "gave up after 4 attempts"));
	assert_int_equal(requests_logged(), 4);
}

static void test_client_error_not_retried(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 400, \"message\": \"unknown model scripted-1\"}, "
		"{\"text\": \"never\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_EENV);
	assert_int_equal(r.attempts, 1);
	char want[256];
	snprintf(want, sizeof want, "llm test: %s/chat/completions: HTTP 400: unknown model scripted-1",
		srv.url);
	assert_string_equal(err.msg, want);
}

static void test_cut_off_streams(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		serve("{\"replies\": [{\"text\": \"first try, cut off half way\", \"chunk\": 2, "
			"\"fault\": \"truncate\"}, {\"text\": \"second\", \"tokens_out\": 2}]}",
			p ? CUCO_PROVIDER_ANTHROPIC : CUCO_PROVIDER_OPENAI);
		seen s = { 0 };
		cuco_llm_reply r;
		cuco_err err = { 0 };
		assert_int_equal(call(true, &s, &r, &err, NULL), CUCO_OK);
		assert_int_equal(r.attempts, 2);
		assert_string_equal(r.text, "second");
		/* The screen was told to start again and holds only the retry. */
		assert_int_equal(s.restarts, 1);
		assert_string_equal(s.text.data, "second");
		cuco_llm_reply_free(&r);
		cuco_buf_free(&s.text);
	}
	/* A body shorter than its Content-Length, not streamed. */
	serve("{\"replies\": [{\"text\": \"x\", \"fault\": \"truncate\"}, {\"text\": \"whole\"}]}",
		CUCO_PROVIDER_OPENAI);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	assert_int_equal(r.attempts, 2);
	assert_string_equal(r.text, "whole");
	cuco_llm_reply_free(&r);
}

static void test_invalid_json_and_closed_connection(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"fault\": \"invalid_json\"}, {\"fault\": \"close\"}, "
		"{\"fault\": \"invalid_json\", \"text\": \"abcdef\", \"chunk\": 2}, {\"text\": \"fine\"}]}",
		CUCO_PROVIDER_OPENAI);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	cfg.max_retries = 1;
	/* Not JSON, then a closed connection: two attempts, both spent. */
	cuco_llm *c;
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_msg msg = { "user", "go" };
	cuco_llm_request req = { .model = &model, .nmsgs = 1, .msgs = &msg, .temperature = NAN };
	assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_EAGAIN);
	assert_int_equal(r.attempts, 2);
	assert_non_null(strstr(err.msg, "Server returned nothing"));
	/* A stream with an event that is not JSON, then a good reply. */
	req.stream = true;
	assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_OK);
	assert_int_equal(r.attempts, 2);
	assert_string_equal(r.text, "fine");
	cuco_llm_reply_free(&r);
	cuco_llm_free(c);
}

static void test_timeouts(void **state)
{
	(void)state;
	/* Slow but steady: 0.1 s between events is within the 1 s idle limit. */
	serve("{\"replies\": [{\"text\": \"slow but fine\", \"chunk\": 2, \"delay\": 0.1}, "
		"{\"text\": \"stalls\", \"chunk\": 3, \"delay\": 2.5}, {\"text\": \"after stall\"}]}",
		CUCO_PROVIDER_ANTHROPIC);
	seen s = { 0 };
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(true, &s, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "slow but fine");
	assert_int_equal(r.attempts, 1);
	cuco_llm_reply_free(&r);
	/* A stall longer than the idle limit is abandoned and retried. */
	double t0 = cuco_mono();
	assert_int_equal(call(true, &s, &r, &err, NULL), CUCO_OK);
	double took = cuco_mono() - t0;
	assert_int_equal(r.attempts, 2);
	assert_string_equal(r.text, "after stall");
	/* The limit is checked about once a second, hence the slack. */
	if (took > 2.4)
		fail_msg("the stalled attempt took %.2f s; the idle limit is 1 s", took);
	cuco_llm_reply_free(&r);
	cuco_buf_free(&s.text);
	/* A stream that keeps coming is not cut by the total limit: 2 s of
	 * events 0.2 s apart against a limit of 0.5 s. */
	serve("{\"replies\": [{\"text\": \"0123456789\", \"chunk\": 1, \"delay\": 0.2}, "
		"{\"text\": \"late\", \"wait\": 2}]}", CUCO_PROVIDER_OPENAI);
	cfg.total_timeout_s = 0.5;
	cfg.max_retries = 0;
	assert_int_equal(call(true, NULL, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "0123456789");
	assert_int_equal(r.attempts, 1);
	cuco_llm_reply_free(&r);
	/* The total limit bounds a whole reply, silent until it is done. */
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_EAGAIN);
	assert_non_null(strstr(err.msg, "Timeout"));
}


/* A call with a prompt of about `bytes` bytes to the model as it is set. */
static int call_sized(size_t bytes, bool stream, cuco_llm_reply *r, cuco_err *err)
{
	cuco_llm *c;
	assert_int_equal(cuco_llm_new(&cfg, &c, err), CUCO_OK);
	char *text = cuco_xmalloc(bytes + 1);
	for (size_t i = 0; i < bytes; i++)
		text[i] = "abcdefgh ijk\n"[i % 13];
	text[bytes] = '\0';
	cuco_llm_msg msg = { "user", text };
	cuco_llm_request req = { .model = &model, .nmsgs = 1, .msgs = &msg, .temperature = NAN,
		.stream = stream };
	int rc = cuco_llm_complete(c, &req, r, err);
	cuco_llm_free(c);
	free(text);
	return rc;
}

/* A slow server is slow, not gone (issue 26: llama-server sends nothing
 * while it reads an 8 000-token prompt on a CPU, and every call was
 * abandoned at the idle limit). Before its first event a stream may wait
 * the idle limit plus twice the prompt's reading time: 2.5 s of silence
 * against a limit of 1 s passes for a 600-byte prompt to a server of
 * one's own (25 tokens a second until measured: 18 s), and is abandoned
 * for a hosted one (2 000 tokens a second). llama.cpp is asked for its
 * progress events. */
static void test_slow_first_event(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"read it all\", \"wait\": 2.5}, "
		"{\"text\": \"late\", \"wait\": 2.5}, {\"text\": \"again\"}]}", CUCO_PROVIDER_OPENAI);
	model.server = CUCO_SERVER_LLAMACPP;
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call_sized(600, true, &r, &err), CUCO_OK);
	assert_string_equal(r.text, "read it all");
	assert_int_equal(r.attempts, 1);
	cuco_llm_reply_free(&r);
	model.server = CUCO_SERVER_HOSTED;
	assert_int_equal(call_sized(600, true, &r, &err), CUCO_OK);
	assert_int_equal(r.attempts, 2);
	cuco_llm_reply_free(&r);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 3);
	const char *second = strchr(log, '\n') + 1;
	assert_true(strstr(log, "\"return_progress\": true") < second);
	assert_null(strstr(second, "return_progress"));
	free(log);
}

/* A call stopped before it was done still counts the prompt tokens the
 * server said it had read (issue 26: 14 abandoned calls counted none);
 * llama.cpp's timings measure the prompt speed the next wait is scaled by. */
static void test_progress_counts(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"never seen\", \"progress\": [[1536, 6000], [3072, 6000]], "
		"\"stall\": 3}]}", CUCO_PROVIDER_OPENAI);
	model.server = CUCO_SERVER_LLAMACPP;
	cfg.max_retries = 0;
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call_sized(100, true, &r, &err), CUCO_EAGAIN);
	assert_null(r.text);
	/* The first event came, then nothing for over the idle limit. */
	assert_non_null(strstr(err.msg, "stream without progress for over 1 s"));
	assert_int_equal(r.tokens_in, 1536);
	assert_int_equal(r.tokens_out, 0);
	assert_float_equal(r.cost_usd, 1536 * 2.0 / 1e6, 1e-12);
}

/* A reply that loops is stopped while it streams, refused at once and
 * counted (issue 26: a two-line loop ran to 4 096 tokens, 604 s). */
static void test_loop_stopped(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"\\tMPI_Barrier(MPI_COMM_WORLD);\\n\\tl->open = 0;\\n\", "
		"\"repeat\": 2000, \"tokens_in\": 40}, {\"text\": \"never asked for\"}]}",
		CUCO_PROVIDER_OPENAI);
	seen s = { 0 };
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(true, &s, &r, &err, NULL), CUCO_EDATA);
	assert_true(r.looped);
	assert_int_equal(r.attempts, 1);
	assert_null(r.text);
	if (!strstr(err.msg, "reply loops: its last") || !strstr(err.msg, "the same 44 bytes over "
			"and over; stopped while it streamed"))
		fail_msg("%s", err.msg);
	/* Stopped within a few hundred bytes of the loop's 2 KiB. */
	assert_true(s.text.len < 3000);
	assert_int_equal(requests_logged(), 1);
	cuco_buf_free(&s.text);
}

/* A JSON schema goes as OpenAI's response_format; a server that refuses
 * it is asked once more without, and the reply says so. */
static void test_schema(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"{}\"}, {\"status\": 400, \"message\": \"response_format of "
		"type json_schema is not supported\"}, {\"text\": \"free text\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_msg msg = { "user", "edit" };
	cuco_llm_request req = { .model = &model, .nmsgs = 1, .msgs = &msg, .temperature = NAN,
		.schema = "{\"type\": \"object\", \"required\": [\"directive\"]}" };
	cuco_llm_reply r;
	for (int round = 0; round < 2; round++) {
		assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_OK);
		assert_int_equal(r.schema_refused, round == 1);
		cuco_llm_reply_free(&r);
	}
	cuco_llm_free(c);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 3);
	char *last = strrchr(log, '\n');
	*last = '\0';
	last = strrchr(log, '\n') + 1;
	assert_non_null(strstr(log, "\"response_format\": {\"type\": \"json_schema\", \"json_schema\": "
		"{\"name\": \"cuco_reply\", \"strict\": true, \"schema\": {\"type\": \"object\", \"required\": "
		"[\"directive\"]}}}"));
	assert_null(strstr(last, "response_format"));
	free(log);
}

/* Text cut inside a UTF-8 character (a hint cut at a byte count, a reply
 * cut off mid-character) goes out as valid UTF-8, U+FFFD in its place:
 * llama.cpp's server answered such a request with HTTP 400, which ended a
 * run (a Qwen run of this stop). */
static void test_ill_formed_utf8(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"ok\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_msg msg[2] = { { "user", "cut \xE2\x80 here, lone \x80, ok \xE2\x80\xA6 end" },
		{ "assistant", "overlong \xC0\xAF and surrogate \xED\xA0\x80." } };
	cuco_llm_request req = { .model = &model, .nmsgs = 2, .msgs = msg, .temperature = NAN,
		.system = "sys \xF0\x9F" };
	cuco_llm_reply r;
	assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_OK);
	cuco_llm_reply_free(&r);
	cuco_llm_free(c);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 1);
	assert_null(strstr(log, "\"body\": null"));
	assert_non_null(strstr(log, "cut \\ufffd here, lone \\ufffd, ok \\u2026 end"));
	assert_non_null(strstr(log, "overlong \\ufffd\\ufffd and surrogate \\ufffd\\ufffd\\ufffd."));
	assert_non_null(strstr(log, "sys \\ufffd"));
	free(log);
}

typedef struct canceller {
	atomic_bool *flag;
	double after;
} canceller;

static void *cancel_later(void *arg)
{
	canceller *c = arg;
	struct timespec ts = { 0, (long)(c->after * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(c->flag, true);
	return NULL;
}

static void test_cancel(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"a long slow reply\", \"chunk\": 1, \"delay\": 0.2}, "
		"{\"status\": 429, \"retry_after\": \"30\"}]}", CUCO_PROVIDER_OPENAI);
	cfg.backoff_max_s = 60;
	for (int round = 0; round < 2; round++) {
		/* Round 0 cancels a stream in flight; round 1 a wait for Retry-After. */
		atomic_bool flag = false;
		canceller cc = { &flag, 0.3 };
		pthread_t t;
		pthread_create(&t, NULL, cancel_later, &cc);
		double t0 = cuco_mono();
		cuco_llm_reply r;
		cuco_err err = { 0 };
		assert_int_equal(call(true, NULL, &r, &err, &flag), CUCO_EENV);
		double took = cuco_mono() - t0;
		pthread_join(t, NULL);
		assert_true(r.cancelled);
		assert_non_null(strstr(err.msg, "cancelled"));
		if (took > 1.5)
			fail_msg("cancel took %.2f s to take effect", took);
	}
}

static void test_planted_key_never_shown(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 500, \"message\": \"key " PLANTED_KEY " overloaded\"}, "
		"{\"status\": 401, \"message\": \"Incorrect API key provided: " PLANTED_KEY "\"}]}",
		CUCO_PROVIDER_OPENAI);
	setenv("CUCO_TEST_KEY", PLANTED_KEY, 1);
	char logpath[128];
	snprintf(logpath, sizeof logpath, "%s/cuco.log", srv.dir);
	cuco_err err = { 0 };
	assert_int_equal(cuco_log_open(logpath, &err), CUCO_OK);
	cuco_log_level(CUCO_LOG_DEBUG);
	cuco_log_quiet(true);
	cuco_llm_reply r;
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_EENV);
	cuco_log_close();
	assert_int_equal(r.attempts, 2);
	assert_null(strstr(err.msg, PLANTED_KEY));
	assert_non_null(strstr(err.msg, "HTTP 401: Incorrect API key provided: [key]"));
	char *log;
	assert_int_equal(cuco_read_file(logpath, 1 << 20, &log, NULL, &err), CUCO_OK);
	assert_non_null(strstr(log, "retrying"));  /* the log did record the retry */
	assert_null(strstr(log, PLANTED_KEY));
	free(log);
	/* The server did receive it: the key reaches the request, nothing else. */
	int n;
	log = llm_server_requests(&srv, &n);
	assert_non_null(strstr(log, PLANTED_KEY));
	free(log);
}

typedef struct kept {
	cuco_edit_result *r;
	cuco_candidate c;
} kept;

static int keep_txn(cuco_txn *txn, void *arg)
{
	kept *k = arg;
	int rc = cuco_source_keep(txn, k->r->prompt, k->r->transcript, &k->c);
	return rc == CUCO_OK ? cuco_cand_put(txn, &k->c) : rc;
}

/* An edit the server refuses with a message echoing the key, kept in a
 * store as a failed attempt is: the key is in no byte of the store. */
static void test_planted_key_not_in_store(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 403, \"message\": \"key " PLANTED_KEY " revoked\"}]}",
		CUCO_PROVIDER_OPENAI);
	setenv("CUCO_TEST_KEY", PLANTED_KEY, 1);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = { .llm = c, .model = &model, .system = "s", .user = "u", .parent = "int x;\n",
		.parent_len = 7, .temperature = NAN, .attempts = 1 };
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EENV);
	assert_null(r.source);
	char run[160];
	snprintf(run, sizeof run, "%s/run", srv.dir);
	cuco_store *st;
	assert_int_equal(cuco_store_open(run, CUCO_STORE_CREATE, &st, &err), CUCO_OK);
	kept k = { .r = &r };
	k.c.score = k.c.speedup = k.c.timing.peak_fraction = NAN;
	cuco_strlcpy(k.c.model, model.name, sizeof k.c.model);
	assert_int_equal(cuco_store_write(st, keep_txn, &k, &err), CUCO_OK);
	cuco_store_close(st);
	char path[200], *bytes;
	size_t len;
	snprintf(path, sizeof path, "%s/data.mdb", run);
	assert_int_equal(cuco_read_file(path, 1u << 30, &bytes, &len, &err), CUCO_OK);
	/* The store does hold the server's message, with the key cut out. */
	assert_non_null(memmem(bytes, len, "HTTP 403: key [key] revoked", 27));
	assert_null(memmem(bytes, len, PLANTED_KEY, strlen(PLANTED_KEY)));
	free(bytes);
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
}

/* A spent budget refuses further calls before they reach the server. */
static void test_budgets(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"a\", \"tokens_in\": 1000, \"tokens_out\": 100}, "
		"{\"text\": \"b\", \"tokens_in\": 1000, \"tokens_out\": 100}, "
		"{\"text\": \"c\", \"tokens_in\": 1000, \"tokens_out\": 100}]}", CUCO_PROVIDER_OPENAI);
	/* Each call costs (1000 * 2 + 100 * 10) / 1e6 = $0.003. */
	cfg.budget_usd = 0.005;
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_msg msg = { "user", "go" };
	cuco_llm_request req = { .model = &model, .nmsgs = 1, .msgs = &msg, .temperature = NAN };
	cuco_llm_reply r;
	char why[128];
	for (int i = 0; i < 2; i++) {
		assert_false(cuco_llm_spent(c, why, sizeof why));
		assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_OK);
		cuco_llm_reply_free(&r);
	}
	assert_true(cuco_llm_spent(c, why, sizeof why));
	assert_string_equal(why, "budget spent: $0.0060 of $0.0050");
	assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_EENV);
	assert_int_equal(r.attempts, 0);
	assert_string_equal(err.msg, "llm test: budget spent: $0.0060 of $0.0050");
	cuco_llm_free(c);
	int n;
	free(llm_server_requests(&srv, &n));
	assert_int_equal(n, 2);
	/* Tokens: prompt and completion together. */
	serve("{\"replies\": [{\"text\": \"a\", \"tokens_in\": 700, \"tokens_out\": 300}]}",
		CUCO_PROVIDER_ANTHROPIC);
	cfg.budget_usd = 0;
	cfg.budget_tokens = 1000;
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	assert_int_equal(cuco_llm_complete(c, &req, &r, &err), CUCO_OK);
	cuco_llm_reply_free(&r);
	assert_true(cuco_llm_spent(c, why, sizeof why));
	assert_string_equal(why, "budget spent: 1000 of 1000 tokens");
	cuco_llm_free(c);
}

typedef struct worker {
	cuco_llm *c;
	int rc;
	cuco_llm_reply r;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	cuco_llm_msg msg = { "user", "go" };
	cuco_llm_request req = { .model = &model, .nmsgs = 1, .msgs = &msg, .temperature = NAN,
		.stream = true };
	cuco_err err;
	w->rc = cuco_llm_complete(w->c, &req, &w->r, &err);
	return NULL;
}

static void test_parallel_calls_and_totals(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"r\", \"delay\": 0.1, \"tokens_in\": 10, \"tokens_out\": 1}, "
		"{\"text\": \"r\", \"delay\": 0.1, \"tokens_in\": 10, \"tokens_out\": 1}, "
		"{\"text\": \"r\", \"delay\": 0.1, \"tokens_in\": 10, \"tokens_out\": 1}, "
		"{\"text\": \"r\", \"delay\": 0.1, \"tokens_in\": 10, \"tokens_out\": 1}]}",
		CUCO_PROVIDER_ANTHROPIC);
	cuco_llm *c;
	cuco_err err;
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	worker w[4];
	pthread_t t[4];
	double t0 = cuco_mono();
	for (int i = 0; i < 4; i++) {
		w[i] = (worker){ .c = c };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	double took = cuco_mono() - t0;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(w[i].rc, CUCO_OK);
		assert_string_equal(w[i].r.text, "r");
		cuco_llm_reply_free(&w[i].r);
	}
	/* Each reply waits 0.1 s between each of its 7 events, 0.6 s in all;
	 * one after the other the four would take 2.4 s. */
	if (took > 1.8)
		fail_msg("4 calls took %.2f s: not in parallel", took);
	int64_t tin, tout;
	double cost;
	cuco_llm_totals(c, &tin, &tout, &cost);
	assert_int_equal(tin, 40);
	assert_int_equal(tout, 4);
	assert_float_equal(cost, (40 * 2.0 + 4 * 10.0) / 1e6, 1e-12);
	cuco_llm_free(c);
}

/* An edit of a one-line parent whose directive's backend is msg. */
static const char edit_parent[] = "// EVOLVE-BLOCK-START\nint x = 1;\n// EVOLVE-BLOCK-END\n";
static const cuco_directive edit_base = { .backend = "msg" };

static cuco_edit edit_of(cuco_llm *c, int attempts)
{
	return (cuco_edit){
		.llm = c, .model = &model, .system = "sys", .user = "improve it", .parent = edit_parent,
		.parent_len = strlen(edit_parent), .base = &edit_base, .temperature = NAN,
		.attempts = attempts,
	};
}

/* A refused reply is answered in the same chat; the second one applies.
 * (The directive's own refusals are test_reply's.) */
static void test_edit_retried_in_the_chat(void **state)
{
	(void)state;
	serve("{\"replies\": ["
		"{\"text\": \"<<<<<<< SEARCH\\nint y = 1;\\n=======\\nint x = 2;\\n>>>>>>> REPLACE\\n\", "
		"\"tokens_in\": 100, \"tokens_out\": 10},"
		"{\"text\": \"DIRECTIVE:\\nbackend: rma\\n\\n<NAME>two</NAME>\\n<DESCRIPTION>x is two"
		"</DESCRIPTION>\\n<<<<<<< SEARCH\\n  int x = 1;\\n=======\\n  int x = 2;\\n>>>>>>> REPLACE"
		"\\n\", \"tokens_in\": 150, \"tokens_out\": 20}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 3);
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_string_equal(r.source, "// EVOLVE-BLOCK-START\nint x = 2;\n// EVOLVE-BLOCK-END\n");
	assert_int_equal(r.replies, 2);
	assert_string_equal(r.directive.backend, "rma");
	assert_string_equal(r.name, "two");
	assert_string_equal(r.note, "x is two");
	assert_int_equal(r.loosest, CUCO_MATCH_INDENT);
	assert_int_equal(r.tokens_in, 250);
	assert_int_equal(r.tokens_out, 30);
	assert_float_equal(r.cost_usd, (250 * 2.0 + 30 * 10.0) / 1e6, 1e-12);
	assert_non_null(strstr(r.prompt, "=== system ===\nsys\n=== user ===\nimprove it\n"));
	assert_non_null(strstr(r.transcript, "=== refused: hunk 1 (`int y = 1;`): SEARCH matches nothing in the parent; closest is line 2, where the parent has `int x = 1;` and the SEARCH `int y = 1;` ==="));
	assert_non_null(strstr(r.transcript, "=== applied 1 hunk: indent ==="));
	cuco_edit_result_free(&r);
	/* The second request carried the first reply and the refusal. */
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 2);
	const char *second = strchr(log, '\n') + 1;
	assert_non_null(strstr(second, "{\"role\": \"assistant\", \"content\": \"<<<<<<< SEARCH"));
	assert_non_null(strstr(second, "{\"role\": \"user\", \"content\": \"Your reply was refused: "
		"hunk 1 (`int y = 1;`): SEARCH matches nothing"));
	free(log);
	/* Every reply refused: the last refusal is the error. */
	serve("{\"replies\": [{\"text\": \"no code\"}, {\"text\": \"DIRECTIVE:\\nbackend: rma\\n"
		"```\\nint x;\\n```\\n\", \"finish\": \"length\"}]}", CUCO_PROVIDER_ANTHROPIC);
	e.attempts = 2;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_null(r.source);
	assert_int_equal(r.replies, 2);
	assert_non_null(strstr(err.msg, "reply cut off by the output limit (finish reason length)"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
}

/* Replies past the cap (4 MiB by default) are refused while they arrive,
 * at once and without a retry: a flood of valid events, a flood with no
 * newline at all, and a whole body. The tokens the server reports count. */
static void test_reply_cap(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"count\": 5000000, \"chunk\": 65536}, "
		"{\"fault\": \"flood\", \"bytes\": 9000000}, "
		"{\"text\": \"y\", \"repeat\": 5000000, \"tokens_in\": 7, \"tokens_out\": 9}, "
		"{\"text\": \"never asked for\"}]}", CUCO_PROVIDER_OPENAI);
	const char *want[] = { "reply larger than 4194304 bytes (max_reply)",
		"stream line larger than 4194304 bytes (max_reply)", "reply larger than 4194304 bytes" };
	for (int i = 0; i < 3; i++) {
		cuco_llm_reply r;
		cuco_err err = { 0 };
		int rc = call(i < 2, NULL, &r, &err, NULL);
		if (rc != CUCO_EDATA)
			fail_msg("call %d: %d %s, %d attempts", i, rc, err.msg, r.attempts);
		assert_null(r.text);
		assert_int_equal(r.attempts, 1);
		if (!strstr(err.msg, want[i]))
			fail_msg("call %d: %s", i, err.msg);
		if (i == 2)
			assert_int_equal(r.tokens_in + r.tokens_out, 16);
	}
	assert_int_equal(requests_logged(), 3);
}

/* After refusals, a request carries the prompt, the last refused reply
 * and its reason (earlier reasons as one line each), never every refused
 * reply whole; a reply past the cap is refused and answered too. */
static void test_edit_sends_only_the_last_refusal(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"first bad reply\"}, "
		"{\"count\": 5000000, \"chunk\": 65536}, "
		"{\"text\": \"third bad reply\"}, {\"text\": \"fourth bad reply\"}]}",
		CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 4);
	e.stream = true;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_int_equal(r.replies, 4);
	assert_non_null(strstr(r.transcript, "=== refused: llm test: "));
	assert_non_null(strstr(r.transcript, "reply larger than 4194304 bytes"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 4);
	char *req[4], *save = NULL;
	req[0] = strtok_r(log, "\n", &save);
	for (int i = 1; i < 4; i++)
		req[i] = strtok_r(NULL, "\n", &save);
	/* The third request: the flood is not repeated, and nothing stands in
	 * the model's own turn for it (issue 26: a small model copied such a
	 * placeholder back three times): the refusal follows the prompt. */
	assert_null(strstr(req[2], "first bad reply"));
	assert_null(strstr(req[2], "12345\\n12346"));
	assert_null(strstr(req[2], "\"assistant\""));
	assert_null(strstr(req[2], "not repeated here]"));
	assert_non_null(strstr(req[2], "{\"role\": \"user\", \"content\": \"improve it\\n\\n---\\nYour "
		"last reply (refused while it arrived) was refused: llm test: "));
	assert_non_null(strstr(req[2], "Earlier replies were refused too:"));
	/* The fourth: the third reply, not the first; every request stays small. */
	assert_non_null(strstr(req[3], "third bad reply"));
	assert_null(strstr(req[3], "first bad reply"));
	for (int i = 0; i < 4; i++)
		if (strlen(req[i]) > 16384)
			fail_msg("request %d is %zu bytes", i + 1, strlen(req[i]));
	free(log);
}

/* cuco_llm_check against what each kind of server says about itself. */
static int check(const char *script, cuco_llm_served *sv, cuco_err *err)
{
	serve(script, CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	assert_int_equal(cuco_llm_new(&cfg, &c, err), CUCO_OK);
	int rc = cuco_llm_check(c, &model, sv, err);
	cuco_llm_free(c);
	return rc;
}

static void test_check(void **state)
{
	(void)state;
	cuco_llm_served sv;
	cuco_err err = { 0 };
	/* A server that lists models but not this one. */
	assert_int_equal(check("{\"models\": {\"data\": [{\"id\": \"a\"}, {\"id\": \"b\"}]}}", &sv,
		&err), CUCO_EENV);
	char want[256];
	snprintf(want, sizeof want, "model test: %s/models: serves no model `scripted-1`; it serves: "
		"a, b", srv.url);
	assert_string_equal(err.msg, want);
	/* llama-server: any name, its slot's context in the listing. */
	assert_int_equal(check("{\"models\": {\"data\": [{\"id\": \"gemma.gguf\", \"owned_by\": "
		"\"llamacpp\", \"meta\": {\"n_ctx\": 8192, \"n_ctx_train\": 32768}}]}}", &sv, &err), CUCO_OK);
	assert_true(sv.any_name);
	assert_string_equal(sv.serves, "gemma.gguf");
	assert_int_equal(sv.context, 8192);
	assert_string_equal(sv.context_from, "/models");
	assert_int_equal(model.context, 8192);
	/* An older llama-server: the context in /props; and its slots, the
	 * requests it runs at once (issue 26: --llm-jobs 4 against one slot
	 * left 12 of 14 requests queued until abandoned). */
	assert_int_equal(check("{\"models\": {\"data\": [{\"id\": \"x\", \"owned_by\": \"llamacpp\"}]}, "
		"\"props\": {\"default_generation_settings\": {\"n_ctx\": 4096}, \"total_slots\": 1}}", &sv,
		&err), CUCO_OK);
	assert_int_equal(model.context, 4096);
	assert_string_equal(sv.context_from, "/props");
	assert_int_equal(sv.slots, 1);
	assert_int_equal(model.slots, 1);
	/* vLLM, and Ollama with and without num_ctx. */
	assert_int_equal(check("{\"models\": {\"data\": [{\"id\": \"scripted-1\", \"max_model_len\": "
		"32768}]}}", &sv, &err), CUCO_OK);
	assert_int_equal(model.context, 32768);
	assert_int_equal(check("{\"models\": {\"data\": [{\"id\": \"scripted-1\", \"owned_by\": "
		"\"library\"}]}, \"show\": {\"parameters\": \"stop <eos>\\nnum_ctx 16384\", "
		"\"model_info\": {\"qwen2.context_length\": 32768}}}", &sv, &err), CUCO_OK);
	assert_int_equal(model.context, 16384);
	assert_int_equal(check("{\"models\": {\"data\": [{\"id\": \"scripted-1\", \"owned_by\": "
		"\"library\"}]}, \"show\": {\"model_info\": {\"qwen2.context_length\": 32768}}}", &sv, &err),
		CUCO_OK);
	assert_int_equal(model.context, 4096);
	/* The config's context wins over the server's. */
	serve("{}", CUCO_PROVIDER_OPENAI);
	model.context = 1000;
	cuco_llm *c;
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	assert_int_equal(cuco_llm_check(c, &model, &sv, &err), CUCO_OK);
	cuco_llm_free(c);
	assert_int_equal(model.context, 1000);
	assert_string_equal(sv.context_from, "config");
	/* No listing at all (404): reachable is enough; nothing known. */
	assert_int_equal(check("{}", &sv, &err), CUCO_OK);
	assert_int_equal(model.context, 0);
	/* A key refused. */
	assert_int_equal(check("{\"models\": {\"status\": 401, \"message\": \"bad key\"}}", &sv, &err),
		CUCO_EENV);
	assert_non_null(strstr(err.msg, "HTTP 401: bad key (is CUCO_TEST_KEY set?)"));
	/* Nobody listening. */
	cuco_strlcpy(model.url, "http://127.0.0.1:1/v1", sizeof model.url);
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	assert_int_equal(cuco_llm_check(c, &model, &sv, &err), CUCO_EENV);
	cuco_llm_free(c);
	assert_non_null(strstr(err.msg, "model test: http://127.0.0.1:1/v1/models: cannot reach the "
		"server ("));
}

/* A request longer than the context is refused with the server's counts,
 * in each provider's words, and not retried. */
static void test_context_exceeded(void **state)
{
	(void)state;
	static const struct { const char *message; int64_t needed, size; } said[] = {
		{ "request (8197 tokens) exceeds the available context size (8192 tokens), try "
			"increasing it", 8197, 8192 },
		{ "This model's maximum context length is 4096 tokens. However, you requested 5000 "
			"tokens (4000 in the messages, 1000 in the completion).", 5000, 4096 },
		{ "prompt is too long: 210000 tokens > 200000 maximum", 210000, 200000 },
	};
	for (size_t i = 0; i < sizeof said / sizeof said[0]; i++) {
		char script[512];
		snprintf(script, sizeof script, "{\"replies\": [{\"status\": 400, \"message\": \"%s\"}, "
			"{\"text\": \"never\"}]}", said[i].message);
		serve(script, CUCO_PROVIDER_OPENAI);
		cuco_llm_reply r;
		cuco_err err = { 0 };
		assert_int_equal(call(true, NULL, &r, &err, NULL), CUCO_EDATA);
		assert_true(r.context_exceeded);
		assert_int_equal(r.context_needed, said[i].needed);
		assert_int_equal(r.context_size, said[i].size);
		assert_int_equal(r.attempts, 1);
	}
}

/* A server refusing the temperature parameter is asked once more without
 * it; a second refusal is final. */
static void test_temperature_refused(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 400, \"message\": \"Unsupported parameter: 'temperature' "
		"is not supported with this model.\"}, {\"text\": \"ok\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm_reply r;
	cuco_err err = { 0 };
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_OK);
	assert_string_equal(r.text, "ok");
	assert_int_equal(r.attempts, 2);
	cuco_llm_reply_free(&r);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 2);
	const char *second = strchr(log, '\n') + 1;
	assert_non_null(strstr(log, "\"temperature\": 0.5"));
	assert_null(strstr(second, "temperature"));
	free(log);
}

/* retry_time bounds a call whatever a Retry-After asks: a 429 asking for
 * a day ends the call at once. */
static void test_retry_time(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 429, \"retry_after\": \"100000\"}, {\"text\": \"late\"}]}",
		CUCO_PROVIDER_OPENAI);
	cfg.backoff_max_s = 1e6;
	cfg.retry_time_s = 2;
	cuco_llm_reply r;
	cuco_err err = { 0 };
	double t0 = cuco_mono();
	assert_int_equal(call(false, NULL, &r, &err, NULL), CUCO_EAGAIN);
	if (cuco_mono() - t0 > 1.5)
		fail_msg("gave up after %.2f s", cuco_mono() - t0);
	assert_non_null(strstr(err.msg, "retry_time would pass before the next"));
	assert_int_equal(requests_logged(), 1);
}

/* A prompt of known parts: a 12 000-byte document in the system message;
 * the parent, two top programs, three failures and the task in the user
 * message, each part 3 000 bytes of its own letter. */
typedef struct parts {
	cuco_buf system, user;
	cuco_prompt_map map;
} parts;

static void put_part(parts *p, bool user, cuco_cut_kind kind, const char *head, char letter,
	size_t n, bool mark)
{
	cuco_buf *b = user ? &p->user : &p->system;
	size_t start = b->len;
	cuco_buf_printf(b, "\n%s\n", head);
	for (size_t i = 0; i < n; i++)
		cuco_buf_append(b, i % 64 == 63 ? "\n" : &letter, 1);
	if (mark)
		cuco_prompt_mark(&p->map, kind, user, b, start);
}

static void parts_make(parts *p)
{
	memset(p, 0, sizeof *p);
	cuco_buf_puts(&p->system, "You optimize programs.\n");
	put_part(p, false, CUCO_CUT_DOCUMENT, "## notes.md", 'd', 12000, true);
	cuco_buf_puts(&p->system, "\n# The directive\nbackend: a | b\n");
	put_part(p, true, 0, "# Current program", 'P', 3000, false);
	put_part(p, true, CUCO_CUT_TOP, "# Top programs so far", 'T', 3000, true);
	put_part(p, true, CUCO_CUT_TOP, "# Next top program", 'U', 3000, true);
	put_part(p, true, CUCO_CUT_FAILURE, "# Recent failures\n## #7", 'F', 3000, true);
	put_part(p, true, CUCO_CUT_FAILURE, "## #6", 'G', 3000, true);
	put_part(p, true, CUCO_CUT_FAILURE, "## #5", 'H', 3000, true);
	put_part(p, true, 0, "# Your task", 'K', 300, false);
}


/* The system message and first user message of each logged request. */
static int first_messages(char ***system, char ***user)
{
	int n;
	char *log = llm_server_requests(&srv, &n);
	*system = cuco_xcalloc((size_t)n + 1, sizeof **system);
	*user = cuco_xcalloc((size_t)n + 1, sizeof **user);
	char *save = NULL;
	int i = 0;
	for (char *line = strtok_r(log, "\n", &save); line && i < n; line = strtok_r(NULL, "\n", &save)) {
		cJSON *j = cJSON_Parse(line);
		const cJSON *msgs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "body"), "messages"), *m;
		cJSON_ArrayForEach(m, msgs) {
			const char *role = cJSON_GetObjectItem(m, "role")->valuestring;
			const char *content = cJSON_GetObjectItem(m, "content")->valuestring;
			if (!strcmp(role, "system") && !(*system)[i])
				(*system)[i] = cuco_xstrdup(content);
			else if (!strcmp(role, "user") && !(*user)[i])
				(*user)[i] = cuco_xstrdup(content);
		}
		cJSON_Delete(j);
		i++;
	}
	free(log);
	return i;
}

static void free_messages(char **system, char **user, int n)
{
	for (int i = 0; i < n; i++) {
		free(system[i]);
		free(user[i]);
	}
	free(system);
	free(user);
}

/* Retries keep the prompt as first fitted (issue 26: a refit after a
 * refusal cut more of the system message, and the server's prompt cache
 * was thrown away: 729 s instead of ~30 s): the long refused reply is
 * not sent back when the context has no room for it, and nothing of the
 * prompt changes; the refusal follows it. */
static void test_edit_keeps_the_prefix(void **state)
{
	(void)state;
	char script[512];
	snprintf(script, sizeof script, "{\"replies\": [{\"text\": \"no code at all, \", \"repeat\": "
		"175}, {\"text\": \"DIRECTIVE:\\nbackend: rma\\n\\n<<<<<<< SEARCH\\nint x = 1;\\n=======\\n"
		"int x = 2;\\n>>>>>>> REPLACE\\n\"}]}");
	serve(script, CUCO_PROVIDER_OPENAI);
	model.context = 9000;
	model.max_tokens = 1000;
	parts p;
	parts_make(&p);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 2);
	e.system = p.system.data;
	e.user = p.user.data;
	e.map = &p.map;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_non_null(strstr(r.prompt, "=== fitted to a context of 9000 tokens: cut"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	char **system, **user;
	int n = first_messages(&system, &user);
	assert_int_equal(n, 2);
	assert_string_equal(system[1], system[0]);
	assert_int_equal(strncmp(user[1], user[0], strlen(user[0])), 0);
	assert_non_null(strstr(user[1] + strlen(user[0]), "Your last reply (too long to repeat here) "
		"was refused: reply holds no code"));
	free_messages(system, user, n);
	cuco_buf_free(&p.system);
	cuco_buf_free(&p.user);
}

/* A retry with no room beside the prompt as sent ends the chat, refused,
 * instead of ending the run (issue 26: Qwen's third reply of a chat at a
 * context of 4 096 tokens ended `cuco run` with exit 3: "the prompt needs
 * about 3008 tokens … leaves it 2944"). */
static void test_edit_no_room_ends_the_chat(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"no code here\"}, {\"text\": \"never asked for\"}]}",
		CUCO_PROVIDER_OPENAI);
	model.context = 1500;
	model.max_tokens = 200;
	char *user = cuco_xmalloc(3201);
	memset(user, 'u', 3200);
	user[3200] = '\0';
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 3);
	e.user = user;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_int_equal(r.replies, 1);
	assert_non_null(strstr(err.msg, "reply holds no code"));
	assert_non_null(strstr(r.transcript, "=== the chat ends: no room in the context for another "
		"reply beside the prompt ==="));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	free(user);
	assert_int_equal(requests_logged(), 1);
}

/* The max_tokens of each request the server logged, in order (at most 8). */
static int logged_max_tokens(int *out)
{
	int n, i = 0;
	char *log = llm_server_requests(&srv, &n), *save = NULL;
	for (char *line = strtok_r(log, "\n", &save); line && i < n && i < 8; line = strtok_r(NULL, "\n", &save)) {
		cJSON *j = cJSON_Parse(line);
		const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "body"), "max_tokens");
		out[i++] = cJSON_IsNumber(m) ? m->valueint : -1;
		cJSON_Delete(j);
	}
	free(log);
	return i;
}

/* Where the model's whole reply budget no longer fits beside the chat, a
 * retry answers in twice the chat's longest reply (at least 384 tokens)
 * instead of ending the chat (issue 26: Qwen at 4 096 tokens, 9 of 11
 * chats ended before their second reply while its replies were 100-350
 * tokens). The prompt (~2 750 tokens) fits beside the full reserve of
 * 1 125; with the refused reply and its refusal it no longer does, but
 * beside 384 tokens it does. */
static void test_edit_retry_budget(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"no code at all, \", \"repeat\": 16, \"tokens_out\": 98}, "
		"{\"text\": \"DIRECTIVE:\\nbackend: rma\\n\\n<<<<<<< SEARCH\\n  int x = 1;\\n=======\\n"
		"  int x = 2;\\n>>>>>>> REPLACE\\n\"}]}", CUCO_PROVIDER_OPENAI);
	model.context = 4000;
	model.max_tokens = 1000;
	char *user = cuco_xmalloc(7151);
	memset(user, 'u', 7150);
	user[7150] = '\0';
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 3);
	e.user = user;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_int_equal(r.replies, 2);
	assert_null(strstr(r.transcript, "no room in the context"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	free(user);
	int max[8];
	assert_int_equal(logged_max_tokens(max), 2);
	assert_int_equal(max[0], 1000);
	assert_int_equal(max[1], 384);
}

/* A reply the chat had already, byte for byte, is asked for again at a
 * higher temperature; the next repeat ends the chat (issue 26: 11 of 26
 * replies repeated one before, ~1 450 s of a server's time). A retry
 * after a refusal that was no repeat goes at 0.5 at least, since at its
 * first temperature a small model wrote the refused reply again. */
static void test_edit_repeat(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"same old\"}, {\"text\": \"same old\"}, {\"text\": \"same old\"}, "
		"{\"text\": \"never asked for\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 4);
	e.temperature = 0.2;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_int_equal(r.replies, 3);
	assert_non_null(strstr(err.msg, "the reply repeats an earlier one of this chat byte for byte"));
	assert_non_null(strstr(r.transcript, "=== the chat ends: the model repeats itself ==="));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 3);
	char *second = strchr(log, '\n') + 1, *third = strchr(second, '\n') + 1;
	assert_non_null(strstr(log, "\"temperature\": 0.2"));
	assert_true(strstr(second, "\"temperature\": 0.5") && strstr(second, "\"temperature\": 0.5") < third);
	assert_non_null(strstr(third, "\"temperature\": 0.9"));
	free(log);
}

/* What the edit hook heard: each reply used or refused, and why. */
typedef struct heard {
	int used, refused;
	char why[256];
} heard;

static void hear(void *hook, bool used, const char *why)
{
	heard *h = hook;
	h->used += used;
	h->refused += !used;
	cuco_strlcpy(h->why, why, sizeof h->why);
}

/* A refused directive is answered with the directive as cuco read it and
 * the values allowed; a directive alone, different from the parent's, is
 * a directive-only child where code is not required, and so is one whose
 * edits are refused. */
static void test_edit_directive_taught_and_alone(void **state)
{
	(void)state;
	char top[] = "/tmp/cuco-test-llm-toy-XXXXXX";
	cuco_workload *wl;
	assert_int_equal(toy_workload_make(top, &wl), 0);
	cuco_directive base;
	cuco_directive_default(wl, &base);
	serve("{\"replies\": [{\"text\": \"DIRECTIVE:\\nbackend: nvlink\\nsync: flag\\n\\n<<<<<<< SEARCH\\n"
		"int x = 1;\\n=======\\nint x = 2;\\n>>>>>>> REPLACE\\n\"}, {\"text\": \"DIRECTIVE:\\n"
		"backend: rma\\nsync: flag\\n\\n<NAME>puts</NAME>\\n\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 2);
	e.wl = wl;
	e.base = &base;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_string_equal(r.source, edit_parent);
	assert_string_equal(r.directive.backend, "rma");
	assert_string_equal(r.name, "puts");
	assert_non_null(strstr(r.transcript, "=== applied as a directive-only child: the parent's code ==="));
	cuco_edit_result_free(&r);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 2);
	const char *second = strchr(log, '\n') + 1;
	assert_non_null(strstr(second, "The directive as cuco read it, each line with the values "
		"allowed (copy the block and fix the value):\\nDIRECTIVE:\\nbackend: nvlink   # one of: msg, "
		"rma, shm\\nissuer: one   # one of: one, several\\n"));
	assert_non_null(strstr(second, "sync: flag   # one of: fence, flag, pscw\\n"));
	/* And the combinations it may not state, which only a schema holds. */
	assert_non_null(strstr(second, "Forbidden combinations:\\n- backend in {msg} with sync in "
		"{pscw}: PSCW is an RMA epoch\\n"));
	free(log);
	/* Where code is required, or the directive is the parent's, no child. */
	serve("{\"replies\": [{\"text\": \"DIRECTIVE:\\nbackend: rma\\n\"}, {\"text\": \"DIRECTIVE:\\n"
		"backend: msg\\n\"}]}", CUCO_PROVIDER_OPENAI);
	e.code_required = true;
	e.attempts = 1;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "reply holds no code, only a directive"));
	cuco_edit_result_free(&r);
	e.code_required = false;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "states the current program's own directive: nothing would "
		"change"));
	cuco_edit_result_free(&r);
	/* The reply form sent back unchanged is refused saying so; the forms
	 * a small model then writes, a new directive with no edit or with the
	 * form's own, are directive-only children. */
#define ECHO(backend) "{\"text\": \"{\\\"directive\\\": {\\\"backend\\\": \\\"" backend \
	"\\\"}, \\\"name\\\": \\\"n\\\", \\\"edits\\\": [{\\\"search\\\": \\\"" \
	CUCO_SEARCH_PLACEHOLDER "\\\", \\\"replace\\\": \\\"" CUCO_REPLACE_PLACEHOLDER "\\\"}]}\"}"
	serve("{\"replies\": [" ECHO("msg") ", {\"text\": \"{\\\"directive\\\": {\\\"backend\\\": "
		"\\\"shm\\\"}, \\\"name\\\": \\\"shm\\\", \\\"edits\\\": []}\"}, " ECHO("rma") "]}",
		CUCO_PROVIDER_OPENAI);
	e.attempts = 2;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_int_equal(r.replies, 2);
	assert_string_equal(r.source, edit_parent);
	assert_string_equal(r.directive.backend, "shm");
	assert_non_null(strstr(r.transcript, "=== refused: reply is the reply form sent back unchanged: "
		"its edit is the form's placeholder"));
	assert_non_null(strstr(r.transcript, "=== applied as a directive-only child: the parent's code ==="));
	cuco_edit_result_free(&r);
	log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(strchr(log, '\n') + 1, "either change a value of the directive and give "
		"no edit, or give edits whose SEARCH is lines copied from the program above"));
	free(log);
	/* The form sent back with a new directive: that directive, the parent's code. */
	e.attempts = 1;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_string_equal(r.directive.backend, "rma");
	assert_string_equal(r.source, edit_parent);
	assert_non_null(strstr(r.transcript, "=== the reply form's placeholder edit set aside ==="));
	cuco_edit_result_free(&r);
#undef ECHO
	/* Edits refused beside a new directive of the design space: a
	 * directive-only child still (issue 26: Qwen2.5-Coder 1.5B's refused
	 * replies often stated a clear new directive), the refusal of its edits
	 * going with it, to the transcript and the hook as a used reply's
	 * reason. With the parent's directive, or where code is required, the
	 * reply is refused as before. */
#define BAD_EDIT(backend) "{\"text\": \"DIRECTIVE:\\nbackend: " backend "\\n\\n<NAME>puts</NAME>\\n" \
	"<<<<<<< SEARCH\\nint y = 1;\\n=======\\nint y = 2;\\n>>>>>>> REPLACE\\n\"}"
	serve("{\"replies\": [" BAD_EDIT("rma") "]}", CUCO_PROVIDER_OPENAI);
	heard h = { 0 };
	e.judged = hear;
	e.hook = &h;
	if (cuco_llm_edit(&e, &r, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_string_equal(r.source, edit_parent);
	assert_string_equal(r.directive.backend, "rma");
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_non_null(strstr(r.edits_refused, "hunk 1 (`int y = 1;`): SEARCH matches nothing"));
	assert_non_null(strstr(r.transcript, "=== its edits refused: hunk 1 (`int y = 1;`): SEARCH "
		"matches nothing"));
	assert_non_null(strstr(r.transcript, "=== applied as a directive-only child of its new "
		"directive: the parent's code ==="));
	assert_string_equal(r.note, "directive only, its edits refused");
	assert_int_equal(h.used, 1);
	assert_int_equal(h.refused, 0);
	assert_string_equal(h.why, r.edits_refused);
	cuco_edit_result_free(&r);
	serve("{\"replies\": [" BAD_EDIT("msg") "]}", CUCO_PROVIDER_OPENAI);
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "SEARCH matches nothing"));
	assert_int_equal(h.refused, 1);
	cuco_edit_result_free(&r);
	serve("{\"replies\": [" BAD_EDIT("rma") "]}", CUCO_PROVIDER_OPENAI);
	e.code_required = true;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_EDATA);
	assert_null(r.source);
	cuco_edit_result_free(&r);
#undef BAD_EDIT
	cuco_llm_free(c);
	toy_workload_remove(top, wl);
}

/* Issue 26, Stop 32: a reply that changes the directive edits the lines
 * its lean view shows, the parent directive's branches. On the real seed
 * (its own directive msg, the lean view of it), an edit of the msg
 * branch under backend shm is set aside, the transcript saying why,
 * beside an edit of code every directive builds; alone, the reply is
 * its directive's directive-only child, its edits refused for that. */
static void test_edit_unbuilt_branch_set_aside(void **state)
{
	(void)state;
	char path[1024];
	const char *root = getenv("CUCO_SOURCE_ROOT") ? getenv("CUCO_SOURCE_ROOT") : ".";
	cuco_workload *wl;
	char *seed;
	size_t len;
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/workloads/cpu-gemm-allgather", root);
	if (cuco_workload_load(path, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	snprintf(path, sizeof path, "%s/workloads/cpu-gemm-allgather/seed.c", root);
	assert_int_equal(cuco_read_file(path, 1 << 20, &seed, &len, &err), CUCO_OK);
	cuco_directive base;
	cuco_directive_default(wl, &base);
	cuco_buf view = { 0 };
	cuco_prompt_lean_code(wl, &base, seed, len, &view);
	const char *isend = "<<<<<<< SEARCH\n\t\tMPI_Isend(mine, l->crows * K, MPI_FLOAT, q, chunk, "
		"MPI_COMM_WORLD,\n=======\n\t\tMPI_Issend(mine, l->crows * K, MPI_FLOAT, q, chunk, "
		"MPI_COMM_WORLD,\n>>>>>>> REPLACE\n";
	char text[2][1024];
	snprintf(text[0], sizeof text[0], "DIRECTIVE:\nbackend: shm\n\n<NAME>shm</NAME>\n%s"
		"<<<<<<< SEARCH\n\tl->epoch = io->step + 1;\n=======\n\tl->epoch = io->step + 2;\n"
		">>>>>>> REPLACE\n", isend);
	snprintf(text[1], sizeof text[1], "DIRECTIVE:\nbackend: shm\n\n<NAME>shm</NAME>\n%s", isend);
	cJSON *script = cJSON_CreateObject(), *replies = cJSON_AddArrayToObject(script, "replies");
	for (int i = 0; i < 2; i++) {
		cJSON *one = cJSON_CreateObject();
		cJSON_AddStringToObject(one, "text", text[i]);
		cJSON_AddItemToArray(replies, one);
	}
	char *json = cJSON_PrintUnformatted(script);
	serve(json, CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 1);
	e.wl = wl;
	e.base = &base;
	e.parent = seed;
	e.parent_len = len;
	e.view = view.data;
	e.view_len = view.len;
	cuco_edit_result r;
	if (cuco_llm_edit(&e, &r, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_string_equal(r.directive.backend, "shm");
	assert_non_null(strstr(r.source, "\t\tMPI_Isend(mine,"));
	assert_non_null(strstr(r.source, "\tl->epoch = io->step + 2;\n"));
	assert_non_null(strstr(r.transcript, "=== of them 1 in a branch directive "
		"`shm/one/after/fence/1 tile=256` does not build, set aside ==="));
	cuco_edit_result_free(&r);
	if (cuco_llm_edit(&e, &r, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_string_equal(r.source, seed);
	assert_non_null(strstr(r.edits_refused, "hunk 1 (`MPI_Isend(mine, l->crows * K, MPI_FLOAT, "
		"q, chunk, MPI_COMM_…`): in a branch directive `shm/one/after/fence/1 tile=256` does not "
		"build; the hunk changes nothing compiled"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	cJSON_free(json);
	cJSON_Delete(script);
	cuco_buf_free(&view);
	free(seed);
	cuco_workload_free(wl);
}

/* A function's new text, as a small model writes it in JSON, becomes the
 * child: the parent with that definition replaced. */
static void test_edit_function_text(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"text\": \"{\\\"edits\\\": [{\\\"function\\\": \\\"step\\\", "
		"\\\"text\\\": \\\"static int step(int x)\\\\n{\\\\n\\\\treturn x + 2;\\\\n}\\\"}]}\"}]}",
		CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	static const char parent[] = "// EVOLVE-BLOCK-START\nstatic int step(int x)\n{\n\treturn x + 1;\n"
		"}\n// EVOLVE-BLOCK-END\n";
	cuco_edit e = edit_of(c, 1);
	e.parent = parent;
	e.parent_len = strlen(parent);
	cuco_edit_result r;
	if (cuco_llm_edit(&e, &r, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_string_equal(r.source, "// EVOLVE-BLOCK-START\nstatic int step(int x)\n{\n\treturn x + 2;\n"
		"}\n// EVOLVE-BLOCK-END\n");
	assert_non_null(strstr(r.transcript, "=== applied 1 hunk: function ==="));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
}

/* An edit whose calls name a function it removed, or a new name made of a
 * function's that nothing defines, is refused before any compile, naming
 * the function (issue 26: 5 of Qwen's 9 failed compiles); an honest edit
 * that renames a function and its calls, or calls a library's function,
 * applies. */
static void test_edit_removed_function(void **state)
{
	(void)state;
	static const char parent[] = "// EVOLVE-BLOCK-START\nstatic int produce(int x)\n{\n"
		"\treturn x + 1;\n}\n\nint step(int x)\n{\n\treturn produce(x);\n}\n"
		"// EVOLVE-BLOCK-END\n";
	serve("{\"replies\": ["
		"{\"text\": \"<<<<<<< SEARCH\\nstatic int produce(int x)\\n{\\n\\treturn x + 1;\\n}\\n"
		"=======\\n>>>>>>> REPLACE\\n\"}, "
		"{\"text\": \"<<<<<<< SEARCH\\n\\treturn produce(x);\\n=======\\n"
		"\\treturn parallelize_produce(x);\\n>>>>>>> REPLACE\\n\"}, "
		"{\"text\": \"<<<<<<< SEARCH\\nstatic int produce(int x)\\n=======\\n"
		"static int make(int x)\\n>>>>>>> REPLACE\\n<<<<<<< SEARCH\\n\\treturn produce(x);\\n"
		"=======\\n\\treturn abs(make(x));\\n>>>>>>> REPLACE\\n\"}]}", CUCO_PROVIDER_OPENAI);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 3);
	e.parent = parent;
	e.parent_len = strlen(parent);
	cuco_edit_result r;
	if (cuco_llm_edit(&e, &r, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(r.replies, 3);
	assert_non_null(strstr(r.transcript, "=== refused: the edit removed produce(), which step still "
		"calls (line 5); keep its definition or change the call ==="));
	assert_non_null(strstr(r.transcript, "=== refused: the edit calls parallelize_produce() "
		"(line 9, in step), which is defined nowhere;"));
	assert_non_null(strstr(r.source, "static int make(int x)\n"));
	assert_non_null(strstr(r.source, "\treturn abs(make(x));\n"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
}

static void test_prompt_fit(void **state)
{
	(void)state;
	parts p;
	parts_make(&p);
	size_t whole = p.system.len + p.user.len;  /* about 30 500 bytes */
	cuco_fitted f;
	cuco_err err = { 0 };
	/* No context known, or room enough: nothing cut, the limit kept. */
	cuco_fit fit = { .context = 0, .max_tokens = 4096, .bytes_per_token = 2 };
	assert_int_equal(cuco_prompt_fit(p.system.data, p.user.data, &p.map, &fit, &f, &err), CUCO_OK);
	assert_int_equal(strlen(f.system) + strlen(f.user), whole);
	assert_string_equal(f.note, "");
	assert_int_equal(f.max_tokens, 4096);
	cuco_fitted_free(&f);
	/* Room for all but about 4 000 bytes: the two oldest failures go. At 2
	 * bytes a token a context of 20 000 leaves 20000 - 4096 - 625 tokens. */
	fit.context = (int64_t)(whole / 2) - 2000 + 4096 + (int64_t)(whole / 2) / 30;
	assert_int_equal(cuco_prompt_fit(p.system.data, p.user.data, &p.map, &fit, &f, &err), CUCO_OK);
	assert_non_null(strstr(f.user, "FFFF"));
	assert_null(strstr(f.user, "GGGG"));
	assert_null(strstr(f.user, "HHHH"));
	assert_non_null(strstr(f.user, "UUUU"));
	assert_non_null(strstr(f.note, "cut 2 failures"));
	assert_true(f.max_tokens <= 4096 && f.max_tokens > 0);
	cuco_fitted_free(&f);
	/* Tighter: every failure, both top programs, then the document halved;
	 * the parent, the schema and the task stay whole. */
	fit.context = 7000;
	fit.max_tokens = 1000;
	assert_int_equal(cuco_prompt_fit(p.system.data, p.user.data, &p.map, &fit, &f, &err), CUCO_OK);
	assert_null(strstr(f.user, "FFFF"));
	assert_null(strstr(f.user, "TTTT"));
	assert_null(strstr(f.user, "UUUU"));
	assert_non_null(strstr(f.system, "## notes.md\n"));
	assert_non_null(strstr(f.system, "more bytes not shown: the model's context is short]"));
	assert_non_null(strstr(f.system, "# The directive\nbackend: a | b\n"));
	char parent[3100];
	memset(parent, 'P', 63);
	parent[63] = '\0';
	assert_non_null(strstr(f.user, parent));
	assert_non_null(strstr(f.user, "# Your task\n"));
	size_t n = strlen(f.system) + strlen(f.user);
	if ((double)n / 2 > 7000 - 1000 - 7000 / 32)
		fail_msg("%zu bytes are about %zu tokens: over the room left", n, n / 2);
	assert_non_null(strstr(f.note, "fitted to a context of 7000 tokens: cut 3 failures, 2 top "
		"programs, 1 document halvings"));
	cuco_fitted_free(&f);
	/* Too short for the parent and the task: an error naming the sizes. */
	fit.context = 1500;
	assert_int_equal(cuco_prompt_fit(p.system.data, p.user.data, &p.map, &fit, &f, &err),
		CUCO_EDATA);
	assert_non_null(strstr(err.msg, "a context of 1500 tokens leaves it"));
	cuco_buf_free(&p.system);
	cuco_buf_free(&p.user);
}

/* A server that finds the prompt too long says so with its counts; the
 * prompt is cut to what it says and sent again, and the edit goes on. */
static void test_context_exceeded_answered_by_cutting(void **state)
{
	(void)state;
	serve("{\"replies\": [{\"status\": 400, \"message\": \"request (12000 tokens) exceeds the "
		"available context size (8192 tokens), try increasing it\"}, {\"text\": \"DIRECTIVE:\\n"
		"backend: rma\\n\\n<<<<<<< SEARCH\\nint x = 1;\\n=======\\nint x = 2;\\n>>>>>>> REPLACE\\n\"}]}",
		CUCO_PROVIDER_OPENAI);
	parts p;
	parts_make(&p);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_edit e = edit_of(c, 1);
	e.system = p.system.data;
	e.user = p.user.data;
	e.map = &p.map;
	cuco_edit_result r;
	assert_int_equal(cuco_llm_edit(&e, &r, &err), CUCO_OK);
	assert_non_null(strstr(r.prompt, "=== fitted to a context of 8192 tokens: cut"));
	cuco_edit_result_free(&r);
	cuco_llm_free(c);
	int n;
	char *log = llm_server_requests(&srv, &n);
	assert_int_equal(n, 2);
	char *second = strchr(log, '\n') + 1;
	size_t first_len = (size_t)(second - log), second_len = strlen(second);
	/* 12 000 tokens were about the whole; 8 192 less the reply's quarter
	 * and the margin are about 60 % of it. */
	if (second_len > first_len * 6 / 10)
		fail_msg("the second request is %zu bytes, the first %zu", second_len, first_len);
	assert_non_null(strstr(second, "PPPP"));
	assert_non_null(strstr(second, "\"max_tokens\": "));
	free(log);
	cuco_buf_free(&p.system);
	cuco_buf_free(&p.user);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_llm PYTHON3 LLM_SERVER_PY\n");
		return 1;
	}
	llm_python = argv[1];
	llm_server_py = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openai_whole),
		cmocka_unit_test(test_openai_stream),
		cmocka_unit_test(test_anthropic_whole),
		cmocka_unit_test(test_anthropic_stream),
		cmocka_unit_test(test_retries_server_errors),
		cmocka_unit_test(test_retry_after_honoured),
		cmocka_unit_test(test_gives_up),
		cmocka_unit_test(test_client_error_not_retried),
		cmocka_unit_test(test_cut_off_streams),
		cmocka_unit_test(test_invalid_json_and_closed_connection),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_slow_first_event),
		cmocka_unit_test(test_progress_counts),
		cmocka_unit_test(test_loop_stopped),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_ill_formed_utf8),
		cmocka_unit_test(test_planted_key_never_shown),
		cmocka_unit_test(test_planted_key_not_in_store),
		cmocka_unit_test(test_budgets),
		cmocka_unit_test(test_parallel_calls_and_totals),
		cmocka_unit_test(test_edit_retried_in_the_chat),
		cmocka_unit_test(test_reply_cap),
		cmocka_unit_test(test_edit_sends_only_the_last_refusal),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_context_exceeded),
		cmocka_unit_test(test_temperature_refused),
		cmocka_unit_test(test_retry_time),
		cmocka_unit_test(test_prompt_fit),
		cmocka_unit_test(test_context_exceeded_answered_by_cutting),
		cmocka_unit_test(test_edit_keeps_the_prefix),
		cmocka_unit_test(test_edit_repeat),
		cmocka_unit_test(test_edit_retry_budget),
		cmocka_unit_test(test_edit_no_room_ends_the_chat),
		cmocka_unit_test(test_edit_directive_taught_and_alone),
		cmocka_unit_test(test_edit_unbuilt_branch_set_aside),
		cmocka_unit_test(test_edit_function_text),
		cmocka_unit_test(test_edit_removed_function),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
