/* edit.c — one LLM edit: ask, parse, apply; a reply that is refused is
 * answered in the same conversation with the precise reason, so the model
 * corrects its own reply instead of starting over (CUCo and ShinkaEvolve
 * do the same, up to max_patch_attempts).
 *
 * Everything said is kept in a transcript — each reply, each refusal, and
 * how the accepted hunks matched — which the caller stores next to the
 * candidate for a reviewer to read.
 */
#include "models/models.h"
#include "text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cuco_edit_cut_off(const char *finish)
{
	return strcmp(finish, "length") == 0 || strcmp(finish, "max_tokens") == 0;
}

/* What a refused reply taught: its directive, when that was the refusal,
 * as cuco read it (for the block sent back with the allowed values). */
typedef struct lesson {
	bool directive;
	cuco_directive seemed;
} lesson;

/* The local headers text includes, from the workload's folder, one after
 * the other: what its calls may name besides the program's own. */
static void local_headers(const cuco_edit *e, const char *text, size_t len, cuco_buf *out)
{
	char names[16][128];
	int n = 0;
	if (e->wl)
		cuco_text_includes(text, len, names, &n, 16);
	for (int i = 0; i < n; i++) {
		char *h;
		size_t hlen;
		cuco_err ignored;
		cuco_buf path = { 0 };
		cuco_buf_printf(&path, "%s/%s", e->wl->dir, names[i]);
		int rc = cuco_read_file(path.data, 1u << 20, &h, &hlen, &ignored);
		cuco_buf_free(&path);
		if (rc != CUCO_OK)
			continue;
		cuco_buf_append(out, h, hlen);
		cuco_buf_puts(out, "\n");
		free(h);
	}
}

/* The reply applied to the parent, or to its lean view and then expanded
 * (e->view: each note line becomes the lines it stands for again); an
 * edit whose calls name a function it removed is refused here, before a
 * compile would (cuco_patch_calls). */
static int apply(const cuco_edit *e, const cuco_reply *reply, cuco_patched *p, cuco_err *err)
{
	int rc = e->view ? cuco_patch_apply(e->view, e->view_len, reply, e->wl, p, err)
		: cuco_patch_apply(e->parent, e->parent_len, reply, e->wl, p, err);
	if (rc != CUCO_OK)
		return rc;
	if (e->view) {
		cuco_buf b = { 0 };
		rc = cuco_lean_expand(p->text, p->len, e->parent, e->parent_len, &b, err);
		free(p->text);
		p->text = b.data;
		p->len = b.len;
	}
	if (rc == CUCO_OK && reply->kind != CUCO_REPLY_DIRECTIVE) {
		cuco_buf known = { 0 };
		local_headers(e, p->text, p->len, &known);
		rc = cuco_patch_calls(e->parent, e->parent_len, p->text, p->len, known.data, err);
		cuco_buf_free(&known);
	}
	if (rc != CUCO_OK)
		cuco_patched_free(p);
	return rc;
}

/* Whether a reply whose edits were refused still makes a directive-only
 * child: it stated a directive of the design space (its parse checked
 * it) other than the parent's, and code is not required. */
static bool salvageable(const cuco_edit *e, const cuco_reply *reply)
{
	return !e->code_required && e->wl && e->base && reply->has_directive &&
		reply->kind != CUCO_REPLY_DIRECTIVE &&
		cuco_directive_diff(e->base, &reply->directive, NULL, NULL) != 0;
}

/* Parse and apply one reply; CUCO_EDATA with err when refused. A reply
 * that stopped by itself may be a directive alone, unless code is
 * required; it must then change the directive. */
