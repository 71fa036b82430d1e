/* test_flow.c — the agent path under concurrency, end to end against the
 * scripted model server on the toy fixture: several model calls provably
 * in flight at once, and never two with --llm-jobs 1 (the control); every
 * call stored with its kind, usage and candidate, refused replies kept in
 * refusal records that `cuco show` finds, and `cuco report` totalling it
 * all by kind and by model; a directive-only child taken; --generations
 * ending evolve as it ends beam; the beam's
 * iteration barrier on landed results, and a resumed beam closing the
 * iteration it was stopped in; `cuco stop` cancelling a call in flight,
 * whose tokens still count; a prompt fitted to the context after a
 * context-exceeded 400, and a reply past the cap, stored and counted. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_evolve_run.h"

static char toy[1100];

static const char directive[] = "DIRECTIVE:\nbackend: msg\nissuer: one\nplacement: after\n"
	"sync: fence\ngranularity: 1\n\n";
static const char anchor[] = "int main(int argc, char **argv)\n{\n";

/* An edit adding a distinct, harmless line after main's brace. */
static char *variant(int k)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s<NAME>variant_%d</NAME>\n<DESCRIPTION>Variant %d.</DESCRIPTION>\n"
		"<DIFF>\n<<<<<<< SEARCH\n%s=======\n%s\tenum { FLOW_VARIANT_%d = %d };\n>>>>>>> REPLACE\n"
		"</DIFF>\n", directive, k, k, anchor, anchor, k, k);
	return b.data;
}

/* A script entry: text (taken over), answered after `wait` seconds, only
 * to a request holding `match` when not NULL; tokens 0 sends no usage. */
static void add_entry(cJSON *replies, char *text, const char *match, double wait, int tokens)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "text", text);
	if (match)
		cJSON_AddStringToObject(e, "match", match);
	if (wait > 0)
		cJSON_AddNumberToObject(e, "wait", wait);
	if (tokens) {
		cJSON_AddNumberToObject(e, "tokens_in", tokens);
		cJSON_AddNumberToObject(e, "tokens_out", tokens / 10);
	}
	cJSON_AddItemToArray(replies, e);
	free(text);
}

/* Serve a script (cJSON, deleted here) and write the config. */
static void begin(e2e *t, cJSON *script, const char *config)
{
	memset(t, 0, sizeof *t);
	t->script = cJSON_PrintUnformatted(script);
	cJSON_Delete(script);
	assert_int_equal(llm_server_start(&t->s, t->script), 0);
	t->served = true;
	run_env_new(&t->r);
	run_env_config(&t->r, &t->s, config);
}

/* When each request reached the server, in order. */
static int arrivals(const llm_server *s, double *at, int max)
{
	int n = 0, k = 0;
	char *text = llm_server_requests(s, &n);
	for (char *line = text, *next; line && *line && k < max; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		cJSON *rec = cJSON_Parse(line);
		at[k++] = cJSON_GetObjectItemCaseSensitive(rec, "time")->valuedouble;
		cJSON_Delete(rec);
	}
	free(text);
	return k;
}

typedef struct calls_seen {
	cuco_call c[64];
	int n;
	cuco_refusal r[16];
	int nr;
} calls_seen;

static int call_one(const cuco_call *c, void *arg)
{
	calls_seen *s = arg;
	if (s->n < 64)
		s->c[s->n++] = *c;
	return 0;
}

static int refusal_one(const cuco_refusal *r, void *arg)
{
	calls_seen *s = arg;
	if (s->nr < 16)
		s->r[s->nr++] = *r;
	return 0;
}

static int calls_txn(cuco_txn *txn, void *arg)
{
	memset(arg, 0, sizeof(calls_seen));
	int rc = cuco_call_each(txn, 1, call_one, arg);
	return rc == CUCO_OK ? cuco_refusal_each(txn, refusal_one, arg) : rc;
}

static calls_seen *read_calls(cuco_store *st)
{
	calls_seen *s = cuco_xmalloc(sizeof *s);
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(st, calls_txn, s, &err), CUCO_OK);
	return s;
}

/* A cuco subcommand's standard output. */
static const char evolve_config[] = "[evolve]\nfastpath = false\nmeta_interval = 0\n"
	"migration_interval = 0\n";

