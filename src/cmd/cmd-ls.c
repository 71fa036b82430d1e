/* cmd-ls.c — `cuco ls`: list a run's candidates. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

#define LS_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_TREE, "tree", 0, NULL, 0, "lineage order, children indented under their parent (at most " \
		"12 levels; deeper ones line up at the 12th)") \
	X(O_STATUS, "status", 0, "NAME", 0, "only candidates with this status (queued, done, failed, " \
		"…), or failed with this failure class (suspect, wrong-answer, …); a suspect row ends " \
		"with its refusal's reason") \
	X(O_ORIGIN, "origin", 0, "NAME", 0, "only candidates of this origin (baseline, seed, tune, " \
		"llm-diff, …)") \
	X(O_ISLAND, "island", 0, "N", 0, "only candidates of island N") \
	X(O_REFUSALS, "refusals", 0, NULL, 0, "the proposals no candidate came of instead (every " \
		"reply refused, a duplicate, an empty or cut-off plan): id, kind, parent, island, model " \
		"and why; `cuco show rN --prompt` shows one whole") \
	X(O_JSON, "json", 0, NULL, 0, "print a JSON array of candidate (or refusal) records, nothing " \
		"else")
CMD_TABLE(options, LS_OPTIONS);

static const char notes[] =
	"SPEEDUP is a confirmed speedup with its interval from paired rounds against the\n"
	"baseline (1.24x [1.15-1.33]), or one screening measurement (1.43x screened): only\n"
	"a confirmation crowns a best (docs/trust.md). ~ after it: timed against another\n"
	"measurement of the baseline than the one listed, so its MEDIAN_US does not compare\n"
	"with the baseline's; the speedup does.\n";

struct ls_filter {
	int status;  /* -1 = any */
	int fail;    /* a failure class of failed candidates, -1 = any */
	int origin;
	int island;  /* -2 = any */
};

static bool keep(cuco_txn *txn, const struct ls_filter *f, const cuco_summary *s)
{
	if (!((f->status < 0 || s->status == f->status) && (f->origin < 0 || s->origin == f->origin) &&
	       (f->island == -2 || s->island == f->island)))
		return false;
	if (f->fail < 0)
		return true;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	cuco_fail_class cls;
	bool match = cuco_cand_get(txn, s->id, c) == CUCO_OK
		&& cuco_fail_parse(c->failure.error_class, &cls) == CUCO_OK && (int)cls == f->fail;
	free(c);
	return match;
}

/* A failed candidate that a defence refused shows as suspect: what a
 * reviewer must see first (docs/workloads.md, "Trust"). */
static const char *status_word(const cuco_candidate *c, const cuco_summary *s)
{
	if (s->status == CUCO_STATUS_FAILED
		&& strcmp(c->failure.error_class, cuco_fail_name(CUCO_FAIL_SUSPECT)) == 0)
		return c->failure.error_class;
	return cuco_status_name(s->status);
}

struct ls_job {
	struct ls_filter filter;
	bool tree, json, refusals;
	cJSON *array;
};

static int refusal_row(const cuco_refusal *r, void *arg)
{
	struct ls_job *job = arg;
	if (job->json) {
		cJSON_AddItemToArray(job->array, cuco_refusal_to_json(r));
		return 0;
	}
	char parent[24] = "-", island[16] = "-";
	if (r->parent)
		snprintf(parent, sizeof parent, "#%llu", (unsigned long long)r->parent);
	if (r->island >= 0)
		snprintf(island, sizeof island, "%d", r->island);
	printf("r%-5llu %-10s %-7s %4s %-16.16s %s\n", (unsigned long long)r->id,
		cuco_call_kind_name(r->kind), parent, island, r->model[0] ? r->model : "-", r->reason);
	return 0;
}

static int refusals_txn(cuco_txn *txn, void *arg)
{
	struct ls_job *job = arg;
	if (!job->json)
		printf("%-6s %-10s %-7s %4s %-16s %s\n", "ID", "KIND", "PARENT", "ISL", "MODEL", "WHY");
	return cuco_refusal_each(txn, refusal_row, job);
}

