/* test_store.c — the store's contract: records round-trip, indexes stay in
 * step, bad stores are refused untouched, the map grows, and a second
 * process can read and write the same run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <lmdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "util.h"

static void sample_candidate(cuco_candidate *c, uint64_t parent)
{
	memset(c, 0, sizeof *c);
	if (parent) {
		c->nparents = 1;
		c->parents[0] = parent;
	}
	c->island = 1;
	c->generation = 3;
	c->origin = CUCO_ORIGIN_LLM_DIFF;
	c->status = CUCO_STATUS_DONE;
	strcpy(c->directive.backend, "LSA");
	strcpy(c->directive.issuer, "warp");
	strcpy(c->directive.placement, "interleave");
	strcpy(c->directive.sync, "peer");
	strcpy(c->directive.granularity, "64KiB");
	c->directive.nknobs = 2;
	strcpy(c->directive.knobs[0].name, "ctas");
	strcpy(c->directive.knobs[0].value, "16");
	strcpy(c->directive.knobs[1].name, "tile");
	strcpy(c->directive.knobs[1].value, "128");
	strcpy(c->failure.excerpt, "line one\nline \"two\"\ttab");
	c->score = 1.25;
	c->timing.min_us = 90;
	c->timing.median_us = 100;
	c->timing.p90_us = 110;
	c->timing.samples = 15;
	c->timing.spread = 0.05;
	c->timing.nphases = 2;
	strcpy(c->timing.phases[0].name, "compute");
	c->timing.phases[0].us = 70;
	strcpy(c->timing.phases[1].name, "comm");
	c->timing.phases[1].us = 30;
	c->timing.max_error = 1e-6;
	c->speedup = 1.25;
	c->speedup_lo = 1.18;
	c->speedup_hi = 1.36;
	c->confidence = 0.995;
	c->rounds = 12;
	c->nratios = 12;
	for (int i = 0; i < 12; i++)
		c->ratios[i] = 1.2 + 0.01 * i;
	c->verdict = CUCO_VERDICT_FASTER;
	c->timing.peak_fraction = NAN;
	c->pinned = true;
	strcpy(c->model, "gpt-x");
	c->tokens_prompt = 1234;
	c->tokens_completion = 567;
	c->cost_usd = 0.0123;
	strcpy(c->note, "interleave the all-gather with the GEMM tiles");
}

/* ---- round trips ------------------------------------------------------------ */

struct put_get { cuco_candidate in, out; char text[64]; char hash[CUCO_HASH_LEN + 1]; };

static int put_one(cuco_txn *txn, void *arg)
{
	struct put_get *pg = arg;
	int rc = cuco_source_put(txn, pg->text, strlen(pg->text), pg->in.source_hash);
	return rc ? rc : cuco_cand_put(txn, &pg->in);
}

static int get_one(cuco_txn *txn, void *arg)
{
	struct put_get *pg = arg;
	return cuco_cand_get(txn, pg->in.id, &pg->out);
}

static void test_candidate_roundtrip(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	struct put_get *pg = calloc(1, sizeof *pg);
	sample_candidate(&pg->in, 0);
	strcpy(pg->text, "__global__ void k() {}\n");
	assert_int_equal(cuco_store_write(st, put_one, pg, &err), CUCO_OK);
	assert_int_equal(pg->in.id, 1);
	assert_true(pg->in.created > 0);
	assert_int_equal(cuco_store_read(st, get_one, pg, &err), CUCO_OK);
	cuco_candidate *a = &pg->in, *b = &pg->out;
	assert_int_equal(b->id, 1);
	assert_int_equal(b->island, 1);
	assert_int_equal(b->generation, 3);
	assert_int_equal(b->origin, CUCO_ORIGIN_LLM_DIFF);
	assert_int_equal(b->status, CUCO_STATUS_DONE);
	assert_memory_equal(&a->directive, &b->directive, sizeof a->directive);
	assert_string_equal(a->source_hash, b->source_hash);
	assert_string_equal(a->failure.excerpt, b->failure.excerpt);
	assert_true(b->score == 1.25 && b->timing.median_us == 100 && b->timing.samples == 15);
	assert_int_equal(b->timing.nphases, 2);
	assert_string_equal(b->timing.phases[1].name, "comm");
	assert_true(isnan(b->timing.peak_fraction));
	assert_true(b->speedup == 1.25 && b->speedup_lo == 1.18 && b->speedup_hi == 1.36);
	assert_true(b->confidence == 0.995 && b->rounds == 12);
	assert_int_equal(b->nratios, 12);  /* the rounds behind the interval */
	assert_memory_equal(a->ratios, b->ratios, 12 * sizeof *a->ratios);
	assert_int_equal(b->verdict, CUCO_VERDICT_FASTER);
	assert_true(b->pinned);
	assert_int_equal(b->tokens_prompt, 1234);
	assert_string_equal(b->note, a->note);
	/* The next insert gets the next id. */
	pg->in.id = 0;
	assert_int_equal(cuco_store_write(st, put_one, pg, &err), CUCO_OK);
	assert_int_equal(pg->in.id, 2);
	/* A missing id is reported as such. */
	pg->in.id = 99;
	assert_int_equal(cuco_store_read(st, get_one, pg, &err), CUCO_ENOTFOUND);
	assert_non_null(strstr(err.msg, "candidate 99"));
	free(pg);
	cuco_store_close(st);
	rmtree(dir);
}

/* The one table of directive dimensions: names, fields and JSON agree. */
static void test_directive_dims(void **state)
{
	(void)state;
	static const char *const names[] = { "backend", "issuer", "placement", "sync", "granularity" };
	assert_int_equal(CUCO_DIRDIM_COUNT, 5);
	cuco_directive d;
	memset(&d, 0, sizeof d);
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++) {
		assert_string_equal(cuco_dirdim_name((cuco_dirdim)i), names[i]);
		assert_int_equal(cuco_dirdim_find(names[i]), i);
		assert_true(strlen(cuco_dirdim_help((cuco_dirdim)i)) > 20);
		assert_int_equal(cuco_directive_set(&d, names[i], names[i] + 1), CUCO_OK);
	}
	assert_string_equal(d.placement, "lacement");
	assert_string_equal(cuco_directive_get(&d, CUCO_DIRDIM_SYNC), "ync");
	assert_int_equal(cuco_dirdim_find("tile"), -1);
	assert_string_equal(cuco_dirdim_name(CUCO_DIRDIM_COUNT), "?");
	/* Anything else is a knob, added once and then replaced. */
	assert_int_equal(cuco_directive_set(&d, "tile", "64"), CUCO_OK);
	assert_int_equal(cuco_directive_set(&d, "tile", "128"), CUCO_OK);
	assert_int_equal(d.nknobs, 1);
	assert_string_equal(cuco_directive_value(&d, "tile"), "128");
	assert_string_equal(cuco_directive_value(&d, "issuer"), "ssuer");
	assert_string_equal(cuco_directive_value(&d, "nosuch"), "");
	char big[64];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(cuco_directive_set(&d, "backend", big), CUCO_EDATA);
	char text[256];
	cuco_directive_short(&d, text, sizeof text);
	assert_string_equal(text, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/ssuer/lacement/ync/ranularity tile=128");
	/* The JSON form names every dimension by the table's name. */
	cJSON *j = cuco_directive_to_json(&d);
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, names[i])));
	cuco_directive back;
	cuco_err err = { 0 };
	assert_int_equal(cuco_directive_from_json(j, &back, &err), CUCO_OK);
	assert_memory_equal(&back, &d, sizeof d);
	cJSON_Delete(j);
}

