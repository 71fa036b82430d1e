/* test_beam.c — `cuco run --strategy beam` end to end on the toy fixture,
 * whose latency the program states, so every speedup is known: plans,
 * executor edits, the summarizer's positive lesson and its flipped
 * negative one in the store's memory, and the next iteration's planner
 * reading them, with the next beam made of the best program. */
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

typedef struct mem_seen {
	int n, negative;
	cuco_memory m[4];
	char memory_event[512];
	char *resume;           /* meta "beam" */
} mem_seen;

static int mem_one(const cuco_memory *m, void *arg)
{
	mem_seen *s = arg;
	if (s->n < 4)
		s->m[s->n] = *m;
	s->n++;
	s->negative += m->negative;
	return 0;
}

static int ev_one(const cuco_event *ev, void *arg)
{
	mem_seen *s = arg;
	if (strcmp(ev->name, "memory") == 0)
		cuco_strlcpy(s->memory_event, ev->text, sizeof s->memory_event);
	return 0;
}

static int mem_txn(cuco_txn *txn, void *arg)
{
	mem_seen *s = arg;
	memset(s, 0, sizeof *s);
	int rc = cuco_memory_each(txn, mem_one, s);
	if (rc == CUCO_OK)
		rc = cuco_event_each(txn, 1, ev_one, s);
	return rc == CUCO_OK ? cuco_meta_get(txn, "beam", &s->resume) : rc;
}

static const cuco_candidate *by_note(const run_rows *r, const char *text)
{
	for (size_t i = 0; i < r->n; i++)
		if (strstr(r->c[i].note, text))
			return &r->c[i];
	return NULL;
}

static void test_beam_memory(void **state)
{
	(void)state;
	/* Width 1, two plans of one sample, two iterations: iteration 0 asks
	 * plan, edit, plan, edit; the summarizer twice (the positive pair,
	 * then the negative); iteration 1 plans for the best and edits. */
	char *texts[8] = {
		cuco_xstrdup("Halve the modelled latency\nChange the base constant."),
		toy_scale("1000.0", "500.0"),
		cuco_xstrdup("Double the modelled latency\nA bad idea, on purpose."),
		toy_scale("1000.0", "2000.0"),
		cuco_xstrdup("**Halve the base constant**\nThe faster one starts from 500."),
		cuco_xstrdup("**Keep the base constant low**\nThe slower one doubled it."),
		cuco_xstrdup("Halve it again\nThe lesson says halving helps."),
		toy_scale("500.0", "250.0"),
	};
	e2e t;
	e2e_begin(&t, texts, 8, "[beam]\nwidth = 1\nplans = 2\nsamples = 1\niterations = 2\n");
	const char *args[] = { "--strategy", "beam", "--budget", "3", NULL };
	e2e_run(&t, toy, args);
	const run_rows rows = t.rows;
	const cuco_candidate *seed = NULL;
	for (size_t i = 0; i < rows.n; i++)
		if (rows.c[i].origin == CUCO_ORIGIN_SEED)
			seed = &rows.c[i];
	const cuco_candidate *a = by_note(&rows, "beam iteration 0, plan 1/2, sample 1/1");
	const cuco_candidate *b = by_note(&rows, "beam iteration 0, plan 2/2, sample 1/1");
	const cuco_candidate *c = by_note(&rows, "beam iteration 1, plan 1/2, sample 1/1");
	assert_non_null(seed);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(strstr(a->note, "Halve the modelled latency"));
	assert_int_equal(a->origin, CUCO_ORIGIN_BEAM_PLAN);
	assert_int_equal(a->parents[0], seed->id);
	assert_int_equal(b->parents[0], seed->id);
	assert_int_equal(c->parents[0], a->id);  /* the next beam is the best program */
	assert_float_equal(a->speedup, 2.0, 1e-6);
	assert_float_equal(b->speedup, 0.5, 1e-6);
	assert_float_equal(c->speedup, 4.0, 1e-6);

	/* The memory: the positive pair seed→A, and B→seed flipped. */
	mem_seen m;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, mem_txn, &m, &err), CUCO_OK);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.negative, 1);
	const cuco_memory *pos = m.m[0].negative ? &m.m[1] : &m.m[0];
	const cuco_memory *neg = m.m[0].negative ? &m.m[0] : &m.m[1];
	assert_string_equal(pos->workload, "toy");
	assert_string_equal(pos->slow_hash, seed->source_hash);
	assert_string_equal(pos->fast_hash, a->source_hash);
	assert_float_equal(pos->speedup, 2.0, 1e-6);
	assert_non_null(strstr(pos->summary, "Halve the base constant"));
	assert_string_equal(neg->slow_hash, b->source_hash);
	assert_string_equal(neg->fast_hash, seed->source_hash);
	assert_float_equal(neg->speedup, 2.0, 1e-6);
	assert_true(strncmp(neg->summary, "Undo this: ", 11) == 0);
	assert_non_null(strstr(m.memory_event, "iteration 0: 2 results, 2 new lessons (1 to undo)"));
	/* What a resumed run reads back: iteration 0 is closed. */
	assert_string_equal(m.resume, "{\"closed\":0}");
	free(m.resume);

	int nb = 0;
	cJSON **body = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 8);
	/* The summarizer saw the pair; the next planner read both lessons. */
	assert_non_null(strstr(body_message(body[4], "user"), "2.00x faster"));
	const char *plan_sys = body_message(body[6], "system");
	assert_non_null(strstr(plan_sys, "# Experiences"));
	assert_non_null(strstr(plan_sys, "Halve the base constant"));
	assert_non_null(strstr(plan_sys, "Undo this"));
	assert_null(strstr(body_message(body[0], "system"), "# Experiences"));  /* none yet */
	char want[64];
	snprintf(want, sizeof want, "# The program (#%llu", (unsigned long long)a->id);
	assert_non_null(strstr(body_message(body[6], "user"), want));
	/* The executor was given its plan. */
	assert_non_null(strstr(body_message(body[7], "user"), "Halve it again"));
	free_bodies(body, nb);

	/* `cuco memory` shows both lessons with the candidates they came from. */
	char cmd[600], shown[300];
	snprintf(shown, sizeof shown, "%s/memory.txt", t.r.dir);
	snprintf(cmd, sizeof cmd, "'%s' memory --run '%s' > '%s'", getenv("CUCO_BIN"), t.r.run, shown);
	assert_int_equal(system(cmd), 0);
	char *text = slurp(shown);
	char line[128];
	snprintf(line, sizeof line, "2.00x faster  #%llu -> #%llu", (unsigned long long)seed->id,
		(unsigned long long)a->id);
	assert_non_null(strstr(text, line));
	snprintf(line, sizeof line, "2.00x slower: undo this  #%llu -> #%llu",
		(unsigned long long)seed->id, (unsigned long long)b->id);
	assert_non_null(strstr(text, line));
	assert_non_null(strstr(text, "    **Halve the base constant**"));
	free(text);
	e2e_end(&t);
}