#define MAX_INDENT 12

/* The ID column: the id after two spaces per level. */
static int id_cell(char *buf, size_t size, const cuco_summary *s, int depth)
{
	int d = depth < MAX_INDENT ? depth : MAX_INDENT;
	return snprintf(buf, size, "%*s%llu", 2 * d, "", (unsigned long long)s->id);
}

#define SPEEDUP_W 22  /* "12.34x [11.02–13.98] ~", "1.43x screened ~" */

/* The SPEEDUP cell: confirmed with its interval, or one screening; ~ when
 * its baseline is another measurement than base_us (cuco_speedup_elsewhere).
 * Padded to SPEEDUP_W columns (an en dash is three bytes, one column). */
static void speedup_cell(const cuco_candidate *c, double base_us, char *buf, size_t size)
{
	char sp[64];
	cuco_speedup_text(c->speedup, c->speedup_lo, c->speedup_hi, c->rounds, !cuco_utf8_locale(),
		sp, sizeof sp);
	bool screened = isfinite(c->speedup) && c->rounds < 2 && c->origin != CUCO_ORIGIN_BASELINE;
	bool elsewhere = c->origin != CUCO_ORIGIN_BASELINE &&
		cuco_speedup_elsewhere(c->speedup, c->timing.median_us, base_us);
	int n = snprintf(buf, size, "%s%s%s", sp, screened ? " screened" : "", elsewhere ? " ~" : "");
	int cols = 0;
	for (const char *p = buf; *p; p++)
		cols += ((unsigned char)*p & 0xC0) != 0x80;
	for (; cols < SPEEDUP_W && n + 1 < (int)size; cols++)
		buf[n++] = ' ', buf[n] = '\0';
}

static void print_row(cuco_txn *txn, const cuco_summary *s, int depth, int id_w, double base_us)
{
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	char dir[160] = "", lat[32] = "-", spd[96] = "-", why[480] = "";
	if (cuco_cand_get(txn, s->id, c) == CUCO_OK) {
		cuco_directive_short(&c->directive, dir, sizeof dir);
		speedup_cell(c, base_us, spd, sizeof spd);
	} else {
		c->failure.error_class[0] = '\0';
	}
	if (isfinite(s->latency_median_us))
		snprintf(lat, sizeof lat, "%.1f", s->latency_median_us);
	char id[64];
	id_cell(id, sizeof id, s, depth);
	/* A refusal's reason, whole, after the directive: which defence, why. */
	if (s->status == CUCO_STATUS_FAILED && cuco_cand_suspect(c)) {
		why[0] = why[1] = ' ';
		cuco_failure_line(&c->failure, why + 2, sizeof why - 2);
	}
	printf("%-*s %-6llu %4d %4d %-10s %-12s %12s %s %c %s%s\n", id_w, id,
		(unsigned long long)s->parents[0], s->island, s->generation,
		cuco_origin_name(s->origin), status_word(c, s), lat, spd,
		s->pinned ? '*' : ' ', dir, why);
	free(c);
}

static int add_json(cuco_txn *txn, struct ls_job *job, uint64_t id)
{
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = cuco_cand_get(txn, id, c);
	if (rc == CUCO_OK)
		cJSON_AddItemToArray(job->array, cuco_candidate_to_json(c));
	free(c);
	return rc;
}

