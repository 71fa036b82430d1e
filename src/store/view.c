/* view.c — the store read through the vocabulary's reader (vocab.h): a
 * read transaction lent to the parts above the store, which read records
 * without seeing LMDB (the engine's port hands it to the strategies and
 * the model stack). */
#include "store/store.h"

static int candidate(void *ctx, uint64_t id, cuco_candidate *out)
{
	return cuco_cand_get(ctx, id, out);
}

static int candidates(void *ctx, uint64_t from, int (*fn)(const cuco_candidate *, void *),
	void *arg)
{
	return cuco_cand_each(ctx, from, fn, arg);
}

static int summaries(void *ctx, cuco_summary **out, size_t *n)
{
	return cuco_summary_all(ctx, out, n);
}

static int source(void *ctx, const char *hash, char **text, size_t *len)
{
	return cuco_source_get(ctx, hash, text, len);
}

static int memories(void *ctx, int (*fn)(const cuco_memory *, void *), void *arg)
{
	return cuco_memory_each(ctx, fn, arg);
}

static int events(void *ctx, uint64_t from, int (*fn)(const cuco_event *, void *), void *arg)
{
	return cuco_event_each(ctx, from, fn, arg);
}

static int calls(void *ctx, cuco_call_totals *out)
{
	return cuco_call_sum(ctx, out);
}

typedef struct view_arg {
	int (*fn)(const cuco_reader *, void *);
	void *arg;
} view_arg;

static int view_txn(cuco_txn *txn, void *arg)
{
	const view_arg *a = arg;
	cuco_err err = { 0 };
	const cuco_reader r = { .ctx = txn, .err = &err, .candidate = candidate,
		.candidates = candidates, .summaries = summaries, .source = source,
		.memories = memories, .events = events, .calls = calls };
	int rc = a->fn(&r, a->arg);
	return rc != CUCO_OK && err.msg[0] ? cuco_txn_fail(txn, rc, "%s", err.msg) : rc;
}

int cuco_store_view(cuco_store *st, int (*fn)(const cuco_reader *, void *), void *arg,
	cuco_err *err)
{
	return cuco_store_read(st, view_txn, &(view_arg){ fn, arg }, err);
}