/* The one table of failure classes: every name parses back to itself. */
static void test_fail_classes(void **state)
{
	(void)state;
	static const char *const names[] = { "compile-error", "crash", "wrong-answer", "timeout",
		"protocol", "environment", "suspect" };
	assert_true(CUCO_FAIL_COUNT >= 7);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		cuco_fail_class f;
		assert_int_equal(cuco_fail_parse(names[i], &f), CUCO_OK);
		assert_string_equal(cuco_fail_name(f), names[i]);
		assert_true(strlen(cuco_fail_help(f)) > 20);
	}
	for (int i = 0; i < CUCO_FAIL_COUNT; i++) {
		cuco_fail_class f;
		assert_int_equal(cuco_fail_parse(cuco_fail_name((cuco_fail_class)i), &f), CUCO_OK);
		assert_int_equal(f, i);
		/* A name must fit the record's field. */
		assert_true(strlen(cuco_fail_name(f)) < sizeof ((cuco_candidate *)0)->failure.error_class);
	}
	cuco_fail_class f;
	assert_int_equal(cuco_fail_parse("segfault", &f), CUCO_EDATA);
	assert_string_equal(cuco_fail_name(CUCO_FAIL_COUNT), "?");
}

static void test_json_rejects_bad_types(void **state)
{
	(void)state;
	cuco_candidate c;
	cuco_err err = { 0 };
	cJSON *j = cJSON_Parse("{\"id\": 3, \"score\": \"fast\"}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "field score: expected a number");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"id\": 3, \"origin\": \"alien\"}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "field origin: unknown value 'alien'");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"id\": 3, \"parents\": [1, 2, 3]}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"id\": 3, \"speedup\": \"1.2x\"}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "field speedup: expected an object");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"id\": 3, \"speedup\": {\"value\": 1.2, \"rounds\": -4}}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "speedup: rounds -4 is out of 0..1000000");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"id\": 3, \"speedup\": {\"value\": 1.2, \"rounds\": 2, \"ratios\": [1.1, -1]}}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "speedup: field ratios: expected at most 64 positive numbers");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"id\": 3, \"verdict\": \"probably\"}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "field verdict: unknown value 'probably'");
	cJSON_Delete(j);
}

/* A store written before intervals holds a bare number: one measurement. */
static void test_json_reads_old_speedup(void **state)
{
	(void)state;
	cuco_candidate c;
	cuco_err err = { 0 };
	cJSON *j = cJSON_Parse("{\"id\": 3, \"speedup\": 1.31}");
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_OK);
	assert_true(c.speedup == 1.31 && c.rounds == 1 && isnan(c.speedup_lo));
	assert_int_equal(c.verdict, CUCO_VERDICT_NONE);
	cJSON_Delete(j);
	/* And an interval is written only with the rounds behind it. */
	c.speedup_lo = 0;
	j = cuco_candidate_to_json(&c);
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(j, "speedup");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sp, "lo")));
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(sp, "rounds")->valueint, 1);
	cJSON_Delete(j);
	/* Ratios that JSON cannot hold (a round timed at 0) are left out, so
	 * that the record reads back. */
	c.rounds = c.nratios = 2;
	c.ratios[0] = 1.1;
	c.ratios[1] = INFINITY;
	j = cuco_candidate_to_json(&c);
	assert_int_equal(cuco_candidate_from_json(j, &c, &err), CUCO_OK);
	assert_int_equal(c.nratios, 0);
	cJSON_Delete(j);
}

/* ---- indexes ---------------------------------------------------------------- */

struct tree { uint64_t ids[6]; };

static int build_tree(cuco_txn *txn, void *arg)
{
	struct tree *t = arg;
	/* 1 ← 2 ← 4, 1 ← 3, 2 ← 5, and 6 with parents 4 and 3 (crossover). */
	uint64_t parent_of[6][2] = { { 0, 0 }, { 1, 0 }, { 1, 0 }, { 2, 0 }, { 2, 0 }, { 4, 3 } };
	double scores[6] = { 1.0, 1.5, 0.9, 2.0, NAN, 1.7 };
	for (int i = 0; i < 6; i++) {
		cuco_candidate c;
		sample_candidate(&c, parent_of[i][0]);
		if (parent_of[i][1]) {
			c.nparents = 2;
			c.parents[1] = parent_of[i][1];
		}
		c.score = scores[i];
		c.status = isnan(scores[i]) ? CUCO_STATUS_FAILED : CUCO_STATUS_DONE;
		int rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
		t->ids[i] = c.id;
	}
	return CUCO_OK;
}

struct checks { cuco_summary best; uint64_t *kids; size_t nkids; cuco_summary *sums; size_t n; };

static int read_checks(cuco_txn *txn, void *arg)
{
	struct checks *ck = arg;
	int rc = cuco_best(txn, &ck->best);
	if (rc == CUCO_OK)
		rc = cuco_children(txn, 2, &ck->kids, &ck->nkids);
	if (rc == CUCO_OK)
		rc = cuco_summary_all(txn, &ck->sums, &ck->n);
	return rc;
}

static int reject_four(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_candidate c;
	int rc = cuco_cand_get(txn, 4, &c);
	if (rc)
		return rc;
	c.status = CUCO_STATUS_REJECTED;
	return cuco_cand_put(txn, &c);
}

static void test_indexes(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	struct tree t;
	assert_int_equal(cuco_store_write(st, build_tree, &t, &err), CUCO_OK);
	struct checks ck = { 0 };
	assert_int_equal(cuco_store_read(st, read_checks, &ck, &err), CUCO_OK);
	assert_int_equal(ck.best.id, 4);  /* score 2.0 */
	assert_int_equal(ck.nkids, 2);
	assert_int_equal(ck.kids[0], 4);
	assert_int_equal(ck.kids[1], 5);
	assert_int_equal(ck.n, 6);

	size_t order[6];
	int depth[6];
	cuco_lineage_order(ck.sums, ck.n, order, depth);
	uint64_t want[6] = { 1, 2, 4, 6, 5, 3 };
	int want_depth[6] = { 0, 1, 2, 3, 2, 1 };
	for (int i = 0; i < 6; i++) {
		assert_int_equal(ck.sums[order[i]].id, want[i]);
		assert_int_equal(depth[i], want_depth[i]);
	}
	free(ck.kids);
	free(ck.sums);

	/* A rejected candidate leaves the best-by-score index. */
	assert_int_equal(cuco_store_write(st, reject_four, NULL, &err), CUCO_OK);
	memset(&ck, 0, sizeof ck);
	assert_int_equal(cuco_store_read(st, read_checks, &ck, &err), CUCO_OK);
	assert_int_equal(ck.best.id, 6);  /* score 1.7 */
	assert_int_equal(ck.sums[3].status, CUCO_STATUS_REJECTED);
	free(ck.kids);
	free(ck.sums);
	cuco_store_close(st);
	rmtree(dir);
}

