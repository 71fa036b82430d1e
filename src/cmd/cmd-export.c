/* cmd-export.c — `cuco export ID|best [-o FILE]`: a candidate's source. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"

#define EXPORT_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_OUTPUT, "output", 'o', "FILE", 0, "write to FILE (atomically) instead of standard output")
CMD_TABLE(options, EXPORT_OPTIONS);

struct export_job {
	uint64_t id;
	char *text;
	size_t len;
};

static int export_txn(cuco_txn *txn, void *arg)
{
	struct export_job *job = arg;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = cuco_cand_get(txn, job->id, c);
	if (rc == CUCO_OK && !c->source_hash[0])
		rc = cuco_txn_fail(txn, CUCO_EDATA, "candidate %llu: has no source", (unsigned long long)job->id);
	if (rc == CUCO_OK)
		rc = cuco_source_get(txn, c->source_hash, &job->text, &job->len);
	free(c);
	return rc;
}

static int export_exec(int argc, char **argv)
{
	const char *output = NULL;
	int rc;
	cmd_args a = CMD_ARGS(&cmd_export, argc, argv);
	while (cmd_option_next(&a) >= 0)
		output = a.value;  /* -o: --run is the parser's */
	if (!cmd_operands(&a, 1, 1, "expected one candidate id (or best)"))
		return a.rc;
	cuco_store *st;
	if ((rc = cmd_open_store(a.run, CUCO_STORE_RDONLY, &st)))
		return rc;
	struct export_job job = { 0 };
	cuco_err err = { 0 };
	rc = cmd_resolve_id(st, a.args[0], &job.id);
	if (rc == CUCO_OK && (rc = cuco_store_read(st, export_txn, &job, &err)))
		rc = cmd_fail(&err);
	cuco_store_close(st);
	if (rc == CUCO_OK && output) {
		if (cuco_write_file(output, job.text, job.len, &err))
			rc = cmd_fail(&err);
	} else if (rc == CUCO_OK) {
		fwrite(job.text, 1, job.len, stdout);
	}
	free(job.text);
	return rc;
}

const cuco_cmd cmd_export = { "export", "ID|best",
	"write a candidate's source to standard output or a file", export_exec, CMD_OPTIONS(options) };