static int try_reply(const cuco_edit *e, const cuco_llm_reply *r, cuco_edit_result *out,
	cuco_buf *transcript, lesson *learnt, cuco_err *err)
{
	if (cuco_edit_cut_off(r->finish))
		return cuco_errf(err, CUCO_EDATA, "reply cut off by the output limit (finish reason "
			"%s); give a shorter reply", r->finish);
	cuco_reply reply;
	int rc = (e->code_required ? cuco_reply_parse : cuco_reply_parse_any)(r->text, e->wl, e->base,
		&reply, err);
	learnt->directive = rc != CUCO_OK && reply.directive_refused;
	learnt->seemed = reply.directive;
	if (rc != CUCO_OK)
		return rc;
	if (reply.kind == CUCO_REPLY_DIRECTIVE && e->base &&
			cuco_directive_diff(e->base, &reply.directive, NULL, NULL) == 0) {
		bool echoed = reply.echoed;
		cuco_reply_free(&reply);
		if (echoed)
			return cuco_errf(err, CUCO_EDATA, "reply is the reply form sent back unchanged: its "
				"edit is the form's placeholder (`" CUCO_SEARCH_PLACEHOLDER "`) and its directive "
				"the current program's, so nothing would change; either change a value of the "
				"directive and give no edit, or give edits whose SEARCH is lines copied from the "
				"program above and whose REPLACE is their new text");
		return cuco_errf(err, CUCO_EDATA, "reply holds no code and states the current program's "
			"own directive: nothing would change; give a different directive or SEARCH/REPLACE "
			"hunks");
	}
	cuco_patched p;
	rc = apply(e, &reply, &p, err);
	/* Edits refused beside a new directive of the design space: the
	 * directive still makes a directive-only child, as a reply with no
	 * edit would, and why the edits were refused goes with it. */
	bool salvaged = rc == CUCO_EDATA && salvageable(e, &reply);
	if (salvaged) {
		cuco_strlcpy(out->edits_refused, err->msg, sizeof out->edits_refused);
		reply.kind = CUCO_REPLY_DIRECTIVE;
		rc = apply(e, &reply, &p, err);
	}
	if (rc == CUCO_OK) {
		out->source = p.text;
		out->len = p.len;
		p.text = NULL;
		out->directive = reply.directive;
		out->loosest = p.loosest;
		out->kind = reply.kind;
		cuco_strlcpy(out->name, reply.name, sizeof out->name);
		cuco_strlcpy(out->note, reply.description, sizeof out->note);
		if (reply.echoed)
			cuco_buf_puts(transcript, "=== the reply form's placeholder edit set aside ===\n");
		if (reply.set_aside)
			cuco_buf_printf(transcript, "=== %d hunk%s restating the directive set aside: the "
				"directive states it ===\n", reply.set_aside, reply.set_aside == 1 ? "" : "s");
		if (salvaged) {
			cuco_buf_printf(transcript, "=== its edits refused: %s ===\n=== applied as a "
				"directive-only child of its new directive: the parent's code ===\n",
				out->edits_refused);
			snprintf(out->note, sizeof out->note, "directive only, its edits refused%s%.440s",
				reply.description[0] ? ": " : "", reply.description);
		} else if (reply.kind == CUCO_REPLY_DIRECTIVE) {
			cuco_buf_puts(transcript, "=== applied as a directive-only child: the parent's code "
				"===\n");
		} else if (p.levels) {
			cuco_buf_printf(transcript, "=== applied %d hunk%s:", p.nhunks, p.nhunks == 1 ? "" : "s");
			for (int i = 0; i < p.nhunks; i++)
				cuco_buf_printf(transcript, " %s", cuco_match_name(p.levels[i]));
			cuco_buf_puts(transcript, " ===\n");
			if (p.unchanged)
				cuco_buf_printf(transcript, "=== of them %d changed nothing (REPLACE equals "
					"SEARCH, whitespace aside), set aside ===\n", p.unchanged);
			if (p.unbuilt) {
				char dir[160];
				cuco_directive_short(&reply.directive, dir, sizeof dir);
				cuco_buf_printf(transcript, "=== of them %d in a branch directive `%s` does not "
					"build, set aside ===\n", p.unbuilt, dir);
			}
		} else {
			cuco_buf_printf(transcript, "=== applied as %s%s ===\n", reply.kind == CUCO_REPLY_BLOCKS
				? "the blocks' new text" : "a full rewrite", p.frame_kept ?
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
#define RETRY_MIN_TOKENS 384  /* a retry's reply budget, at the least (retry_budget) */
#define FIT_TRIES 3   /* requests per call when the server finds them too long */

int cuco_llm_ask_fitted(cuco_llm *c, cuco_llm_sender send, void *hook,
	const cuco_llm_request *req, const cuco_prompt_map *map, cuco_fitted *sent,
	cuco_llm_reply *out, cuco_err *err)
{
	const cuco_model *m = req->model;
	size_t extra = 0;
	for (int i = 1; i < req->nmsgs; i++)
		extra += strlen(req->msgs[i].content);
	cuco_fit fit = { .context = m->context, .extra = extra,
		.bytes_per_token = m->bytes_per_token > 0 ? m->bytes_per_token : CUCO_BYTES_PER_TOKEN,
		.max_tokens = req->max_tokens > 0 && req->max_tokens < m->max_tokens ? req->max_tokens
			: m->max_tokens };
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

/* The conversation after a refusal: the prompt as first sent (its
 * fitting never redone, so the server's cache of its prefix holds), then
 * either the last refused reply and the refusal, or, when that reply is
 * not repeated (it was refused while it arrived, or is too long to send
 * back), the refusal added after the prompt in the one user message: no
 * placeholder ever stands in the model's own turn, where a small model
 * copies it. Earlier refusals are one line each: sending every refused
 * reply whole made requests grow past any context. */
typedef struct chat {
	cuco_llm_msg msgs[3];
	int nmsgs;
	char *system, *prompt;  /* as first sent (fitted) */
	int64_t prompt_tokens;  /* about how many tokens they are */
	char *reply;            /* the last refused reply, when repeated */
	cuco_buf first;         /* the prompt, and the refusal when no reply is repeated */
	cuco_buf said;          /* the reasons so far, one line each */
	size_t said_before;     /* said's length before the last reason */
	cuco_buf ask;           /* what the user says after a refusal */
	char **replies;         /* every reply of the chat, to tell a repeat */
	int nreplies;
} chat;

/* The directive as cuco read it, a line per dimension with the values
 * allowed: the block a model meant, to copy. */
static void put_allowed(cuco_buf *b, const cuco_workload *wl, const cuco_directive *d)
{
	cuco_buf_puts(b, "\nThe directive as cuco read it, each line with the values allowed "
		"(copy the block and fix the value):\nDIRECTIVE:\n");
	char (*vals)[32] = cuco_xmalloc(CUCO_DIM_LISTED * sizeof *vals);
	for (int i = 0; i < wl->ndims; i++) {
		const cuco_dim *dim = &wl->dims[i];
		int n = cuco_dim_values(dim, vals);
		cuco_buf_printf(b, "%s: %s   # one of:", dim->name, cuco_directive_value(d, dim->name));
		for (int k = 0; k < n && k < 12; k++)
			cuco_buf_printf(b, "%s %s", k ? "," : "", vals[k]);
		cuco_buf_puts(b, n > 12 ? ", …\n" : "\n");
	}
	free(vals);
	cuco_prompt_put_constraints(b, wl);
}

static void chat_refused(chat *ch, const cuco_edit *e, const char *reply, const char *why,
	size_t echo_max, const lesson *learnt)
{
	size_t n = reply ? strlen(reply) : 0;
	bool echo = reply && n <= echo_max;
	ch->ask.len = 0;
	if (!echo)
		cuco_buf_printf(&ch->ask, "\n\n---\nYour last reply (%s) was refused: %s\n",
			reply ? "too long to repeat here" : "refused while it arrived", why);
	else
		cuco_buf_printf(&ch->ask, "Your reply was refused: %s\n", why);
	if (learnt->directive && e->wl)
		put_allowed(&ch->ask, e->wl, &learnt->seemed);
	cuco_buf_puts(&ch->ask, "Nothing of it was applied; the program is as shown before. Reply "
		"again in the same format, with the directive and every change.");
	if (ch->said.len > 0)
		cuco_buf_printf(&ch->ask, "\nEarlier replies were refused too:\n%s", ch->said.data);
	ch->said_before = ch->said.len;
	cuco_buf_printf(&ch->said, "- %.300s\n", why);
	ch->first.len = 0;
	cuco_buf_puts(&ch->first, ch->prompt);
	free(ch->reply);
	ch->reply = echo ? cuco_xstrdup(reply) : NULL;
	if (echo) {
		ch->msgs[1] = (cuco_llm_msg){ "assistant", ch->reply };
		ch->msgs[2] = (cuco_llm_msg){ "user", ch->ask.data };
		ch->nmsgs = 3;
	} else {
		cuco_buf_puts(&ch->first, ch->ask.data);
		ch->nmsgs = 1;
	}
	ch->msgs[0] = (cuco_llm_msg){ "user", ch->first.data };
}

/* Whether a reply is one the chat had already, byte for byte. */
static bool repeated(chat *ch, const char *text)
{
	for (int i = 0; text && i < ch->nreplies; i++)
		if (strcmp(ch->replies[i], text) == 0)
			return true;
	if (text) {
		ch->replies = cuco_xrealloc(ch->replies, (size_t)(ch->nreplies + 1) * sizeof *ch->replies);
		ch->replies[ch->nreplies++] = cuco_xstrdup(text);
	}
	return false;
}

static void chat_free(chat *ch)
{
	for (int i = 0; i < ch->nreplies; i++)
		free(ch->replies[i]);
	free(ch->replies);
	free(ch->system);
	free(ch->prompt);
	free(ch->reply);
	cuco_buf_free(&ch->first);
	cuco_buf_free(&ch->said);
	cuco_buf_free(&ch->ask);
}

/* Whether cuco may choose the model's temperature: not where the model's
 * is fixed by its configuration, or where it takes none. */
static bool temperature_free(const cuco_model *m)
{
	return isnan(m->temperature) && !m->no_temperature;
}

/* The temperature after a repeat: higher, so the model leaves its rut;
 * t itself where cuco may not choose it. */
double cuco_edit_hotter(const cuco_model *m, double t)
{
	if (!temperature_free(m))
		return t;
	double now = isnan(t) ? 0.7 : t + 0.4;
	return now > 1.2 ? 1.2 : now;
}

/* cuco_edit_hotter, or NAN where it cannot be raised: the chat ends. */
static double raised(const cuco_edit *e, double t)
{
	return temperature_free(e->model) ? cuco_edit_hotter(e->model, t) : NAN;
}

/* The temperature of a retry after a refusal that was no repeat: at least
 * RETRY_TEMPERATURE where the caller's may change. A small model asked
 * again at its first temperature (evolve's 0.0 or 0.2) wrote its refused
 * reply again byte for byte, and the repeat cost a call (issue 26: 3 of
 * this stop's first 9 replies). */
#define RETRY_TEMPERATURE 0.5

static double retry_temperature(const cuco_edit *e, double t)
{
	if (!temperature_free(e->model) || isnan(t))
		return t;
	return t < RETRY_TEMPERATURE ? RETRY_TEMPERATURE : t;
}

/* Whether the chat, and a reply of up to max_tokens, fit the context:
 * the same sum cuco_prompt_fit makes. */
static bool chat_fits(const cuco_edit *e, const chat *ch, int max_tokens)
{
	const cuco_model *m = e->model;
	if (m->context <= 0)
		return true;
	size_t bytes = ch->system ? strlen(ch->system) : 0;
	for (int i = 0; i < ch->nmsgs; i++)
		bytes += strlen(ch->msgs[i].content);
	double bpt = m->bytes_per_token > 0 ? m->bytes_per_token : CUCO_BYTES_PER_TOKEN;
	return (double)bytes / bpt + (double)cuco_prompt_reserve(m->context, max_tokens) <=
		(double)m->context;
}

/* The most of a refused reply a retry repeats: ECHO_MAX, and no more than
 * what the context leaves next to the prompt as sent (prompt_tokens) and
 * a reply of up to max_tokens. */
static size_t echo_room(const cuco_edit *e, int64_t prompt_tokens, int max_tokens)
{
	size_t max = ECHO_MAX;
	const cuco_model *m = e->model;
	if (m->context <= 0)
		return max;
	int64_t left = m->context - prompt_tokens - cuco_prompt_reserve(m->context, max_tokens) - 64;
	double bytes = left > 0 ? (double)left * CUCO_BYTES_PER_TOKEN / 2 : 0;
	return bytes < (double)max ? (size_t)bytes : max;
}

/* What a retry may answer in where the model's whole budget no longer
 * fits beside the chat: twice the chat's longest reply so far (as the
 * server counted it, or guessed from its bytes), at least
 * RETRY_MIN_TOKENS, at most the model's max_tokens. At a small context
 * the full reserve left no room for the chat's turns
 * (issue 26: Qwen at 4 096 tokens, lean prompts of ~2 600 tokens and a
 * reserve of 1 152 ended 9 of 11 chats before their second reply, while
 * its replies were 100-350 tokens). */
static int64_t reply_tokens(const cuco_model *m, const cuco_llm_reply *r)
{
	double bpt = m->bytes_per_token > 0 ? m->bytes_per_token : CUCO_BYTES_PER_TOKEN;
	int64_t guess = r->text ? (int64_t)((double)strlen(r->text) / bpt) : 0;
	return r->tokens_out > guess ? r->tokens_out : guess;  /* a server may not count */
}

static int retry_budget(const cuco_model *m, int64_t longest)
{
	int64_t want = 2 * longest > RETRY_MIN_TOKENS ? 2 * longest : RETRY_MIN_TOKENS;
	return m->max_tokens > 0 && want > m->max_tokens ? m->max_tokens : (int)want;
}

/* Request i went out as `sent` (freed here): the first one's text is what
 * the model was told, as sent and fitted, and the chat keeps it; a later
 * one's fitting note goes to the transcript. */
static void note_sent(const cuco_edit *e, int i, cuco_fitted *sent, chat *ch, cuco_buf *prompt,
	cuco_buf *transcript)
{
	if (i == 0 && sent->user) {
		prompt->len = 0;
		cuco_buf_printf(prompt, "=== system ===\n%s\n=== user ===\n%s\n", e->system ? sent->system : "",
			sent->user);
		if (sent->note[0])
			cuco_buf_printf(prompt, "=== %s ===\n", sent->note);
		ch->system = e->system ? cuco_xstrdup(sent->system) : NULL;
		ch->prompt = cuco_xstrdup(sent->user);
		ch->prompt_tokens = sent->tokens;
	} else if (sent->note[0]) {
		cuco_buf_printf(transcript, "=== reply %d's prompt %s ===\n", i + 1, sent->note);
	}
	cuco_fitted_free(sent);
}

int cuco_llm_edit(const cuco_edit *e, cuco_edit_result *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	cuco_buf prompt = { 0 }, transcript = { 0 };
	cuco_buf_printf(&prompt, "=== system ===\n%s\n=== user ===\n%s\n", e->system ? e->system : "",
		e->user);
	int attempts = e->attempts > 0 ? e->attempts : 1, rc = CUCO_EDATA, repeats = 0;
	chat ch = { .msgs = { { "user", e->user } }, .nmsgs = 1 };
	int64_t longest = 0;
	int budget = e->model->max_tokens;  /* the next request's reply budget */
	double temperature = e->temperature;
	for (int i = 0; i < attempts; i++) {
		cuco_llm_request req = {
			.model = e->model, .system = i ? ch.system : e->system, .nmsgs = ch.nmsgs,
			.msgs = ch.msgs, .temperature = temperature, .schema = e->schema, .stream = e->stream,
			.on_delta = e->on_delta, .arg = e->arg, .cancel = e->cancel, .max_tokens = budget,
		};
		/* A screen showing the reply arriving starts over for each reply. */
		if (i > 0 && e->on_delta)
			e->on_delta(NULL, 0, e->arg);
		cuco_llm_reply r;
		cuco_fitted sent;
		/* Only the first request is fitted: later ones keep its text. */
		rc = cuco_llm_ask_fitted(e->llm, e->complete, e->hook, &req, i ? NULL : e->map, &sent, &r,
			err);
		note_sent(e, i, &sent, &ch, &prompt, &transcript);
		out->replies++;
		out->tokens_in += r.tokens_in;
		out->tokens_out += r.tokens_out;
		out->cost_usd += r.cost_usd;
		out->schema_refused |= r.schema_refused;
		/* A reply past the size cap, or looping, came and is refused like any other. */
		if (rc != CUCO_OK && rc != CUCO_EDATA) {
			cuco_buf_printf(&transcript, "=== no reply: %s ===\n", err->msg);
			break;
		}
		lesson learnt = { 0 };
		bool again = rc == CUCO_OK && repeated(&ch, r.text);
		if (again) {
			rc = cuco_errf(err, CUCO_EDATA, "the reply repeats an earlier one of this chat byte "
				"for byte; give a different reply");
			repeats++;
		}
		if (rc == CUCO_OK || again)
			cuco_buf_printf(&transcript, "=== reply %d (%s) ===\n%s\n", i + 1, e->model->name,
				r.text);
		if (rc == CUCO_OK)
			rc = try_reply(e, &r, out, &transcript, &learnt, err);
		/* A reply refused by the client (past the cap) is judged too: its
		 * call is stored as refused, with the reason. */
		if (e->judged)
			e->judged(e->hook, rc == CUCO_OK, rc == CUCO_OK ? out->edits_refused : err->msg);
		if (rc != CUCO_OK)
			cuco_buf_printf(&transcript, "=== refused: %s ===\n", err->msg);
		/* A repeat is answered at a higher temperature; a second, or one
		 * whose temperature cannot be raised, ends the chat. */
		double next = again ? raised(e, temperature) : retry_temperature(e, temperature);
		bool stuck = again && (repeats > 1 || isnan(next));
		if (rc == CUCO_OK || i + 1 == attempts || stuck) {
			if (stuck)
				cuco_buf_puts(&transcript, "=== the chat ends: the model repeats itself ===\n");
			cuco_llm_reply_free(&r);
			break;
		}
		if (again)
			cuco_log(CUCO_LOG_INFO, "edit: %s: reply %d repeats an earlier one; asking again at "
				"temperature %.1f", e->model->name, i + 1, next);
		else
			cuco_log(CUCO_LOG_INFO, "edit: %s: reply %d refused, answered in the chat: %s",
				e->model->name, i + 1, err->msg);
		temperature = next;
		longest = reply_tokens(e->model, &r) > longest ? reply_tokens(e->model, &r) : longest;
		int small = retry_budget(e->model, longest);
		chat_refused(&ch, e, r.text, err->msg, echo_room(e, ch.prompt_tokens, small), &learnt);
		/* The model's whole budget where the chat still fits it. */
		budget = chat_fits(e, &ch, e->model->max_tokens) ? e->model->max_tokens : small;
		/* No room for the refused reply beside the prompt as sent: the
		 * refusal alone; no room for that either: the chat ends, refused,
		 * rather than sending what the server would refuse as too long. */
		if (!chat_fits(e, &ch, budget) && ch.nmsgs > 1) {
			ch.said.len = ch.said_before;  /* the same refusal, said once */
			ch.said.data[ch.said.len] = '\0';
			chat_refused(&ch, e, r.text, err->msg, 0, &learnt);
		}
		cuco_llm_reply_free(&r);
		if (!chat_fits(e, &ch, budget)) {
			cuco_buf_puts(&transcript, "=== the chat ends: no room in the context for another "
				"reply beside the prompt ===\n");
			break;
		}
	}
	chat_free(&ch);
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
