/* cmd-export.c — `cuco export ID|best [-o FILE]`: a candidate's source. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"

static const char export_options[] =
	"  --run DIR       the run directory (default $CUCO_RUN, else runs/latest)\n"
	"  -o, --output F  write to F (atomically) instead of standard output\n";

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
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' }, { "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *run = NULL, *output = NULL;
	int opt, rc;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 'o': output = optarg; break;
		case 'h': cmd_print_usage(&cmd_export, export_options); return CUCO_OK;
		default: return cmd_bad_option(&cmd_export, longopts, argv);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error(&cmd_export, "expected one candidate id (or best)");
	cuco_store *st;
	if ((rc = cmd_open_store(cmd_run_dir(run), CUCO_STORE_RDONLY, &st)))
		return rc;
	struct export_job job = { 0 };
	cuco_err err = { 0 };
	rc = cmd_resolve_id(st, argv[optind], &job.id);
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

const cuco_cmd cmd_export = { "export", "[--run DIR] [-o FILE] ID|best",
	"write a candidate's source to standard output or a file", export_exec };
