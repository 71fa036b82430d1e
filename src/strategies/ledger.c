/* ledger.c — what the LLM strategies' model calls cost: the ledger
 * that keeps a proposal's calls until they go into the store (with the
 * candidate that came of them, with a refusal, or alone), each call
 * priced and its tokens counted (estimated from the text when the server
 * sent no usage), and the run's model budget over every call of the run.
 *
 * DESIGN: search_llm_call (search.c) notes every call here, so no call
 * escapes the budget; the ledger stores nothing itself until it is
 * closed, refused or filled into a proposal, each one port call.
 */
#include "strategies/search_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void search_ledger_init(search_ledger *lg, cuco_call_kind kind, uint64_t parent)
{
	memset(lg, 0, sizeof *lg);
	lg->kind = kind;
	lg->parent = parent;
}

static void ledger_free(search_ledger *lg)
{
	for (size_t i = 0; i < lg->n; i++)
		free(lg->v[i].reply);
	free(lg->v);
	lg->v = NULL;
	lg->n = lg->cap = 0;
}

/* Tokens of a text as a server would count them, roughly: one per four
 * bytes (the usual rule for English and code with BPE tokenizers). */
static int64_t estimate_tokens(size_t bytes)
{
	return (int64_t)((bytes + 3) / 4);
}

static size_t prompt_bytes(const cuco_llm_request *req)
{
	size_t n = req->system ? strlen(req->system) : 0;
	for (int i = 0; i < req->nmsgs; i++)
		n += strlen(req->msgs[i].content);
	return n;
}

/* The call as the ledger keeps it, priced. */
void search_ledger_note(search_llm *s, search_ledger *lg, const cuco_llm_request *req,
	const cuco_llm_reply *r, const char *streamed, int rc, const cuco_err *err)
{
	if (lg->n == lg->cap) {
		lg->cap = lg->cap ? 2 * lg->cap : 4;
		lg->v = cuco_xrealloc(lg->v, lg->cap * sizeof *lg->v);
	}
	cuco_port_call *en = &lg->v[lg->n++];
	memset(en, 0, sizeof *en);
	cuco_call *c = &en->call;
	const cuco_model *m = req->model;
	c->kind = lg->kind;
	c->parent = lg->parent;
	c->seconds = r->seconds;
	cuco_strlcpy(c->model, m->name, sizeof c->model);
	c->outcome = rc == CUCO_OK ? CUCO_CALL_USED : r->cancelled ? CUCO_CALL_CANCELLED
		: CUCO_CALL_FAILED;
	if (rc != CUCO_OK)
		cuco_strlcpy(c->reason, err->msg, sizeof c->reason);
	const char *text = rc == CUCO_OK ? r->text : streamed;
	c->tokens_in = r->tokens_in;
	c->tokens_cached = r->tokens_cached;
	c->tokens_out = r->tokens_out;
	/* No usage from the server (none sent, or the call was cut short):
	 * counted from the text, and marked so. A call that never reached a
	 * server costs nothing. */
	bool reached = rc == CUCO_OK || r->cancelled || (text && *text);
	if (c->tokens_in == 0 && c->tokens_out == 0 && reached) {
		c->tokens_in = estimate_tokens(prompt_bytes(req));
		c->tokens_out = estimate_tokens(text ? strlen(text) : 0);
		c->estimated = true;
	}
	c->priced = cuco_model_priced(m);
	c->cost_usd = cuco_model_cost(m, c->tokens_in, c->tokens_cached, c->tokens_out);
	/* What the server counted of what was sent: the next prompts' measure. */
	int k = (int)(m - s->cfg.models);
	if (rc == CUCO_OK && !c->estimated && c->tokens_in >= 256 && k >= 0 && k < s->cfg.nmodels) {
		double bpt = 0.97 * (double)prompt_bytes(req) / (double)c->tokens_in;
		cuco_model *mine = &s->cfg.models[k];
		if (mine->bytes_per_token <= 0 || bpt < mine->bytes_per_token)
			mine->bytes_per_token = bpt;
	}
	en->reply = text && *text ? cuco_xstrdup(text) : NULL;
	lg->cancelled |= c->outcome == CUCO_CALL_CANCELLED;
	cuco_call_totals_add(&s->totals, c);
}