/* ---- crowns --------------------------------------------------------------------- */

struct crowns {
	uint64_t ids[5];
	int step;
	int rc;
	cuco_summary best;
	cuco_revisit *revisits;
	size_t nrevisits;
};

static int crown_step(cuco_txn *txn, void *arg)
{
	struct crowns *cr = arg;
	cuco_candidate c;
	int rc = CUCO_OK;
	switch (cr->step) {
	case 0:  /* baseline 1, candidates 2-4, a second baseline 5 */
		for (int i = 0; i < 5 && rc == CUCO_OK; i++) {
			sample_candidate(&c, 0);
			c.origin = i == 0 || i == 4 ? CUCO_ORIGIN_BASELINE : CUCO_ORIGIN_TUNE;
			c.score = i == 2 ? 9.0 : 1.0;  /* 3 leads by score, never crowned */
			rc = cuco_cand_put(txn, &c);
			cr->ids[i] = c.id;
		}
		return rc ? rc : cuco_crown(txn, cr->ids[0]);
	case 1: return cuco_crown(txn, cr->ids[1]);
	case 2: rc = cuco_crown(txn, cr->ids[3]); return rc ? rc : cuco_crown(txn, cr->ids[0]);
	case 3: return reject_four(txn, NULL);
	case 4: return cuco_crown(txn, cr->ids[4]);
	case 5:  /* a candidate but no chain */
		sample_candidate(&c, 0);
		rc = cuco_cand_put(txn, &c);
		return rc ? rc : cuco_crown(txn, c.id);
	case 6:  /* later rounds, and the crown stands */
		return cuco_crown_revisit(txn, &(cuco_revisit){ cr->ids[1], false, "stands at 1.2x" });
	case 7:  /* refused when measured again */
		return cuco_crown_revisit(txn, &(cuco_revisit){ cr->ids[1], true, "refused: spot check" });
	case 8: return cuco_crown(txn, cr->ids[1]);
	case 9: return cuco_crown(txn, cr->ids[2]);
	case 10: return cuco_crown_revisit(txn, &(cuco_revisit){ cr->ids[4], true, "never crowned" });
	}
	return CUCO_OK;
}

static int crown_revisits(cuco_txn *txn, void *arg)
{
	struct crowns *cr = arg;
	free(cr->revisits);
	return cuco_crown_revisits(txn, &cr->revisits, &cr->nrevisits);
}

static int crown_best(cuco_txn *txn, void *arg)
{
	struct crowns *cr = arg;
	cr->rc = cuco_best(txn, &cr->best);
	return CUCO_OK;
}

static uint64_t best_after(cuco_store *st, struct crowns *cr, int step)
{
	cuco_err err = { 0 };
	cr->step = step;
	if (cuco_store_write(st, crown_step, cr, &err) != CUCO_OK)
		fail_msg("step %d: %s", step, err.msg);
	assert_int_equal(cuco_store_read(st, crown_best, cr, &err), CUCO_OK);
	assert_int_equal(cr->rc, CUCO_OK);
	return cr->best.id;
}

/* Once a chain is started, only crowns are the best, whatever the scores. */
static void test_crowns(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	struct crowns cr = { 0 };
	uint64_t first = best_after(st, &cr, 0);
	assert_int_equal(first, cr.ids[0]);  /* nothing crowned: the baseline */
	assert_int_equal(best_after(st, &cr, 1), cr.ids[1]);
	assert_int_equal(best_after(st, &cr, 2), cr.ids[3]);  /* the same baseline goes on */
	assert_int_equal(best_after(st, &cr, 3), cr.ids[1]);  /* rejected: the crown steps down */
	/* Revisited: a crown that stands stays; one that lapses steps down,
	 * and is never crowned again; the revisits are kept in order. */
	assert_int_equal(best_after(st, &cr, 6), cr.ids[1]);
	assert_int_equal(best_after(st, &cr, 7), cr.ids[0]);
	cuco_err err = { 0 };
	cr.step = 8;
	assert_int_equal(cuco_store_write(st, crown_step, &cr, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "crown #2: its crown lapsed"));
	cr.step = 10;
	assert_int_equal(cuco_store_write(st, crown_step, &cr, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "revisit #5: never crowned"));
	assert_int_equal(best_after(st, &cr, 9), cr.ids[2]);
	assert_int_equal(cuco_store_read(st, crown_revisits, &cr, &err), CUCO_OK);
	assert_int_equal(cr.nrevisits, 2);
	assert_true(cr.revisits[0].id == cr.ids[1] && !cr.revisits[0].lapsed);
	assert_string_equal(cr.revisits[0].why, "stands at 1.2x");
	assert_true(cr.revisits[1].id == cr.ids[1] && cr.revisits[1].lapsed);
	assert_string_equal(cr.revisits[1].why, "refused: spot check");
	assert_int_equal(best_after(st, &cr, 4), cr.ids[4]);  /* a new baseline starts again */
	assert_int_equal(cuco_store_read(st, crown_revisits, &cr, &err), CUCO_OK);
	assert_int_equal(cr.nrevisits, 0);  /* with no revisits */
	free(cr.revisits);
	/* A crown without a chain is refused. */
	char dir2[64];
	tmpdir(dir2);
	cuco_store *st2 = open_new(dir2);
	cr.step = 5;
	assert_int_equal(cuco_store_write(st2, crown_step, &cr, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "crown #1: no chain of crowns yet"));
	/* Without a chain (an older store) the best is the top score. */
	assert_int_equal(cuco_store_read(st2, crown_best, &cr, &err), CUCO_OK);
	assert_int_equal(cr.rc, CUCO_ENOTFOUND);  /* the refused write left nothing */
	cuco_store_close(st2);
	rmtree(dir2);
	cuco_store_close(st);
	rmtree(dir);
}

/* ---- a person's actions: the one set of rules ------------------------------------ */

#define NRULES 19

struct rules {
	char why[NRULES][256];
	int rc[NRULES];
	cuco_candidate after[4];  /* #2 after the reject and after the un-reject, #3, #4 */
	char hash[CUCO_HASH_LEN + 1];
	char respaced[CUCO_HASH_LEN + 1];  /* #13's source, comments and spacing aside */
	char changed[CUCO_HASH_LEN + 1];   /* a different program */
};

