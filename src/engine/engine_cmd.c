/* engine_cmd.c — applying the store's command queue: marks, edits,
 * pause, stop, hints. Marks and edits are checked by the store's rules for
 * a person's actions (cuco_action_apply), the ones the screen and the CLI
 * took them through. */
#include "engine/engine_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMMANDS 64     /* applied per poll; the rest wait for the next */


typedef struct pending_arg {
	cuco_command cmds[MAX_COMMANDS];
	int n;
} pending_arg;

#define PENDING_FULL (-1)  /* stops the walk; not an error code */

static int pending_one(const cuco_command *cmd, void *arg)
{
	pending_arg *a = arg;
	a->cmds[a->n++] = *cmd;
	return a->n == MAX_COMMANDS ? PENDING_FULL : 0;
}

static int pending_txn(cuco_txn *txn, void *arg)
{
	pending_arg *a = arg;
	a->n = 0;
	int rc = cuco_command_each_pending(txn, pending_one, a);
	return rc == PENDING_FULL ? CUCO_OK : rc;
}

typedef struct apply_arg {
	cuco_engine *e;
	const cuco_command *cmd;
	bool paused, stop;          /* state after the command */
	bool applied;               /* changed a candidate or the state */
	cuco_candidate c;           /* the candidate it touched or created */
	char result[256];
} apply_arg;

/* A mark goes through the store's rules (cuco_action_apply), the same the
 * screen and the CLI applied when they queued it: applying it again here
 * changes nothing on the record, and the engine learns of it. */
static int apply_mark(cuco_txn *txn, apply_arg *a)
{
	char why[256];
	int rc = cuco_action_apply(txn, a->cmd, &a->c, why, sizeof why);
	if (rc == CUCO_EDATA || rc == CUCO_ENOTFOUND) {
		snprintf(a->result, sizeof a->result, "refused: %.240s", why);
		memset(&a->c, 0, sizeof a->c);
		return CUCO_OK;
	}
	if (rc != CUCO_OK)
		return rc;
	a->applied = true;
	snprintf(a->result, sizeof a->result, "%s #%llu%s", cuco_command_past(a->cmd->kind), (unsigned long long)a->c.id,
		a->cmd->kind == CUCO_CMD_REJECT ? "; never a parent again"
		: a->cmd->kind == CUCO_CMD_UNREJECT ? "; a parent again" : "");
	return CUCO_OK;
}

static int apply_edit(cuco_txn *txn, apply_arg *a)
{
	const cuco_command *cmd = a->cmd;
	cuco_candidate parent;
	char why[256];
	int rc = cuco_action_apply(txn, cmd, &parent, why, sizeof why);
	if (rc == CUCO_EDATA || rc == CUCO_ENOTFOUND) {
		snprintf(a->result, sizeof a->result, "refused: %.240s", why);
		return CUCO_OK;
	}
	if (rc != CUCO_OK)
		return rc;
	engine_insert_arg ins = { .event = CUCO_EVENT_EDIT, .author = cmd->author };
	ins.c.origin = CUCO_ORIGIN_HUMAN;
	ins.c.nparents = 1;
	ins.c.parents[0] = parent.id;
	ins.c.island = parent.island >= 0 ? parent.island : 0;
	ins.c.directive = parent.directive;
	cuco_strlcpy(ins.c.source_hash, cmd->source_hash, sizeof ins.c.source_hash);
	snprintf(ins.c.note, sizeof ins.c.note, "%s by %s", cuco_command_past(cmd->kind), cmd->author);
	cuco_strlcpy(ins.text, cmd->text, sizeof ins.text);
	if ((rc = engine_insert_txn(txn, &ins)) != CUCO_OK)
		return rc;
	a->c = ins.c;
	a->applied = true;
	snprintf(a->result, sizeof a->result, "queued #%llu, an edit of #%llu",
		(unsigned long long)a->c.id, (unsigned long long)parent.id);
	return CUCO_OK;
}