/* Six calls that take 1.5 s each: with three allowed at once the first
 * three are all asked before the first is answered; with one they never
 * overlap. Every call is stored, linked to its own candidate, with the
 * server's usage, and the report adds them up. */
static void run_flight(int jobs, double *gap, int *candidates)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	for (int k = 1; k <= 6; k++)
		add_entry(a, variant(k), NULL, 1.5, 1000);
	e2e t;
	begin(&t, o, evolve_config);
	char n[8];
	snprintf(n, sizeof n, "%d", jobs);
	const char *args[] = { "--strategy", "evolve", "--budget", "6", "--jobs", "2", "--llm-jobs", n,
		NULL };
	e2e_run(&t, toy, args);
	double at[8];
	assert_int_equal(arrivals(&t.s, at, 8), 6);
	gap[0] = at[2] - at[0];  /* three asked within this */
	gap[1] = INFINITY;       /* the shortest time between two requests */
	for (int i = 1; i < 6; i++)
		gap[1] = fmin(gap[1], at[i] - at[i - 1]);
	const cuco_candidate *kids[8];
	*candidates = llm_children(&t.rows, kids, 8);
	calls_seen *c = read_calls(t.st);
	assert_int_equal(c->n, 6);
	for (int i = 0; i < c->n; i++) {
		assert_int_equal(c->c[i].kind, CUCO_CALL_PROPOSE);
		assert_int_equal(c->c[i].outcome, CUCO_CALL_USED);
		assert_int_equal(c->c[i].tokens_in, 1000);
		assert_int_equal(c->c[i].tokens_out, 100);
		assert_false(c->c[i].estimated);
		assert_true(c->c[i].candidate > 0);
		for (int k = 0; k < i; k++)
			assert_int_not_equal(c->c[i].candidate, c->c[k].candidate);
	}
	free(c);
	char *report = cuco_output(&t, "report --json");
	cJSON *r = cJSON_Parse(report);
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(r, "calls");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(calls, "total")->valueint, 6);
	const cJSON *propose = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(calls, "by_kind"), "propose");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(propose, "tokens_in")->valueint, 6000);
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(calls, "by_model"), "test");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(model, "calls")->valueint, 6);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(r, "tokens"), "prompt")->valueint, 6000);
	cJSON_Delete(r);
	free(report);
	e2e_end(&t);
}

static void test_calls_in_flight(void **state)
{
	(void)state;
	double gap[2];
	int kids = 0;
	run_flight(3, gap, &kids);
	assert_int_equal(kids, 6);
	if (!(gap[0] < 1.5))
		fail_msg("with --llm-jobs 3 the third request came %.2f s after the first: the calls "
			"did not overlap", gap[0]);
	run_flight(1, gap, &kids);  /* the control */
	assert_int_equal(kids, 6);
	if (!(gap[1] >= 1.5))
		fail_msg("with --llm-jobs 1 two requests came %.2f s apart: they overlapped", gap[1]);
}

typedef struct refusal_event {
	int n;
	char author[32], text[1024];
	uint64_t candidate;
} refusal_event;

static int refusal_event_one(const cuco_event *e, void *arg)
{
	refusal_event *r = arg;
	if (strcmp(e->name, "refusal") != 0)
		return 0;
	if (r->n++ == 0) {
		cuco_strlcpy(r->author, e->author, sizeof r->author);
		cuco_strlcpy(r->text, e->text, sizeof r->text);
		r->candidate = e->candidate;
	}
	return 0;
}

static int refusal_events_txn(cuco_txn *txn, void *arg)
{
	return cuco_event_each(txn, 1, refusal_event_one, arg);
}

/* Replies refused twice in one chat (no directive), then a reply that
 * only restates the directive over the parent's code (a directive-only
 * child, taken), then one without usage (estimated). The refusal record
 * has the prompt, both replies and the reason, and `cuco show` finds it
 * from the parent; --max-cost with a model of no known price is one
 * warning at the start. */