static int act(cuco_txn *txn, struct rules *r, int k, cuco_command_kind kind, uint64_t id,
	int island, const char *text, cuco_candidate *out)
{
	cuco_command cmd = { .kind = kind, .candidate = id, .island = island };
	cuco_strlcpy(cmd.text, text, sizeof cmd.text);
	if (kind == CUCO_CMD_EDIT)
		strcpy(cmd.source_hash, k == 13 || k == 16 ? r->hash : k == 17 ? r->respaced
			: k == 18 ? r->changed : "0123456789abcdef0123456789abcdef");
	return r->rc[k] = cuco_action_apply(txn, &cmd, out, r->why[k], sizeof r->why[k]);
}

static int apply_rules(cuco_txn *txn, void *arg)
{
	struct rules *r = arg;
	cuco_candidate c;
	sample_candidate(&c, 0);
	c.origin = CUCO_ORIGIN_BASELINE;
	c.pinned = false;
	int rc = cuco_cand_put(txn, &c);              /* #1, the baseline */
	sample_candidate(&c, 1);                      /* #2, pinned, timed */
	if (!rc)
		rc = cuco_cand_put(txn, &c);
	sample_candidate(&c, 1);                      /* #3, failed at run */
	c.status = CUCO_STATUS_FAILED;
	strcpy(c.failure.stage, "run");
	strcpy(c.failure.error_class, "wrong-answer");
	if (!rc)
		rc = cuco_cand_put(txn, &c);
	sample_candidate(&c, 1);                      /* #4, never evaluated */
	c.status = CUCO_STATUS_QUEUED;
	c.timing.samples = 0;
	c.timing.min_us = c.timing.median_us = c.timing.p90_us = NAN;
	if (!rc)
		rc = cuco_cand_put(txn, &c);
	const char *text = "int main(void) { return 1; }\n";
	const char *respaced = "int main(void)\n{\n\treturn 1;  /* as before */\n}\n";
	const char *changed = "int main(void) { return 2; }\n";
	if (!rc)
		rc = cuco_source_put(txn, text, strlen(text), r->hash);
	if (!rc)
		rc = cuco_source_put(txn, respaced, strlen(respaced), r->respaced);
	if (!rc)
		rc = cuco_source_put(txn, changed, strlen(changed), r->changed);
	if (rc)
		return rc;
	act(txn, r, 0, CUCO_CMD_REJECT, 1, -1, "slow", NULL);
	act(txn, r, 1, CUCO_CMD_REJECT, 2, -1, "races on the flag", &r->after[0]);
	act(txn, r, 2, CUCO_CMD_PIN, 2, -1, "", NULL);
	act(txn, r, 3, CUCO_CMD_UNPIN, 9, -1, "", NULL);
	act(txn, r, 4, CUCO_CMD_PIN, 1, -1, "", NULL);
	act(txn, r, 5, CUCO_CMD_UNREJECT, 2, -1, "", &r->after[1]);
	act(txn, r, 6, CUCO_CMD_UNREJECT, 2, -1, "", NULL);  /* again: nothing changes */
	act(txn, r, 7, CUCO_CMD_REJECT, 3, -1, "", NULL);
	act(txn, r, 8, CUCO_CMD_UNREJECT, 3, -1, "", &r->after[2]);
	act(txn, r, 9, CUCO_CMD_REJECT, 4, -1, "no", NULL);
	act(txn, r, 10, CUCO_CMD_UNREJECT, 4, -1, "", &r->after[3]);
	act(txn, r, 11, CUCO_CMD_HINT, 2, -1, "", NULL);
	act(txn, r, 12, CUCO_CMD_EDIT, 2, -1, "", NULL);  /* no such source */
	act(txn, r, 13, CUCO_CMD_EDIT, 2, -1, "", NULL);
	act(txn, r, 14, CUCO_CMD_HINT, 0, -7, "try warps", NULL);
	act(txn, r, 15, CUCO_CMD_PAUSE, 0, -1, "", NULL);
	/* The edit of #13 made #5 (as the engine makes it: the parent's
	 * directive, the edited source); saved again, it is the same program. */
	if ((rc = cuco_cand_get(txn, 2, &c)))
		return rc;
	c.id = 0;
	c.origin = CUCO_ORIGIN_HUMAN;
	strcpy(c.source_hash, r->hash);
	if ((rc = cuco_cand_put(txn, &c)))
		return rc;
	act(txn, r, 16, CUCO_CMD_EDIT, 2, -1, "", NULL);
	act(txn, r, 17, CUCO_CMD_EDIT, 2, -1, "", NULL);  /* #5 again, re-spaced */
	act(txn, r, 18, CUCO_CMD_EDIT, 2, -1, "", NULL);  /* a new program */
	return CUCO_OK;
}

static void test_action_rules(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	struct rules *r = calloc(1, sizeof *r);
	assert_int_equal(cuco_store_write(st, apply_rules, r, &err), CUCO_OK);
	assert_int_equal(r->rc[0], CUCO_EDATA);     /* the baseline stays */
	assert_non_null(strstr(r->why[0], "baseline cannot be rejected"));
	assert_int_equal(r->rc[1], CUCO_OK);
	assert_int_equal(r->after[0].status, CUCO_STATUS_REJECTED);
	assert_false(r->after[0].pinned);           /* rejecting unpins */
	assert_string_equal(r->after[0].reject_reason, "races on the flag");
	assert_int_equal(r->rc[2], CUCO_EDATA);     /* a rejected one cannot be pinned */
	assert_non_null(strstr(r->why[2], "cannot be pinned"));
	assert_int_equal(r->rc[3], CUCO_ENOTFOUND);
	assert_non_null(strstr(r->why[3], "candidate 9"));
	assert_int_equal(r->rc[4], CUCO_OK);
	/* Un-rejecting gives back what the record reached. */
	assert_int_equal(r->rc[5], CUCO_OK);
	assert_int_equal(r->after[1].status, CUCO_STATUS_DONE);
	assert_string_equal(r->after[1].reject_reason, "");
	assert_int_equal(r->rc[6], CUCO_OK);
	assert_int_equal(r->after[2].status, CUCO_STATUS_FAILED);
	assert_int_equal(r->after[3].status, CUCO_STATUS_QUEUED);
	assert_int_equal(r->rc[7], CUCO_OK);        /* a reason may be empty */
	assert_int_equal(r->rc[11], CUCO_EDATA);    /* a hint needs words */
	assert_int_equal(r->rc[12], CUCO_EDATA);
	assert_non_null(strstr(r->why[12], "no stored source"));
	assert_int_equal(r->rc[13], CUCO_OK);
	assert_int_equal(r->rc[14], CUCO_EDATA);
	assert_int_equal(r->rc[15], CUCO_OK);
	assert_int_equal(r->rc[16], CUCO_EDATA);    /* an edit saved twice is one candidate */
	assert_non_null(strstr(r->why[16], "and directive as candidate 5: nothing new"));
	assert_int_equal(r->rc[17], CUCO_EDATA);    /* comments and spacing are not a change */
	assert_non_null(strstr(r->why[17], "but for comments and spacing) and directive as candidate 5"));
	assert_int_equal(r->rc[18], CUCO_OK);
	free(r);
	cuco_store_close(st);
	rmtree(dir);
}

