/* cmd-mark.c — `cuco pin`, `cuco unpin`, `cuco reject`, `cuco unreject`: a
 * person's verdict on a candidate.
 *
 * Taken through cuco_person_act, as the screen takes it: the mark is written
 * to the candidate at once (so ls/show and any viewer see it even when no
 * search is running) and queued as a command in the same transaction, so a
 * running engine applies it to its own state (parent eligibility,
 * migration) and acknowledges it; an event records who did what. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

/* A mark the candidate has already (or, for unpin and unreject, never
 * had) changes nothing, and saying "unpinned" would claim it did: refused
 * in one line (exit 2). The store's rule takes it as a no-op, as the
 * engine replays marks. */
struct marked { uint64_t id; cuco_candidate c; };

static int marked_txn(cuco_txn *txn, void *arg)
{
	struct marked *m = arg;
	return cuco_cand_get(txn, m->id, &m->c);
}

static int already(cuco_store *st, const cuco_command *cmd)
{
	struct marked *m = cuco_xmalloc(sizeof *m);
	m->id = cmd->candidate;
	cuco_err err = { 0 };
	const char *why = NULL;
	char state[64];
	/* One that does not read is left to the action, which says why. */
	if (cuco_store_read(st, marked_txn, m, &err) == CUCO_OK) {
		bool rejected = m->c.status == CUCO_STATUS_REJECTED;
		snprintf(state, sizeof state, "not rejected (it is %s)", cuco_status_name(m->c.status));
		why = cmd->kind == CUCO_CMD_PIN && m->c.pinned ? "already pinned"
			: cmd->kind == CUCO_CMD_UNPIN && !m->c.pinned ? "not pinned"
			: cmd->kind == CUCO_CMD_REJECT && rejected ? "already rejected"
			: cmd->kind == CUCO_CMD_UNREJECT && !rejected ? state : NULL;
	}
	free(m);
	if (!why)
		return CUCO_OK;
	cuco_errf(&err, CUCO_EDATA, "%s %llu: %s: nothing changed", cuco_command_name(cmd->kind),
		(unsigned long long)cmd->candidate, why);
	return cmd_fail(&err);
}

/* --reason is reject's; the others take it only to say so. */
#define MARK_OPTIONS(X, reason) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_REASON, "reason", 0, "TEXT", reason, "why (shown to the model as a negative example)")
#define MARK_REASON_HIDDEN(X) MARK_OPTIONS(X, CMD_OPT_HIDDEN)
#define MARK_REASON(X) MARK_OPTIONS(X, 0)
enum { MARK_REASON(CMD_OPTION_ENUM) };
static const cmd_option mark_options[] = { MARK_REASON_HIDDEN(CMD_OPTION_ROW) };
static const cmd_option reject_options[] = { MARK_REASON(CMD_OPTION_ROW) };

static int mark_exec(const cuco_cmd *self, cuco_command_kind kind, int argc, char **argv)
{
	cuco_command cmd = { .kind = kind, .island = -1 };
	int rc;
	cmd_args a = CMD_ARGS(self, argc, argv);
	while (cmd_option_next(&a) >= 0) {  /* --reason: --run is the parser's */
		if (kind != CUCO_CMD_REJECT)
			return cmd_usage_error(self, "--reason is for reject only");
		cuco_strlcpy(cmd.text, a.value, sizeof cmd.text);
	}
	if (!cmd_operands(&a, 1, 1, "expected one candidate id"))
		return a.rc;
	cuco_store *st;
	if ((rc = cmd_open_store(a.run, 0, &st)))
		return rc;
	cmd_author(cmd.author, sizeof cmd.author);
	rc = cmd_resolve_id(st, a.args[0], &cmd.candidate);
	if (rc == CUCO_OK)
		rc = already(st, &cmd);
	if (rc == CUCO_OK)
		rc = cmd_act(st, &cmd);
	cuco_store_close(st);
	if (rc == CUCO_OK)
		printf("%s %llu\n", cuco_command_past(kind), (unsigned long long)cmd.candidate);
	return rc;
}

static int pin_exec(int argc, char **argv) { return mark_exec(&cmd_pin, CUCO_CMD_PIN, argc, argv); }
static int unpin_exec(int argc, char **argv) { return mark_exec(&cmd_unpin, CUCO_CMD_UNPIN, argc, argv); }
static int reject_exec(int argc, char **argv) { return mark_exec(&cmd_reject, CUCO_CMD_REJECT, argc, argv); }
static int unreject_exec(int argc, char **argv) { return mark_exec(&cmd_unreject, CUCO_CMD_UNREJECT, argc, argv); }

const cuco_cmd cmd_pin = { "pin", "ID",
	"pin a candidate: always eligible as a parent, never evicted", pin_exec, CMD_OPTIONS(mark_options) };
const cuco_cmd cmd_unpin = { "unpin", "ID", "remove a pin", unpin_exec, CMD_OPTIONS(mark_options) };
const cuco_cmd cmd_reject = { "reject", "ID",
	"reject a candidate: never a parent, shown to models as a negative example", reject_exec,
	CMD_OPTIONS(reject_options) };
const cuco_cmd cmd_unreject = { "unreject", "ID",
	"take a rejection back: the candidate returns to what it had reached", unreject_exec,
	CMD_OPTIONS(mark_options) };
