/* cmd-mark.c — `cuco pin`, `cuco unpin`, `cuco reject`: a person's verdict
 * on a candidate.
 *
 * The mark is written to the candidate at once (so ls/show and any viewer
 * see it even when no search is running) and queued as a command in the
 * same transaction, so a running engine learns of it, applies it to its own
 * state (parent eligibility, migration) and acknowledges it. An event
 * records who did what and when. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

struct mark_job {
	cuco_command_kind kind;
	uint64_t id;
	char reason[1024];
	char author[32];
};

static int mark_txn(cuco_txn *txn, void *arg)
{
	struct mark_job *job = arg;
	char why[256];
	int rc = cuco_cand_mark(txn, job->kind, job->id, job->reason, why, sizeof why);
	if (rc == CUCO_EDATA || rc == CUCO_ENOTFOUND)
		return cuco_txn_fail(txn, CUCO_EDATA, "%s", why);
	if (rc)
		return rc;

	cuco_command cmd = { .kind = job->kind, .candidate = job->id, .island = -1 };
	cuco_strlcpy(cmd.author, job->author, sizeof cmd.author);
	cuco_strlcpy(cmd.text, job->reason, sizeof cmd.text);
	if ((rc = cuco_command_add(txn, &cmd)))
		return rc;
	cuco_event ev = { .candidate = job->id };
	cuco_strlcpy(ev.kind, cuco_command_name(job->kind), sizeof ev.kind);
	cuco_strlcpy(ev.author, job->author, sizeof ev.author);
	snprintf(ev.text, sizeof ev.text, "%s candidate %llu%s%.400s", cuco_command_name(job->kind),
		(unsigned long long)job->id, job->reason[0] ? ": " : "", job->reason);
	return cuco_event_add(txn, &ev);
}

static int mark_exec(const cuco_cmd *self, cuco_command_kind kind, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' }, { "reason", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct mark_job job = { .kind = kind };
	const char *run = NULL;
	int opt, rc;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 'm':
			if (kind != CUCO_CMD_REJECT)
				return cmd_usage_error(self, "--reason is for reject only");
			cuco_strlcpy(job.reason, optarg, sizeof job.reason);
			break;
		case 'h':
			cmd_print_usage(self, kind == CUCO_CMD_REJECT
				? "  --run DIR       the run directory\n  --reason TEXT   why (shown to the model as a negative example)\n"
				: "  --run DIR       the run directory\n");
			return CUCO_OK;
		default: return cmd_usage_error(self, "unknown option");
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error(self, "expected one candidate id");
	cuco_store *st;
	if ((rc = cmd_open_store(cmd_run_dir(run), 0, &st)))
		return rc;
	cmd_author(job.author, sizeof job.author);
	cuco_err err = { 0 };
	rc = cmd_resolve_id(st, argv[optind], &job.id);
	if (rc == CUCO_OK && (rc = cuco_store_write(st, mark_txn, &job, &err)))
		rc = cmd_fail(&err);
	cuco_store_close(st);
	if (rc == CUCO_OK)
		printf("%s %llu\n", kind == CUCO_CMD_PIN ? "pinned" : kind == CUCO_CMD_UNPIN ? "unpinned" : "rejected",
			(unsigned long long)job.id);
	return rc;
}

static int pin_exec(int argc, char **argv) { return mark_exec(&cmd_pin, CUCO_CMD_PIN, argc, argv); }
static int unpin_exec(int argc, char **argv) { return mark_exec(&cmd_unpin, CUCO_CMD_UNPIN, argc, argv); }
static int reject_exec(int argc, char **argv) { return mark_exec(&cmd_reject, CUCO_CMD_REJECT, argc, argv); }

const cuco_cmd cmd_pin = { "pin", "[--run DIR] ID",
	"pin a candidate: always eligible as a parent, never evicted", pin_exec };
const cuco_cmd cmd_unpin = { "unpin", "[--run DIR] ID", "remove a pin", unpin_exec };
const cuco_cmd cmd_reject = { "reject", "[--run DIR] [--reason TEXT] ID",
	"reject a candidate: never a parent, shown to models as a negative example", reject_exec };
