/* cmd-show.c — `cuco show ID`: one candidate, whole. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static const char show_options[] =
	"  --run DIR     the run directory (default $CUCO_RUN, else runs/latest)\n"
	"  --source      also print the candidate's source\n"
	"  --prompt      also print the prompt and reply that produced it (LLM candidates)\n"
	"  --json        print the record as JSON (with \"source\", \"prompt\", \"reply\" when asked)\n"
	"ID is a number, or best, baseline or seed.\n";

struct show_job {
	uint64_t id;
	bool source, prompt, json;
	cuco_candidate cand;
	char *texts[3];  /* source, prompt, reply */
	char *peak;      /* meta "peak": what the fraction of peak is of; NULL in older runs */
};

static int show_txn(cuco_txn *txn, void *arg)
{
	struct show_job *job = arg;
	int rc = cuco_cand_get(txn, job->id, &job->cand);
	if (rc)
		return rc;
	const char *hashes[3] = { job->cand.source_hash, job->cand.prompt_hash, job->cand.reply_hash };
	bool want[3] = { job->source, job->prompt, job->prompt };
	for (int i = 0; i < 3; i++)
		if (want[i] && hashes[i][0] && (rc = cuco_source_get(txn, hashes[i], &job->texts[i], NULL)))
			return rc;
	rc = cuco_meta_get(txn, "peak", &job->peak);
	return rc == CUCO_ENOTFOUND ? CUCO_OK : rc;
}

/* The fraction of peak, and what the peaks were: the link or memory the
 * bytes cross, and the arithmetic rate. */
static void print_peak(const struct show_job *job)
{
	double f = job->cand.peak_fraction;
	if (!isfinite(f)) {
		printf("%-14s -\n", "peak fraction");
		return;
	}
	printf("%-14s %.4g", "peak fraction", f);
	cJSON *pk = job->peak ? cJSON_Parse(job->peak) : NULL;
	const cJSON *bw = cJSON_GetObjectItem(pk, "bandwidth_gbs"), *of = cJSON_GetObjectItem(pk, "bandwidth_of"),
		*gf = cJSON_GetObjectItem(pk, "gflops");
	if (cJSON_IsNumber(bw) && bw->valuedouble > 0)
		printf("  (of %.0f GB/s, %s%s", bw->valuedouble, cJSON_IsString(of) ? of->valuestring : "?",
			cJSON_IsNumber(gf) && gf->valuedouble > 0 ? "" : ")");
	if (cJSON_IsNumber(gf) && gf->valuedouble > 0)
		printf("%s%.0f TFLOP/s)", cJSON_IsNumber(bw) && bw->valuedouble > 0 ? "; " : "  (of ",
			gf->valuedouble / 1000);
	printf("\n");
	cJSON_Delete(pk);
}

static void print_num(const char *label, double v, const char *unit)
{
	if (isfinite(v))
		printf("%-14s %.4g%s\n", label, v, unit);
	else
		printf("%-14s -\n", label);
}

static void print_text(const struct show_job *job)
{
	const cuco_candidate *c = &job->cand;
	char dir[512];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	printf("candidate      %llu%s\n", (unsigned long long)c->id, c->pinned ? "  (pinned)" : "");
	printf("parents       ");
	for (int i = 0; i < c->nparents; i++)
		printf(" %llu", (unsigned long long)c->parents[i]);
	printf("%s\n", c->nparents ? "" : " -");
	printf("island         %d  generation %d\n", c->island, c->generation);
	printf("origin         %s\n", cuco_origin_name(c->origin));
	printf("status         %s\n", cuco_status_name(c->status));
	printf("directive      %s\n", dir);
	if (c->note[0])
		printf("note           %s\n", c->note);
	print_num("median", c->latency_median_us, " us");
	print_num("min", c->latency_min_us, " us");
	print_num("p90", c->latency_p90_us, " us");
	printf("%-14s %d\n", "samples", c->samples);
	print_num("spread", c->spread, "");
	print_num("speedup", c->speedup, "x");
	print_num("score", c->score, "");
	print_peak(job);
	print_num("max error", c->max_error, "");
	for (int i = 0; i < c->nphases; i++)
		printf("phase %-8s %.4g us\n", c->phases[i].name, c->phases[i].us);
	if (c->status == CUCO_STATUS_FAILED)
		printf("failed         %s (%s)\n%s\n", c->failed_stage, c->error_class, c->error_excerpt);
	if (c->status == CUCO_STATUS_REJECTED)
		printf("rejected       %s\n", c->reject_reason);
	if (c->model[0])
		printf("model          %s  tokens %lld+%lld  cost $%.4f\n", c->model,
			(long long)c->tokens_prompt, (long long)c->tokens_completion, c->cost_usd);
	printf("source         %s\n", c->source_hash);
	const char *titles[3] = { "source", "prompt", "reply" };
	for (int i = 0; i < 3; i++)
		if (job->texts[i])
			printf("\n--- %s ---\n%s%s", titles[i], job->texts[i],
				job->texts[i][0] && job->texts[i][strlen(job->texts[i]) - 1] == '\n' ? "" : "\n");
}

static int show_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' }, { "source", no_argument, NULL, 's' },
		{ "prompt", no_argument, NULL, 'p' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct show_job *job = cuco_xcalloc(1, sizeof *job);
	const char *run = NULL;
	int opt, rc;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 's': job->source = true; break;
		case 'p': job->prompt = true; break;
		case 'j': job->json = true; break;
		case 'h': cmd_print_usage(&cmd_show, show_options); free(job); return CUCO_OK;
		default: free(job); return cmd_usage_error(&cmd_show, "unknown option");
		}
	}
	if (argc - optind != 1) {
		free(job);
		return cmd_usage_error(&cmd_show, "expected one candidate id");
	}
	cuco_store *st;
	if ((rc = cmd_open_store(cmd_run_dir(run), CUCO_STORE_RDONLY, &st))) {
		free(job);
		return rc;
	}
	cuco_err err = { 0 };
	rc = cmd_resolve_id(st, argv[optind], &job->id);
	if (rc == CUCO_OK && (rc = cuco_store_read(st, show_txn, job, &err)))
		rc = cmd_fail(&err);
	cuco_store_close(st);
	if (rc == CUCO_OK && job->json) {
		cJSON *o = cuco_candidate_to_json(&job->cand);
		const char *keys[3] = { "source", "prompt", "reply" };
		for (int i = 0; i < 3; i++)
			if (job->texts[i])
				cJSON_AddStringToObject(o, keys[i], job->texts[i]);
		cJSON *pk = job->peak ? cJSON_Parse(job->peak) : NULL;
		if (pk)
			cJSON_AddItemToObject(o, "peak", pk);
		char *text = cJSON_Print(o);
		puts(text);
		free(text);
		cJSON_Delete(o);
	} else if (rc == CUCO_OK) {
		print_text(job);
	}
	for (int i = 0; i < 3; i++)
		free(job->texts[i]);
	free(job->peak);
	free(job);
	return rc;
}

const cuco_cmd cmd_show = { "show", "[--run DIR] [--source] [--prompt] [--json] ID",
	"show one candidate: directive, metrics, phases, failure, source", show_exec };
