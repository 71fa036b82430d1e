/* edit.c — one LLM edit: ask, parse, apply; a reply that is refused is
 * answered in the same conversation with the precise reason, so the model
 * corrects its own reply instead of starting over (CUCo and ShinkaEvolve
 * do the same, up to max_patch_attempts).
 *
 * Everything said is kept in a transcript — each reply, each refusal, and
 * how the accepted hunks matched — which the caller stores next to the
 * candidate for a reviewer to read.
 */
#include "agents/agents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cuco_edit_cut_off(const char *finish)
{
	return strcmp(finish, "length") == 0 || strcmp(finish, "max_tokens") == 0;
}

/* Parse and apply one reply; CUCO_EDATA with err when refused. */
static int try_reply(const cuco_edit *e, const cuco_llm_reply *r, cuco_edit_result *out,
	cuco_buf *transcript, cuco_err *err)
{
	if (cuco_edit_cut_off(r->finish))
		return cuco_errf(err, CUCO_EDATA, "reply cut off by the output limit (finish reason "
			"%s); give a shorter reply", r->finish);
	cuco_reply reply;
	int rc = cuco_reply_parse(r->text, e->wl, e->base, &reply, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_patched p;
	rc = cuco_patch_apply(e->parent, e->parent_len, &reply, &p, err);
	if (rc == CUCO_OK) {
		out->source = p.text;
		out->len = p.len;
		p.text = NULL;
		out->directive = reply.directive;
		out->loosest = p.loosest;
		out->kind = reply.kind;
		cuco_strlcpy(out->name, reply.name, sizeof out->name);
		cuco_strlcpy(out->note, reply.description, sizeof out->note);
		if (p.levels) {
			cuco_buf_printf(transcript, "=== applied %d hunk%s:", p.nhunks, p.nhunks == 1 ? "" : "s");
			for (int i = 0; i < p.nhunks; i++)
				cuco_buf_printf(transcript, " %s", cuco_match_name(p.levels[i]));
			cuco_buf_puts(transcript, " ===\n");
		} else {
			cuco_buf_printf(transcript, "=== applied as a full rewrite%s ===\n", p.frame_kept ?
				"; its comments and whitespace outside the EVOLVE-BLOCKs differed from the "
				"parent's, whose frame was kept" : "");
		}
		cuco_patched_free(&p);
	}
	cuco_reply_free(&reply);
	return rc;
}

/* The most of a refused reply sent back with its reason: enough for any
 * real reply's hunks, and a flood is not paid for twice. */
#define ECHO_MAX (64u << 10)
#define FIT_TRIES 3   /* requests per call when the server finds them too long */

int cuco_llm_ask_fitted(cuco_llm *c, cuco_llm_sender send, void *hook,
	const cuco_llm_request *req, const cuco_prompt_map *map, cuco_fitted *sent,
	cuco_llm_reply *out, cuco_err *err)
{
	const cuco_model *m = req->model;
	size_t extra = 0;
	for (int i = 1; i < req->nmsgs; i++)
		extra += strlen(req->msgs[i].content);
	cuco_fit fit = { .context = m->context, .max_tokens = m->max_tokens, .extra = extra,
		.bytes_per_token = CUCO_BYTES_PER_TOKEN };
	cuco_llm_msg *msgs = cuco_xcalloc((size_t)req->nmsgs, sizeof *msgs);
	memcpy(msgs, req->msgs, (size_t)req->nmsgs * sizeof *msgs);
	int rc;
	for (int tries = 1;; tries++) {
		rc = cuco_prompt_fit(req->system, req->msgs[0].content, map, &fit, sent, err);
		if (rc != CUCO_OK) {
			char why[sizeof err->msg];
			cuco_strlcpy(why, err->msg, sizeof why);
			rc = cuco_errf(err, CUCO_EENV, "llm %s: %s; give the model a longer context", m->name,
				why);
			break;
		}
		if (sent->note[0])
			cuco_log(CUCO_LOG_INFO, "llm: %s: prompt %s (about %lld tokens, %d for the reply)",
				m->name, sent->note, (long long)sent->tokens, sent->max_tokens);
		cuco_llm_request r = *req;
		r.system = req->system ? sent->system : NULL;
		msgs[0].content = sent->user;
		r.msgs = msgs;
		r.max_tokens = sent->max_tokens;
		rc = send ? send(hook, &r, out, err) : cuco_llm_complete(c, &r, out, err);
		if (rc != CUCO_EDATA || !out->context_exceeded)
			break;
		if (tries == FIT_TRIES) {
			char why[sizeof err->msg];
			cuco_strlcpy(why, err->msg, sizeof why);
			rc = cuco_errf(err, CUCO_EENV, "%s (still, after %d cuts)", why, tries - 1);
			break;
		}
		/* The server's counts say how long the context is and how many bytes
		 * its tokens take here; without counts only a known context helps. */
		size_t bytes = strlen(sent->system) + strlen(sent->user) + extra;
		if (out->context_size > 0 && (fit.context == 0 || out->context_size < fit.context))
			fit.context = out->context_size;
		double bpt = out->context_needed > 0 ? (double)bytes / (double)out->context_needed
			: fit.bytes_per_token * 0.8;
		if (fit.context == 0) {
			char why[sizeof err->msg];
			cuco_strlcpy(why, err->msg, sizeof why);
			rc = cuco_errf(err, CUCO_EENV, "%s (set the model's context in the config)", why);
			break;
		}
		fit.bytes_per_token = 0.95 * (bpt < fit.bytes_per_token ? bpt : fit.bytes_per_token);
		cuco_log(CUCO_LOG_INFO, "llm: %s: %s; cutting the prompt to fit %lld tokens and asking "
			"again", m->name, err->msg, (long long)fit.context);
		cuco_fitted_free(sent);
	}
	free(msgs);
	return rc;
}

/* The conversation after a refusal: the prompt, the last refused reply,
 * and its reason (with one line for each earlier refusal). Only the last
 * reply goes back: sending every refused reply whole made requests grow
 * past any context (and to 153 MB against a hostile server). */
typedef struct chat {
	cuco_llm_msg msgs[3];
	int nmsgs;
	char *reply;     /* the last refused reply, as echoed */
	cuco_buf said;   /* the reasons so far, one line each */
	cuco_buf ask;    /* the last user message */
} chat;

static void chat_refused(chat *ch, const char *reply, const char *why, size_t echo_max)
{
	free(ch->reply);
	size_t n = reply ? strlen(reply) : 0;
	if (!reply) {
		ch->reply = cuco_xstrdup("[the reply is not repeated: it was refused while it arrived]");
	} else if (n > echo_max) {
		cuco_buf b = { 0 };
		cuco_buf_printf(&b, "[a reply of %zu bytes, not repeated here]", n);
		ch->reply = b.data;
	} else {
		ch->reply = cuco_xstrdup(reply);
	}
	ch->ask.len = 0;
	cuco_buf_printf(&ch->ask, "Your reply was refused: %s\nNothing of it was applied; the "
		"program is as shown before. Reply again in the same format, with the directive and "
		"every change.", why);
	if (ch->said.len > 0)
		cuco_buf_printf(&ch->ask, "\nEarlier replies were refused too:\n%s", ch->said.data);
	cuco_buf_printf(&ch->said, "- %.300s\n", why);
	ch->msgs[1] = (cuco_llm_msg){ "assistant", ch->reply };
	ch->msgs[2] = (cuco_llm_msg){ "user", ch->ask.data };
	ch->nmsgs = 3;
}

int cuco_llm_edit(const cuco_edit *e, cuco_edit_result *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	cuco_buf prompt = { 0 }, transcript = { 0 };
	cuco_buf_printf(&prompt, "=== system ===\n%s\n=== user ===\n%s\n", e->system ? e->system : "",
		e->user);
	int attempts = e->attempts > 0 ? e->attempts : 1, rc = CUCO_EDATA;
	chat ch = { .msgs = { { "user", e->user } }, .nmsgs = 1 };
	/* A short context has no room for a long echo next to the prompt. */
	size_t echo_max = ECHO_MAX;
	if (e->model->context > 0 && (double)e->model->context * CUCO_BYTES_PER_TOKEN / 8 < echo_max)
		echo_max = (size_t)((double)e->model->context * CUCO_BYTES_PER_TOKEN / 8);
	for (int i = 0; i < attempts; i++) {
		cuco_llm_request req = {
			.model = e->model, .system = e->system, .nmsgs = ch.nmsgs, .msgs = ch.msgs,
			.temperature = e->temperature, .stream = e->stream, .on_delta = e->on_delta,
			.arg = e->arg, .cancel = e->cancel,
		};
		/* A screen showing the reply arriving starts over for each reply. */
		if (i > 0 && e->on_delta)
			e->on_delta(NULL, 0, e->arg);
		cuco_llm_reply r;
		cuco_fitted sent;
		rc = cuco_llm_ask_fitted(e->llm, e->complete, e->hook, &req, e->map, &sent, &r, err);
		if (i == 0 && sent.user) {
			/* What the model was told, as sent, and how it was fitted. */
			prompt.len = 0;
			cuco_buf_printf(&prompt, "=== system ===\n%s\n=== user ===\n%s\n",
				e->system ? sent.system : "", sent.user);
			if (sent.note[0])
				cuco_buf_printf(&prompt, "=== %s ===\n", sent.note);
		} else if (sent.note[0]) {
			cuco_buf_printf(&transcript, "=== reply %d's prompt %s ===\n", i + 1, sent.note);
		}
		cuco_fitted_free(&sent);
		out->replies++;
		out->tokens_in += r.tokens_in;
		out->tokens_out += r.tokens_out;
		out->cost_usd += r.cost_usd;
		/* A reply past the size cap came, and is refused like any other. */
		if (rc != CUCO_OK && rc != CUCO_EDATA) {
			cuco_buf_printf(&transcript, "=== no reply: %s ===\n", err->msg);
			break;
		}
		if (rc == CUCO_OK) {
			cuco_buf_printf(&transcript, "=== reply %d (%s) ===\n%s\n", i + 1, e->model->name,
				r.text);
			rc = try_reply(e, &r, out, &transcript, err);
		}
		/* A reply refused by the client (past the cap) is judged too: its
		 * call is stored as refused, with the reason. */
		if (e->judged)
			e->judged(e->hook, rc == CUCO_OK, rc == CUCO_OK ? "" : err->msg);
		if (rc != CUCO_OK)
			cuco_buf_printf(&transcript, "=== refused: %s ===\n", err->msg);
		if (rc == CUCO_OK || i + 1 == attempts) {
			cuco_llm_reply_free(&r);
			break;
		}
		cuco_log(CUCO_LOG_INFO, "edit: %s: reply %d refused, answered in the chat: %s",
			e->model->name, i + 1, err->msg);
		chat_refused(&ch, r.text, err->msg, echo_max);
		cuco_llm_reply_free(&r);
	}
	free(ch.reply);
	cuco_buf_free(&ch.said);
	cuco_buf_free(&ch.ask);
	out->prompt = prompt.data;
	if (!transcript.data)
		cuco_buf_append(&transcript, "", 0);
	out->transcript = transcript.data;
	return rc;
}

void cuco_edit_result_free(cuco_edit_result *r)
{
	free(r->source);
	free(r->prompt);
	free(r->transcript);
	memset(r, 0, sizeof *r);
}