typedef struct refusals_seen {
	int n;
	char reason[512];
} refusals_seen;

static int refusal_one(const cuco_refusal *r, void *arg)
{
	refusals_seen *s = arg;
	if (r->kind == CUCO_CALL_PLANNER && s->n++ == 0)
		cuco_strlcpy(s->reason, r->reason, sizeof s->reason);
	return 0;
}

static int refusals_txn(cuco_txn *txn, void *arg)
{
	return cuco_refusal_each(txn, refusal_one, arg);
}

/* A plan that says nothing is refused, and no executor call is spent on
 * it (issue 26: a plan of three chat-template tokens was used twice); a
 * planner's output is bounded (the next plan ran 25 minutes to the
 * 4 096-token limit). */
static void test_empty_plan(void **state)
{
	(void)state;
	char *texts[4] = {
		cuco_xstrdup("<end_of_turn>\n<end_of_turn> ."),
		cuco_xstrdup("Halve the modelled latency\nChange the base constant."),
		toy_scale("1000.0", "500.0"),
		cuco_xstrdup("**Halve the base constant**\nThe faster one starts from 500."),
	};
	e2e t;
	e2e_begin(&t, texts, 4, "[beam]\nwidth = 1\nplans = 2\nsamples = 1\niterations = 1\n");
	const char *args[] = { "--strategy", "beam", "--budget", "2", NULL };
	e2e_run(&t, toy, args);
	int nb = 0;
	cJSON **body = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 4);
	for (int i = 0; i < 2; i++)
		assert_int_equal(cJSON_GetObjectItem(body[i], "max_tokens")->valueint, 512);
	assert_int_equal(cJSON_GetObjectItem(body[3], "max_tokens")->valueint, 1024);
	assert_non_null(strstr(body_message(body[2], "user"), "Halve the modelled latency"));
	free_bodies(body, nb);
	refusals_seen rs = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, refusals_txn, &rs, &err), CUCO_OK);
	assert_int_equal(rs.n, 1);
	assert_non_null(strstr(rs.reason, "the plan says nothing (29 bytes, fewer than three words)"));
	assert_non_null(by_note(&t.rows, "beam iteration 0, plan 2/2, sample 1/1"));
	assert_null(by_note(&t.rows, "plan 1/2"));
	e2e_end(&t);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_beam_memory),
		cmocka_unit_test(test_empty_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