static void test_refusals_recorded(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_SOURCE_ROOT");
	char path[1200];
	snprintf(path, sizeof path, "%s/tests/agents/fixtures/toy/seed.c", root ? root : ".");
	char *seed = slurp(path);
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	add_entry(a, cuco_xstrdup("I would rather not say."), NULL, 0, 1000);
	add_entry(a, cuco_xstrdup("Still no directive, sorry."), NULL, 0, 1000);
	cuco_buf rma = { 0 };
	cuco_buf_printf(&rma, "DIRECTIVE:\nbackend: rma\nissuer: one\nplacement: after\nsync: fence\n"
		"granularity: 1\n\n```c\n%s```\n", seed);
	add_entry(a, rma.data, NULL, 0, 1000);
	add_entry(a, variant(3), NULL, 0, 0);
	free(seed);
	e2e t;
	begin(&t, o, "[llm]\npatch_attempts = 2\n[evolve]\nfastpath = false\nmeta_interval = 0\n"
		"migration_interval = 0\ntune_rate = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "3", "--max-cost", "5", NULL };
	e2e_run(&t, toy, args);
	/* The model has no known price: said once, at the start. */
	const char *warn = strstr(t.out, "--max-cost: model test (test) has no known price");
	assert_non_null(warn);
	assert_null(strstr(warn + 1, "--max-cost: model test"));
	calls_seen *c = read_calls(t.st);
	assert_int_equal(c->n, 4);
	assert_int_equal(c->nr, 1);
	const cuco_refusal *ref = &c->r[0];
	assert_int_equal(ref->kind, CUCO_CALL_PROPOSE);
	assert_non_null(strstr(ref->reason, "DIRECTIVE"));
	uint64_t seed_id = ref->parent;
	assert_true(seed_id > 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(c->c[i].outcome, CUCO_CALL_REFUSED);
		assert_int_equal(c->c[i].refusal, ref->id);
		assert_int_equal(c->c[i].candidate, 0);
		assert_true(c->c[i].reply_hash[0]);
	}
	/* The directive-only child: the seed's code with backend rma. */
	const cuco_candidate *kid = NULL;
	for (size_t i = 0; i < t.rows.n; i++)
		if (t.rows.c[i].id == c->c[2].candidate)
			kid = &t.rows.c[i];
	assert_non_null(kid);
	assert_int_equal(kid->origin, CUCO_ORIGIN_LLM_FULL);
	assert_string_equal(kid->directive.backend, "rma");
	assert_float_equal(kid->speedup, 1.25, 1e-6);
	/* No usage from the server: estimated from the text. */
	assert_true(c->c[3].estimated);
	assert_true(c->c[3].tokens_in > 100 && c->c[3].tokens_out > 10);
	free(c);

	char args_show[64];
	snprintf(args_show, sizeof args_show, "show %llu --prompt", (unsigned long long)seed_id);
	char *shown = cuco_output(&t, args_show);
	assert_non_null(strstr(shown, "refused        r1 propose"));
	free(shown);
	shown = cuco_output(&t, "show r1 --prompt");
	assert_non_null(strstr(shown, "I would rather not say."));
	assert_non_null(strstr(shown, "Still no directive, sorry."));
	assert_non_null(strstr(shown, "=== refused:"));
	free(shown);
	char *report = cuco_output(&t, "report");
	assert_non_null(strstr(report, "calls      4, 2 refused; usage estimated for 1"));
	free(report);
	/* Where a person looks (issue 26: only report and show rN showed a
	 * refusal): `cuco ls --refusals`, and the events the log pane shows. */
	char *listed = cuco_output(&t, "ls --refusals");
	char row[96];
	snprintf(row, sizeof row, "r1     propose    #%-6llu    0 test             reply states no "
		"DIRECTIVE", (unsigned long long)seed_id);
	if (!strstr(listed, row))
		fail_msg("no `%s` in:\n%s", row, listed);
	free(listed);
	listed = cuco_output(&t, "ls --refusals --json");
	assert_non_null(strstr(listed, "\"reason\":"));
	free(listed);
	refusal_event ev = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, refusal_events_txn, &ev, &err), CUCO_OK);
	assert_int_equal(ev.n, 1);
	assert_string_equal(ev.author, "test");
	assert_int_equal(ev.candidate, seed_id);
	assert_non_null(strstr(ev.text, "r1 propose on island 0: reply states no DIRECTIVE"));
	e2e_end(&t);
}