/* cuco_person_act: command and event in the same transaction, or neither. */
struct person {
	cuco_command cmd;
	int commands, events;
	cuco_command seen;
	cuco_event ev;
};

static int person_txn(cuco_txn *txn, void *arg)
{
	struct person *p = arg;
	cuco_command cmd = p->cmd;
	return cuco_person_act(txn, &cmd);
}

static int count_cmd(const cuco_command *c, void *arg)
{
	struct person *p = arg;
	p->commands++;
	p->seen = *c;
	return 0;
}

static int count_ev(const cuco_event *ev, void *arg)
{
	struct person *p = arg;
	p->events++;
	p->ev = *ev;
	return 0;
}

static int person_read(cuco_txn *txn, void *arg)
{
	struct person *p = arg;
	p->commands = p->events = 0;
	int rc = cuco_command_each(txn, count_cmd, p);
	return rc ? rc : cuco_event_each(txn, 1, count_ev, p);
}

static int put_two(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_candidate c;
	sample_candidate(&c, 0);
	c.origin = CUCO_ORIGIN_BASELINE;
	int rc = cuco_cand_put(txn, &c);
	sample_candidate(&c, 1);
	return rc ? rc : cuco_cand_put(txn, &c);
}

static void test_person_act(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(st, put_two, NULL, &err), CUCO_OK);
	struct person p = { .cmd = { .kind = CUCO_CMD_REJECT, .candidate = 1, .island = -1 } };
	strcpy(p.cmd.author, "ana@box");
	strcpy(p.cmd.text, "slow");
	assert_int_equal(cuco_store_write(st, person_txn, &p, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "baseline cannot be rejected"));
	assert_int_equal(cuco_store_read(st, person_read, &p, &err), CUCO_OK);
	assert_int_equal(p.commands + p.events, 0);  /* refused: nothing written */
	p.cmd.candidate = 2;
	assert_int_equal(cuco_store_write(st, person_txn, &p, &err), CUCO_OK);
	assert_int_equal(cuco_store_read(st, person_read, &p, &err), CUCO_OK);
	assert_int_equal(p.commands, 1);
	assert_int_equal(p.seen.kind, CUCO_CMD_REJECT);
	assert_false(p.seen.acked);
	assert_string_equal(p.seen.author, "ana@box");
	assert_int_equal(p.events, 1);
	assert_int_equal(p.ev.kind, CUCO_EVENT_REJECT);
	assert_string_equal(p.ev.name, "reject");
	assert_string_equal(p.ev.author, "ana@box");
	assert_string_equal(p.ev.text, "reject #2: slow");
	assert_int_equal(p.ev.candidate, 2);
	p.cmd = (cuco_command){ .kind = CUCO_CMD_HINT, .island = 1 };
	strcpy(p.cmd.author, "ana@box");
	strcpy(p.cmd.text, "use warps");
	assert_int_equal(cuco_store_write(st, person_txn, &p, &err), CUCO_OK);
	assert_int_equal(cuco_store_read(st, person_read, &p, &err), CUCO_OK);
	assert_string_equal(p.ev.text, "hint for island 1: use warps");
	assert_int_equal(cuco_command_parse("unreject", &p.cmd.kind), CUCO_OK);
	assert_int_equal(p.cmd.kind, CUCO_CMD_UNREJECT);
	cuco_store_close(st);
	rmtree(dir);
}

/* ---- sources, events, commands, islands, memory, meta -------------------------- */

struct misc {
	char h1[CUCO_HASH_LEN + 1], h2[CUCO_HASH_LEN + 1];
	int events_seen;
	uint64_t first_event;
	int pending;
	uint64_t cmd_seq;
	int islands, memories;
};

static int write_misc(cuco_txn *txn, void *arg)
{
	struct misc *m = arg;
	const char *text = "int main(void) { return 0; }\n";
	int rc = cuco_source_put(txn, text, strlen(text), m->h1);
	if (!rc)
		rc = cuco_source_put(txn, text, strlen(text), m->h2);
	for (int i = 0; i < 5 && !rc; i++) {
		cuco_event ev = { .kind = CUCO_EVENT_CANDIDATE, .candidate = (uint64_t)i };
		strcpy(ev.author, "engine");
		snprintf(ev.text, sizeof ev.text, "event %d", i);
		rc = cuco_event_add(txn, &ev);
		if (i == 0)
			m->first_event = ev.seq;
	}
	cuco_command cmd = { .kind = CUCO_CMD_PIN, .candidate = 3, .island = -1 };
	strcpy(cmd.author, "ana@box");
	if (!rc)
		rc = cuco_command_add(txn, &cmd);
	m->cmd_seq = cmd.seq;
	cmd.kind = CUCO_CMD_HINT;
	strcpy(cmd.text, "try a warp-level issuer");
	if (!rc)
		rc = cuco_command_add(txn, &cmd);
	cuco_island isl = { .id = 0, .generation = 4, .members = 9, .champion = 3, .best_score = 1.2 };
	strcpy(isl.phase, "explore");
	if (!rc)
		rc = cuco_island_put(txn, &isl);
	isl.id = 1;
	if (!rc)
		rc = cuco_island_put(txn, &isl);
	cuco_memory mem = { .speedup = 1.3 };
	strcpy(mem.summary, "chunk the all-gather");
	if (!rc)
		rc = cuco_memory_add(txn, &mem);
	if (!rc)
		rc = cuco_memory_add(txn, &mem);
	if (!rc)
		rc = cuco_memory_del(txn, 1);
	if (!rc)
		rc = cuco_meta_put(txn, "workload", "{\"name\":\"cpu-gemm-allgather\"}");
	return rc;
}

static int count_event(const cuco_event *ev, void *arg)
{
	struct misc *m = arg;
	m->events_seen++;
	return strncmp(ev->text, "event", 5) != 0;
}

static int count_pending(const cuco_command *c, void *arg)
{
	struct misc *m = arg;
	m->pending++;
	return c->kind == CUCO_CMD_PIN || c->kind == CUCO_CMD_HINT ? 0 : 1;
}

static int count_island(const cuco_island *isl, void *arg)
{
	((struct misc *)arg)->islands++;
	return strcmp(isl->phase, "explore") != 0;
}

