/* cmd-diff.c — `cuco diff A B`: what changed from one candidate to
 * another, as the screen's diff pane shows it: the directive dimension by
 * dimension (before → after), then the source as a unified diff. A or B
 * may be best, baseline or seed. The tuner's candidates share a source,
 * so for them the directive is the whole change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "env.h"

#define DIFF_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_CONTEXT, "context", 'U', "N", 0, "lines of context around each change (default 3)") \
	X(O_COLOR, "color", 0, NULL, 0, "colour the output even when it is not a terminal")
CMD_TABLE(options, DIFF_OPTIONS);

struct diff_job {
	uint64_t id[2];
	cuco_directive dir[2];
	char *text[2];
	size_t len[2];
};

static int diff_txn(cuco_txn *txn, void *arg)
{
	struct diff_job *job = arg;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = CUCO_OK;
	for (int i = 0; i < 2 && rc == CUCO_OK; i++) {
		rc = cuco_cand_get(txn, job->id[i], c);
		if (rc == CUCO_OK) {
			job->dir[i] = c->directive;
			rc = cuco_source_get(txn, c->source_hash, &job->text[i], &job->len[i]);
		}
	}
	free(c);
	return rc;
}

static void print_dim(int dim, const char *name, const char *before, const char *after, void *arg)
{
	bool color = *(const bool *)arg;
	printf("  %s%-12s %s%s%s -> %s%s%s\n", dim < 0 ? "knob " : "", name, color ? "\033[31m" : "",
		*before ? before : "-", color ? "\033[0m" : "", color ? "\033[32m" : "", *after ? after : "-",
		color ? "\033[0m" : "");
}

static void print_diff(const struct diff_job *job, int context, bool color)
{
	unsigned long long a = (unsigned long long)job->id[0], b = (unsigned long long)job->id[1];
	int ndir = cuco_directive_diff(&job->dir[0], &job->dir[1], NULL, NULL);
	if (ndir) {
		printf("directive #%llu -> #%llu:\n", a, b);
		cuco_directive_diff(&job->dir[0], &job->dir[1], print_dim, &color);
	}
	cuco_diff d;
	cuco_diff_compute(&d, job->text[0], job->len[0], job->text[1], job->len[1], context, 1 << 20);
	if (d.n == 0) {
		printf(ndir ? "source: identical (the directive is the whole change)\n"
			: "#%llu and #%llu: the same directive and the same source\n", a, b);
		cuco_diff_free(&d);
		return;
	}
	printf("--- candidate %llu\n+++ candidate %llu\n", a, b);
	static const char marks[] = { '@', ' ', '-', '+' };
	static const char *const colors[] = { "\033[36m", "", "\033[31m", "\033[32m" };
	for (size_t i = 0; i < d.n; i++) {
		const cuco_diff_line *l = &d.lines[i];
		const char *on = color ? colors[l->kind] : "", *off = color && *on ? "\033[0m" : "";
		if (l->kind == CUCO_DIFF_HUNK)
			printf("%s%.*s%s\n", on, l->len, l->text, off);
		else
			printf("%s%c%.*s%s\n", on, marks[l->kind], l->len, l->text, off);
	}
	cuco_diff_free(&d);
}

static int diff_exec(int argc, char **argv)
{
	int context = 3, o, rc;
	bool color = isatty(STDOUT_FILENO) && !cuco_env_get()->no_color;
	cmd_args a = CMD_ARGS(&cmd_diff, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		switch (o) {
		case O_COLOR: color = true; break;
		case O_CONTEXT: {
			char *end;
			long v = strtol(a.value, &end, 10);
			if (*end || !*a.value || v < 0 || v > 1000)
				return cmd_usage_error(&cmd_diff, "--context: '%s' is not a count of lines", a.value);
			context = (int)v;
			break;
		}
		}
	}
	if (!cmd_operands(&a, 2, 2, "expected two candidate ids"))
		return a.rc;
	cuco_store *st;
	if ((rc = cmd_open_store(a.run, CUCO_STORE_RDONLY, &st)))
		return rc;
	struct diff_job job = { 0 };
	cuco_err err = { 0 };
	rc = cmd_resolve_id(st, a.args[0], &job.id[0]);
	if (rc == CUCO_OK)
		rc = cmd_resolve_id(st, a.args[1], &job.id[1]);
	if (rc == CUCO_OK && (rc = cuco_store_read(st, diff_txn, &job, &err)))
		rc = cmd_fail(&err);
	cuco_store_close(st);
	if (rc == CUCO_OK)
		print_diff(&job, context, color);
	free(job.text[0]);
	free(job.text[1]);
	return rc;
}

const cuco_cmd cmd_diff = { "diff", "A B",
	"what changed between two candidates: directive, then source (ids, best, baseline or seed)",
	diff_exec, CMD_OPTIONS(options),
	"Prints the directive's changes (dimension: before -> after), then the\n"
	"sources' unified diff. Exit status 0 whether or not they differ.\n" };
