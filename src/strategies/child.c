/* child.c — one child from the model, and the duplicates it must not be.
 *
 * DESIGN: every LLM strategy asks for a child the same way once its prompt
 * is built (evolve's islands, best-of-N sampling, the beam's executor):
 * the reply's schema and the lean view follow the prompt's shape; each
 * reply goes through the patcher (cuco_edit) in a ledger of calls; a
 * reply whose normal source and directive are already known is answered
 * with that fact in a note appended to the user message, up to a number
 * of attempts; what comes of the calls is a proposal that carries them,
 * or a refusal record that does. The known set is fed by what the
 * strategy observes (search_known_seen) and read in, in one transaction,
 * before each lookup.
 */
#include "store/store.h"
#include "strategies/search_int.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

/* ---- duplicates -------------------------------------------------------------- */

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

/* Read every pending candidate in; a failure is logged under who. */
static void known_sync(const cuco_port *port, search_known *k, const char *who)
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

/* What a reply reproduced, as a person reads it. */
static void dup_name(const search_known_entry *dup, char *what, size_t size)
{
	if (dup->id)
		snprintf(what, size, "candidate #%llu", (unsigned long long)dup->id);
	else
		cuco_strlcpy(what, "a candidate still in flight", size);
}

int search_child(search_llm *s, search_known *known, const search_ask *a, cuco_proposal *out,
	cuco_reply_kind *got, cuco_err *err)
{
	const cuco_model *m = &s->cfg.models[a->model];
	char *schema = a->shape.json ? cuco_reply_schema(a->wl, a->kind, a->shape.profile,
		(int)cuco_text_nblocks(a->src, a->len)) : NULL;
	cuco_buf view = { 0 };
	if (a->shape.profile == CUCO_PROFILE_LEAN)
		cuco_prompt_lean_code(a->wl, a->base, a->src, a->len, &view);
	search_ledger lg;
	search_ledger_init(&lg, a->call, a->parent);
	cuco_buf prompt = { 0 }, transcript = { 0 };
	int rc = CUCO_OK;
	for (int attempt = 1; rc == CUCO_OK; attempt++) {
		cuco_edit e = { .model = m, .wl = a->wl, .system = a->system->data,
			.user = a->user->data, .map = a->map, .parent = a->src, .parent_len = a->len,
			.view = view.data, .view_len = view.len, .base = a->base,
			.temperature = a->temperature, .schema = schema,
			.attempts = s->cfg.patch_attempts };
		cuco_edit_result r;
		memset(&r, 0, sizeof r);
		rc = search_llm_edit(s, &lg, &e, &r, err);
		if (!prompt.data && r.prompt)
			cuco_buf_puts(&prompt, r.prompt);
		if (r.transcript)
			cuco_buf_puts(&transcript, r.transcript);
		if (got)
			*got = r.kind;
		char key[CUCO_HASH_LEN + 1];
		const search_known_entry *dup = NULL;
		if (rc == CUCO_OK) {
			known_sync(s->port, known, a->who);
			search_known_key(r.source, r.len, &r.directive, key);
			if (!(dup = search_known_find(known, key)) &&
					(rc = search_fill(s, &lg, m, &r, out, err)) == CUCO_OK)
				search_known_add(known, key, 0);
		}
		cuco_edit_result_free(&r);
		if (rc != CUCO_OK || !dup)
			break;
		char what[48], why[128];
		dup_name(dup, what, sizeof what);
		snprintf(why, sizeof why, "the reply reproduced %s: its source and directive", what);
		search_ledger_refused(&lg, why);
		cuco_buf_printf(&transcript, "=== refused: %s ===\n", why);
		cuco_log(CUCO_LOG_INFO, "%s: a reply repeated %s", a->who, what);
		if (attempt >= a->attempts)
			rc = cuco_errf(err, CUCO_EDATA, "%s: %d %s repeated known candidates, the "
				"last %s", a->who, attempt, attempt == 1 ? "reply" : "replies", what);
		cuco_buf_printf(a->user, "\n\nNote: an earlier answer to this request reproduced "
			"%s exactly (the same code and the same directive). Propose a different "
			"change.\n", what);
	}
	if (rc == CUCO_EDATA)
		search_refuse(s, &lg, a->island, m->name, prompt.data, transcript.data, err->msg);
	search_ledger_close(s, &lg);  /* a failed or cancelled call's count */
	free(schema);
	cuco_buf_free(&view);
	cuco_buf_free(&prompt);
	cuco_buf_free(&transcript);
	return rc;
}
