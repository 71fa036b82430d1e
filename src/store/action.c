/* action.c — a person's actions: the one set of rules, and the one
 * transaction that takes them.
 *
 * The screen and the CLI take an action through cuco_person_act: a mark
 * lands on the candidate's record at once (so ls, show and every viewer
 * see it even when no engine runs), the command is queued for a running
 * engine, and an event names who did what. The engine, when it applies
 * the queued command, goes through cuco_action_apply again: the same
 * rules, and idempotent, so applying a mark twice changes nothing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "text.h"

/* A rejected candidate comes back as what its record says it reached:
 * timed, failed, or not yet evaluated (the engine evaluates it then). */
static cuco_status status_after_reject(const cuco_candidate *c)
{
	if (c->failure.stage[0] || c->failure.error_class[0])
		return CUCO_STATUS_FAILED;
	if (c->timing.samples > 0 || isfinite(c->timing.median_us))
		return CUCO_STATUS_DONE;
	return CUCO_STATUS_QUEUED;
}

static int refuse(char *why, size_t whylen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *why, size_t whylen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return code;
}

static bool is_mark(cuco_command_kind k)
{
	return k == CUCO_CMD_PIN || k == CUCO_CMD_UNPIN || k == CUCO_CMD_REJECT || k == CUCO_CMD_UNREJECT;
}

static int apply_mark(cuco_txn *txn, const cuco_command *cmd, cuco_candidate *c, char *why,
	size_t whylen)
{
	unsigned long long id = (unsigned long long)c->id;
	switch (cmd->kind) {
	case CUCO_CMD_PIN:
		if (c->status == CUCO_STATUS_REJECTED)
			return refuse(why, whylen, CUCO_EDATA,
				"candidate %llu: rejected candidates cannot be pinned (un-reject it first)", id);
		c->pinned = true;
		break;
	case CUCO_CMD_UNPIN:
		c->pinned = false;
		break;
	case CUCO_CMD_REJECT:
		if (c->origin == CUCO_ORIGIN_BASELINE)
			return refuse(why, whylen, CUCO_EDATA,
				"candidate %llu: the baseline cannot be rejected (it is every speedup's reference)", id);
		c->status = CUCO_STATUS_REJECTED;
		c->pinned = false;
		cuco_strlcpy(c->reject_reason, cmd->text, sizeof c->reject_reason);
		break;
	default:  /* CUCO_CMD_UNREJECT */
		if (c->status == CUCO_STATUS_REJECTED)
			c->status = status_after_reject(c);
		c->reject_reason[0] = '\0';
		break;
	}
	return cuco_cand_put(txn, c);
}

/* The candidate an edit would repeat: the same source under the same
 * directive (the parent's, which an edit keeps), as a model's reply that
 * reproduces a candidate is refused. */
struct same {
	cuco_txn *txn;
	const char *hash;
	const cuco_buf *text;        /* the edit's source, normalized */
	const cuco_directive *d;
	uint64_t id;
};

/* The same program: the same text, or the same after comments and
 * whitespace (cuco_text_normalize), as a model's reply is compared. */
static bool same_source(const struct same *s, const cuco_candidate *c)
{
	if (strcmp(c->source_hash, s->hash) == 0)
		return true;
	if (strlen(c->source_hash) != CUCO_HASH_LEN)  /* no source stored (yet) */
		return false;
	char *text = NULL;
	size_t len = 0;
	cuco_buf norm = { 0 };
	bool same = cuco_source_get(s->txn, c->source_hash, &text, &len) == CUCO_OK
		&& (cuco_text_normalize(text, len, &norm), norm.len == s->text->len)
		&& memcmp(norm.data, s->text->data, norm.len) == 0;
	free(text);
	cuco_buf_free(&norm);
	return same;
}

static int find_same(const cuco_candidate *c, void *arg)
{
	struct same *s = arg;
	if (cuco_directive_diff(&c->directive, s->d, NULL, NULL) == 0 && same_source(s, c)) {
		s->id = c->id;
		return -1;  /* found: stops the walk, not an error code */
	}
	return 0;
}

static int check_edit(cuco_txn *txn, const cuco_command *cmd, const cuco_candidate *parent,
	char *why, size_t whylen)
{
	char *text = NULL;
	size_t len = 0;
	int rc = cuco_source_get(txn, cmd->source_hash, &text, &len);
	if (rc == CUCO_ENOTFOUND)
		return refuse(why, whylen, CUCO_EDATA, "edit of candidate %llu: no stored source %s",
			(unsigned long long)cmd->candidate, cmd->source_hash);
	if (rc != CUCO_OK)
		return rc;
	cuco_buf norm = { 0 };
	cuco_text_normalize(text, len, &norm);
	free(text);
	struct same s = { txn, cmd->source_hash, &norm, &parent->directive, 0 };
	rc = cuco_cand_each(txn, 1, find_same, &s);
	cuco_buf_free(&norm);
	if (rc != -1)
		return rc;
	return refuse(why, whylen, CUCO_EDATA, "edit of candidate %llu: the same source (but for "
		"comments and spacing) and directive as candidate %llu: nothing new to evaluate",
		(unsigned long long)cmd->candidate, (unsigned long long)s.id);
}

