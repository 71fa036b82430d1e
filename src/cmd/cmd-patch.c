/* cmd-patch.c — `cuco patch FILE REPLY`: apply a model's reply to a file the
 * way the search does, and print the result or the precise refusal. For
 * reviewers who want to replay a reply, and for tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "strategies/strategies.h"

#define PATCH_OPTIONS(X) \
	X(O_WORKLOAD, "workload", 'w', "WORKLOAD", 0, "also check the reply's directive against " \
		"WORKLOAD's design space") \
	X(O_VERBOSE, "verbose", 'v', NULL, 0, "say on standard error how each hunk matched")
CMD_TABLE(options, PATCH_OPTIONS);

/* Replies and sources are small; anything larger is not one. */
#define PATCH_MAX_BYTES (16u << 20)

static void print_levels(const cuco_patched *p)
{
	if (!p->levels) {
		fputs("cuco: patch: full rewrite\n", stderr);
		return;
	}
	fprintf(stderr, "cuco: patch: %d hunk%s:", p->nhunks, p->nhunks == 1 ? "" : "s");
	for (int i = 0; i < p->nhunks; i++)
		fprintf(stderr, " %s", cuco_match_name(p->levels[i]));
	fputc('\n', stderr);
}

/* Name the file an error of the parser or applier is about. */
static void prefix(cuco_err *err, const char *path)
{
	char why[sizeof err->msg];
	cuco_strlcpy(why, err->msg, sizeof why);
	cuco_errf(err, err->code, "%s: %s", path, why);
}

static int patch_run(const char *file, const char *reply_path, const char *workload,
	bool verbose, cuco_err *err)
{
	char *parent = NULL, *text = NULL;
	size_t len = 0;
	cuco_workload *wl = NULL;
	cuco_directive base = { 0 };
	cuco_reply reply = { 0 };
	cuco_patched out = { 0 };
	int rc = cuco_read_file(file, PATCH_MAX_BYTES, &parent, &len, err);
	if (rc == CUCO_OK)
		rc = cuco_read_text(strcmp(reply_path, "-") == 0 ? "/dev/stdin" : reply_path,
			PATCH_MAX_BYTES, &text, NULL, err);  /* a NUL would cut the reply silently */
	if (rc == CUCO_OK && workload && (rc = cuco_workload_load(workload, &wl, err)) == CUCO_OK)
		cuco_directive_default(wl, &base);
	if (rc == CUCO_OK && (rc = cuco_reply_parse_any(text, wl, &base, &reply, err)) != CUCO_OK)
		prefix(err, reply_path);
	if (rc == CUCO_OK && (rc = cuco_patch_apply(parent, len, &reply, wl, &out, err)) != CUCO_OK)
		prefix(err, file);
	if (rc == CUCO_OK) {
		fwrite(out.text, 1, out.len, stdout);
		if (verbose)
			print_levels(&out);
	}
	/* A file that is not there is bad input here, not a lookup. */
	if (rc == CUCO_ENOTFOUND)
		rc = err->code = CUCO_EDATA;
	cuco_patched_free(&out);
	cuco_reply_free(&reply);
	cuco_workload_free(wl);
	free(text);
	free(parent);
	return rc;
}

static int patch_exec(int argc, char **argv)
{
	const char *workload = NULL;
	bool verbose = false;
	int o;
	cmd_args a = CMD_ARGS(&cmd_patch, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		if (o == O_WORKLOAD)
			workload = a.value;
		else
			verbose = true;
	}
	if (!cmd_operands(&a, 2, 2, "expected a FILE and a REPLY"))
		return a.rc;
	cuco_err err = { 0 };
	if (patch_run(a.args[0], a.args[1], workload, verbose, &err) != CUCO_OK)
		return cmd_fail(&err);
	return CUCO_OK;
}

const cuco_cmd cmd_patch = { "patch", "FILE REPLY|-",
	"apply a model's reply to FILE and print the result, or why it is refused", patch_exec,
	CMD_OPTIONS(options) };
