/* steps.c — the store steps every LLM strategy takes, each through the
 * engine's port: an event in the run's log, and a prompt built from the
 * store with its parent's directive.
 *
 * DESIGN: a strategy holds no store (strategy.h); the model stack's
 * prompt builder reads one snapshot through a reader (vocab.h), which the
 * port's read lends it.
 */
#include "strategies/search_int.h"

#include <stdlib.h>

void search_event(const cuco_port *port, cuco_event_kind kind, const char *author,
	uint64_t candidate, const char *text)
{
	cuco_err err;
	if (port->event(port->ctx, NULL, NULL, kind, author, candidate, text, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "%s: event: %s", author, err.msg);
}

typedef struct prompt_arg {
	const cuco_prompt_spec *spec;
	cuco_buf *system, *user;
} prompt_arg;

static int prompt_read(const cuco_reader *r, void *arg)
{
	prompt_arg *a = arg;
	return cuco_prompt_build(r, a->spec, a->system, a->user);
}

int search_prompt(const cuco_port *port, const cuco_prompt_spec *spec, cuco_directive *base,
	cuco_buf *system, cuco_buf *user, cuco_err *err)
{
	system->len = user->len = 0;
	cuco_candidate *parent = cuco_xmalloc(sizeof *parent);
	int rc = port->candidate(port->ctx, spec->parent, parent, NULL, NULL, err);
	if (rc == CUCO_OK) {
		*base = parent->directive;
		rc = port->read(port->ctx, prompt_read, &(prompt_arg){ spec, system, user }, err);
	}
	free(parent);
	return rc;
}
