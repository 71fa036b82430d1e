/* test_fastpath.c — the fast path's rules end to end on the toy fixture
 * (a one-rank program, quick to build): a stage that reaches its cap gives
 * up and the islands start from the shipped seed, each failure going back
 * to the model; a stage-B program without EVOLVE-BLOCK markers is refused
 * before any evaluation and counts as an attempt; a stage-B attempt the
 * evaluator refuses as suspect is never the next attempt's parent, and one
 * that reads the environment outside its blocks is refused so. And on
 * a workload that `cuco init` makes from a user's MPI program
 * (tests/programs/halo.c), which has no seed: evolve and beam start from
 * the fast path's program, whose prompts carry the communication analysis
 * and the API reference; without a model, with the tuner, or when the fast
 * path makes nothing, the run says there is nothing to search from. */
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
	return program_reply(directive, program);
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
	if (strcmp(ev->name, "fastpath") == 0) {
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
	assert_string_equal(a1->failure.stage, "compile");
	assert_string_equal(a2->failure.stage, "compile");
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


/* ---- a workload without a seed, from `cuco init` ------------------------------ */

static const char cpu_directive[] = "DIRECTIVE:\nbackend: rma\nissuer: one\nplacement: after\n"
	"sync: fence\ngranularity: 1\n\n";

static char *cpu_full(const char *program)
{
	return program_reply(cpu_directive, program);
}

static char *source_file(const char *rel)
{
	const char *src = getenv("CUCO_SOURCE_ROOT");
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
	return slurp(path);
}

/* e2e_begin, then `cuco init NAME --from tests/programs/PROGRAM` into the
 * case's scratch folder (its path in wl), benchmarked with fewer
 * repetitions: the test is of the flow, and each repetition is an mpirun. */
static void init_begin(e2e *t, char **texts, int n, const char *config, const char *name,
	const char *program, char *wl, size_t size)
{
	e2e_begin(t, texts, n, config);
	const char *src = getenv("CUCO_SOURCE_ROOT"), *bin = getenv("CUCO_BIN");
	snprintf(wl, size, "%s/%s", t->r.dir, name);
	char cmd[1600];
	snprintf(cmd, sizeof cmd, "'%s' init %s --from '%s/tests/programs/%s' --dir '%s' "
		">/dev/null", bin ? bin : "build/cuco", name, src ? src : ".", program, wl);
	assert_int_equal(system(cmd), 0);
	char path[1300];
	snprintf(path, sizeof path, "%s/workload.json", wl);
	char *text = slurp(path);
	cJSON *m = cJSON_Parse(text);
	assert_non_null(m);
	assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "files"),
		"seed"));
	cJSON *bench = cJSON_GetObjectItemCaseSensitive(m, "bench");
	cJSON_ReplaceItemInObjectCaseSensitive(bench, "warmup", cJSON_CreateNumber(1));
	cJSON_ReplaceItemInObjectCaseSensitive(bench, "reps", cJSON_CreateNumber(3));
	char *out = cJSON_Print(m);
	assert_int_equal(cuco_write_file(path, out, strlen(out), NULL), CUCO_OK);
	free(out);
	cJSON_Delete(m);
	free(text);
}

static void halo_begin(e2e *t, char **texts, int n, const char *config, char *wl, size_t size)
{
	init_begin(t, texts, n, config, "halo", "halo.c", wl, size);
}

static bool mpi_missing(void)
{
	return system("command -v mpicc >/dev/null && command -v mpirun >/dev/null") != 0;
}

