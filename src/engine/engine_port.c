/* engine_port.c — the port strategies read and write the store through
 * (strategy.h): each call one transaction of the engine's store; after a
 * write, a wake of the screen, so what a strategy writes shows as the
 * engine's own writes do. */
#include "engine/engine_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reads ---------------------------------------------------------------- */

typedef struct candidate_arg {
	uint64_t id;
	cuco_candidate *c;
	char **text;
	size_t *len;
} candidate_arg;

static int candidate_txn(cuco_txn *txn, void *arg)
{
	candidate_arg *a = arg;
	int rc = cuco_cand_get(txn, a->id, a->c);
	return rc == CUCO_OK && a->text ? cuco_source_get(txn, a->c->source_hash, a->text, a->len) : rc;
}

static int port_candidate(void *ctx, uint64_t id, cuco_candidate *c, char **text, size_t *len,
	cuco_err *err)
{
	cuco_engine *e = ctx;
	cuco_candidate *own = c ? NULL : cuco_xmalloc(sizeof *own);
	candidate_arg a = { id, c ? c : own, text, len };
	int rc = cuco_store_read(e->st, candidate_txn, &a, err);
	free(own);
	return rc;
}

typedef struct candidates_arg {
	uint64_t from;
	int (*fn)(const cuco_candidate *, void *);
	void *arg;
} candidates_arg;

static int candidates_txn(cuco_txn *txn, void *arg)
{
	candidates_arg *a = arg;
	return cuco_cand_each(txn, a->from, a->fn, a->arg);
}

static int port_candidates(void *ctx, uint64_t from, int (*fn)(const cuco_candidate *, void *),
	void *arg, cuco_err *err)
{
	cuco_engine *e = ctx;
	return cuco_store_read(e->st, candidates_txn, &(candidates_arg){ from, fn, arg }, err);
}

static int port_source(void *ctx, const char *hash, char **text, size_t *len, cuco_err *err)
{
	cuco_engine *e = ctx;
	return cuco_source_read(e->st, hash, text, len, err);
}

typedef struct meta_arg {
	const char *name;
	char **json;
} meta_arg;

static int meta_txn(cuco_txn *txn, void *arg)
{
	meta_arg *a = arg;
	int rc = cuco_meta_get(txn, a->name, a->json);
	if (rc == CUCO_ENOTFOUND)
		*a->json = NULL;
	return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
}

static int port_meta(void *ctx, const char *name, char **json, cuco_err *err)
{
	cuco_engine *e = ctx;
	*json = NULL;
	return cuco_store_read(e->st, meta_txn, &(meta_arg){ name, json }, err);
}

static int port_read(void *ctx, int (*fn)(const cuco_reader *, void *), void *arg,
	cuco_err *err)
{
	cuco_engine *e = ctx;
	return cuco_store_view(e->st, fn, arg, err);
}

/* ---- writes --------------------------------------------------------------- */

/* One write transaction, then a wake of the screen. */
static int port_write(void *ctx, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err)
{
	cuco_engine *e = ctx;
	int rc = cuco_store_write(e->st, fn, arg, err);
	engine_wake(e);
	return rc;
}

typedef struct event_arg {
	const char *name, *json;
	cuco_event ev;
} event_arg;

static int event_txn(cuco_txn *txn, void *arg)
{
	event_arg *a = arg;
	cuco_event ev = a->ev;  /* a retried txn starts from the same event */
	int rc = a->name ? cuco_meta_put(txn, a->name, a->json) : CUCO_OK;
	return rc == CUCO_OK ? cuco_event_add(txn, &ev) : rc;
}

static int port_event(void *ctx, const char *name, const char *json, cuco_event_kind kind,
	const char *author, uint64_t candidate, const char *text, cuco_err *err)
{
	event_arg a = { name, json, { 0 } };
	engine_event_init(&a.ev, kind, candidate, author);
	cuco_strlcpy(a.ev.text, text, sizeof a.ev.text);
	return port_write(ctx, event_txn, &a, err);
}

typedef struct calls_arg {
	const cuco_refusal *r;
	const char *prompt, *transcript;
	const cuco_port_call *v;
	size_t n;
} calls_arg;

static int put_text(cuco_txn *txn, const char *text, char *hash)
{
	return text && *text ? cuco_source_put(txn, text, strlen(text), hash) : CUCO_OK;
}

/* The refusal, its texts, and its event, which the log pane and the
 * run's events show where a person looks (issue 26: only report and show
 * rN did). */
static int refusal_put(cuco_txn *txn, const calls_arg *a, cuco_refusal *r)
{
	*r = *a->r;
	int rc = put_text(txn, a->prompt, r->prompt_hash);
	if (rc == CUCO_OK)
		rc = put_text(txn, a->transcript, r->reply_hash);
	if (rc == CUCO_OK)
		rc = cuco_refusal_add(txn, r);
	if (rc != CUCO_OK)
		return rc;
	cuco_event ev;
	char where[32] = "", text[sizeof r->reason + 96];
	if (r->island >= 0)
		snprintf(where, sizeof where, " on island %d", r->island);
	snprintf(text, sizeof text, "r%llu %s%s: %s", (unsigned long long)r->id,
		cuco_call_kind_name(r->kind), where, r->reason);
	engine_event_init(&ev, CUCO_EVENT_REFUSAL, r->parent, r->model[0] ? r->model : "model");
	cuco_strlcpy(ev.text, text, sizeof ev.text);
	return cuco_event_add(txn, &ev);
}

