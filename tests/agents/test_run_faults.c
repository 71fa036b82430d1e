/* test_run_faults.c — `cuco run` against a model server that misbehaves
 * (issue 7): it cuts a stream mid-reply, answers 500 and 429 with
 * Retry-After, sends an event that is not JSON, answers late and slowly,
 * goes silent past the idle limit mid-stream and before its headers,
 * stops listening for a second, and closes connections until a call gives
 * up. The run waits, retries and goes on: it spends its whole budget,
 * every reply the server delivered is one evaluated candidate, the call
 * that gave up is a model-error event and no candidate, and the log says
 * what happened. A server that is down at the start stops the run before
 * its baseline, with a plain error. Evolve and beam. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "test_evolve_run.h"

static char toy[1100];

/* Retries that outlast a one-second refusal (the waits add up to at
 * least 1.375 s) and a one-second idle limit. */
static const char client[] = "retries = 4\nbackoff = 0.25\nbackoff_max = 1\nidle_timeout = 1\n"
	"connect_timeout = 2\ntimeout = 20\n";

/* Edit k of the toy: a distinct line after main's opening brace. */
static char *variant(int k)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "DIRECTIVE:\nbackend: msg\nissuer: one\nplacement: after\nsync: fence\n"
		"granularity: 1\n\n<NAME>variant_%d</NAME>\n<DESCRIPTION>Variant %d.</DESCRIPTION>\n"
		"<DIFF>\n<<<<<<< SEARCH\nint main(int argc, char **argv)\n{\n=======\n"
		"int main(int argc, char **argv)\n{\n\tenum { CUCO_VARIANT_%d = %d };\n>>>>>>> REPLACE\n"
		"</DIFF>\n", k, k, k, k);
	return b.data;
}

/* Script entries: a JSON object with "text" set to variant(k) when k > 0. */
static void entry(cJSON *a, const char *json, int k)
{
	cJSON *e = cJSON_Parse(json);
	assert_non_null(e);
	if (k > 0) {
		char *text = variant(k);
		cJSON_AddStringToObject(e, "text", text);
		free(text);
	}
	cJSON_AddItemToArray(a, e);
}

static void repeat(cJSON *a, const char *json, int times)
{
	for (int i = 0; i < times; i++)
		entry(a, json, 0);
}

static void serve_with(e2e *t, cJSON *script, const char *top, const char *knobs)
{
	memset(t, 0, sizeof *t);
	char *json = cJSON_PrintUnformatted(script);
	cJSON_Delete(script);
	assert_int_equal(llm_server_start(&t->s, json), 0);
	free(json);
	t->served = true;
	run_env_new(&t->r);
	char cfg[1024];
	snprintf(cfg, sizeof cfg, "%s[model test]\nprovider = openai\nmodel = test\nurl = %s\n"
		"api_key_env =\n%s", top, t->s.url, knobs);
	run_env_config(&t->r, NULL, cfg);
}

static void serve(e2e *t, cJSON *script, const char *knobs)
{
	serve_with(t, script, client, knobs);
}

typedef struct faults_seen {
	int model_errors;
	int down, back;         /* model-down and model-back events */
	bool back_after_down;
	char last_error[512];
	char end[512];
} faults_seen;

static int fault_event(const cuco_event *ev, void *arg)
{
	faults_seen *f = arg;
	if (strcmp(ev->name, "model-error") == 0) {
		f->model_errors++;
		cuco_strlcpy(f->last_error, ev->text, sizeof f->last_error);
	}
	if (strcmp(ev->name, "model-down") == 0)
		f->down++;
	if (strcmp(ev->name, "model-back") == 0) {
		f->back++;
		f->back_after_down = f->down > 0;
	}
	if (strcmp(ev->name, "run-end") == 0)
		cuco_strlcpy(f->end, ev->text, sizeof f->end);
	return 0;
}

static int faults_txn(cuco_txn *txn, void *arg)
{
	memset(arg, 0, sizeof(faults_seen));
	return cuco_event_each(txn, 1, fault_event, arg);
}