static int ls_txn(cuco_txn *txn, void *arg)
{
	struct ls_job *job = arg;
	cuco_summary *sums;
	size_t n;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc)
		return rc;
	size_t *order = cuco_xmalloc((n ? n : 1) * sizeof *order);
	int *depth = cuco_xcalloc(n ? n : 1, sizeof *depth);
	if (job->tree) {
		cuco_lineage_order(sums, n, order, depth);
	} else {
		for (size_t i = 0; i < n; i++)
			order[i] = i;
	}
	/* Every column lines up: the ID column is as wide as its widest cell. */
	int id_w = 6;
	for (size_t i = 0; i < n && !job->json; i++) {
		char id[64];
		int w = id_cell(id, sizeof id, &sums[order[i]], job->tree ? depth[i] : 0);
		if (keep(txn, &job->filter, &sums[order[i]]) && w > id_w)
			id_w = w;
	}
	/* The baseline listed: its latest measurement, which ~ compares with. */
	double base_us = NAN;
	for (size_t i = 0; i < n; i++)
		if (sums[i].origin == CUCO_ORIGIN_BASELINE && isfinite(sums[i].latency_median_us))
			base_us = sums[i].latency_median_us;
	if (!job->json)
		printf("%-*s %-6s %4s %4s %-10s %-12s %12s %-*s %s %s\n", id_w, "ID", "PARENT", "ISL", "GEN",
			"ORIGIN", "STATUS", "MEDIAN_US", SPEEDUP_W, "SPEEDUP", "P", "DIRECTIVE");
	for (size_t i = 0; i < n && rc == CUCO_OK; i++) {
		const cuco_summary *s = &sums[order[i]];
		if (!keep(txn, &job->filter, s))
			continue;
		if (job->json)
			rc = add_json(txn, job, s->id);
		else
			print_row(txn, s, job->tree ? depth[i] : 0, id_w, base_us);
	}
	free(order);
	free(depth);
	free(sums);
	return rc;
}

static int ls_exec(int argc, char **argv)
{
	struct ls_job job = { { -1, -1, -1, -2 }, false, false, false, NULL };
	int opt;
	cmd_args a = CMD_ARGS(&cmd_ls, argc, argv);
	while ((opt = cmd_option_next(&a)) >= 0) {
		switch (opt) {
		case O_TREE: job.tree = true; break;
		case O_JSON: job.json = true; break;
		case O_REFUSALS: job.refusals = true; break;
		case O_ISLAND: {
			char *end;
			long v = strtol(a.value, &end, 10);
			if (*end || !*a.value)
				return cmd_usage_error(&cmd_ls, "--island: '%s' is not a number", a.value);
			job.filter.island = (int)v;
			break;
		}
		case O_STATUS: {
			cuco_status st;
			cuco_fail_class fc;
			if (cuco_status_parse(a.value, &st) == CUCO_OK) {
				job.filter.status = (int)st;
			} else if (cuco_fail_parse(a.value, &fc) == CUCO_OK) {
				job.filter.status = CUCO_STATUS_FAILED;
				job.filter.fail = (int)fc;
			} else {
				return cmd_usage_error(&cmd_ls, "--status: '%s' is no status and no failure class",
					a.value);
			}
			break;
		}
		case O_ORIGIN: {
			cuco_origin o;
			if (cuco_origin_parse(a.value, &o))
				return cmd_usage_error(&cmd_ls, "--origin: unknown origin '%s'", a.value);
			job.filter.origin = (int)o;
			break;
		}
		}
	}
	if (!cmd_operands(&a, 0, 0, NULL))
		return a.rc;
	cuco_store *st;
	int rc = cmd_open_store(a.run, CUCO_STORE_RDONLY, &st);
	if (rc)
		return rc;
	if (job.json)
		job.array = cJSON_CreateArray();
	cuco_err err = { 0 };
	rc = cuco_store_read(st, job.refusals ? refusals_txn : ls_txn, &job, &err);
	cuco_store_close(st);
	if (rc) {
		cJSON_Delete(job.array);
		return cmd_fail(&err);
	}
	if (job.json) {
		char *text = cJSON_Print(job.array);
		puts(text);
		free(text);
		cJSON_Delete(job.array);
	}
	return CUCO_OK;
}

const cuco_cmd cmd_ls = { "ls", "", "list the candidates of a run, or the proposals refused", ls_exec,
	CMD_OPTIONS(options), notes };
