/* test_fastpath.c — the fast path's rules end to end on the toy fixture
 * (a one-rank program, quick to build): a stage that reaches its cap gives
 * up and the islands start from the shipped seed, each failure going back
 * to the model; a stage-B program without EVOLVE-BLOCK markers is refused
 * before any evaluation and counts as an attempt; a stage-B attempt the
 * evaluator refuses as suspect is never the next attempt's parent. */
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

static char *full(const char *program)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s```c\n%s```\n", directive, program);
	return b.data;
}

/* The seed with one more line: a distinct island child. */
static char *island_edit(void)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s<<<<<<< SEARCH\nint main(int argc, char **argv)\n{\n=======\n"
		"int main(int argc, char **argv)\n{\n\tenum { ISLAND_CHILD = 1 };\n>>>>>>> REPLACE\n",
		directive);
	return b.data;
}

static const cuco_candidate *nth_origin(const run_rows *r, cuco_origin o, int n)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->c[i].origin == o && n-- == 0)
			return &r->c[i];
	return NULL;
}

typedef struct fp_event {
	int n;
	char text[512];
} fp_event;

static int fp_one(const cuco_event *ev, void *arg)
{
	fp_event *e = arg;
	if (strcmp(ev->kind, "fastpath") == 0) {
		e->n++;
		cuco_strlcpy(e->text, ev->text, sizeof e->text);
	}
	return 0;
}

static int fp_txn(cuco_txn *txn, void *arg)
{
	memset(arg, 0, sizeof(fp_event));
	return cuco_event_each(txn, 1, fp_one, arg);
}

static void test_stage_cap(void **state)
{
	(void)state;
	char *texts[3] = { full("int main(void) { return broken; }\n"),
		full("int main(void) { return still_broken; }\n"), island_edit() };
	e2e t;
	e2e_begin(&t, texts, 3, "[fastpath]\nstage_a_max = 2\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "3", NULL };
	e2e_run(&t, toy, args);
	const run_rows rows = t.rows;
	const cuco_candidate *a1 = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 0);
	const cuco_candidate *a2 = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 1);
	const cuco_candidate *seed = nth_origin(&rows, CUCO_ORIGIN_SEED, 0);
	assert_non_null(a1);
	assert_non_null(a2);
	assert_null(nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 2));  /* the cap */
	assert_string_equal(a1->failed_stage, "compile");
	assert_string_equal(a2->failed_stage, "compile");
	assert_int_equal(a2->parents[0], a1->id);  /* the second attempt edits the first */
	/* The islands went on from the shipped seed. */
	const cuco_candidate *child = NULL;
	assert_int_equal(llm_children(&rows, &child, 1), 1);
	assert_int_equal(child->parents[0], seed->id);
	assert_int_equal(child->status, CUCO_STATUS_DONE);
	fp_event ev;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, fp_txn, &ev, &err), CUCO_OK);
	assert_int_equal(ev.n, 1);
	assert_non_null(strstr(ev.text, "stage A failed 2 times"));
	assert_non_null(strstr(ev.text, "the workload's shipped seed is used"));
	/* The second request carried the first attempt's compile error. */
	int nb = 0;
	cJSON **b = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 3);
	const char *second = body_message(b[1], "user");
	assert_non_null(strstr(second, "Attempt 1 of stage A failed: compile stage"));
	assert_non_null(strstr(second, "broken"));
	free_bodies(b, nb);
	e2e_end(&t);
}

