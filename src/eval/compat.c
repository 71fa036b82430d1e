/* compat.c — the compat protocol: what a program written for CUCo's (or
 * ShinkaEvolve's) harness prints, read as CUCo's evaluator reads it
 * (docs/workloads.md, "compat"):
 *
 *   --- RESULTS (Rank 1: …) ---      a line naming a rank
 *   Time: 12.3456 ms                 the workload's time regex
 *   Phase: dispatch_put = 1.2 ms     CUCo's phase lines, or cuco's
 *   Phase comm: 1.2 ms               spelling of them
 *   Verification: PASS (max error …) the pass string; its FAIL form
 *
 * Several ranks print into one stream, so a line is put to a rank: the
 * rank of Open MPI's --tag-output prefix ("[1,0]<stdout>:") for that line,
 * else the rank the latest line naming one ("Rank N", "rank=N") gave, else
 * none. Repetition k of the job is the k-th time of every rank, and its
 * latency is the slowest rank's, as a rank's time is only over when all
 * are; a program that names no rank reports for the whole job, so each
 * time it prints is a repetition. A phase is each rank's mean over its
 * repetitions, the slowest rank's again. The answer is correct when the
 * pass string appeared, its FAIL form did not, and — when more than one
 * rank printed a verdict — every rank that printed a time printed a pass.
 */
#include "eval/eval_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUPS 64          /* ranks told apart; any beyond share the last */

typedef struct group {
	int rank;              /* -1: lines that name no rank */
	double *times;
	int ntimes, cap;
	bool pass;
	double phase_sum[CUCO_MAX_PHASES];
	int phase_n[CUCO_MAX_PHASES];
} group;

struct eval_compat {
	const cuco_workload *wl;
	regex_t time_re, tag_re, rank_re, phase_re[2];
	char fail[sizeof ((cuco_workload *)0)->compat_pass + 8];
	int rank;              /* the rank the latest rank-naming line gave, -1 none */
	group groups[GROUPS];
	int ngroups;
	int npass_ranks;       /* distinct ranks that printed the pass string */
	bool pass_seen, fail_seen;
	char phase_names[CUCO_MAX_PHASES][sizeof ((cuco_phase *)0)->name];
	int nphases;
};

/* The spellings of a phase line: group 1 the name, 2 the number, 3 the unit. */
static const char *const phase_patterns[2] = {
	/* CUCo's: "Phase: dispatch put = 1.25 ms" */
	"^[ \t]*Phase:[ \t]*([A-Za-z_][A-Za-z0-9_ .-]*[A-Za-z0-9_.])[ \t]*=[ \t]*"
		"([-+]?[0-9.]+([eE][-+]?[0-9]+)?)[ \t]*(ms|us|s)([^A-Za-z]|$)",
	/* cuco's: "Phase comm: 1.25 ms" */
	"^[ \t]*Phase[ \t]+([A-Za-z_][A-Za-z0-9_]*):[ \t]*([-+]?[0-9.]+([eE][-+]?[0-9]+)?)[ \t]*"
		"(ms|us|s)([^A-Za-z]|$)",
};

int eval_compile_time_re(const char *re, regex_t *out, char *why, size_t size)
{
	int rc = regcomp(out, re, REG_EXTENDED);
	if (rc != 0) {
		char msg[96];
		regerror(rc, out, msg, sizeof msg);
		snprintf(why, size, "\"%s\": %s", re, msg);
		return CUCO_EDATA;
	}
	if (out->re_nsub < 1) {
		regfree(out);
		snprintf(why, size, "\"%s\": needs a group around the number, e.g. ([0-9.]+)", re);
		return CUCO_EDATA;
	}
	return CUCO_OK;
}

/* The FAIL form of a pass string ending in PASS ("Verification: FAIL"),
 * "" for any other: what protocol.fail defaults to. */
static void eval_compat_fail_string(const char *pass, char *out, size_t size)
{
	size_t n = strlen(pass);
	if (n >= 4 && strcmp(pass + n - 4, "PASS") == 0)
		snprintf(out, size, "%.*sFAIL", (int)(n - 4), pass);
	else
		out[0] = '\0';
}

int eval_compat_new(const cuco_workload *wl, eval_compat **out, cuco_err *err)
{
	eval_compat *c = cuco_xcalloc(1, sizeof *c);
	c->wl = wl;
	c->rank = -1;
	char why[160];
	if (eval_compile_time_re(wl->compat_time, &c->time_re, why, sizeof why) != CUCO_OK) {
		free(c);
		return cuco_errf(err, CUCO_EDATA, "protocol.time: %s", why);
	}
	if (regcomp(&c->tag_re, "^\\[[0-9]+,([0-9]+)\\]<std(out|err)>: ?", REG_EXTENDED) != 0 ||
			regcomp(&c->rank_re, "(^|[^A-Za-z0-9_])rank[ _:=#]*([0-9]+)",
				REG_EXTENDED | REG_ICASE) != 0 ||
			regcomp(&c->phase_re[0], phase_patterns[0], REG_EXTENDED) != 0 ||
			regcomp(&c->phase_re[1], phase_patterns[1], REG_EXTENDED) != 0) {
		regfree(&c->time_re);
		free(c);
		return cuco_errf(err, CUCO_EENV, "regcomp failed for a built-in pattern");
	}
	if (*wl->compat_fail)
		cuco_strlcpy(c->fail, wl->compat_fail, sizeof c->fail);
	else
		eval_compat_fail_string(wl->compat_pass, c->fail, sizeof c->fail);
	*out = c;
	return CUCO_OK;
}