/* `cuco stop` while a call waits 30 s for its reply: the run ends in
 * seconds, and the cancelled call is stored with its prompt's tokens. */
static void test_stop_cancels_call(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	add_entry(a, variant(1), NULL, 30, 1000);
	e2e t;
	begin(&t, o, evolve_config);
	const char *args[] = { "--strategy", "evolve", "--budget", "4", NULL };
	pid_t pid = spawn_cuco(&t.r, toy, args);
	int nreq = 0;
	struct timespec tick = { 0, 50 * 1000000L };
	for (int i = 0; i < 600 && nreq == 0; i++, nanosleep(&tick, NULL))
		free(llm_server_requests(&t.s, &nreq));
	assert_int_equal(nreq, 1);
	double t0 = cuco_mono();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "'%s' stop --run '%s' >/dev/null", getenv("CUCO_BIN"), t.r.run);
	assert_int_equal(system(cmd), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	double waited = cuco_mono() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != CUCO_EXIT_STOPPED)
		fail_msg("cuco run ended with status %d:\n%s", status, slurp(t.r.out));
	if (waited > 10)
		fail_msg("cuco stop took %.1f s to end the run: the model call was not cancelled", waited);
	t.st = open_run(&t.r, &t.rows);
	calls_seen *c = read_calls(t.st);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->c[0].outcome, CUCO_CALL_CANCELLED);
	assert_true(c->c[0].estimated);
	assert_true(c->c[0].tokens_in > 100);
	free(c);
	e2e_end(&t);
}

static int run_end(const cuco_event *ev, void *arg)
{
	if (strcmp(ev->name, "run-end") == 0)
		cuco_strlcpy(arg, ev->text, 512);
	return 0;
}

static int run_end_txn(cuco_txn *txn, void *arg)
{
	return cuco_event_each(txn, 1, run_end, arg);
}

/* --generations is the search's length for evolve as for beam: two
 * generations, then the run ends though the budget allows six. */
static void test_generations_end_evolve(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	for (int k = 1; k <= 4; k++)
		add_entry(a, variant(k), NULL, 0, 1000);
	e2e t;
	begin(&t, o, evolve_config);
	const char *args[] = { "--strategy", "evolve", "--budget", "6", "--generations", "2", NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *kids[8];
	assert_int_equal(llm_children(&t.rows, kids, 8), 2);
	char text[512] = "";
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, run_end_txn, text, &err), CUCO_OK);
	if (!strstr(text, "2 generations done"))
		fail_msg("run-end says `%s`", text);
	e2e_end(&t);
}

typedef struct schedule {
	int phase, migrate;
	char phase_text[512], migrate_text[512];
} schedule;

static int schedule_one(const cuco_event *ev, void *arg)
{
	schedule *s = arg;
	if (strcmp(ev->name, "phase") == 0 && s->phase++ == 0)
		cuco_strlcpy(s->phase_text, ev->text, sizeof s->phase_text);
	if (strcmp(ev->name, "migrate") == 0 && s->migrate++ == 0)
		cuco_strlcpy(s->migrate_text, ev->text, sizeof s->migrate_text);
	return 0;
}

static int schedule_txn(cuco_txn *txn, void *arg)
{
	memset(arg, 0, sizeof(schedule));
	return cuco_event_each(txn, 1, schedule_one, arg);
}

/* Four calls in flight over eight generations: the phase switch and the
 * migration come once each, at the committed generation they are due
 * (4 of 8), the migration after the four generations before it landed
 * (it moves correct members), as in a serial run; the model's own
 * temperature is sent, not
 * the phase's; a resumed run's token budget counts the first session's
 * calls. */