void search_ledger_refused(search_ledger *lg, const char *why)
{
	if (lg->n == 0)
		return;
	cuco_call *c = &lg->v[lg->n - 1].call;
	c->outcome = CUCO_CALL_REFUSED;
	cuco_strlcpy(c->reason, why, sizeof c->reason);
}

void search_ledger_edits_refused(search_ledger *lg, const char *why)
{
	if (lg->n > 0)
		cuco_strlcpy(lg->v[lg->n - 1].call.reason, why, sizeof lg->v[0].call.reason);
}

void search_refuse(search_llm *s, search_ledger *lg, int island, const char *model,
	const char *prompt, const char *transcript, const char *reason)
{
	cuco_refusal r;
	memset(&r, 0, sizeof r);
	r.kind = lg->kind;
	r.parent = lg->parent;
	r.island = island;
	cuco_strlcpy(r.model, model ? model : "", sizeof r.model);
	cuco_strlcpy(r.reason, reason, sizeof r.reason);
	cuco_err err;
	if (s->port->calls(s->port->ctx, &r, prompt, transcript, lg->v, lg->n, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "a refused reply was not stored: %s", err.msg);
	ledger_free(lg);
}

void search_ledger_close(search_llm *s, search_ledger *lg)
{
	cuco_err err;
	if (lg->n > 0 && s->port->calls(s->port->ctx, NULL, NULL, NULL, lg->v, lg->n, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "%zu model calls were not stored: %s", lg->n, err.msg);
	ledger_free(lg);
}

int search_fill(search_llm *s, search_ledger *lg, const cuco_model *m, cuco_edit_result *r,
	cuco_proposal *out, cuco_err *err)
{
	cuco_candidate *c = &out->cand;
	int rc = s->port->texts(s->port->ctx, r->prompt, r->transcript, c, lg->v, lg->n, err);
	if (rc != CUCO_OK)
		return rc;
	out->source = r->source;
	out->len = r->len;
	r->source = NULL;
	c->directive = r->directive;
	snprintf(c->note, sizeof c->note, "%s%s%.440s", r->name, r->name[0] && r->note[0] ? ": " : "",
		r->note);
	cuco_strlcpy(c->model, m->name, sizeof c->model);
	/* Its calls, refused replies included, are its cost. */
	out->calls = cuco_xcalloc(lg->n ? lg->n : 1, sizeof *out->calls);
	out->ncalls = lg->n;
	for (size_t i = 0; i < lg->n; i++) {
		const cuco_call *call = &lg->v[i].call;
		out->calls[i] = *call;
		c->tokens_prompt += call->tokens_in;
		c->tokens_completion += call->tokens_out;
		c->cost_usd += call->cost_usd;
	}
	ledger_free(lg);
	return CUCO_OK;
}

bool search_llm_spent(search_llm *s)
{
	if (s->spent)
		return true;
	const cuco_call_totals *t = &s->totals;
	if (s->budget_usd > 0 && t->cost_usd >= s->budget_usd)
		snprintf(s->spent_why, sizeof s->spent_why, "the model budget is spent: $%.4f of $%.4f",
			t->cost_usd, s->budget_usd);
	else if (s->budget_tokens > 0 && t->tokens_in + t->tokens_out >= s->budget_tokens)
		snprintf(s->spent_why, sizeof s->spent_why, "the model budget is spent: %lld of %lld "
			"tokens", (long long)(t->tokens_in + t->tokens_out), (long long)s->budget_tokens);
	else
		return false;
	s->spent = true;
	cuco_log(CUCO_LOG_INFO, "%s: no more proposals, and the calls in flight are cancelled",
		s->spent_why);
	/* The calls in flight end now, and count. */
	if (s->calls_off)
		atomic_store(s->calls_off, true);
	return true;
}

static int totals_read(const cuco_reader *r, void *arg)
{
	return r->calls(r->ctx, arg);
}

int search_budget_read(search_llm *s, cuco_err *err)
{
	return s->port->read(s->port->ctx, totals_read, &s->totals, err);
}