void eval_compat_free(eval_compat *c)
{
	if (!c)
		return;
	regfree(&c->time_re);
	regfree(&c->tag_re);
	regfree(&c->rank_re);
	regfree(&c->phase_re[0]);
	regfree(&c->phase_re[1]);
	for (int i = 0; i < c->ngroups; i++)
		free(c->groups[i].times);
	free(c);
}

static group *group_of(eval_compat *c, int rank)
{
	for (int i = 0; i < c->ngroups; i++)
		if (c->groups[i].rank == rank)
			return &c->groups[i];
	if (c->ngroups == GROUPS)
		return &c->groups[GROUPS - 1];
	group *g = &c->groups[c->ngroups++];
	g->rank = rank;
	return g;
}

static double unit_us(const char *unit)
{
	return unit[0] == 'm' ? 1e3 : unit[0] == 'u' ? 1.0 : 1e6;
}

static void add_time(group *g, double us)
{
	if (g->ntimes == EVAL_MAX_SAMPLES)
		return;
	if (g->ntimes == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 16;
		g->times = cuco_xrealloc(g->times, (size_t)g->cap * sizeof *g->times);
	}
	g->times[g->ntimes++] = us;
}

static void phase_line(eval_compat *c, group *g, const char *line)
{
	regmatch_t m[6];
	for (int k = 0; k < 2; k++) {
		if (regexec(&c->phase_re[k], line, 6, m, 0) != 0)
			continue;
		char name[sizeof c->phase_names[0]];
		int n = (int)(m[1].rm_eo - m[1].rm_so);
		snprintf(name, sizeof name, "%.*s", n, line + m[1].rm_so);
		for (char *s = name; *s; s++)
			if (*s == ' ')
				*s = '_';
		double v = strtod(line + m[2].rm_so, NULL) * unit_us(line + m[4].rm_so);
		if (!isfinite(v))
			return;
		int i = 0;
		while (i < c->nphases && strcmp(c->phase_names[i], name) != 0)
			i++;
		if (i == CUCO_MAX_PHASES)
			return;
		if (i == c->nphases)
			cuco_strlcpy(c->phase_names[c->nphases++], name, sizeof name);
		g->phase_sum[i] += v;
		g->phase_n[i]++;
		return;
	}
}

void eval_compat_line(eval_compat *c, const char *line)
{
	regmatch_t m[3];
	int rank = c->rank;
	/* A tag names this line's rank exactly, and only this line's. */
	if (regexec(&c->tag_re, line, 2, m, 0) == 0) {
		rank = atoi(line + m[1].rm_so);
		line += m[0].rm_eo;
	} else if (regexec(&c->rank_re, line, 3, m, 0) == 0) {
		rank = c->rank = atoi(line + m[2].rm_so);
	}
	group *g = group_of(c, rank);
	if (*c->fail && strstr(line, c->fail))
		c->fail_seen = true;
	if (*c->wl->compat_pass && strstr(line, c->wl->compat_pass)) {
		c->npass_ranks += !g->pass;
		c->pass_seen = g->pass = true;
	}
	/* Every match is a time: a harness may print one per repetition. */
	for (const char *at = line; regexec(&c->time_re, at, 2, m, at == line ? 0 : REG_NOTBOL) == 0;) {
		if (m[1].rm_so >= 0) {
			double v = strtod(at + m[1].rm_so, NULL);
			if (isfinite(v) && v >= 0)
				add_time(g, v * c->wl->compat_time_scale);
		}
		if (m[0].rm_eo == 0)
			break;
		at += m[0].rm_eo;
	}
	phase_line(c, g, line);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Repetition k's latency: the slowest rank's k-th time. */
static int samples(const eval_compat *c, double *out)
{
	int n = 0;
	for (int i = 0; i < c->ngroups; i++)
		n = c->groups[i].ntimes > n ? c->groups[i].ntimes : n;
	for (int k = 0; k < n; k++) {
		out[k] = -INFINITY;
		for (int i = 0; i < c->ngroups; i++)
			if (k < c->groups[i].ntimes && c->groups[i].times[k] > out[k])
				out[k] = c->groups[i].times[k];
	}
	return n;
}

/* Whether every rank that reported a time said it passed, when ranks
 * printed verdicts of their own. */
static bool every_rank_passed(const eval_compat *c)
{
	if (c->npass_ranks < 2)
		return true;
	for (int i = 0; i < c->ngroups; i++)
		if (c->groups[i].ntimes > 0 && c->groups[i].rank >= 0 && !c->groups[i].pass)
			return false;
	return true;
}

void eval_compat_finish(eval_compat *c, eval_outcome *o)
{
	o->have_result = true;
	o->correct = c->pass_seen && !c->fail_seen && every_rank_passed(c);
	double *v = cuco_xmalloc(EVAL_MAX_SAMPLES * sizeof *v);
	int n = samples(c, v);
	o->timing.samples = n;
	if (n > 0) {
		qsort(v, (size_t)n, sizeof *v, cmp_double);
		o->timing.min_us = v[0];
		o->max_us = v[n - 1];
		o->timing.median_us = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		int k = (int)ceil(0.9 * n) - 1;  /* nearest rank */
		o->timing.p90_us = v[k < 0 ? 0 : k];
	}
	free(v);
	o->timing.nphases = c->nphases;
	for (int p = 0; p < c->nphases; p++) {
		cuco_strlcpy(o->timing.phases[p].name, c->phase_names[p], sizeof o->timing.phases[p].name);
		o->timing.phases[p].us = 0;
		for (int i = 0; i < c->ngroups; i++) {
			const group *g = &c->groups[i];
			if (g->phase_n[p] > 0 && g->phase_sum[p] / g->phase_n[p] > o->timing.phases[p].us)
				o->timing.phases[p].us = g->phase_sum[p] / g->phase_n[p];
		}
	}
}
