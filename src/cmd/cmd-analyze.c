/* cmd-analyze.c — `cuco analyze PROGRAM|WORKLOAD`: the communication
 * analysis the fast path hands the model (eval.h, cuco_program_report),
 * for a person: every host collective and point-to-point call with its
 * buffers, loop, producers, consumers and streams. A workload's baseline
 * is analysed at the workload's size. With --prompt, the fast path's
 * prompt for the workload's baseline instead: its sections and their
 * sizes, or (--show-prompt) the whole of it, as a model would get it
 * before fitting. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agents.h"
#include "cmd/cmd.h"
#include "eval/eval.h"

static const char options[] =
	"  --size NAME     a workload's size, for the bytes of each call\n"
	"  --prompt        the fast path's prompt for a workload's baseline: sections and sizes\n"
	"  --show-prompt   that prompt whole (system message, then user message)\n"
	"  --stage A|B     the fast path's stage for --prompt (default A)\n";

/* The fast path's prompt for the baseline, as sizes or whole. */
static int show_prompt(const cuco_workload *wl, int stage, bool whole)
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
	cuco_fp_prompt p = { 0 };
	rc = cuco_fastpath_prompt(wl, &hw, stage, text, len, NULL, &p, &err);
	free(text);
	if (rc != CUCO_OK) {
		cuco_fp_prompt_free(&p);
		return cmd_fail(&err);
	}
	if (whole) {
		printf("=== system\n%s\n=== user\n%s", p.system.data, p.user.data);
	} else {
		static const char *const names[] = {
#define X(sec, name) name,
			CUCO_FP_SECTIONS(X)
#undef X
		};
		size_t total = 0;
		printf("fast path stage %c prompt for %s (its baseline), before fitting:\n",
			stage ? 'B' : 'A', wl->name);
		for (int i = 0; i < CUCO_FP_NSECTIONS; i++) {
			printf("  %-16s %8zu bytes\n", names[i], p.bytes[i]);
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
	enum { OPT_SIZE = 256, OPT_PROMPT, OPT_SHOW, OPT_STAGE };
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, OPT_SIZE }, { "prompt", no_argument, NULL, OPT_PROMPT },
		{ "show-prompt", no_argument, NULL, OPT_SHOW }, { "stage", required_argument, NULL, OPT_STAGE },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *size_name = NULL;
	int prompt = 0, stage = 0;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SIZE: size_name = optarg; break;
		case OPT_PROMPT: prompt = prompt ? prompt : 1; break;
		case OPT_SHOW: prompt = 2; break;
		case OPT_STAGE:
			if (strcmp(optarg, "A") != 0 && strcmp(optarg, "B") != 0)
				return cmd_usage_error(&cmd_analyze, "--stage %s: expected A or B", optarg);
			stage = optarg[0] == 'B';
			break;
		case 'h':
			cmd_print_usage(&cmd_analyze, options);
			return CUCO_OK;
		default:
			return cmd_bad_option(&cmd_analyze, longopts, argv);
		}
	}
	if (optind + 1 != argc)
		return cmd_usage_error(&cmd_analyze, "expected one program (a file) or a workload");
	const char *what = argv[optind];
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
		int rc = show_prompt(wl, stage, prompt == 2);
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

const cuco_cmd cmd_analyze = { "analyze", "[--size NAME] [--prompt|--show-prompt [--stage A|B]] "
	"PROGRAM|WORKLOAD",
	"a program's host communication as the fast path sees it, or the fast path's prompt",
	analyze_exec };