static int count_memory(const cuco_memory *mem, void *arg)
{
	((struct misc *)arg)->memories++;
	return mem->id != 2;
}

static int read_misc(cuco_txn *txn, void *arg)
{
	struct misc *m = arg;
	int rc = cuco_event_each(txn, m->first_event + 2, count_event, m);
	if (!rc)
		rc = cuco_command_each_pending(txn, count_pending, m);
	if (!rc)
		rc = cuco_island_each(txn, count_island, m);
	if (!rc)
		rc = cuco_memory_each(txn, count_memory, m);
	return rc;
}

static int ack_first(cuco_txn *txn, void *arg)
{
	struct misc *m = arg;
	return cuco_command_ack(txn, m->cmd_seq, "pinned 3");
}

static void test_misc_tables(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	struct misc m = { 0 };
	assert_int_equal(cuco_store_write(st, write_misc, &m, &err), CUCO_OK);
	assert_string_equal(m.h1, m.h2);
	assert_int_equal(strlen(m.h1), CUCO_HASH_LEN);
	assert_int_equal(cuco_store_read(st, read_misc, &m, &err), CUCO_OK);
	assert_int_equal(m.events_seen, 3);
	assert_int_equal(m.pending, 2);
	assert_int_equal(m.islands, 2);
	assert_int_equal(m.memories, 1);
	assert_int_equal(cuco_store_write(st, ack_first, &m, &err), CUCO_OK);
	m.pending = 0;
	m.events_seen = m.islands = m.memories = 0;
	assert_int_equal(cuco_store_read(st, read_misc, &m, &err), CUCO_OK);
	assert_int_equal(m.pending, 1);
	cuco_store_close(st);
	rmtree(dir);
}

struct bulk { int count; char *text; size_t len; };

static int write_bulk(cuco_txn *txn, void *arg)
{
	struct bulk *b = arg;
	for (int i = 0; i < b->count; i++) {
		cuco_candidate c;
		sample_candidate(&c, 0);
		snprintf(b->text, b->len, "// %d %f\n", i, cuco_mono());
		memset(b->text + strlen(b->text), 'x', b->len - strlen(b->text) - 1);
		b->text[b->len - 1] = '\0';
		int rc = cuco_source_put(txn, b->text, b->len - 1, c.source_hash);
		if (!rc)
			rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
	}
	return CUCO_OK;
}

/* ---- refusals ------------------------------------------------------------------ */

static void file_digest(const char *path, char out[CUCO_HASH_LEN + 1])
{
	char *data;
	size_t len;
	assert_int_equal(cuco_read_file(path, 1u << 30, &data, &len, NULL), CUCO_OK);
	cuco_source_hash(data, len, out);
	free(data);
}

static void expect_refused(const char *dir, unsigned flags, const char *needle)
{
	char path[512], before[CUCO_HASH_LEN + 1] = "", after[CUCO_HASH_LEN + 1] = "";
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	bool had = access(path, F_OK) == 0;
	if (had)
		file_digest(path, before);
	cuco_store *st = NULL;
	cuco_err err = { 0 };
	if (cuco_store_open(dir, flags, &st, &err) == CUCO_OK)
		fail_msg("%s: opened, expected a refusal with '%s'", dir, needle);
	assert_null(st);
	if (!strstr(err.msg, needle))
		fail_msg("expected '%s' in: %s", needle, err.msg);
	assert_null(strchr(err.msg, '\n'));
	if (had) {
		file_digest(path, after);
		assert_string_equal(before, after);  /* nothing written */
	}
}

static void put_schema_text(const char *dir, const char *text)
{
	raw_lmdb_put(dir, "meta", "schema", 6, text, strlen(text));
}

static void test_refusals(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	char path[512];

	expect_refused("/nonexistent/cuco/run", 0, "no run directory");
	expect_refused(dir, 0, "no cuco store here");

	snprintf(path, sizeof path, "%s/data.mdb", dir);
	assert_int_equal(cuco_write_file(path, "hello, this is not a database at all\n", 37, NULL), CUCO_OK);
	expect_refused(dir, CUCO_STORE_CREATE, "not an LMDB file");
	unlink(path);

	/* A valid LMDB that some other program made. */
	raw_lmdb_put(dir, NULL, "hello", 5, "world", 5);
	expect_refused(dir, CUCO_STORE_CREATE, "not a cuco store");
	rmtree(dir);
	assert_int_equal(mkdir(dir, 0755), 0);

	/* A cuco store from a future version, one older than any this cuco
	 * reads, and versions that are not integers. */
	static const struct { const char *schema, *needle; } schemas[] = {
		{ "{\"format\":\"cuco-store\",\"version\":99}", "schema version 99 is newer" },
		{ "{\"format\":\"cuco-store\",\"version\":0}", "schema version 0 is not one this cuco reads" },
		{ "{\"format\":\"cuco-store\",\"version\":-3}", "schema version -3 is not one" },
		{ "{\"format\":\"cuco-store\",\"version\":1.5}", "schema record is not cuco's" },
		{ "{\"format\":\"cuco-store\",\"version\":\"2\"}", "schema record is not cuco's" },
		{ "{\"format\":\"cuco-store\",\"version\":1e300}", "schema record is not cuco's" },
	};
	cuco_store_close(open_new(dir));
	for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
		put_schema_text(dir, schemas[i].schema);
		expect_refused(dir, 0, schemas[i].needle);
		expect_refused(dir, CUCO_STORE_RDONLY, schemas[i].needle);
	}

	/* A truncated store: cut inside its header, and cut short of its
	 * last page (LMDB would map the missing pages: SIGBUS). */
	rmtree(dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	cuco_store_close(open_new(dir));
	assert_int_equal(truncate(path, 8), 0);
	expect_refused(dir, 0, "not a cuco store");
	rmtree(dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	cuco_store *st = open_new(dir);
	struct bulk b = { 40, malloc(4096), 4096 };
	assert_int_equal(cuco_store_write(st, write_bulk, &b, &(cuco_err){ 0 }), CUCO_OK);
	free(b.text);
	cuco_store_close(st);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size - 4096), 0);
	expect_refused(dir, 0, "truncated store");
	expect_refused(dir, CUCO_STORE_RDONLY, "truncated store");
	assert_int_equal(truncate(path, 69632), 0);
	expect_refused(dir, CUCO_STORE_RDONLY, "truncated store");
	rmtree(dir);
}

/* ---- records under the wrong key ----------------------------------------------- */

static int put_rows(cuco_txn *txn, void *arg)
{
	(void)arg;
	for (uint64_t parent = 0; parent < 2; parent++) {
		cuco_candidate c;
		sample_candidate(&c, parent);
		int rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
	}
	cuco_event ev = { .kind = CUCO_EVENT_HINT };
	char hash[CUCO_HASH_LEN + 1];
	int rc = cuco_event_add(txn, &ev);
	return rc ? rc : cuco_source_put(txn, "int main(void) { return 0; }\n", 29, hash);
}

