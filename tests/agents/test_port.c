/* test_port.c — the port strategies read and write the store through
 * (engine_port.c): what a strategy writes lands in the run's store and
 * wakes the screen, as the engine's own writes do, and reads back through
 * it; and a strategy's refusals and reads, a whole prompt built, against a
 * port of the test's own, with no store. */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/engine_int.h"
#include "strategies/search_int.h"
#include "test_llm_toy.h"

typedef struct seen {
	cuco_event ev;
	int n;
	char *meta;
} seen;

static int last_event(const cuco_event *ev, void *arg)
{
	seen *s = arg;
	s->ev = *ev;
	s->n++;
	return 0;
}

static int seen_txn(cuco_txn *txn, void *arg)
{
	seen *s = arg;
	int rc = cuco_event_each(txn, 1, last_event, s);
	if (rc == CUCO_OK && cuco_meta_get(txn, "beam", &s->meta) == CUCO_ENOTFOUND)
		s->meta = NULL;
	return rc;
}

static int linked(const cuco_call *c, void *arg)
{
	(void)arg;
	assert_int_equal(c->refusal, 1);
	assert_int_equal(c->reply_hash[0] != '\0', c->id == 1);
	return 0;
}

/* The calls, each linked to refusal r1; the refusal's texts. */
static int calls_txn(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_refusal r;
	int rc = cuco_refusal_get(txn, 1, &r);
	assert_int_equal(rc, CUCO_OK);
	assert_true(r.prompt_hash[0] && !r.reply_hash[0]);
	return cuco_call_each(txn, 1, linked, NULL);
}

static int islands_txn(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_island isl;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(cuco_island_get(txn, i, &isl), CUCO_OK);
		assert_string_equal(isl.phase, "exploit");
		assert_int_equal(isl.members, 0);
	}
	assert_int_equal(cuco_island_get(txn, 2, &isl), CUCO_ENOTFOUND);
	return CUCO_OK;
}

static int count_memory(const cuco_memory *m, void *arg)
{
	(void)m;
	(*(int *)arg)++;
	return 0;
}

static int memories_read(const cuco_reader *r, void *arg)
{
	return r->memories(r->ctx, count_memory, arg);
}

/* Whether hash is text's. */
static bool hashed(const char *text, const char *hash)
{
	char h[CUCO_HASH_LEN + 1];
	cuco_source_hash(text, strlen(text), h);
	return strcmp(h, hash) == 0;
}

/* Readable within ms, then drained. */
static bool woke(cuco_engine *e, int ms)
{
	struct pollfd p = { .fd = e->wake[0], .events = POLLIN };
	if (poll(&p, 1, ms) != 1)
		return false;
	char drain[64];
	return read(p.fd, drain, sizeof drain) > 0;
}

/* The screen woken, and the store's events: n, the last of kind by
 * author. */
static seen woke_with(cuco_engine *e, int n, cuco_event_kind kind, const char *author)
{
	assert_true(woke(e, 1000));
	seen s = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(e->st, seen_txn, &s, &err), CUCO_OK);
	assert_int_equal(s.n, n);
	assert_int_equal(s.ev.kind, kind);
	assert_string_equal(s.ev.author, author);
	return s;
}

