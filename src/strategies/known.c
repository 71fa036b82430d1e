/* known.c — the duplicates a child must not be: every candidate's key,
 * its normal source and its directive (knobs in name order).
 *
 * DESIGN: the set is fed by what a strategy observes (search_known_seen),
 * which is only an id; the candidates' sources are read in through the
 * port (search_known_sync) before search_child's next lookup, each in a
 * read of its own, and one not stored yet waits for the next time.
 */
#include "strategies/search_int.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

static int by_knob_name(const void *a, const void *b)
{
	return strcmp(((const cuco_knob *)a)->name, ((const cuco_knob *)b)->name);
}

void search_known_key(const char *text, size_t len, const cuco_directive *d,
	char key[CUCO_HASH_LEN + 1])
{
	cuco_buf b = { 0 };
	cuco_text_normalize(text, len, &b);
	cuco_buf_puts(&b, "\n");
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		cuco_buf_printf(&b, "%s=%s;", cuco_dirdim_name((cuco_dirdim)i),
			cuco_directive_get(d, (cuco_dirdim)i));
	cuco_knob knobs[CUCO_MAX_KNOBS];
	int n = d->nknobs < CUCO_MAX_KNOBS ? d->nknobs : CUCO_MAX_KNOBS;
	memcpy(knobs, d->knobs, (size_t)n * sizeof *knobs);
	qsort(knobs, (size_t)n, sizeof *knobs, by_knob_name);
	for (int i = 0; i < n; i++)
		cuco_buf_printf(&b, "%s=%s;", knobs[i].name, knobs[i].value);
	cuco_source_hash(b.data, b.len, key);
	cuco_buf_free(&b);
}

const search_known_entry *search_known_find(const search_known *k, const char *key)
{
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->v[i].key, key) == 0)
			return &k->v[i];
	return NULL;
}

void search_known_add(search_known *k, const char *key, uint64_t id)
{
	search_known_entry *e = (search_known_entry *)search_known_find(k, key);
	if (e) {
		if (!e->id)
			e->id = id;  /* a proposal in flight has landed */
		return;
	}
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->v = cuco_xrealloc(k->v, k->cap * sizeof *k->v);
	}
	cuco_strlcpy(k->v[k->n].key, key, sizeof k->v[0].key);
	k->v[k->n++].id = id;
}

static int known_read(const cuco_port *port, search_known *k, uint64_t id, cuco_err *err)
{
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	char *text = NULL;
	size_t len = 0;
	int rc = port->candidate(port->ctx, id, c, &text, &len, err);
	if (rc == CUCO_OK) {
		char key[CUCO_HASH_LEN + 1];
		search_known_key(text, len, &c->directive, key);
		search_known_add(k, key, id);
	}
	free(text);
	free(c);
	return rc;
}

void search_known_seen(search_known *k, uint64_t id)
{
	if (k->npending == k->pending_cap) {
		k->pending_cap = k->pending_cap ? 2 * k->pending_cap : 64;
		k->pending = cuco_xrealloc(k->pending, k->pending_cap * sizeof *k->pending);
	}
	k->pending[k->npending++] = id;
}

void search_known_sync(const cuco_port *port, search_known *k, const char *who)
{
	size_t kept = 0, i = 0;
	for (; i < k->npending; i++) {
		cuco_err err;
		int rc = known_read(port, k, k->pending[i], &err);
		if (rc == CUCO_ENOTFOUND) {
			k->pending[kept++] = k->pending[i];  /* not stored yet: next time */
		} else if (rc != CUCO_OK) {
			cuco_log(CUCO_LOG_WARN, "%s: duplicates: %s", who, err.msg);
			break;
		}
	}
	while (i < k->npending)
		k->pending[kept++] = k->pending[i++];
	k->npending = kept;
}

void search_known_free(search_known *k)
{
	free(k->v);
	free(k->pending);
	memset(k, 0, sizeof *k);
}

/* ---- one child ------------------------------------------------------------------ */
