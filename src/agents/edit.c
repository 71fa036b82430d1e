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

int cuco_llm_edit(const cuco_edit *e, cuco_edit_result *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	cuco_buf prompt = { 0 }, transcript = { 0 };
	cuco_buf_printf(&prompt, "=== system ===\n%s\n=== user ===\n%s\n", e->system ? e->system : "",
		e->user);
	int attempts = e->attempts > 0 ? e->attempts : 1;
	/* The conversation: the prompt, then reply and refusal pairs. */
	cuco_llm_msg *msgs = cuco_xcalloc((size_t)attempts * 2, sizeof *msgs);
	char **owned = cuco_xcalloc((size_t)attempts * 2, sizeof *owned);
	int nmsgs = 0, nowned = 0, rc = CUCO_EDATA;
	msgs[nmsgs++] = (cuco_llm_msg){ "user", e->user };
	for (int i = 0; i < attempts; i++) {
		cuco_llm_request req = {
			.model = e->model, .system = e->system, .nmsgs = nmsgs, .msgs = msgs,
			.temperature = e->temperature, .stream = e->stream, .on_delta = e->on_delta,
			.arg = e->arg, .cancel = e->cancel,
		};
		/* A screen showing the reply arriving starts over for each reply. */
		if (i > 0 && e->on_delta)
			e->on_delta(NULL, 0, e->arg);
		cuco_llm_reply r;
		rc = e->complete ? e->complete(e->hook, &req, &r, err)
			: cuco_llm_complete(e->llm, &req, &r, err);
		out->replies++;
		out->tokens_in += r.tokens_in;
		out->tokens_out += r.tokens_out;
		out->cost_usd += r.cost_usd;
		if (rc != CUCO_OK) {
			cuco_buf_printf(&transcript, "=== no reply: %s ===\n", err->msg);
			break;
		}
		cuco_buf_printf(&transcript, "=== reply %d (%s) ===\n%s\n", i + 1, e->model->name, r.text);
		rc = try_reply(e, &r, out, &transcript, err);
		if (e->judged)
			e->judged(e->hook, rc == CUCO_OK, rc == CUCO_OK ? "" : err->msg);
		if (rc == CUCO_OK || i + 1 == attempts) {
			if (rc != CUCO_OK)
				cuco_buf_printf(&transcript, "=== refused: %s ===\n", err->msg);
			cuco_llm_reply_free(&r);
			break;
		}
		cuco_buf_printf(&transcript, "=== refused: %s ===\n", err->msg);
		cuco_buf feedback = { 0 };
		cuco_buf_printf(&feedback, "Your reply was refused: %s\nNothing of it was applied; the "
			"program is as shown before. Reply again in the same format, with the directive and "
			"every change.", err->msg);
		owned[nowned++] = r.text;
		owned[nowned++] = feedback.data;
		msgs[nmsgs++] = (cuco_llm_msg){ "assistant", r.text };
		msgs[nmsgs++] = (cuco_llm_msg){ "user", feedback.data };
	}
	for (int i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(msgs);
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