/* The stored prompt of a candidate (malloc'd). */
static char *prompt_of(const e2e *t, const cuco_candidate *c)
{
	assert_true(c->prompt_hash[0] != '\0');
	char *text = NULL;
	size_t len = 0;
	cuco_err err = { 0 };
	if (cuco_source_read(t->st, c->prompt_hash, &text, &len, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return text;
}

/* Stage A keeps the program (the scripted model, not the test's subject);
 * stage B is halo_put.c, a one-sided exchange with markers; a third reply
 * edits the update inside the markers. */
static void halo_replies(char *texts[3])
{
	char *baseline = source_file("tests/programs/halo.c");
	char *put = source_file("tests/agents/fixtures/halo_put.c");
	cuco_buf a = { 0 };
	cuco_buf_printf(&a, "/* stage A: the exchange kept as it is */\n%s", baseline);
	texts[0] = cpu_full(a.data);
	texts[1] = cpu_full(put);
	cuco_buf c = { 0 };
	cuco_buf_printf(&c, "%s<<<<<<< SEARCH\n\t\tv[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + "
		"u[i + 1]);\n=======\n\t\tv[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);\n"
		">>>>>>> REPLACE\n", cpu_directive);
	texts[2] = c.data;
	cuco_buf_free(&a);
	free(baseline);
	free(put);
}

static const cuco_phase *phase_of(const cuco_candidate *c, const char *name)
{
	for (int i = 0; i < c->timing.nphases; i++)
		if (strcmp(c->timing.phases[i].name, name) == 0)
			return &c->timing.phases[i];
	return NULL;
}

/* A program printing CUCo's own lines (a block per rank, a time per
 * repetition, its phase lines, rank 0's verdict), made a workload by cuco
 * init, runs and is measured: the baseline, and stage A's program (the
 * same code from a scripted model), each with its per-rank times read as
 * samples and CUCo's phases. */
static void test_cuco_style_run(void **state)
{
	(void)state;
	if (mpi_missing())
		skip();
	char *program = source_file("tests/programs/cuco_style.c");
	char *texts[1] = { cpu_full(program) };
	free(program);
	e2e t;
	char wl[256];
	init_begin(&t, texts, 1, "", "cuco_style", "cuco_style.c", wl, sizeof wl);
	const char *args[] = { "--strategy", "evolve", "--budget", "1", NULL };
	e2e_run(&t, wl, args);
	const cuco_candidate *base = nth_origin(&t.rows, CUCO_ORIGIN_BASELINE, 0);
	const cuco_candidate *a = nth_origin(&t.rows, CUCO_ORIGIN_FASTPATH, 0);
	assert_non_null(base);
	assert_non_null(a);
	const cuco_candidate *both[2] = { base, a };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(both[i]->status, CUCO_STATUS_DONE);
		assert_true(both[i]->timing.samples >= 5 && both[i]->timing.median_us > 0);
		const cuco_phase *comm = phase_of(both[i], "allgather"), *comp = phase_of(both[i], "compute");
		assert_non_null(comm);
		assert_non_null(comp);
		assert_true(comm->us > 0 && comp->us > 0);
	}
	e2e_end(&t);
}

static void test_no_seed_evolve(void **state)
{
	(void)state;
	if (mpi_missing())
		skip();
	char *texts[3];
	halo_replies(texts);
	e2e t;
	char wl[256];
	halo_begin(&t, texts, 3, "", wl, sizeof wl);
	const char *args[] = { "--strategy", "evolve", "--budget", "3", NULL };
	e2e_run(&t, wl, args);
	const run_rows rows = t.rows;
	assert_null(nth_origin(&rows, CUCO_ORIGIN_SEED, 0));
	const cuco_candidate *a = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 0);
	const cuco_candidate *b = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 1);
	const cuco_candidate *base = nth_origin(&rows, CUCO_ORIGIN_BASELINE, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(base);
	assert_int_equal(a->status, CUCO_STATUS_DONE);
	assert_int_equal(a->parents[0], base->id);
	assert_int_equal(b->status, CUCO_STATUS_DONE);
	assert_int_equal(b->parents[0], a->id);
	assert_int_equal(b->island, 0);
	/* The islands started from stage B's program and the child was
	 * measured and verified. */
	const cuco_candidate *child = NULL;
	assert_int_equal(llm_children(&rows, &child, 1), 1);
	assert_int_equal(child->parents[0], b->id);
	assert_int_equal(child->status, CUCO_STATUS_DONE);
	assert_true(child->timing.median_us > 0 && child->timing.samples > 0);
	fp_event ev;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(t.st, fp_txn, &ev, &err), CUCO_OK);
	char want[64];
	snprintf(want, sizeof want, "device-initiated seed #%llu after 1 + 1 attempts",
		(unsigned long long)b->id);
	assert_non_null(strstr(ev.text, want));
	/* Stage A's stored prompt: the baseline's two-sided calls analysed,
	 * mpi.h's one-sided calls as the reference; stage B's: the same for
	 * stage A's program. */
	char *pa = prompt_of(&t, a), *pb = prompt_of(&t, b);
	assert_non_null(strstr(pa, "## The program's host communication"));
	assert_non_null(strstr(pa, "MPI_Isend"));
	assert_non_null(strstr(pa, "## API reference"));
	assert_non_null(strstr(pa, "MPI_Put"));
	assert_non_null(strstr(pa, "Stage A:"));
	assert_non_null(strstr(pb, "## The program's host communication"));
	assert_non_null(strstr(pb, "## API reference"));
	assert_non_null(strstr(pb, "Stage B:"));
	free(pa);
	free(pb);
	e2e_end(&t);
}