static void test_event_wakes(void **state)
{
	(void)state;
	char dir[] = "/tmp/cuco-test-port-XXXXXX";
	assert_non_null(mkdtemp(dir));
	cuco_err err = { 0 };
	cuco_engine e;
	memset(&e, 0, sizeof e);
	if (cuco_store_open(dir, CUCO_STORE_CREATE, &e.st, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(pipe2(e.wake, O_CLOEXEC | O_NONBLOCK), 0);
	engine_port_init(&e);
	const cuco_port *p = &e.port;
	assert_false(woke(&e, 0));

	/* An event alone: one record, the screen woken. */
	assert_int_equal(p->event(p->ctx, NULL, NULL, CUCO_EVENT_FASTPATH, "fastpath", 7, "stage A",
		&err), CUCO_OK);
	seen s = woke_with(&e, 1, CUCO_EVENT_FASTPATH, "fastpath");
	assert_int_equal(s.ev.candidate, 7);
	assert_string_equal(s.ev.text, "stage A");
	assert_null(s.meta);

	/* A meta record with the event that says it. */
	assert_int_equal(p->event(p->ctx, "beam", "{\"closed\":2}", CUCO_EVENT_MEMORY, "beam", 0,
		"iteration 2", &err), CUCO_OK);
	s = woke_with(&e, 2, CUCO_EVENT_MEMORY, "beam");
	assert_string_equal(s.meta, "{\"closed\":2}");
	free(s.meta);

	/* A refusal with its calls: linked to it, its texts in the sources. */
	cuco_refusal r = { .kind = CUCO_CALL_PROPOSE, .parent = 7, .island = 2, .model = "m",
		.reason = "no diff" };
	cuco_port_call v[2] = { { .call = { .kind = CUCO_CALL_PROPOSE, .model = "m" }, .reply = "hi" },
		{ .call = { .kind = CUCO_CALL_PROPOSE, .model = "m" } } };
	assert_int_equal(p->calls(p->ctx, &r, "the prompt", "", v, 2, &err), CUCO_OK);
	s = woke_with(&e, 3, CUCO_EVENT_REFUSAL, "m");
	assert_string_equal(s.ev.text, "r1 propose on island 2: no diff");
	free(s.meta);
	assert_int_equal(cuco_store_read(e.st, calls_txn, &s, &err), CUCO_OK);

	/* Islands made at start say nothing; a phase for all is an event. */
	assert_int_equal(p->islands(p->ctx, &(cuco_port_islands){ .n = 2, .text = "" }, &err), CUCO_OK);
	assert_true(woke(&e, 1000));
	assert_int_equal(p->islands(p->ctx, &(cuco_port_islands){ .n = 2, .phase = "exploit",
		.author = "evolve", .text = "every island exploits now" }, &err), CUCO_OK);
	s = woke_with(&e, 4, CUCO_EVENT_PHASE, "evolve");
	free(s.meta);
	assert_int_equal(cuco_store_read(e.st, islands_txn, NULL, &err), CUCO_OK);

	/* The texts behind a proposal: their hashes handed back. */
	cuco_candidate c = { .id = 0 };
	cuco_port_call t[1] = { { .reply = "the reply" } };
	assert_int_equal(p->texts(p->ctx, "the prompt", "the transcript", &c, t, 1, &err), CUCO_OK);
	assert_true(woke(&e, 1000));
	assert_true(hashed("the prompt", c.prompt_hash));
	assert_true(hashed("the transcript", c.reply_hash));
	assert_true(hashed("the reply", t[0].call.reply_hash));

	/* The memory: entries added, their ids set; one dropped by its id. */
	cuco_memory m[2] = { { .workload = "w", .summary = "a" }, { .workload = "w", .summary = "b" } };
	assert_int_equal(p->memory(p->ctx, NULL, 0, m, 2, &err), CUCO_OK);
	assert_true(woke(&e, 1000));
	assert_true(m[0].id > 0 && m[1].id > m[0].id);
	assert_int_equal(p->memory(p->ctx, &m[0].id, 1, NULL, 0, &err), CUCO_OK);
	assert_true(woke(&e, 1000));

	/* Reads: a text by its hash, a meta record, one there is not, a
	 * candidate not stored, the memory through a reader; none wakes the
	 * screen. */
	char *text = NULL, *json = NULL;
	size_t len = 0;
	assert_int_equal(p->source(p->ctx, c.prompt_hash, &text, &len, &err), CUCO_OK);
	assert_int_equal(len, strlen("the prompt"));
	assert_memory_equal(text, "the prompt", len);
	free(text);
	assert_int_equal(p->meta(p->ctx, "beam", &json, &err), CUCO_OK);
	assert_string_equal(json, "{\"closed\":2}");
	free(json);
	assert_int_equal(p->meta(p->ctx, "evolve-meta", &json, &err), CUCO_OK);
	assert_null(json);
	assert_int_equal(p->candidate(p->ctx, 1, NULL, &text, &len, &err), CUCO_ENOTFOUND);
	int nmem = 0;
	assert_int_equal(p->read(p->ctx, memories_read, &nmem, &err), CUCO_OK);
	assert_int_equal(nmem, 1);
	assert_false(woke(&e, 0));

	close(e.wake[0]);
	close(e.wake[1]);
	cuco_store_close(e.st);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A port with no store behind it: what the strategy handed over, and
 * the one candidate it holds (#5) with its source. */
static const char fake_source[] = "int main(void) { return 0; }\n";

typedef struct fake {
	cuco_refusal r;
	bool refused;
	size_t ncalls;
	cuco_event_kind kind;
	char text[256];
	cuco_directive directive;
	int reads;
} fake;

static int fake_candidate(void *ctx, uint64_t id, cuco_candidate *c, char **text, size_t *len,
	cuco_err *err)
{
	fake *f = ctx;
	if (id != 5)
		return cuco_errf(err, CUCO_ENOTFOUND, "no candidate %llu", (unsigned long long)id);
	if (c) {
		memset(c, 0, sizeof *c);
		c->id = id;
		cuco_cand_queued(c);
		c->status = CUCO_STATUS_DONE;
		c->directive = f->directive;
		cuco_source_hash(fake_source, strlen(fake_source), c->source_hash);
	}
	if (text) {
		*text = cuco_xstrdup(fake_source);
		*len = strlen(*text);
	}
	return CUCO_OK;
}

/* ---- the fake's reader: its one candidate, no memory ---- */

static int reader_candidate(void *ctx, uint64_t id, cuco_candidate *c)
{
	return fake_candidate(ctx, id, c, NULL, NULL, NULL);
}

static int reader_candidates(void *ctx, uint64_t from, int (*fn)(const cuco_candidate *, void *),
	void *arg)
{
	cuco_candidate c;
	return from <= 5 && reader_candidate(ctx, 5, &c) == CUCO_OK ? fn(&c, arg) : CUCO_OK;
}

static int reader_summaries(void *ctx, cuco_summary **out, size_t *n)
{
	cuco_candidate c;
	reader_candidate(ctx, 5, &c);
	*out = cuco_xmalloc(sizeof **out);
	cuco_summary_of(&c, *out);
	*n = 1;
	return CUCO_OK;
}

static int reader_source(void *ctx, const char *hash, char **text, size_t *len)
{
	cuco_candidate c;
	reader_candidate(ctx, 5, &c);
	return strcmp(hash, c.source_hash) == 0 ? fake_candidate(ctx, 5, NULL, text, len, NULL)
		: CUCO_ENOTFOUND;
}

static int reader_memories(void *ctx, int (*fn)(const cuco_memory *, void *), void *arg)
{
	(void)ctx, (void)fn, (void)arg;
	return CUCO_OK;
}

/* A read transaction over the one candidate: counted. */
static int fake_read(void *ctx, int (*fn)(const cuco_reader *, void *), void *arg, cuco_err *err)
{
	((fake *)ctx)->reads++;
	const cuco_reader r = { .ctx = ctx, .err = err, .candidate = reader_candidate,
		.candidates = reader_candidates, .summaries = reader_summaries, .source = reader_source,
		.memories = reader_memories };
	return fn(&r, arg);
}

static int fake_calls(void *ctx, const cuco_refusal *r, const char *prompt,
	const char *transcript, const cuco_port_call *v, size_t n, cuco_err *err)
{
	(void)prompt, (void)transcript, (void)v, (void)err;
	fake *f = ctx;
	f->refused = r != NULL;
	if (r)
		f->r = *r;
	f->ncalls = n;
	return CUCO_OK;
}

static int fake_event(void *ctx, const char *name, const char *json, cuco_event_kind kind,
	const char *author, uint64_t candidate, const char *text, cuco_err *err)
{
	(void)name, (void)json, (void)author, (void)candidate, (void)err;
	fake *f = ctx;
	f->kind = kind;
	cuco_strlcpy(f->text, text, sizeof f->text);
	return CUCO_OK;
}

static void test_refusal_without_store(void **state)
{
	(void)state;
	fake f = { 0 };
	const cuco_port port = { .ctx = &f, .event = fake_event, .calls = fake_calls };
	search_llm s = { .port = &port };
	search_ledger lg;
	search_ledger_init(&lg, CUCO_CALL_FIX, 5);
	search_refuse(&s, &lg, 1, "m", "the prompt", "the transcript", "the patch did not apply");
	assert_true(f.refused);
	assert_int_equal(f.r.kind, CUCO_CALL_FIX);
	assert_int_equal(f.r.parent, 5);
	assert_int_equal(f.r.island, 1);
	assert_string_equal(f.r.model, "m");
	assert_string_equal(f.r.reason, "the patch did not apply");
	assert_int_equal(f.ncalls, 0);
	assert_int_equal(lg.n, 0);

	/* An empty ledger stores nothing; an event goes as it is. */
	f.refused = true;
	f.ncalls = 9;
	search_ledger_close(&s, &lg);
	assert_int_equal(f.ncalls, 9);
	search_event(&port, CUCO_EVENT_PROMPT, "fastpath", 3, "stage B");
	assert_int_equal(f.kind, CUCO_EVENT_PROMPT);
	assert_string_equal(f.text, "stage B");
}

/* A prompt built through a port with no store: its parent's directive
 * handed back, the parent's code in it; no prompt for a parent that is not
 * there, and the builder's refusal of a second parent that is not there
 * said through the reader. */
static void test_read_without_store(void **state)
{
	(void)state;
	char top[] = "/tmp/cuco-test-port-wl-XXXXXX";
	cuco_workload *wl = NULL;
	assert_int_equal(toy_workload_make(top, &wl), 0);
	fake f = { .directive = { .backend = "rma", .issuer = "one" } };
	const cuco_port port = { .ctx = &f, .candidate = fake_candidate, .read = fake_read };
	cuco_prompt_spec spec = { .wl = wl, .kind = CUCO_PROMPT_DIFF, .parent = 5, .island = -1,
		.inspirations = 3, .failures = 3 };
	cuco_directive base = { .nknobs = 0 };
	cuco_buf system = { 0 }, user = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(search_prompt(&port, &spec, &base, &system, &user, &err), CUCO_OK);
	assert_string_equal(base.backend, "rma");
	assert_string_equal(base.issuer, "one");
	assert_int_equal(f.reads, 1);
	assert_non_null(strstr(system.data, "Toy all-gather"));
	assert_non_null(strstr(user.data, "# Current program: candidate #5"));
	assert_non_null(strstr(user.data, fake_source));

	spec.parent = 6;
	assert_int_equal(search_prompt(&port, &spec, &base, &system, &user, &err), CUCO_ENOTFOUND);
	assert_string_equal(err.msg, "no candidate 6");
	assert_int_equal(f.reads, 1);

	spec = (cuco_prompt_spec){ .wl = wl, .kind = CUCO_PROMPT_CROSS, .parent = 5, .other = 7,
		.island = -1 };
	assert_int_equal(search_prompt(&port, &spec, &base, &system, &user, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "prompt: no candidate 7");
	assert_int_equal(f.reads, 2);
	cuco_buf_free(&system);
	cuco_buf_free(&user);
	assert_int_equal(toy_workload_remove(top, wl), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_wakes),
		cmocka_unit_test(test_refusal_without_store),
		cmocka_unit_test(test_read_without_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