/* A fresh store in dir holding put_rows's records. */
static void store_of_two(char dir[64])
{
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	assert_int_equal(cuco_store_write(st, put_rows, NULL, &(cuco_err){ 0 }), CUCO_OK);
	cuco_store_close(st);
}

static int get_candidate_1(cuco_txn *txn, void *arg)
{
	cuco_candidate c;
	(void)arg;
	return cuco_cand_get(txn, 1, &c);
}

static int count_each(const cuco_candidate *c, void *arg)
{
	(void)c;
	++*(int *)arg;
	return 0;
}

static int walk_candidates(cuco_txn *txn, void *arg)
{
	return cuco_cand_each(txn, 1, count_each, arg);
}

static int no_event(const cuco_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
	return 0;
}

static int walk_events(cuco_txn *txn, void *arg)
{
	(void)arg;
	return cuco_event_each(txn, 1, no_event, NULL);
}

static int walk_summaries(cuco_txn *txn, void *arg)
{
	cuco_summary *sums = NULL;
	size_t n;
	int rc = cuco_summary_all(txn, &sums, &n);
	free(sums);
	(void)arg;
	return rc;
}

static int read_source(cuco_txn *txn, void *arg)
{
	char *text = NULL;
	int rc = cuco_source_get(txn, arg, &text, NULL);
	free(text);
	return rc;
}

static void expect_read_refused(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg,
	const char *needle)
{
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(st, fn, arg, &err), CUCO_EDATA);
	if (!strstr(err.msg, needle))
		fail_msg("expected '%s' in: %s", needle, err.msg);
	assert_null(strchr(err.msg, '\n'));
}

/* ---- event kinds ---------------------------------------------------------- */

static int keep_events(const cuco_event *ev, void *arg)
{
	cuco_event *out = arg;
	out[ev->seq < 3 ? ev->seq : 0] = *ev;
	return 0;
}

static int read_events(cuco_txn *txn, void *arg)
{
	return cuco_event_each(txn, 1, keep_events, arg);
}

static int add_unknown(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_event ev = { .kind = CUCO_EVENT_UNKNOWN };
	return cuco_event_add(txn, &ev);
}

/* The kinds of docs/store.md's "Events" list, one per row "| `name` | …". */
static size_t doc_event_kinds(char names[][32], size_t max)
{
	char path[512];
	snprintf(path, sizeof path, "%s/docs/store.md", getenv("CUCO_SOURCE_ROOT") ? getenv("CUCO_SOURCE_ROOT") : ".");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024];
	size_t n = 0;
	bool in = false;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "## ", 3) == 0)
			in = strcmp(line, "## Events\n") == 0;
		const char *end = in && strncmp(line, "| `", 3) == 0 ? strchr(line + 3, '`') : NULL;
		if (end && n < max && end - line - 3 < 32)
			snprintf(names[n++], 32, "%.*s", (int)(end - line - 3), line + 3);
	}
	fclose(f);
	return n;
}

/* The table of event kinds: names round-trip, every command logs under a
 * kind of its own name, docs/store.md lists exactly the table's kinds, a
 * writer cannot store an event of no kind, and a record of a kind the
 * table lacks reads as unknown with its name kept. */
static void test_event_kinds(void **state)
{
	(void)state;
	for (int k = 1; k < CUCO_EVENT_KIND_COUNT; k++) {
		assert_int_equal(cuco_event_kind_of(cuco_event_kind_name((cuco_event_kind)k)), k);
		assert_true(cuco_event_kind_help((cuco_event_kind)k)[0] != '\0');
	}
	assert_int_equal(cuco_event_kind_of("rebench"), CUCO_EVENT_UNKNOWN);
	assert_string_equal(cuco_event_kind_name(CUCO_EVENT_UNKNOWN), "unknown");
	for (int c = 0; c < CUCO_CMD_COUNT; c++) {
		cuco_event_kind k = cuco_command_event((cuco_command_kind)c);
		assert_int_not_equal(k, CUCO_EVENT_UNKNOWN);
		assert_string_equal(cuco_event_kind_name(k), cuco_command_name((cuco_command_kind)c));
	}

	char doc[2 * CUCO_EVENT_KIND_COUNT][32];
	size_t n = doc_event_kinds(doc, 2 * CUCO_EVENT_KIND_COUNT);
	for (size_t i = 0; i < n; i++)
		if (cuco_event_kind_of(doc[i]) == CUCO_EVENT_UNKNOWN)
			fail_msg("docs/store.md lists event kind '%s', which CUCO_EVENT_KINDS lacks", doc[i]);
	for (int k = 1; k < CUCO_EVENT_KIND_COUNT; k++) {
		size_t i = 0;
		while (i < n && strcmp(doc[i], cuco_event_kind_name((cuco_event_kind)k)) != 0)
			i++;
		if (i == n)
			fail_msg("docs/store.md's Events list lacks '%s'", cuco_event_kind_name((cuco_event_kind)k));
	}
	assert_int_equal(n, CUCO_EVENT_KIND_COUNT - 1);

	char dir[64];
	store_of_two(dir);  /* event 1: a hint */
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(dir, 0, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, add_unknown, NULL, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "an event of no known kind"));
	cuco_store_close(st);
	unsigned char k2[8];
	key_be64(2, k2);
	const char *event = "{\"seq\":2,\"time\":1,\"kind\":\"rebench\",\"author\":\"engine\"}";
	raw_lmdb_put(dir, "events", k2, 8, event, strlen(event));
	assert_int_equal(cuco_store_open(dir, CUCO_STORE_RDONLY, &st, &err), CUCO_OK);
	cuco_event seen[3] = { 0 };
	assert_int_equal(cuco_store_read(st, read_events, seen, &err), CUCO_OK);
	assert_int_equal(seen[1].kind, CUCO_EVENT_HINT);
	assert_string_equal(seen[1].name, "hint");
	assert_int_equal(seen[2].kind, CUCO_EVENT_UNKNOWN);
	assert_string_equal(seen[2].name, "rebench");
	cuco_store_close(st);
}

/* Copy candidate 2's record, summary and event over number 1's, and plant
 * a source whose text is not its hash's: each is refused by name. */