static int apply_txn(cuco_txn *txn, void *arg)
{
	apply_arg *a = arg;
	const cuco_command *cmd = a->cmd;
	int rc = CUCO_OK;
	a->applied = false;
	a->result[0] = '\0';
	memset(&a->c, 0, sizeof a->c);
	switch (cmd->kind) {
	case CUCO_CMD_PIN:
	case CUCO_CMD_UNPIN:
	case CUCO_CMD_REJECT:
	case CUCO_CMD_UNREJECT:
		rc = apply_mark(txn, a);
		break;
	case CUCO_CMD_EDIT:
		rc = apply_edit(txn, a);
		break;
	case CUCO_CMD_PAUSE:
	case CUCO_CMD_RESUME: {
		bool want = cmd->kind == CUCO_CMD_PAUSE;
		a->applied = a->paused != want;
		snprintf(a->result, sizeof a->result, "%s%s%s", a->applied ? "" : "already ",
			cuco_command_past(cmd->kind), want ? ": evaluations in flight finish, none start; "
			"model calls in flight are cancelled" : "");
		a->paused = want;
		break;
	}
	case CUCO_CMD_STOP:
		a->stop = a->applied = true;
		cuco_strlcpy(a->result, "stopping after the evaluations in flight; model calls in "
			"flight are cancelled", sizeof a->result);
		break;
	case CUCO_CMD_HINT:
		a->applied = a->e->strat->hint != NULL;
		if (a->applied && cmd->island < 0)
			cuco_strlcpy(a->result, "kept for every island's next prompts", sizeof a->result);
		else if (a->applied)
			snprintf(a->result, sizeof a->result, "kept for island %d's next prompts", cmd->island);
		else
			snprintf(a->result, sizeof a->result, "noted; strategy %s writes no prompts",
				a->e->strat->name);
		break;
	default:
		snprintf(a->result, sizeof a->result, "refused: unknown command kind %d", (int)cmd->kind);
	}
	if (rc != CUCO_OK)
		return rc;
	if (cmd->next_session) {  /* say where it comes from */
		char kept[sizeof a->result];
		snprintf(kept, sizeof kept, "kept from before this session: %.*s",
			(int)sizeof kept - 32, a->result);
		cuco_strlcpy(a->result, kept, sizeof a->result);
	}
	if ((rc = cuco_command_ack(txn, cmd->seq, a->result)) != CUCO_OK)
		return rc;
	cuco_event ev;
	engine_event_init(&ev, cuco_command_event(cmd->kind), a->c.id ? a->c.id : cmd->candidate, cmd->author);
	if (cmd->kind == CUCO_CMD_HINT || (cmd->kind == CUCO_CMD_REJECT && cmd->text[0]))
		snprintf(ev.text, sizeof ev.text, "%.200s: %.300s", a->result, cmd->text);
	else
		cuco_strlcpy(ev.text, a->result, sizeof ev.text);
	return cuco_event_add(txn, &ev);
}

static void apply_command(cuco_engine *e, const cuco_command *cmd)
{
	apply_arg a = { .e = e, .cmd = cmd };
	cuco_err err = { 0 };
	pthread_mutex_lock(&e->lock);
	a.paused = e->paused;
	pthread_mutex_unlock(&e->lock);
	if (cuco_store_write(e->st, apply_txn, &a, &err) != CUCO_OK) {
		cuco_log(CUCO_LOG_WARN, "engine: command %llu: %s", (unsigned long long)cmd->seq, err.msg);
		return;
	}
	engine_wake(e);
	cuco_log(CUCO_LOG_INFO, "engine: %s by %s: %s", cuco_command_name(cmd->kind), cmd->author,
		a.result);
	pthread_mutex_lock(&e->lock);
	if (e->cfg.progress) {
		fprintf(e->cfg.progress, "%s by %s: %s\n", cuco_command_name(cmd->kind), cmd->author,
			a.result);
		fflush(e->cfg.progress);
	}
	pthread_mutex_unlock(&e->lock);
	if (!a.applied)
		return;
	if (cmd->kind == CUCO_CMD_REJECT || cmd->kind == CUCO_CMD_UNREJECT) {
		engine_observe(e, &a.c);
		engine_refresh_best(e);
	}
	if (cmd->kind == CUCO_CMD_HINT) {
		pthread_mutex_lock(&e->strat_lock);
		e->strat->hint(e->strat_state, cmd->island, cmd->text);
		pthread_mutex_unlock(&e->strat_lock);
	}
	pthread_mutex_lock(&e->lock);
	e->paused = a.paused;
	/* A pause or a stop ends the model calls in flight as SIGTERM does:
	 * their tokens are counted, and a paused run asks again on resume. */
	if (a.stop || cmd->kind == CUCO_CMD_PAUSE)
		engine_calls_off(e);
	else if (cmd->kind == CUCO_CMD_RESUME && !e->stop)
		atomic_store(&e->calls_off, false);
	if (a.stop) {
		e->stop = e->interrupted = true;
		if (!e->end_reason)
			e->end_reason = "stopped";
	}
	if (cmd->kind == CUCO_CMD_EDIT) {
		if (e->nbacklog == e->backlog_cap) {
			e->backlog_cap = e->backlog_cap ? 2 * e->backlog_cap : 8;
			e->backlog = cuco_xrealloc(e->backlog, e->backlog_cap * sizeof *e->backlog);
		}
		e->backlog[e->nbacklog++] = a.c.id;
	}
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

void engine_poll_commands(cuco_engine *e)
{
	pending_arg *a = cuco_xmalloc(sizeof *a);
	cuco_err err = { 0 };
	if (cuco_store_read(e->st, pending_txn, a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: command queue: %s", err.msg);
	else
		for (int i = 0; i < a->n; i++)
			apply_command(e, &a->cmds[i]);
	free(a);
}
