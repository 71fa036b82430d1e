/* cmd-analyze.c — `cuco analyze PROGRAM|WORKLOAD`: the communication
 * analysis the fast path hands the model (eval.h, cuco_program_report),
 * for a person: every host collective and point-to-point call with its
 * buffers, loop, producers, consumers and streams. A workload's baseline
 * is analysed at the workload's size. With --prompt, the sizes of the
 * prompts a run starts with instead, each kind in each profile, and the
 * least context each profile needs; then the fast path's prompt for the
 * baseline section by section, or (--show-prompt) the whole of it, as a
 * model would get it before fitting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "cmd/cmd.h"
#include "strategies/strategies.h"

#define ANALYZE_OPTIONS(X) \
	X(O_SIZE, "size", 0, "NAME", 0, "a workload's size, for the bytes of each call") \
	X(O_PROMPT, "prompt", 0, NULL, 0, "the sizes of a workload's prompts, each kind in each " \
		"profile, the least context each profile needs, and the fast path's prompt for its " \
		"baseline section by section") \
	X(O_SHOW, "show-prompt", 0, NULL, 0, "that fast path prompt whole (system message, then user " \
		"message)") \
	X(O_STAGE, "stage", 0, "A|B", 0, "the fast path's stage for --prompt (default A)") \
	X(O_PROFILE, "profile", 0, CUCO_PROFILE_ARG, 0, "the fast path prompt's profile (default full)")
CMD_TABLE(options, ANALYZE_OPTIONS);

/* Each kind of prompt in each profile, and the least context that fits
 * each profile with llama.cpp's and Ollama's default max_tokens. */
static int show_sizes(const cuco_workload *wl, const cuco_hardware *hw)
{
	cuco_prompt_size rows[CUCO_SURVEY_ROWS];
	int n;
	cuco_err err = { 0 };
	int rc = cuco_prompt_survey(wl, hw, false, rows, &n, &err);
	if (rc != CUCO_OK)
		return cmd_fail(&err);
	printf("prompts a run of %s starts with, in tokens (%.1f bytes each): what no cut removes "
		"/ the whole\n  %-12s %-22s %s\n", wl->name, CUCO_BYTES_PER_TOKEN, "kind", "full profile",
		"lean profile");
	int64_t most[CUCO_PROFILES] = { 0 };
	for (int i = 0; i < n; i++) {
		char cell[CUCO_PROFILES][48];
		/* A lean crossover or rewrite of long blocks is asked as a diff. */
		bool as_diff = !strcmp(rows[i].kind, cuco_prompt_kind_name(CUCO_PROMPT_CROSS))
			|| !strcmp(rows[i].kind, cuco_prompt_kind_name(CUCO_PROMPT_FULL));
		for (int p = 0; p < CUCO_PROFILES; p++) {
			snprintf(cell[p], sizeof cell[p], "%lld / %lld%s", (long long)rows[i].floor[p],
				(long long)rows[i].whole[p], p == CUCO_PROFILE_LEAN && as_diff ?
				" (or a diff)" : "");
			if (rows[i].floor[p] > most[p] && !(p == CUCO_PROFILE_LEAN && as_diff))
				most[p] = rows[i].floor[p];
		}
		printf("  %-12s %-22s %s\n", rows[i].kind, cell[0], cell[1]);
	}
	const int max_tokens = 4096;  /* llamacpp's and ollama's default (docs/configuration.md) */
	printf("least context with max_tokens %d: full profile %lld tokens, lean profile %lld\n",
		max_tokens, (long long)cuco_prompt_min_context(most[CUCO_PROFILE_FULL], max_tokens),
		(long long)cuco_prompt_min_context(most[CUCO_PROFILE_LEAN], max_tokens));
	return CUCO_OK;
}