/* A call's reply text, when one came. */
static int reply_put(cuco_txn *txn, const char *reply, char *hash)
{
	return reply ? cuco_source_put(txn, reply, strlen(reply), hash) : CUCO_OK;
}

static int calls_txn(cuco_txn *txn, void *arg)
{
	const calls_arg *a = arg;
	cuco_refusal r = { .id = 0 };
	int rc = a->r ? refusal_put(txn, a, &r) : CUCO_OK;
	for (size_t i = 0; rc == CUCO_OK && i < a->n; i++) {
		cuco_call c = a->v[i].call;
		rc = reply_put(txn, a->v[i].reply, c.reply_hash);
		c.candidate = 0;
		c.refusal = r.id;
		if (rc == CUCO_OK)
			rc = cuco_call_add(txn, &c);
	}
	return rc;
}

static int port_calls(void *ctx, const cuco_refusal *r, const char *prompt,
	const char *transcript, const cuco_port_call *v, size_t n, cuco_err *err)
{
	calls_arg a = { r, prompt, transcript, v, n };
	return port_write(ctx, calls_txn, &a, err);
}

void engine_island_new(int id, cuco_island *isl)
{
	memset(isl, 0, sizeof *isl);
	isl->id = id;
	cuco_strlcpy(isl->phase, "explore", sizeof isl->phase);
	isl->best_score = isl->best_speedup = NAN;
}

/* Island i as stored, or made. */
static int island_of(cuco_txn *txn, int i, cuco_island *isl)
{
	int rc = cuco_island_get(txn, i, isl);
	if (rc == CUCO_ENOTFOUND)
		engine_island_new(i, isl);
	return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
}

static int islands_txn(cuco_txn *txn, void *arg)
{
	const cuco_port_islands *a = arg;
	int rc = CUCO_OK;
	for (int i = 0; i < a->n && rc == CUCO_OK; i++) {
		cuco_island isl;
		if ((rc = island_of(txn, i, &isl)) != CUCO_OK)
			return rc;
		if (a->phase)
			cuco_strlcpy(isl.phase, a->phase, sizeof isl.phase);
		for (size_t k = 0; k < a->nmoves; k++) {
			isl.members += (a->moves[k].to == i) - (a->moves[k].from == i);
			isl.migrations += a->moves[k].from == i;
		}
		rc = cuco_island_put(txn, &isl);
	}
	for (size_t k = 0; k < a->nmoves && rc == CUCO_OK; k++) {
		cuco_candidate c;
		if ((rc = cuco_cand_get(txn, a->moves[k].id, &c)) != CUCO_OK)
			return rc;
		c.island = a->moves[k].to;
		rc = cuco_cand_put(txn, &c);
	}
	if (rc != CUCO_OK || !a->text[0])
		return rc;
	cuco_event ev;
	engine_event_init(&ev, a->phase ? CUCO_EVENT_PHASE : CUCO_EVENT_MIGRATE, 0, a->author);
	cuco_strlcpy(ev.text, a->text, sizeof ev.text);
	return cuco_event_add(txn, &ev);
}

static int port_islands(void *ctx, const cuco_port_islands *a, cuco_err *err)
{
	return port_write(ctx, islands_txn, (void *)a, err);
}

typedef struct memory_arg {
	const uint64_t *drop;
	size_t ndrop;
	cuco_memory *fresh;
	size_t nfresh;
} memory_arg;

static int memory_txn(cuco_txn *txn, void *arg)
{
	memory_arg *a = arg;
	int rc = CUCO_OK;
	for (size_t i = 0; i < a->ndrop && rc == CUCO_OK; i++)
		rc = cuco_memory_del(txn, a->drop[i]);
	for (size_t i = 0; i < a->nfresh && rc == CUCO_OK; i++) {
		cuco_memory m = a->fresh[i];
		m.id = 0;  /* a retried txn assigns again */
		if ((rc = cuco_memory_add(txn, &m)) == CUCO_OK)
			a->fresh[i].id = m.id;
	}
	return rc;
}

static int port_memory(void *ctx, const uint64_t *drop, size_t ndrop, cuco_memory *fresh,
	size_t nfresh, cuco_err *err)
{
	return port_write(ctx, memory_txn, &(memory_arg){ drop, ndrop, fresh, nfresh }, err);
}

typedef struct texts_arg {
	const char *prompt, *transcript;
	cuco_candidate *c;
	cuco_port_call *v;
	size_t n;
} texts_arg;

static int texts_txn(cuco_txn *txn, void *arg)
{
	texts_arg *a = arg;
	int rc = cuco_source_keep(txn, a->prompt, a->transcript, a->c);
	for (size_t i = 0; rc == CUCO_OK && i < a->n; i++)
		rc = reply_put(txn, a->v[i].reply, a->v[i].call.reply_hash);
	return rc;
}

static int port_texts(void *ctx, const char *prompt, const char *transcript, cuco_candidate *c,
	cuco_port_call *v, size_t n, cuco_err *err)
{
	texts_arg a = { prompt, transcript, c, v, n };
	return port_write(ctx, texts_txn, &a, err);
}

void engine_port_init(cuco_engine *e)
{
	e->port = (cuco_port){ .ctx = e, .candidate = port_candidate, .candidates = port_candidates,
		.source = port_source, .meta = port_meta, .read = port_read, .event = port_event,
		.calls = port_calls, .islands = port_islands, .memory = port_memory,
		.texts = port_texts };
}