static void test_evolve_schedule_concurrent(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	for (int k = 1; k <= 12; k++)
		add_entry(a, variant(k), NULL, 0.5, 1000);
	e2e t;
	begin(&t, o, "temperature = 0.3\n[llm]\nbudget_tokens = 10500\n[evolve]\nfastpath = false\n"
		"meta_interval = 0\nmigration_interval = 4\nmigration_rate = 0.5\ngenerations = 8\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "8", "--llm-jobs", "4", NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *kids[12];
	assert_int_equal(llm_children(&t.rows, kids, 12), 8);
	schedule s;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, schedule_txn, &s, &err), CUCO_OK);
	assert_int_equal(s.phase, 1);
	assert_non_null(strstr(s.phase_text, "generation 4 of 8: every island exploits now"));
	assert_int_equal(s.migrate, 1);
	assert_non_null(strstr(s.migrate_text, "generation 4:"));
	int nb = 0;
	cJSON **b = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 8);
	for (int i = 0; i < nb; i++)
		assert_float_equal(cJSON_GetObjectItemCaseSensitive(b[i], "temperature")->valuedouble,
			0.3, 1e-9);
	free_bodies(b, nb);
	/* 8 calls of 1100 tokens so far: the next session starts at 8 800 of
	 * the 10 500, so its second call (the one that crosses) is its last. */
	const char *again[] = { "--strategy", "evolve", "--budget", "12", "--generations", "12",
		"--llm-jobs", "1", NULL };
	e2e_run(&t, toy, again);
	assert_int_equal(llm_children(&t.rows, kids, 12), 10);
	char *log = e2e_log(&t);
	assert_non_null(strstr(log, "the model budget is spent: 11000 of 10500 tokens"));
	free(log);
	e2e_end(&t);
}

/* ---- the beam's barrier ---------------------------------------------------------- */

static const char planner_match[] = "planning one optimization";
static const char summary_match[] = "reusable optimization lesson";

/* Width 1, two plans of two samples, two iterations. Iteration 0 edits
 * the seed (1000) into 500, 600, 700 and 800, each executor reply taking
 * a second; iteration 1 edits the best (500) again. Entries match their
 * requests, so whichever call arrives first gets its own kind of reply. */
static cJSON *beam_script(void)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	for (int i = 0; i < 4; i++) {
		char plan[64];
		snprintf(plan, sizeof plan, "Change the base constant (%d)\nMake it smaller.", i);
		add_entry(a, cuco_xstrdup(plan), planner_match, 0, 1000);
	}
	for (int i = 0; i < 4; i++)
		add_entry(a, cuco_xstrdup("**Lower the base constant**\nIt scales every phase."),
			summary_match, 0, 1000);
	static const char *const first[] = { "500.0", "600.0", "700.0", "800.0" };
	static const char *const second[] = { "250.0", "300.0", "350.0", "400.0" };
	for (int i = 0; i < 4; i++)
		add_entry(a, toy_scale("1000.0", first[i]), "double us = 1000.0", 1.0, 1000);
	for (int i = 0; i < 4; i++)
		add_entry(a, toy_scale("500.0", second[i]), "double us = 500.0", 1.0, 1000);
	return o;
}

static const char beam_config[] = "[beam]\nwidth = 1\nplans = 2\nsamples = 2\niterations = 2\n";

/* The candidates of beam iteration `it`. */
static int of_iteration(const run_rows *r, int it, const cuco_candidate **out, int max)
{
	char prefix[32];
	snprintf(prefix, sizeof prefix, "beam iteration %d,", it);
	int n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (strncmp(r->c[i].note, prefix, strlen(prefix)) == 0 && n < max)
			out[n++] = &r->c[i];
	return n;
}

