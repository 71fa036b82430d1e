/* test_llm_prompt.c — what a prompt carries, built from a real store and
 * workload, and how prompts and replies are kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agents.h"
#include "test_llm_toy.h"

static char top[] = "/tmp/cuco-test-prompt-XXXXXX";
static cuco_workload *wl;
static cuco_store *st;

static void cand(cuco_candidate *c, uint64_t id, cuco_origin o, cuco_status s, double score,
	int island)
{
	memset(c, 0, sizeof *c);
	c->id = id;
	c->origin = o;
	c->status = s;
	c->island = island;
	c->score = score;
	c->speedup = score;
	c->peak_fraction = NAN;
	c->latency_median_us = c->latency_min_us = c->latency_p90_us = NAN;
	cuco_directive_default(wl, &c->directive);
}

static int fill(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	const char *srcs[] = {
		"int baseline;\n",
		"// EVOLVE-BLOCK-START\nint parent_code;\n// EVOLVE-BLOCK-END\n",
		"int best_code_so_far;\n",
		"int second_parent_code;\n",
		"int failed_code;\n",
		"int rejected_code;\n",
	};
	cuco_origin origins[] = { CUCO_ORIGIN_BASELINE, CUCO_ORIGIN_SEED, CUCO_ORIGIN_LLM_DIFF,
		CUCO_ORIGIN_LLM_FULL, CUCO_ORIGIN_LLM_DIFF, CUCO_ORIGIN_LLM_DIFF };
	cuco_status status[] = { CUCO_STATUS_DONE, CUCO_STATUS_DONE, CUCO_STATUS_DONE,
		CUCO_STATUS_DONE, CUCO_STATUS_FAILED, CUCO_STATUS_REJECTED };
	double scores[] = { 1.0, 1.1, 1.5, 1.2, NAN, 1.3 };
	int rc = CUCO_OK;
	for (int i = 0; i < 6 && rc == CUCO_OK; i++) {
		cand(c, (uint64_t)i + 1, origins[i], status[i], scores[i], i == 0 ? -1 : 0);
		rc = cuco_source_put(txn, srcs[i], strlen(srcs[i]), c->source_hash);
		if (i == 0) {
			c->latency_median_us = 800;
			c->nphases = 2;
			c->phases[0] = (cuco_phase){ "compute", 500 };
			c->phases[1] = (cuco_phase){ "comm", 300 };
		}
		if (i == 1) {
			c->latency_median_us = 720;
			c->latency_min_us = 700;
			c->latency_p90_us = 750;
			c->samples = 15;
			c->nphases = 1;
			c->phases[0] = (cuco_phase){ "exposed_comm", 42.5 };
			cuco_strlcpy(c->note, "overlap the first chunk", sizeof c->note);
		}
		if (i == 4) {
			cuco_strlcpy(c->failed_stage, "compile", sizeof c->failed_stage);
			cuco_strlcpy(c->error_class, "compile-error", sizeof c->error_class);
			cuco_strlcpy(c->error_excerpt, "seed.c:3: error: 'win' undeclared", sizeof c->error_excerpt);
		}
		if (i == 5)
			cuco_strlcpy(c->reject_reason, "busy-waits on a flag without a fence",
				sizeof c->reject_reason);
		if (rc == CUCO_OK)
			rc = cuco_cand_put(txn, c);
	}
	/* A directive-only child of the seed: its code byte for byte. */
	cand(c, 7, CUCO_ORIGIN_LLM_DIFF, CUCO_STATUS_DONE, 1.15, 0);
	cuco_directive_set(&c->directive, "backend", "rma");
	if (rc == CUCO_OK)
		rc = cuco_source_put(txn, srcs[1], strlen(srcs[1]), c->source_hash);
	if (rc == CUCO_OK)
		rc = cuco_cand_put(txn, c);
	cuco_memory m = { .speedup = 1.3 };
	cuco_strlcpy(m.workload, "toy", sizeof m.workload);
	cuco_strlcpy(m.summary, "chunk the gather so the multiply starts early", sizeof m.summary);
	if (rc == CUCO_OK)
		rc = cuco_memory_add(txn, &m);
	cuco_memory other = { .speedup = 2.0 };
	cuco_strlcpy(other.workload, "another", sizeof other.workload);
	cuco_strlcpy(other.summary, "a lesson of another workload", sizeof other.summary);
	if (rc == CUCO_OK)
		rc = cuco_memory_add(txn, &other);
	free(c);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	if (toy_workload_make(top, &wl) != 0)
		return -1;
	char path[256];
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/run", top);
	if (cuco_store_open(path, CUCO_STORE_CREATE, &st, &err) != CUCO_OK ||
		cuco_store_write(st, fill, NULL, &err) != CUCO_OK)
		return fprintf(stderr, "%s\n", err.msg), -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cuco_store_close(st);
	return toy_workload_remove(top, wl);
}

