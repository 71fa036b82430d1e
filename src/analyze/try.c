/* try.c — what a run would find in a workload, found before one starts
 * (cuco init, cuco check --try).
 *
 * A run's first evaluations are the baseline (built, run and verified,
 * then benchmarked) and the seed (the same, under its own directive), and
 * the directive tuner's children are the seed's source under other
 * directives, told apart only by the defines the seed reads. So the trial
 * evaluates both once, as the run will, in a scratch run directory, and
 * says what would go wrong: a seed refused by a defence (the host-call
 * rule: a seed whose own verification calls MPI_Allreduce), a program
 * that fails, one that gives one timed sample per run (a screening is
 * then one number with a spread of 0 %), and a seed blind to most of the
 * directive (the tuner's children the same program). */
#include "analyze/analyze.h"
#include "env.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether a define's name is in a text as a whole word. */
static bool names(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
		bool before = p > text && (p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z') ||
			(p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'));
		char a = p[n];
		bool after = a == '_' || (a >= 'A' && a <= 'Z') || (a >= 'a' && a <= 'z') || (a >= '0' && a <= '9');
		if (!before && !after)
			return true;
	}
	return false;
}

/* The seed's text with the local headers it includes (those beside it,
 * one level, as the build's -I{workload} reaches them). */
static void seed_text(const cuco_workload *wl, cuco_buf *out)
{
	char path[PATH_MAX + 160], *text;
	size_t len;
	snprintf(path, sizeof path, "%s/%s", wl->dir, wl->seed_file);
	if (cuco_read_file(path, 16u << 20, &text, &len, NULL) != CUCO_OK)
		return;
	cuco_buf_append(out, text, len);
	char inc[16][128];
	int n = 0;
	cuco_text_includes(text, len, inc, &n, 16);
	free(text);
	const char *slash = strrchr(wl->seed_file, '/');
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%.*s%s", wl->dir, slash ? (int)(slash - wl->seed_file + 1) : 0,
			wl->seed_file, inc[i]);
		if (cuco_read_file(path, 16u << 20, &text, &len, NULL) == CUCO_OK) {
			cuco_buf_append(out, text, len);
			free(text);
		}
	}
}

bool cuco_seed_blind(const cuco_workload *wl, char *why, size_t size)
{
	if (!wl->seed_file[0] || strcmp(wl->seed_file, wl->baseline_file) == 0)
		return false;  /* no seed; or the baseline itself, an A/A control */
	cuco_buf text = { 0 }, unread = { 0 };
	seed_text(wl, &text);
	int defines = 0, read = 0;
	for (int i = 0; i < wl->ndims; i++) {
		if (!wl->dims[i].define[0])
			continue;
		defines++;
		if (text.data && names(text.data, wl->dims[i].define))
			read++;
		else
			cuco_buf_printf(&unread, "%s%s", unread.len ? ", " : "", wl->dims[i].define);
	}
	bool blind = text.data && defines >= 2 && 2 * read < defines;
	if (blind)
		snprintf(why, size, "reads %d of the directive's %d defines: the tuner's children that "
			"differ only in %s build the same program (read them, or narrow the design space in "
			"workload.json)", read, defines, unread.data);
	cuco_buf_free(&text);
	cuco_buf_free(&unread);
	return blind;
}

/* A failed evaluation in one line: the build's first error, else the
 * stage, the class and the excerpt's first line. */
static void failure(const cuco_workload *wl, const cuco_eval_result *res, char *line, size_t size)
{
	if (strcmp(res->failure.stage, "compile") == 0 && strcmp(res->failure.error_class, "suspect") != 0) {
		const char *e = strstr(res->failure.excerpt, "error");
		const char *from = e ? e : res->failure.excerpt;
		while (e && from > res->failure.excerpt && from[-1] != '\n')
			from--;
		snprintf(line, size, "the build failed (%s): %.*s", wl->build_cmd, (int)strcspn(from, "\n"),
			from);
		return;
	}
	snprintf(line, size, "the run would fail it at %s: %s: %.*s", res->failure.stage,
		res->failure.error_class, (int)strcspn(res->failure.excerpt, "\n"), res->failure.excerpt);
}

/* Evaluate one file of the workload under the seed's directive (the
 * baseline ignores it), and report what a run would find. */
static int evaluate(cuco_evaluator *ev, const cuco_workload *wl, cuco_try_what what, bool bench,
	cuco_try_fn fn, void *arg, cuco_err *err)
{
	const char *file = what == CUCO_TRY_SEED ? wl->seed_file : wl->baseline_file;
	char path[PATH_MAX + 160], *text, line[1200];
	size_t len;
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	int rc = cuco_read_file(path, 16u << 20, &text, &len, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_eval_result *res = cuco_xcalloc(1, sizeof *res);
	rc = cuco_eval_candidate(ev, text, len, &d, bench, res, err);
	free(text);
	if (rc != CUCO_OK || (res->ok && (!bench || res->timing.samples != 1))) {
		free(res);
		return rc;
	}
	if (res->ok)
		fn(what, CUCO_TRY_WARNING, "one timed sample per run (the benchmark's output has one "
			"time in it): a candidate's median and spread come from its samples, so each "
			"screening is one number with a spread of 0% (print a time for every repetition)", arg);
	else if (res->environment && strcmp(res->failure.stage, "compile") != 0) {
		snprintf(line, sizeof line, "not run here: %s: %.*s", res->failure.stage,
			(int)strcspn(res->failure.excerpt, "\n"), res->failure.excerpt);
		fn(what, CUCO_TRY_NOT_RUN, line, arg);
	} else {
		failure(wl, res, line, sizeof line);
		if (res->environment)  /* no compiler: nothing can be tried */
			rc = cuco_errf(err, CUCO_EENV, "%s: %s", file, line);
		else
			fn(what, CUCO_TRY_PROBLEM, line, arg);
	}
	free(res);
	return rc;
}

int cuco_workload_try(const cuco_workload *wl, cuco_try_fn fn, void *arg, cuco_err *err)
{
	char tmp[PATH_MAX], why[768];
	snprintf(tmp, sizeof tmp, "%s/cuco-try-XXXXXX", cuco_tmp_dir());
	if (!mkdtemp(tmp))
		return cuco_errf(err, CUCO_EENV, "%s: %s", tmp, strerror(errno));
	cuco_eval_config cfg = { .jobs = 1 };
	cuco_strlcpy(cfg.run_dir, tmp, sizeof cfg.run_dir);
	cuco_evaluator *ev = NULL;
	int rc = cuco_evaluator_new(wl, &cfg, &ev, err);
	if (rc == CUCO_OK)
		rc = evaluate(ev, wl, CUCO_TRY_BASELINE, true, fn, arg, err);
	if (rc == CUCO_OK && wl->seed_file[0])
		rc = evaluate(ev, wl, CUCO_TRY_SEED, false, fn, arg, err);
	if (rc == CUCO_OK && cuco_seed_blind(wl, why, sizeof why))
		fn(CUCO_TRY_SEED, CUCO_TRY_WARNING, why, arg);
	cuco_evaluator_free(ev);
	cuco_remove_tree(tmp);
	return rc;
}