static void test_beam_barrier(void **state)
{
	(void)state;
	e2e t;
	begin(&t, beam_script(), beam_config);
	const char *args[] = { "--strategy", "beam", "--budget", "8", "--jobs", "2", "--llm-jobs", "4",
		NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *it0[8], *it1[8];
	assert_int_equal(of_iteration(&t.rows, 0, it0, 8), 4);
	assert_int_equal(of_iteration(&t.rows, 1, it1, 8), 4);
	const cuco_candidate *best = it0[0];
	double landed = 0;
	for (int i = 0; i < 4; i++) {
		if (it0[i]->timing.median_us < best->timing.median_us)
			best = it0[i];
		landed = fmax(landed, it0[i]->updated);
	}
	assert_float_equal(best->timing.median_us, 500.0, 1e-6);
	for (int i = 0; i < 4; i++)
		assert_int_equal(it1[i]->parents[0], best->id);  /* the next beam: the best */
	/* The barrier: no call of iteration 1 started before the last result
	 * of iteration 0 was stored; and within an iteration calls overlapped. */
	calls_seen *c = read_calls(t.st);
	int planners = 0;
	for (int i = 0; i < c->n; i++) {
		const cuco_call *k = &c->c[i];
		if (k->parent != best->id || k->kind == CUCO_CALL_SUMMARIZER)
			continue;
		planners += k->kind == CUCO_CALL_PLANNER;
		if (!(k->time - k->seconds >= landed))
			fail_msg("call %llu (%s) of iteration 1 started %.3f s before iteration 0's last "
				"result landed", (unsigned long long)k->id, cuco_call_kind_name(k->kind),
				landed - (k->time - k->seconds));
	}
	assert_int_equal(planners, 2);
	/* The summarizer's calls, one per pair, overlap too; all of them end
	 * before iteration 1's first planner starts (its memory is theirs). */
	double summ_start[8], summ_end[8], first_planner = INFINITY;
	int ns = 0;
	for (int i = 0; i < c->n; i++) {
		const cuco_call *k = &c->c[i];
		if (k->kind == CUCO_CALL_SUMMARIZER && ns < 8) {
			summ_start[ns] = k->time - k->seconds;
			summ_end[ns++] = k->time;
		} else if (k->kind == CUCO_CALL_PLANNER && k->parent == best->id) {
			first_planner = fmin(first_planner, k->time - k->seconds);
		}
	}
	assert_true(ns >= 2);
	bool summ_overlap = false;
	for (int i = 0; i < ns; i++) {
		assert_true(summ_end[i] <= first_planner);
		for (int j = 0; j < ns; j++)
			summ_overlap |= i != j && summ_start[j] >= summ_start[i] && summ_start[j] < summ_end[i];
	}
	assert_true(summ_overlap);
	free(c);
	double at[32];
	int n = arrivals(&t.s, at, 32);
	bool overlap = false;
	for (int i = 1; i < n; i++)
		overlap |= at[i] - at[i - 1] < 0.5;
	assert_true(overlap);
	e2e_end(&t);
}

/* Stopped after two of iteration 0's four samples, then resumed: the
 * resumed run closes iteration 0 with the results it has (a memory event
 * says so) and iteration 1 starts from the best of them. */
static void test_beam_resume(void **state)
{
	(void)state;
	e2e t;
	begin(&t, beam_script(), beam_config);
	const char *first[] = { "--strategy", "beam", "--budget", "2", NULL };
	e2e_run(&t, toy, first);
	const cuco_candidate *it0[8];
	assert_int_equal(of_iteration(&t.rows, 0, it0, 8), 2);
	const char *again[] = { "--strategy", "beam", "--budget", "6", NULL };
	e2e_run(&t, toy, again);
	const cuco_candidate *it1[8];
	assert_int_equal(of_iteration(&t.rows, 0, it0, 8), 2);
	int n1 = of_iteration(&t.rows, 1, it1, 8);
	assert_true(n1 >= 1);
	const cuco_candidate *best = it0[it0[0]->timing.median_us < it0[1]->timing.median_us ? 0 : 1];
	for (int i = 0; i < n1; i++)
		assert_int_equal(it1[i]->parents[0], best->id);
	char *events = e2e_log(&t);
	assert_non_null(strstr(events, "beam: iteration 0: 2 results"));
	free(events);
	e2e_end(&t);
}

/* A planner's reply cut by the output limit is refused like any other:
 * a refusal record, and no sample of that plan. */
static void test_planner_cut_off(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "text", "Change the base constant and then");
	cJSON_AddStringToObject(e, "finish", "length");
	cJSON_AddItemToArray(a, e);
	e2e t;
	begin(&t, o, "[beam]\nwidth = 1\nplans = 1\nsamples = 1\niterations = 1\n");
	const char *args[] = { "--strategy", "beam", "--budget", "2", NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *it0[4];
	assert_int_equal(of_iteration(&t.rows, 0, it0, 4), 0);
	calls_seen *c = read_calls(t.st);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->c[0].kind, CUCO_CALL_PLANNER);
	assert_int_equal(c->c[0].outcome, CUCO_CALL_REFUSED);
	assert_int_equal(c->nr, 1);
	assert_int_equal(c->r[0].kind, CUCO_CALL_PLANNER);
	assert_non_null(strstr(c->r[0].reason, "cut off by the output limit"));
	assert_int_equal(c->c[0].refusal, c->r[0].id);
	free(c);
	e2e_end(&t);
}