typedef struct built {
	cuco_prompt_spec spec;
	cuco_buf system, user;
} built;

static int build_txn(cuco_txn *txn, void *arg)
{
	built *b = arg;
	return cuco_prompt_build(txn, &b->spec, &b->system, &b->user);
}

static void has(const char *text, const char *needle)
{
	if (!text || !strstr(text, needle))
		fail_msg("prompt lacks `%s`:\n%s", needle, text ? text : "(nothing)");
}

static void test_diff_prompt(void **state)
{
	(void)state;
	built b = { .spec = { .wl = wl, .kind = CUCO_PROMPT_DIFF, .parent = 2, .island = 0,
		.inspirations = 2, .failures = 3, .meta = "Try the shm backend with 8 chunks.",
		.hints = "keep the tile at 64", .memory = true } };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(st, build_txn, &b, &err), CUCO_OK);
	const char *s = b.system.data, *u = b.user.data;
	has(s, "# Task: Toy all-gather\nGather then multiply.\n- workload: toy; family: cpu-mpi; ranks: 2");
	has(s, "run on 2 ranks and match the reference within 0.001");
	has(s, "## notes.md\nMPI_Win_allocate_shared gives a window");
	has(s, "DIRECTIVE:\nbackend: msg | rma | shm   # how bytes move\nissuer: one | several\n");
	has(s, "granularity: an integer in [1, 64], a power of two\n");
	has(s, "- backend in {msg} with sync in {pscw}: PSCW is an RMA epoch\n");
	has(s, "<<<<<<< SEARCH\nlines copied exactly from the current program\n=======\n");
	assert_null(strstr(s, "<CODE>"));
	has(u, "# Baseline (the host-driven reference): candidate #1");
	has(u, "- phases: compute 500.0 us, comm 300.0 us\n");
	has(u, "# Current program: candidate #2 (seed, generation 0)\n");
	has(u, "speedup over the baseline 1.100x");
	has(u, "- latency: median 720.0 us, min 700.0 us, p90 750.0 us over 15 runs");
	has(u, "- phases: exposed_comm 42.5 us\n");
	has(u, "- author's note: overlap the first chunk\n");
	has(u, "```\n// EVOLVE-BLOCK-START\nint parent_code;\n// EVOLVE-BLOCK-END\n```\n");
	/* Inspirations by score, without the parent or the baseline. */
	has(u, "# Top programs so far: candidate #3");
	has(u, "int best_code_so_far;");
	has(u, "# Next top program: candidate #4");
	assert_true(strstr(u, "candidate #3") < strstr(u, "candidate #4"));
	assert_null(strstr(u, "int baseline;"));
	has(u, "# Recent failures\n## #5 (");
	has(u, "- failed at compile (compile-error):\n```\nseed.c:3: error: 'win' undeclared\n```");
	has(u, "# Rejected by a reviewer: do not do this again\n- #6 (");
	has(u, "busy-waits on a flag without a fence");
	assert_null(strstr(u, "int rejected_code;"));
	has(u, "# Recommendations from the search so far\nTry the shm backend with 8 chunks.");
	has(u, "# Hints from the reviewer\nkeep the tile at 64");
	has(u, "- sped a program up 1.30x: chunk the gather so the multiply starts early");
	assert_null(strstr(u, "another workload"));
	has(u, "# Your task\nPropose one focused improvement");
	cuco_buf_free(&b.system);
	cuco_buf_free(&b.user);
}