static void test_markers_required(void **state)
{
	(void)state;
	const char *src = getenv("CUCO_SOURCE_ROOT");
	char path[1200];
	snprintf(path, sizeof path, "%s/tests/agents/fixtures/toy/seed.c", src ? src : ".");
	char *seed_text = slurp(path);
	/* Stage B's first reply has no markers; its second wraps the seed's body. */
	cuco_buf marked = { 0 };
	const char *open = strstr(seed_text, "{\n");
	assert_non_null(open);
	cuco_buf_append(&marked, seed_text, (size_t)(open + 2 - seed_text));
	cuco_buf_puts(&marked, "\t/* EVOLVE-BLOCK-START */\n");
	const char *close = strrchr(seed_text, '}');
	cuco_buf_append(&marked, open + 2, (size_t)(close - (open + 2)));
	cuco_buf_puts(&marked, "\t/* EVOLVE-BLOCK-END */\n}\n");
	char *texts[3] = { full(seed_text), full(seed_text), full(marked.data) };
	e2e t;
	e2e_begin(&t, texts, 3, "");
	const char *args[] = { "--strategy", "evolve", "--budget", "2", NULL };
	e2e_run(&t, toy, args);
	const run_rows rows = t.rows;
	const cuco_candidate *a = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 0);
	const cuco_candidate *b = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 1);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 2));  /* the marker-less one never ran */
	assert_int_equal(a->status, CUCO_STATUS_DONE);
	assert_int_equal(b->status, CUCO_STATUS_DONE);
	assert_int_equal(b->parents[0], a->id);
	assert_non_null(strstr(b->note, "fast path stage B 2/10"));  /* the refusal counted */
	fp_event ev;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, fp_txn, &ev, &err), CUCO_OK);
	char want[64];
	snprintf(want, sizeof want, "device-initiated seed #%llu after 1 + 2 attempts",
		(unsigned long long)b->id);
	assert_non_null(strstr(ev.text, want));
	int nb = 0;
	cJSON **body = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 3);
	assert_non_null(strstr(body_message(body[2], "user"),
		"the program has no EVOLVE-BLOCK-START / EVOLVE-BLOCK-END markers"));
	free_bodies(body, nb);
	e2e_end(&t);
	free(seed_text);
	cuco_buf_free(&marked);
}

/* The toy seed with its main's body inside an EVOLVE-BLOCK that starts
 * with `extra`. */
static void marked_seed(const char *seed_text, const char *extra, cuco_buf *out)
{
	const char *open = strstr(seed_text, "{\n");
	assert_non_null(open);
	cuco_buf_append(out, seed_text, (size_t)(open + 2 - seed_text));
	cuco_buf_printf(out, "\t/* EVOLVE-BLOCK-START */\n%s", extra);
	const char *close = strrchr(seed_text, '}');
	cuco_buf_append(out, open + 2, (size_t)(close - (open + 2)));
	cuco_buf_puts(out, "\t/* EVOLVE-BLOCK-END */\n}\n");
}

static void test_suspect_never_parent(void **state)
{
	(void)state;
	const char *src = getenv("CUCO_SOURCE_ROOT");
	char path[1200];
	snprintf(path, sizeof path, "%s/tests/agents/fixtures/toy/seed.c", src ? src : ".");
	char *seed_text = slurp(path);
	/* Stage B's first attempt reads the environment (the source scan
	 * refuses it as suspect); its second is clean. */
	cuco_buf cheat = { 0 }, clean = { 0 };
	marked_seed(seed_text, "\tif (getenv(\"TOY_NEVER_SET\"))\n\t\treturn 2;\n", &cheat);
	marked_seed(seed_text, "", &clean);
	char *texts[3] = { full(seed_text), full(cheat.data), full(clean.data) };
	e2e t;
	e2e_begin(&t, texts, 3, "");
	const char *args[] = { "--strategy", "evolve", "--budget", "3", NULL };
	e2e_run(&t, toy, args);
	const run_rows rows = t.rows;
	const cuco_candidate *a = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 0);
	const cuco_candidate *b1 = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 1);
	const cuco_candidate *b2 = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 2);
	assert_non_null(a);
	assert_non_null(b1);
	assert_non_null(b2);
	assert_int_equal(b1->status, CUCO_STATUS_FAILED);
	assert_string_equal(b1->error_class, "suspect");
	assert_non_null(strstr(b1->error_excerpt, "source: line"));
	assert_true(cuco_cand_suspect(b1));
	/* The retry starts from stage A's program, not from the refused one. */
	assert_int_equal(b2->parents[0], a->id);
	assert_int_equal(b2->status, CUCO_STATUS_DONE);
	int nb = 0;
	cJSON **body = server_bodies(&t.s, &nb);
	assert_int_equal(nb, 3);
	const char *third = body_message(body[2], "user");
	assert_non_null(strstr(third, "Attempt 1 of stage B failed: compile stage, suspect"));
	assert_null(strstr(third, "TOY_NEVER_SET"));  /* the program shown is stage A's */
	free_bodies(body, nb);
	e2e_end(&t);
	free(seed_text);
	cuco_buf_free(&cheat);
	cuco_buf_free(&clean);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_cap),
		cmocka_unit_test(test_markers_required),
		cmocka_unit_test(test_suspect_never_parent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