/* The prompt fitted to the context still goes through the ledger: a
 * context-exceeded 400 (sent again, fitted to the size the server named),
 * then a reply past max_reply (refused by the client, answered in the
 * chat), then a child. All three requests are calls of that candidate:
 * the 400 with no tokens, the cut reply refused with its streamed text's
 * estimate. */
static void test_fitted_calls_counted(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	cJSON *e = cJSON_CreateObject();
	cJSON_AddNumberToObject(e, "status", 400);
	cJSON_AddStringToObject(e, "message", "the request exceeds the available context size "
		"(1000000 tokens), try increasing it");
	cJSON_AddItemToArray(a, e);
	e = cJSON_CreateObject();
	cJSON_AddNumberToObject(e, "count", 20000);  /* a flood that does not loop */
	cJSON_AddItemToArray(a, e);
	add_entry(a, variant(1), NULL, 0, 1000);
	e2e t;
	begin(&t, o, "[llm]\nmax_reply = 8192\npatch_attempts = 2\n[evolve]\nfastpath = false\n"
		"meta_interval = 0\nmigration_interval = 0\ntune_rate = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "1", NULL };
	e2e_run(&t, toy, args);
	calls_seen *c = read_calls(t.st);
	assert_int_equal(c->n, 3);
	assert_int_equal(c->nr, 0);
	assert_int_equal(c->c[0].outcome, CUCO_CALL_FAILED);
	assert_non_null(strstr(c->c[0].reason, "context"));
	assert_int_equal(c->c[0].tokens_in + c->c[0].tokens_out, 0);
	assert_int_equal(c->c[1].outcome, CUCO_CALL_REFUSED);
	assert_non_null(strstr(c->c[1].reason, "max_reply"));
	assert_true(c->c[1].estimated && c->c[1].tokens_out > 0);
	assert_int_equal(c->c[2].outcome, CUCO_CALL_USED);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(c->c[i].kind, CUCO_CALL_PROPOSE);
		assert_true(c->c[i].candidate > 0);
		assert_int_equal(c->c[i].candidate, c->c[2].candidate);
	}
	free(c);
	char *report = cuco_output(&t, "report");
	assert_non_null(strstr(report, "calls      3, 1 refused"));
	free(report);
	e2e_end(&t);
}

/* A reply with a new directive and an edit that matches nothing makes a
 * directive-only child; its call is used, with the edit's refusal as its
 * reason, and the report counts it apart from the refused calls. */
static void test_refused_edits_counted_apart(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	add_entry(a, cuco_xstrdup("DIRECTIVE:\nbackend: rma\nissuer: one\nplacement: after\n"
		"sync: fence\ngranularity: 1\n\n<<<<<<< SEARCH\nint no_such_line;\n=======\n"
		"int x;\n>>>>>>> REPLACE\n"), NULL, 0, 1000);
	e2e t;
	begin(&t, o, "[llm]\npatch_attempts = 2\n[evolve]\nfastpath = false\nmeta_interval = 0\n"
		"migration_interval = 0\ntune_rate = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "1", NULL };
	e2e_run(&t, toy, args);
	calls_seen *c = read_calls(t.st);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->c[0].outcome, CUCO_CALL_USED);
	assert_non_null(strstr(c->c[0].reason, "SEARCH matches nothing"));
	assert_true(c->c[0].candidate > 0);
	free(c);
	char *report = cuco_output(&t, "report");
	assert_non_null(strstr(report, "calls      1, 0 refused; 1 made directive-only children from "
		"replies with refused edits"));
	free(report);
	e2e_end(&t);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_in_flight),
		cmocka_unit_test(test_refusals_recorded),
		cmocka_unit_test(test_stop_cancels_call),
		cmocka_unit_test(test_generations_end_evolve),
		cmocka_unit_test(test_evolve_schedule_concurrent),
		cmocka_unit_test(test_planner_cut_off),
		cmocka_unit_test(test_fitted_calls_counted),
		cmocka_unit_test(test_refused_edits_counted_apart),
		cmocka_unit_test(test_beam_barrier),
		cmocka_unit_test(test_beam_resume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