static void test_no_seed_beam(void **state)
{
	(void)state;
	if (mpi_missing())
		skip();
	/* Stage A, stage B, then the planner's plan and its implementation. */
	char *texts[4];
	halo_replies(texts);
	texts[3] = texts[2];
	texts[2] = cuco_xstrdup("Fold the stencil\nWrite the update as 0.5 u + 0.25 (left + right).");
	e2e t;
	char wl[256];
	halo_begin(&t, texts, 4, "[beam]\nwidth = 1\nplans = 1\nsamples = 1\niterations = 1\n", wl,
		sizeof wl);
	/* Two workers: the second has nothing to propose while an attempt is
	 * evaluated (no seed to work on) and waits for it. */
	const char *args[] = { "--strategy", "beam", "--budget", "3", "--jobs", "2", NULL };
	e2e_run(&t, wl, args);
	const run_rows rows = t.rows;
	const cuco_candidate *b = nth_origin(&rows, CUCO_ORIGIN_FASTPATH, 1);
	const cuco_candidate *plan = nth_origin(&rows, CUCO_ORIGIN_BEAM_PLAN, 0);
	assert_null(nth_origin(&rows, CUCO_ORIGIN_SEED, 0));
	assert_non_null(b);
	assert_non_null(plan);
	assert_int_equal(b->status, CUCO_STATUS_DONE);
	assert_int_equal(plan->parents[0], b->id);  /* the beam began at stage B's program */
	assert_int_equal(plan->status, CUCO_STATUS_DONE);
	e2e_end(&t);
}

/* A run that cannot start from anything says why, in one line, and exits
 * with the README's code. */
static void expect_refusal(const char *config, char **texts, int n, const char *strategy,
	int code, const char *why)
{
	e2e t;
	char wl[256];
	halo_begin(&t, texts, n, config, wl, sizeof wl);
	const char *args[] = { "--strategy", strategy, "--budget", "3", NULL };
	assert_int_equal(run_cuco(&t.r, wl, args), code);
	char *out = slurp(t.r.out);
	if (!strstr(out, why))
		fail_msg("wanted \"%s\" in:\n%s", why, out);
	free(out);
	e2e_end(&t);
}

static void test_no_seed_refusals(void **state)
{
	(void)state;
	if (mpi_missing())
		skip();
	expect_refusal("", NULL, 0, "evolve", 1,
		"halo has no seed: strategy evolve starts from the program the fast path makes, "
		"which needs a model");
	expect_refusal("", NULL, 0, "tune", 1, "halo has no seed, and the directive tuner");
	char *texts[1] = { cpu_full("int main(void) { return broken; }\n") };
	expect_refusal("[fastpath]\nstage_a_max = 1\n", texts, 1, "evolve", 2,
		"halo has no seed and the fast path made no device-initiated program");
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
	assert_string_equal(b1->failure.error_class, "suspect");
	assert_non_null(strstr(b1->failure.excerpt, "source: line"));
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

/* Stage B writes the whole program, so what it puts outside its
 * EVOLVE-BLOCKs is the model's as much as their insides: a helper above
 * main() that reads the environment, called from the block, is refused as
 * suspect like the same call inside the block (trust.c). */
static void test_outside_blocks_scanned(void **state)
{
	(void)state;
	char *seed_text = source_file("tests/agents/fixtures/toy/seed.c");
	cuco_buf marked = { 0 }, cheat = { 0 };
	marked_seed(seed_text, "\tif (toy_peek())\n\t\treturn 2;\n", &marked);
	const char *main_at = strstr(marked.data, "int main(");
	assert_non_null(main_at);
	cuco_buf_append(&cheat, marked.data, (size_t)(main_at - marked.data));
	cuco_buf_printf(&cheat, "static int toy_peek(void) { return getenv(\"TOY_NEVER_SET\") != 0; }\n\n%s",
		main_at);
	char *texts[2] = { full(seed_text), full(cheat.data) };
	e2e t;
	e2e_begin(&t, texts, 2, "");
	const char *args[] = { "--strategy", "evolve", "--budget", "2", NULL };
	e2e_run(&t, toy, args);
	const cuco_candidate *a = nth_origin(&t.rows, CUCO_ORIGIN_FASTPATH, 0);
	const cuco_candidate *b = nth_origin(&t.rows, CUCO_ORIGIN_FASTPATH, 1);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->status, CUCO_STATUS_DONE);  /* the seed's own lines pass */
	if (strcmp(b->failure.error_class, "suspect") != 0)
		fail_msg("stage B's helper outside the blocks got through: status %d, class \"%s\"",
			(int)b->status, b->failure.error_class);
	assert_non_null(strstr(b->failure.excerpt, "source: line 6 uses getenv"));
	e2e_end(&t);
	free(seed_text);
	cuco_buf_free(&marked);
	cuco_buf_free(&cheat);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_cap),
		cmocka_unit_test(test_markers_required),
		cmocka_unit_test(test_suspect_never_parent),
		cmocka_unit_test(test_outside_blocks_scanned),
		cmocka_unit_test(test_no_seed_evolve),
		cmocka_unit_test(test_cuco_style_run),
		cmocka_unit_test(test_no_seed_beam),
		cmocka_unit_test(test_no_seed_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
