/* test_sample.c — `cuco run --strategy sample` end to end on the toy
 * fixture: best-of-N edits of the seed with one prompt, no population,
 * the control evolve and beam are measured against (issue 26). */
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

/* Three samples: the second reply repeats the first (refused as a known
 * candidate, asked again hotter), the third sample's every reply is refused
 * (a refusal record; it counts as a sample). Every prompt is the same:
 * the seed's, with no history of the others. */
static void test_best_of_n(void **state)
{
	(void)state;
	char *texts[6] = {
		toy_scale("1000.0", "500.0"),
		toy_scale("1000.0", "500.0"),
		toy_scale("1000.0", "800.0"),
		cuco_xstrdup("I cannot."),
		cuco_xstrdup("Still cannot."),
		cuco_xstrdup("never asked for"),
	};
	e2e t;
	e2e_begin(&t, texts, 6, "[llm]\npatch_attempts = 2\n[sample]\ntemperature = 0.9\n");
	const char *args[] = { "--strategy", "sample", "--generations", "3", "--budget", "3", NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *seed = NULL, *kids[4];
	int nk = 0;
	for (size_t i = 0; i < t.rows.n; i++) {
		if (t.rows.c[i].origin == CUCO_ORIGIN_SEED)
			seed = &t.rows.c[i];
		if (t.rows.c[i].origin == CUCO_ORIGIN_LLM_DIFF && nk < 4)
			kids[nk++] = &t.rows.c[i];
	}
	assert_non_null(seed);
	assert_int_equal(nk, 2);
	for (int i = 0; i < nk; i++) {
		assert_int_equal(kids[i]->parents[0], seed->id);
		assert_int_equal(kids[i]->nparents, 1);
	}
	assert_non_null(strstr(kids[0]->note, "sample 1 of 3 from #"));
	assert_non_null(strstr(kids[1]->note, "sample 2 of 3 from #"));
	assert_float_equal(kids[0]->speedup, 2.0, 1e-6);
	assert_float_equal(kids[1]->speedup, 1.25, 1e-6);
	int nb = 0;
	cJSON **body = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 5);
	/* One prompt for every sample: the same system and first message. */
	for (int i = 1; i < nb; i++) {
		assert_string_equal(body_message(body[i], "system"), body_message(body[0], "system"));
		assert_int_equal(strncmp(body_message(body[i], "user"), body_message(body[0], "user"),
			strlen(body_message(body[0], "user")) - 1), 0);
		/* The request after the repeat goes hotter (0.9 + 0.4, at most 1.2). */
		assert_float_equal(cJSON_GetObjectItem(body[i], "temperature")->valuedouble,
			i == 2 ? 1.2 : 0.9, 1e-9);
	}
	assert_null(strstr(body_message(body[2], "user"), "Top programs so far"));
	/* The repeat is answered as evolve answers it: the next request says so. */
	assert_null(strstr(body_message(body[1], "user"), "Note: an earlier answer"));
	assert_non_null(strstr(body_message(body[2], "user"), "Note: an earlier answer to this "
		"request reproduced "));
	free_bodies(body, nb);
	char *log = e2e_log(&t);
	assert_non_null(strstr(log, "sample 3: "));
	free(log);
	e2e_end(&t);
}

/* A repeat asked for again whose prompt the server finds too long for
 * its context, cut after cut, ends that sample, refused, not the run
 * (issue 26: a budget-24 run of Qwen2.5-Coder 1.5B ended with exit 3, the
 * retry's prompt, the note appended, 6 tokens over). */
static void test_repeat_note_past_the_context(void **state)
{
	(void)state;
	char *texts[4] = { toy_scale("1000.0", "500.0"), toy_scale("1000.0", "500.0"),
		toy_scale("1000.0", "800.0"), toy_scale("1000.0", "700.0") };
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	for (int i = 0; i < 7; i++) {
		cJSON *e = cJSON_CreateObject();
		if (i >= 2 && i < 5) {  /* the retry: too long, three times */
			cJSON_AddNumberToObject(e, "status", 400);
			cJSON_AddStringToObject(e, "message", "request (2300 tokens) exceeds the available "
				"context size (16384 tokens), try increasing it");
		} else {
			cJSON_AddStringToObject(e, "text", texts[i < 2 ? i : i - 3]);
		}
		cJSON_AddItemToArray(a, e);
	}
	e2e t;
	memset(&t, 0, sizeof t);
	t.texts = texts;
	t.ntexts = 4;
	t.script = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	assert_int_equal(llm_server_start(&t.s, t.script), 0);
	t.served = true;
	run_env_new(&t.r);
	run_env_config(&t.r, &t.s, "[llm]\npatch_attempts = 1\n");
	const char *args[] = { "--strategy", "sample", "--generations", "3", "--budget", "3", NULL };
	e2e_run(&t, toy, args);
	char *log = e2e_log(&t);
	if (!strstr(log, "asked again after a repeat: llm test: "))
		fail_msg("%s\n%s", t.out, log);
	free(log);
	int kids = 0;
	for (size_t i = 0; i < t.rows.n; i++)
		kids += t.rows.c[i].origin == CUCO_ORIGIN_LLM_DIFF;
	assert_int_equal(kids, 2);
	e2e_end(&t);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_best_of_n),
		cmocka_unit_test(test_repeat_note_past_the_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