static faults_seen read_faults(cuco_store *st)
{
	faults_seen f;
	cuco_err err = { 0 };
	if (cuco_store_read(st, faults_txn, &f, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return f;
}

/* The times of the logged requests (n of them, malloc'd). */
static double *request_times(const llm_server *s, int *n)
{
	char *text = llm_server_requests(s, n);
	double *t = calloc((size_t)*n + 1, sizeof *t);
	int k = 0;
	for (char *line = text, *next; line && *line && k < *n; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		cJSON *rec = cJSON_Parse(line);
		t[k++] = cJSON_GetObjectItemCaseSensitive(rec, "time")->valuedouble;
		cJSON_Delete(rec);
	}
	free(text);
	return t;
}

static void test_evolve_rides_out_faults(void **state)
{
	(void)state;
	cJSON *s = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(s, "replies");
	entry(a, "{\"fault\": \"truncate\", \"after\": 2, \"chunk\": 16}", 1);  /* cut mid-stream */
	entry(a, "{}", 1);
	entry(a, "{\"status\": 500}", 0);
	entry(a, "{\"status\": 429, \"retry_after\": \"1\"}", 0);
	entry(a, "{}", 2);
	entry(a, "{\"fault\": \"invalid_json\"}", 3);
	entry(a, "{}", 3);
	entry(a, "{\"wait\": 0.3, \"chunk\": 32, \"delay\": 0.05}", 4);  /* late and slow, in time */
	entry(a, "{\"stall\": 6}", 5);                                 /* past the idle limit */
	entry(a, "{\"wait\": 6}", 5);                                  /* silent headers, too */
	entry(a, "{}", 5);
	entry(a, "{\"fault\": \"refuse\", \"seconds\": 1}", 0);          /* not listening for 1 s */
	entry(a, "{}", 6);
	repeat(a, "{\"fault\": \"close\"}", 5);                        /* a call that gives up */
	entry(a, "{}", 7);
	e2e t;
	serve(&t, s, "[evolve]\nfastpath = false\nmeta_interval = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "7", NULL };
	e2e_run(&t, toy, args);

	/* The whole budget, one candidate per delivered reply, in order. */
	const cuco_candidate *kids[8];
	int n = llm_children(&t.rows, kids, 8);
	if (n != 7)
		fail_msg("%d model candidates, not 7:\n%s", n, t.out);
	for (int k = 0; k < 7; k++) {
		char name[32];
		snprintf(name, sizeof name, "variant_%d", k + 1);
		assert_non_null(strstr(kids[k]->note, name));
		assert_int_equal(kids[k]->status, CUCO_STATUS_DONE);
	}
	faults_seen f = read_faults(t.st);
	assert_int_equal(f.model_errors, 1);
	assert_non_null(strstr(f.last_error, "Server returned nothing"));
	assert_non_null(strstr(f.last_error, "gave up after 5 attempts"));
	assert_non_null(strstr(f.end, "budget reached"));

	/* Every scripted entry was asked for, and nothing more. */
	int nreq = 0;
	double *at = request_times(&t.s, &nreq);
	assert_int_equal(nreq, 19);
	if (at[4] - at[3] < 0.95)
		fail_msg("the retry came %.2f s after a 429 asking for 1 s", at[4] - at[3]);
	for (int i = 8; i <= 9; i++)
		if (at[i + 1] - at[i] < 0.9 || at[i + 1] - at[i] > 5)
			fail_msg("request %d, silent for 6 s, was dropped after %.2f s; the idle limit is "
				"1 s", i + 1, at[i + 1] - at[i]);
	if (at[12] - at[11] < 1.0)
		fail_msg("a request came %.2f s into a 1 s refusal", at[12] - at[11]);
	free(at);

	/* And the log says what happened, one line each. */
	char *log = e2e_log(&t);
	static const char *const said[] = { "stream ended before its end event (cut off)",
		"HTTP 500", "HTTP 429", "stream event is not JSON", "stream without progress for over 1 s",
		"Couldn't connect", "Server returned nothing",
		"engine: a model call gave up (1 in a row); the proposal is made again" };
	for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
		if (!strstr(log, said[i]))
			fail_msg("the log does not say \"%s\":\n%s", said[i], log);
	free(log);
	e2e_end(&t);
}

/* A port with nobody listening: bound, then closed. */
static int closed_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof sa;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/* A server that is down when the run starts is found before the baseline
 * is measured: exit 3 and one line naming the model, the URL and why. */
static void test_server_down_stops_before_the_baseline(void **state)
{
	(void)state;
	run_env r;
	run_env_new(&r);
	char cfg[512];
	int port = closed_port();
	snprintf(cfg, sizeof cfg, "retries = 1\nbackoff = 0.05\n[model test]\nprovider = openai\n"
		"model = test\nurl = http://127.0.0.1:%d/v1\napi_key_env =\n[evolve]\nfastpath = false\n",
		port);
	run_env_config(&r, NULL, cfg);
	const char *args[] = { "--strategy", "evolve", "--budget", "4", NULL };
	int rc = run_cuco(&r, toy, args);
	char *out = slurp(r.out);
	char want[160];
	snprintf(want, sizeof want, "model test: http://127.0.0.1:%d/v1/models: cannot reach the "
		"server (Couldn't connect to server); is it running?", port);
	if (rc != 3 || !strstr(out, want))
		fail_msg("cuco run exited %d:\n%s", rc, out);
	run_rows rows;
	cuco_store *st = open_run(&r, &rows);
	for (size_t i = 0; i < rows.n; i++)
		if (rows.c[i].status == CUCO_STATUS_DONE)
			fail_msg("#%llu was measured", (unsigned long long)rows.c[i].id);
	cuco_store_close(st);
	free(rows.c);
	free(out);
	run_env_free(&r);
}

/* A server that goes away mid-run for longer than `outage` (2 s here) makes
 * the run wait for it, visibly, instead of ending it; when it is back the
 * run goes on and spends its whole budget. */
static void test_outage_waits_for_the_model(void **state)
{
	(void)state;
	cJSON *s = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(s, "replies");
	entry(a, "{}", 1);
	entry(a, "{\"fault\": \"refuse\", \"seconds\": 5}", 0);   /* down for 5 s */
	entry(a, "{}", 2);
	entry(a, "{}", 3);
	e2e t;
	char top[256];
	snprintf(top, sizeof top, "%soutage = 2\n", client);
	serve_with(&t, s, top, "[evolve]\nfastpath = false\nmeta_interval = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "3", "--jobs", "1", NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *kids[4];
	int n = llm_children(&t.rows, kids, 4);
	if (n != 3)
		fail_msg("%d model candidates, not 3:\n%s", n, t.out);
	faults_seen f = read_faults(t.st);
	assert_true(f.down == 1 && f.back == 1 && f.back_after_down);
	assert_non_null(strstr(f.end, "budget reached"));
	char *log = e2e_log(&t);
	assert_non_null(strstr(log, "the run waits for one, asking again every 1 s"));
	assert_non_null(strstr(log, "a model answers again after"));
	free(log);
	e2e_end(&t);
}

/* Beam: a plan call and an executor call each give up once; the plan is
 * asked again, and so is the sample, which is not lost. */
static void test_beam_asks_again(void **state)
{
	(void)state;
	cJSON *s = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(s, "replies");
	repeat(a, "{\"fault\": \"close\"}", 5);
	entry(a, "{\"text\": \"Add a constant\\nHarmless.\"}", 0);
	repeat(a, "{\"status\": 503}", 5);
	entry(a, "{}", 1);
	e2e t;
	serve(&t, s, "[beam]\nwidth = 1\nplans = 1\nsamples = 1\niterations = 1\n");
	const char *args[] = { "--strategy", "beam", "--budget", "1", NULL };
	e2e_run(&t, toy, args);
	int beam = 0;
	for (size_t i = 0; i < t.rows.n; i++)
		if (t.rows.c[i].origin == CUCO_ORIGIN_BEAM_PLAN) {
			beam++;
			assert_non_null(strstr(t.rows.c[i].note, "plan 1/1, sample 1/1: Add a constant"));
			assert_int_equal(t.rows.c[i].status, CUCO_STATUS_DONE);
		}
	assert_int_equal(beam, 1);
	faults_seen f = read_faults(t.st);
	assert_int_equal(f.model_errors, 2);
	assert_non_null(strstr(f.last_error, "2 in a row: llm test: "));
	assert_non_null(strstr(f.last_error, "HTTP 503"));
	int nreq = 0;
	free(llm_server_requests(&t.s, &nreq));
	assert_int_equal(nreq, 12);
	e2e_end(&t);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evolve_rides_out_faults),
		cmocka_unit_test(test_server_down_stops_before_the_baseline),
		cmocka_unit_test(test_outage_waits_for_the_model),
		cmocka_unit_test(test_beam_asks_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