/* No source twice: a top program with the current program's code shows
 * its directive and results, and says whose code it is. */
static void test_no_repeated_code(void **state)
{
	(void)state;
	built b = { .spec = { .wl = wl, .kind = CUCO_PROMPT_DIFF, .parent = 2, .island = 0,
		.inspirations = 3 } };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(st, build_txn, &b, &err), CUCO_OK);
	const char *u = b.user.data;
	has(u, "# Next top program: candidate #7");
	has(u, "- code: the same as candidate #2's above; only the directive differs\n");
	const char *first = strstr(u, "int parent_code;");
	assert_non_null(first);
	assert_null(strstr(first + 1, "int parent_code;"));
	cuco_buf_free(&b.system);
	cuco_buf_free(&b.user);
}

static void test_cross_and_fix_prompts(void **state)
{
	(void)state;
	built b = { .spec = { .wl = wl, .kind = CUCO_PROMPT_CROSS, .parent = 2, .other = 4,
		.island = -1, .inspirations = 1 } };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(st, build_txn, &b, &err), CUCO_OK);
	has(b.system.data, "<CODE>\n```\nthe whole program\n```\n</CODE>");
	has(b.user.data, "# Second parent: candidate #4");
	has(b.user.data, "int second_parent_code;");
	/* The one inspiration is the best that is neither parent. */
	has(b.user.data, "# Top programs so far: candidate #3");
	assert_null(strstr(b.user.data, "Recent failures"));
	assert_null(strstr(b.user.data, "Optimization memory"));
	has(b.user.data, "Combine the strengths");
	cuco_buf_free(&b.system);
	cuco_buf_free(&b.user);

	b = (built){ .spec = { .wl = wl, .kind = CUCO_PROMPT_FIX, .parent = 99, .island = 0 } };
	assert_int_equal(cuco_store_read(st, build_txn, &b, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "prompt: no candidate 99");
	cuco_buf_free(&b.system);
	cuco_buf_free(&b.user);
}

typedef struct kept {
	cuco_candidate c;
	char *prompt, *reply;
	size_t plen, rlen;
} kept;

static int keep_txn(cuco_txn *txn, void *arg)
{
	kept *k = arg;
	int rc = cuco_prompt_keep(txn, "the prompt", "the reply", &k->c);
	if (rc == CUCO_OK)
		rc = cuco_source_get(txn, k->c.prompt_hash, &k->prompt, &k->plen);
	if (rc == CUCO_OK)
		rc = cuco_source_get(txn, k->c.reply_hash, &k->reply, &k->rlen);
	return rc;
}

static void test_keep(void **state)
{
	(void)state;
	kept a = { 0 }, b = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(st, keep_txn, &a, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, keep_txn, &b, &err), CUCO_OK);
	assert_string_equal(a.prompt, "the prompt");
	assert_string_equal(a.reply, "the reply");
	/* Content-addressed: the same text is one record. */
	assert_string_equal(a.c.prompt_hash, b.c.prompt_hash);
	assert_string_not_equal(a.c.prompt_hash, a.c.reply_hash);
	free(a.prompt);
	free(a.reply);
	free(b.prompt);
	free(b.reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_prompt),
		cmocka_unit_test(test_no_repeated_code),
		cmocka_unit_test(test_cross_and_fix_prompts),
		cmocka_unit_test(test_keep),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
