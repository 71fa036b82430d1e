/* engine_port.c — the port strategies write the store through
 * (strategy.h): each call one transaction of the engine's store, then a
 * wake of the screen, so what a strategy writes shows as the engine's
 * own writes do. */
#include "agents/engine_int.h"

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

void engine_port_init(cuco_engine *e)
{
	e->port = (cuco_port){ e, port_write, port_event };
}
