/* test_port.c — the port strategies write the store through
 * (engine_port.c): what a strategy writes lands in the run's store and
 * wakes the screen, as the engine's own writes do. */
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

#include "agents/engine_int.h"

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

/* Readable within ms, then drained. */
static bool woke(cuco_engine *e, int ms)
{
	struct pollfd p = { .fd = e->wake[0], .events = POLLIN };
	if (poll(&p, 1, ms) != 1)
		return false;
	char drain[64];
	return read(p.fd, drain, sizeof drain) > 0;
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
	assert_true(woke(&e, 1000));
	seen s = { 0 };
	assert_int_equal(cuco_store_read(e.st, seen_txn, &s, &err), CUCO_OK);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ev.kind, CUCO_EVENT_FASTPATH);
	assert_string_equal(s.ev.author, "fastpath");
	assert_int_equal(s.ev.candidate, 7);
	assert_string_equal(s.ev.text, "stage A");
	assert_null(s.meta);

	/* A meta record with the event that says it. */
	assert_int_equal(p->event(p->ctx, "beam", "{\"closed\":2}", CUCO_EVENT_MEMORY, "beam", 0,
		"iteration 2", &err), CUCO_OK);
	assert_true(woke(&e, 1000));
	memset(&s, 0, sizeof s);
	assert_int_equal(cuco_store_read(e.st, seen_txn, &s, &err), CUCO_OK);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ev.kind, CUCO_EVENT_MEMORY);
	assert_string_equal(s.meta, "{\"closed\":2}");
	free(s.meta);

	close(e.wake[0]);
	close(e.wake[1]);
	cuco_store_close(e.st);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_wakes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