static void test_wrong_keys(void **state)
{
	(void)state;
	char dir[64];
	store_of_two(dir);
	cuco_store *st;
	cuco_err err = { 0 };

	unsigned char k1[8];
	key_be64(1, k1);
	const char *record = "{\"id\":2,\"origin\":\"tune\",\"status\":\"done\"}";
	raw_lmdb_put(dir, "candidates", k1, 8, record, strlen(record));
	cuco_summary sum = { .id = 2 };
	raw_lmdb_put(dir, "summaries", k1, 8, &sum, sizeof sum);
	const char *event = "{\"seq\":7,\"kind\":\"note\"}";
	raw_lmdb_put(dir, "events", k1, 8, event, strlen(event));
	char hash[CUCO_HASH_LEN + 1];
	cuco_source_hash("the real text", 13, hash);
	raw_lmdb_put(dir, "sources", hash, CUCO_HASH_LEN, "other text", 10);

	assert_int_equal(cuco_store_open(dir, CUCO_STORE_RDONLY, &st, &err), CUCO_OK);
	int seen = 0;
	expect_read_refused(st, get_candidate_1, NULL, "candidate 1: the record says 2; the store is corrupt");
	expect_read_refused(st, walk_candidates, &seen, "candidate 1: the record says 2");
	assert_int_equal(seen, 0);
	expect_read_refused(st, walk_summaries, NULL, "summary 1: the record says 2");
	expect_read_refused(st, walk_events, NULL, "events 1: the record says 7");
	expect_read_refused(st, read_source, hash, "hashes to");
	cuco_store_close(st);

	/* A summary of another size is damage too, not a record to skip. */
	raw_lmdb_put(dir, "summaries", k1, 8, "short", 5);
	assert_int_equal(cuco_store_open(dir, CUCO_STORE_RDONLY, &st, &err), CUCO_OK);
	expect_read_refused(st, walk_summaries, NULL, "summary 1: 5 bytes");
	cuco_store_close(st);
	rmtree(dir);
}

/* ---- an older schema ----------------------------------------------------------- */

static int read_schema(cuco_txn *txn, void *arg)
{
	return cuco_meta_get(txn, "schema", arg);
}

static int count_measurements(cuco_txn *txn, void *arg)
{
	return cuco_measure_count(txn, 1, arg);
}

/* A version-1 store (no measurements table) opens read-only as it is,
 * reading no measurements, and is upgraded when opened for writing. */
static void test_upgrade(void **state)
{
	(void)state;
	char dir[64];
	store_of_two(dir);
	cuco_store *st;
	cuco_err err = { 0 };
	raw_lmdb_drop(dir, "measurements");
	put_schema_text(dir, "{\"format\":\"cuco-store\",\"version\":1}");

	assert_int_equal(cuco_store_open(dir, CUCO_STORE_RDONLY, &st, &err), CUCO_OK);
	uint32_t n = 99;
	assert_int_equal(cuco_store_read(st, count_measurements, &n, &err), CUCO_OK);
	assert_int_equal(n, 0);
	char *schema = NULL;
	assert_int_equal(cuco_store_read(st, read_schema, &schema, &err), CUCO_OK);
	assert_non_null(strstr(schema, "\"version\":1"));
	free(schema);
	cuco_store_close(st);

	assert_int_equal(cuco_store_open(dir, 0, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_read(st, read_schema, &schema, &err), CUCO_OK);
	char want[64];
	snprintf(want, sizeof want, "\"version\":%d", CUCO_SCHEMA_VERSION);
	assert_non_null(strstr(schema, want));
	free(schema);
	int seen = 0;
	assert_int_equal(cuco_store_read(st, walk_candidates, &seen, &err), CUCO_OK);
	assert_int_equal(seen, 2);
	cuco_store_close(st);
	rmtree(dir);
}

/* A table the store's schema says it has, gone (a flipped bit in the
 * main table can hide one): damage, refused in one line naming the table,
 * read-only or for writing, and nothing is created in its place. */
static void test_table_missing(void **state)
{
	(void)state;
	char dir[64];
	store_of_two(dir);
	raw_lmdb_drop(dir, "memory");
	cuco_store *st = NULL;
	char want[128];
	snprintf(want, sizeof want, "%s: memory table is missing: store is corrupt", dir);
	for (int i = 0; i < 3; i++) {
		cuco_err err = { 0 };
		unsigned flags = i == 0 ? CUCO_STORE_RDONLY : i == 1 ? 0 : CUCO_STORE_CREATE;
		assert_int_equal(cuco_store_open(dir, flags, &st, &err), CUCO_EDATA);
		if (!strstr(err.msg, want) || strchr(err.msg, '\n'))
			fail_msg("flags %u: %s", flags, err.msg);
	}
	rmtree(dir);
}

/* ---- growth and a second process ---------------------------------------------- */

static int count_all(cuco_txn *txn, void *arg)
{
	*(uint64_t *)arg = cuco_cand_last_id(txn);
	return CUCO_OK;
}

static void test_growth_and_second_process(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	size_t map0, map1;
	cuco_store_sizes(st, &map0, NULL);

	/* A second process writes 24 MiB — more than the first map — while
	 * we keep our handle open; afterwards we read what it wrote. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cuco_store *st2;
		cuco_err e2;
		if (cuco_store_open(dir, 0, &st2, &e2))
			_exit(10);
		struct bulk b = { 16, malloc(1 << 20), 1 << 20 };
		for (int i = 0; i < 24 / 16 + 1; i++)
			if (cuco_store_write(st2, write_bulk, &b, &e2))
				_exit(11);
		free(b.text);
		cuco_store_close(st2);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	uint64_t last = 0;
	assert_int_equal(cuco_store_read(st, count_all, &last, &err), CUCO_OK);
	assert_int_equal(last, 32);

	/* And we grow it further ourselves. */
	struct bulk b = { 24, malloc(1 << 20), 1 << 20 };
	assert_int_equal(cuco_store_write(st, write_bulk, &b, &err), CUCO_OK);
	free(b.text);
	cuco_store_sizes(st, &map1, NULL);
	assert_true(map1 > map0);
	assert_int_equal(cuco_store_read(st, count_all, &last, &err), CUCO_OK);
	assert_int_equal(last, 56);
	cuco_store_close(st);
	rmtree(dir);
}

static void test_rdonly_refuses_writes(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store_close(open_new(dir));
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(dir, CUCO_STORE_RDONLY, &st, &err), CUCO_OK);
	struct bulk b = { 1, malloc(64), 64 };
	assert_int_equal(cuco_store_write(st, write_bulk, &b, &err), CUCO_EENV);
	assert_non_null(strstr(err.msg, "read-only"));
	free(b.text);
	cuco_store_close(st);
	rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_candidate_roundtrip),
		cmocka_unit_test(test_directive_dims),
		cmocka_unit_test(test_fail_classes),
		cmocka_unit_test(test_json_rejects_bad_types),
		cmocka_unit_test(test_json_reads_old_speedup),
		cmocka_unit_test(test_crowns),
		cmocka_unit_test(test_indexes),
		cmocka_unit_test(test_action_rules),
		cmocka_unit_test(test_person_act),
		cmocka_unit_test(test_misc_tables),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_event_kinds),
		cmocka_unit_test(test_wrong_keys),
		cmocka_unit_test(test_upgrade),
		cmocka_unit_test(test_table_missing),
		cmocka_unit_test(test_growth_and_second_process),
		cmocka_unit_test(test_rdonly_refuses_writes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
