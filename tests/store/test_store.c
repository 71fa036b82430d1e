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

static void tmpdir(char d[64])
{
	strcpy(d, "/tmp/cuco-test-store-XXXXXX");
	assert_non_null(mkdtemp(d));
}

static void rmtree(const char *d)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static cuco_store *open_new(const char *dir)
{
	cuco_store *st = NULL;
	cuco_err err = { 0 };
	int rc = cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err);
	if (rc)
		fail_msg("open %s: %s", dir, err.msg);
	return st;
}

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
	strcpy(c->error_excerpt, "line one\nline \"two\"\ttab");
	c->score = 1.25;
	c->latency_min_us = 90;
	c->latency_median_us = 100;
	c->latency_p90_us = 110;
	c->samples = 15;
	c->spread = 0.05;
	c->nphases = 2;
	strcpy(c->phases[0].name, "compute");
	c->phases[0].us = 70;
	strcpy(c->phases[1].name, "comm");
	c->phases[1].us = 30;
	c->max_error = 1e-6;
	c->speedup = 1.25;
	c->peak_fraction = NAN;
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
	assert_string_equal(a->error_excerpt, b->error_excerpt);
	assert_true(b->score == 1.25 && b->latency_median_us == 100 && b->samples == 15);
	assert_int_equal(b->nphases, 2);
	assert_string_equal(b->phases[1].name, "comm");
	assert_true(isnan(b->peak_fraction));
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
		"protocol", "environment" };
	assert_true(CUCO_FAIL_COUNT >= 6);
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
		assert_true(strlen(cuco_fail_name(f)) < sizeof ((cuco_candidate *)0)->error_class);
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

/* ---- marks ------------------------------------------------------------------------ */

struct marks { char why[256]; int rc[5]; cuco_candidate after; };

static int apply_marks(cuco_txn *txn, void *arg)
{
	struct marks *m = arg;
	cuco_candidate base;
	sample_candidate(&base, 0);
	base.origin = CUCO_ORIGIN_BASELINE;
	base.pinned = false;
	int rc = cuco_cand_put(txn, &base);           /* id 1 */
	cuco_candidate other;
	sample_candidate(&other, 1);                  /* id 2, pinned */
	if (!rc)
		rc = cuco_cand_put(txn, &other);
	if (rc)
		return rc;
	m->rc[0] = cuco_cand_mark(txn, CUCO_CMD_REJECT, 1, "slow", m->why, sizeof m->why);
	m->rc[1] = cuco_cand_mark(txn, CUCO_CMD_REJECT, 2, "races on the flag", m->why, sizeof m->why);
	m->rc[2] = cuco_cand_mark(txn, CUCO_CMD_PIN, 2, "", m->why, sizeof m->why);
	m->rc[3] = cuco_cand_mark(txn, CUCO_CMD_UNPIN, 9, "", m->why, sizeof m->why);
	m->rc[4] = cuco_cand_mark(txn, CUCO_CMD_PIN, 1, "", m->why, sizeof m->why);
	return cuco_cand_get(txn, 2, &m->after);
}

static void test_marks(void **state)
{
	(void)state;
	char dir[64];
	tmpdir(dir);
	cuco_store *st = open_new(dir);
	cuco_err err = { 0 };
	struct marks m = { 0 };
	assert_int_equal(cuco_store_write(st, apply_marks, &m, &err), CUCO_OK);
	assert_int_equal(m.rc[0], CUCO_EDATA);     /* the baseline stays */
	assert_int_equal(m.rc[1], CUCO_OK);
	assert_int_equal(m.rc[2], CUCO_EDATA);     /* a rejected one cannot be pinned */
	assert_int_equal(m.rc[3], CUCO_ENOTFOUND);
	assert_int_equal(m.rc[4], CUCO_OK);
	assert_int_equal(m.after.status, CUCO_STATUS_REJECTED);
	assert_false(m.after.pinned);              /* rejecting unpins */
	assert_string_equal(m.after.reject_reason, "races on the flag");
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
		cuco_event ev = { .candidate = (uint64_t)i };
		strcpy(ev.kind, "candidate");
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

static void raw_lmdb_put(const char *dir, const char *db, const char *key, const char *val)
{
	MDB_env *env;
	MDB_txn *t;
	MDB_dbi dbi;
	assert_int_equal(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 4);
	assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &t), 0);
	assert_int_equal(mdb_dbi_open(t, db, MDB_CREATE, &dbi), 0);
	MDB_val k = { strlen(key), (void *)key }, v = { strlen(val), (void *)val };
	assert_int_equal(mdb_put(t, dbi, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(t), 0);
	mdb_env_close(env);
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
	raw_lmdb_put(dir, NULL, "hello", "world");
	expect_refused(dir, CUCO_STORE_CREATE, "not a cuco store");
	rmtree(dir);
	assert_int_equal(mkdir(dir, 0755), 0);

	/* A cuco store from a future version. */
	cuco_store_close(open_new(dir));
	raw_lmdb_put(dir, "meta", "schema", "{\"format\":\"cuco-store\",\"version\":99}");
	expect_refused(dir, 0, "schema version 99 is newer");

	/* A truncated store. */
	rmtree(dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	cuco_store_close(open_new(dir));
	assert_int_equal(truncate(path, 8), 0);
	expect_refused(dir, 0, "not a cuco store");
	rmtree(dir);
}

/* ---- growth and a second process ---------------------------------------------- */

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
		cmocka_unit_test(test_indexes),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_misc_tables),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_growth_and_second_process),
		cmocka_unit_test(test_rdonly_refuses_writes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
