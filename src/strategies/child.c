/* child.c — one child from the model, which must not be a known
 * candidate (known.c).
 *
 * DESIGN: every LLM strategy asks for a child the same way once its prompt
 * is built (evolve's islands, best-of-N sampling, the beam's executor):
 * the reply's schema and the lean view follow the prompt's shape; each
 * reply goes through the patcher (cuco_edit) in a ledger of calls; a
 * reply whose normal source and directive are already known is answered
 * with that fact in a note appended to the user message, at a higher
 * temperature, up to a number of attempts; what comes of the calls is a proposal that carries them,
 * or a refusal record that does.
 */
#include "strategies/search_int.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

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
	cuco_buf view = { 0 };
	if (a->shape.profile == CUCO_PROFILE_LEAN)
		cuco_prompt_lean_code(a->wl, a->base, a->src, a->len, &view);
	/* The functions an edit may name are those of the code as shown. */
	char *schema = a->shape.json ? cuco_reply_schema(a->wl, a->kind, a->shape.profile,
		view.data ? view.data : a->src, view.data ? view.len : a->len, a->base) : NULL;
	search_ledger lg;
	search_ledger_init(&lg, a->call, a->parent);
	cuco_buf prompt = { 0 }, transcript = { 0 };
	int rc = CUCO_OK;
	double temperature = a->temperature;
	for (int attempt = 1; rc == CUCO_OK; attempt++) {
		cuco_edit e = { .model = m, .wl = a->wl, .system = a->system->data,
			.user = a->user->data, .map = a->map, .parent = a->src, .parent_len = a->len,
			.view = view.data, .view_len = view.len, .base = a->base,
			.temperature = temperature, .schema = schema,
			.attempts = s->cfg.patch_attempts };
		cuco_edit_result r;
		memset(&r, 0, sizeof r);
		rc = search_llm_edit(s, &lg, &e, &r, err);
		/* Asked again after a repeat, the note may be what no longer fits
		 * the context (issue 26: a run ended on it, 6 tokens short): that
		 * ends this proposal, refused, not the run. A server gone is met
		 * again by the next proposal's first request. */
		if (rc == CUCO_EENV && attempt > 1) {
			char why[sizeof err->msg];
			cuco_strlcpy(why, err->msg, sizeof why);
			rc = cuco_errf(err, CUCO_EDATA, "%s: asked again after a repeat: %s", a->who, why);
		}
		if (!prompt.data && r.prompt)
			cuco_buf_puts(&prompt, r.prompt);
		if (r.transcript)
			cuco_buf_puts(&transcript, r.transcript);
		if (got)
			*got = r.kind;
		char key[CUCO_HASH_LEN + 1];
		const search_known_entry *dup = NULL;
		if (rc == CUCO_OK) {
			search_known_sync(s->port, known, a->who);
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
		/* Asked again hotter, as a repeat within a chat is: at the same
		 * temperature a small model wrote the known candidate again. */
		temperature = cuco_edit_hotter(m, temperature);
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