/* The fast path's prompt for the baseline, as sizes or whole. */
static int show_prompt(const cuco_workload *wl, int stage, cuco_prompt_profile profile, bool whole)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", wl->dir, wl->baseline_file);
	char *text;
	size_t len;
	cuco_err err = { 0 };
	int rc = cuco_read_file(path, 16u << 20, &text, &len, &err);
	if (rc != CUCO_OK)
		return cmd_fail(&err);
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	if (!whole && (rc = show_sizes(wl, &hw)) != CUCO_OK) {
		free(text);
		return rc;
	}
	cuco_fp_prompt p = { 0 };
	cuco_fp_spec spec = { .wl = wl, .hw = &hw, .stage = stage, .program = text, .len = len,
		.profile = profile };
	rc = cuco_fastpath_prompt(&spec, &p, &err);
	free(text);
	if (rc != CUCO_OK) {
		cuco_fp_prompt_free(&p);
		return cmd_fail(&err);
	}
	if (whole) {
		printf("=== system\n%s\n=== user\n%s", p.system.data, p.user.data);
	} else {
		size_t total = 0;
		printf("fast path stage %c prompt for %s (its baseline), %s profile, before fitting:\n",
			stage ? 'B' : 'A', wl->name, cuco_prompt_profile_name(profile));
		for (int i = 0; i < CUCO_FP_NSECTIONS; i++) {
			printf("  %-16s %8zu bytes\n", cuco_fp_section_name((cuco_fp_section)i),
				p.bytes[i]);
			total += p.bytes[i];
		}
		printf("  %-16s %8zu bytes\nAPI reference from: %s\n", "in all", total,
			*p.api_from ? p.api_from : "none");
	}
	cuco_fp_prompt_free(&p);
	return CUCO_OK;
}

static int analyze_exec(int argc, char **argv)
{
	const char *size_name = NULL;
	int prompt = 0, stage = 0;
	cuco_prompt_profile profile = CUCO_PROFILE_FULL;
	int o;
	cmd_args a = CMD_ARGS(&cmd_analyze, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		const char *v = a.value;
		switch (o) {
		case O_SIZE: size_name = v; break;
		case O_PROMPT: prompt = prompt ? prompt : 1; break;
		case O_SHOW: prompt = 2; break;
		case O_STAGE:
			if (strcmp(v, "A") != 0 && strcmp(v, "B") != 0)
				return cmd_usage_error(&cmd_analyze, "--stage %s: expected A or B", v);
			stage = v[0] == 'B';
			break;
		case O_PROFILE:
			if (cuco_prompt_profile_parse(v, &profile) != CUCO_OK)
				return cmd_usage_error(&cmd_analyze, "--profile %s: expected full or lean", v);
			break;
		}
	}
	if (!cmd_operands(&a, 1, 1, "expected one program (a file) or a workload"))
		return a.rc;
	const char *what = a.args[0];
	cuco_err err = { 0 };
	cuco_workload *wl = NULL;
	char path[2048];
	struct stat sb;
	if (!prompt && stat(what, &sb) == 0 && S_ISREG(sb.st_mode)) {
		snprintf(path, sizeof path, "%s", what);
	} else {
		int rc = cuco_workload_load(what, &wl, &err);
		if (rc != CUCO_OK) {
			cuco_err why;
			cuco_errf(&why, rc, "%s: %s%.400s", what, prompt ? "" : "no such program file, and as "
				"a workload: ", err.msg);
			return cmd_fail(&why);
		}
		snprintf(path, sizeof path, "%s/%s", wl->dir, wl->baseline_file);
	}
	if (size_name && (!wl || !cuco_workload_size(wl, size_name))) {
		cuco_workload_free(wl);
		return cmd_usage_error(&cmd_analyze, "--size %s: %s", size_name,
			wl ? "the workload has no such size" : "only a workload has sizes");
	}
	if (prompt) {
		int rc = show_prompt(wl, stage, profile, prompt == 2);
		cuco_workload_free(wl);
		return rc;
	}
	cuco_program *p;
	int rc = cuco_program_read(path, &p, &err);
	if (rc != CUCO_OK) {
		cuco_workload_free(wl);
		return cmd_fail(&err);
	}
	cuco_buf b = { 0 };
	cuco_program_report(p, wl ? cuco_workload_size(wl, size_name) : NULL, wl ? wl->ranks : 2, &b);
	fputs(b.data, stdout);
	cuco_buf_free(&b);
	cuco_program_free(p);
	cuco_workload_free(wl);
	return CUCO_OK;
}

const cuco_cmd cmd_analyze = { "analyze", "PROGRAM|WORKLOAD",
	"a program's host communication as the fast path sees it, or the sizes of its prompts",
	analyze_exec, CMD_OPTIONS(options) };