int cuco_action_apply(cuco_txn *txn, const cuco_command *cmd, cuco_candidate *out, char *why,
	size_t whylen)
{
	if ((unsigned)cmd->kind >= CUCO_CMD_COUNT)
		return refuse(why, whylen, CUCO_EDATA, "unknown command kind %d", (int)cmd->kind);
	if (cmd->kind == CUCO_CMD_HINT && !cmd->text[0])
		return refuse(why, whylen, CUCO_EDATA, "a hint needs a text");
	if (cmd->kind == CUCO_CMD_HINT && cmd->island < -1)
		return refuse(why, whylen, CUCO_EDATA, "island %d: not an island", cmd->island);
	if (!is_mark(cmd->kind) && cmd->kind != CUCO_CMD_EDIT)
		return CUCO_OK;  /* about the run: pause, resume, stop, hint */
	cuco_candidate *c = out ? out : cuco_xmalloc(sizeof *c);
	int rc = cuco_cand_get(txn, cmd->candidate, c);
	if (rc == CUCO_ENOTFOUND)
		refuse(why, whylen, rc, "candidate %llu: no such candidate", (unsigned long long)cmd->candidate);
	else if (rc == CUCO_OK && cmd->kind == CUCO_CMD_EDIT)
		rc = check_edit(txn, cmd, c, why, whylen);
	else if (rc == CUCO_OK)
		rc = apply_mark(txn, cmd, c, why, whylen);
	if (c != out)
		free(c);
	return rc;
}

/* What a person's command does, in words, for its event: "reject #5: slow". */
static void command_describe(const cuco_command *cmd, char *buf, size_t size)
{
	unsigned long long id = (unsigned long long)cmd->candidate;
	switch (cmd->kind) {
	case CUCO_CMD_PIN: snprintf(buf, size, "pin #%llu", id); break;
	case CUCO_CMD_UNPIN: snprintf(buf, size, "unpin #%llu", id); break;
	case CUCO_CMD_REJECT:
		snprintf(buf, size, "reject #%llu%s%.400s", id, cmd->text[0] ? ": " : "", cmd->text);
		break;
	case CUCO_CMD_UNREJECT: snprintf(buf, size, "un-reject #%llu", id); break;
	case CUCO_CMD_EDIT: snprintf(buf, size, "hand edit of #%llu", id); break;
	case CUCO_CMD_HINT:
		if (cmd->island < 0)
			snprintf(buf, size, "hint for every island: %.400s", cmd->text);
		else
			snprintf(buf, size, "hint for island %d: %.400s", cmd->island, cmd->text);
		break;
	default: snprintf(buf, size, "%s requested", cuco_command_name(cmd->kind)); break;
	}
}

int cuco_person_act(cuco_txn *txn, cuco_command *cmd)
{
	char why[256];
	int rc = cuco_action_apply(txn, cmd, NULL, why, sizeof why);
	if (rc == CUCO_EDATA || rc == CUCO_ENOTFOUND)
		return cuco_txn_fail(txn, CUCO_EDATA, "%s", why);
	if (rc != CUCO_OK || (rc = cuco_command_add(txn, cmd)) != CUCO_OK)
		return rc;
	cuco_event ev = { .kind = cuco_command_event(cmd->kind), .candidate = cmd->candidate };
	cuco_strlcpy(ev.author, cmd->author, sizeof ev.author);
	command_describe(cmd, ev.text, sizeof ev.text);
	return cuco_event_add(txn, &ev);
}

#define STALE_MAX 256  /* per call; a later session drops the rest */

struct stale_walk { cuco_command cmd[STALE_MAX]; int n; };

static int find_stale(const cuco_command *c, void *arg)
{
	struct stale_walk *w = arg;
	bool steering = c->kind == CUCO_CMD_PAUSE || c->kind == CUCO_CMD_RESUME || c->kind == CUCO_CMD_STOP;
	if (steering && !c->next_session)
		w->cmd[w->n++] = *c;
	return w->n == STALE_MAX ? -1 : 0;  /* -1: full, not an error code */
}

int cuco_command_drop_stale(cuco_txn *txn, int *dropped)
{
	struct stale_walk *w = cuco_xcalloc(1, sizeof *w);
	int rc = cuco_command_each_pending(txn, find_stale, w);
	if (rc == -1)
		rc = CUCO_OK;
	for (int i = 0; rc == CUCO_OK && i < w->n; i++) {
		const cuco_command *c = &w->cmd[i];
		rc = cuco_command_ack(txn, c->seq, "dropped: sent to a session that ended before applying it");
		cuco_event ev = { .kind = cuco_command_event(c->kind) };
		cuco_strlcpy(ev.author, "engine", sizeof ev.author);
		snprintf(ev.text, sizeof ev.text, "dropped %s #%llu by %s: sent to a session that ended "
			"before applying it", cuco_command_name(c->kind), (unsigned long long)c->seq, c->author);
		if (rc == CUCO_OK)
			rc = cuco_event_add(txn, &ev);
	}
	if (dropped)
		*dropped = rc == CUCO_OK ? w->n : 0;
	free(w);
	return rc;
}
