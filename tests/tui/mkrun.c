/* mkrun.c — prepares and inspects run stores for the screen's tests.
 *
 *   mkrun DIR create            a small run: baseline, seed, an LLM diff (the
 *                               best), a failed rewrite, a tuned child, a queued one
 *   mkrun DIR big N             N candidates in islands (for bench/tui)
 *   mkrun DIR append N MS       append N candidates, one every MS milliseconds
 *   mkrun DIR commands          print the pending commands, one a line
 *   mkrun DIR events KIND       print the events of one kind, one a line
 *   mkrun DIR source HASH       print a stored source
 *   mkrun DIR event KIND TEXT   append an engine event (run-end, retime, …)
 *   mkrun DIR baseline US       the baseline measured again, at US: every
 *                               speedup was timed against another measurement
 *   mkrun DIR refused           the baseline refused in a confirmation round
 *                               (its row stays done) and a candidate refused
 *                               as it is screened, each with a long reason
 */
#include "store/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const sources[] = {
	"/* baseline */\nint main(void)\n{\n\tcompute();\n\tallgather();\n\treturn 0;\n}\n",
	"/* seed */\nint main(void)\n{\n\tcompute();\n\tput_all();\n\tfence();\n\treturn 0;\n}\n",
	"/* seed */\nint main(void)\n{\n\tfor (int c = 0; c < CHUNKS; c++) {\n\t\tcompute_chunk(c);\n"
	"\t\tput_chunk(c);\n\t}\n\tflag_wait();\n\treturn 0;\n}\n",
	"/* rewrite */\nint main(void)\n{\n\tbroken(\n}\n",
};

static void phases(cuco_candidate *c, double compute, double comm, double sync, double exposed)
{
	const char *names[] = { "compute", "comm", "sync", "exposed_comm" };
	double us[] = { compute, comm, sync, exposed };
	c->timing.nphases = 4;
	for (int i = 0; i < 4; i++) {
		cuco_strlcpy(c->timing.phases[i].name, names[i], sizeof c->timing.phases[i].name);
		c->timing.phases[i].us = us[i];
	}
}

static void base(cuco_candidate *c, uint64_t parent, int island, cuco_origin o, cuco_status s)
{
	memset(c, 0, sizeof *c);
	c->nparents = parent ? 1 : 0;
	c->parents[0] = parent;
	c->island = island;
	c->origin = o;
	c->status = s;
	c->score = c->timing.min_us = c->timing.median_us = c->timing.p90_us = NAN;
	c->speedup = c->timing.peak_fraction = c->timing.max_error = NAN;
	cuco_strlcpy(c->directive.backend, "rma", sizeof c->directive.backend);
	cuco_strlcpy(c->directive.issuer, "one", sizeof c->directive.issuer);
	cuco_strlcpy(c->directive.placement, "after", sizeof c->directive.placement);
	cuco_strlcpy(c->directive.sync, "fence", sizeof c->directive.sync);
	cuco_strlcpy(c->directive.granularity, "1", sizeof c->directive.granularity);
}

static void timed(cuco_candidate *c, double median, double baseline)
{
	c->timing.min_us = median * 0.97;
	c->timing.median_us = median;
	c->timing.p90_us = median * 1.04;
	c->timing.samples = 15;
	c->timing.spread = 0.08;
	c->speedup = baseline / median;
	c->score = c->speedup;
	c->timing.peak_fraction = 0.3 * c->speedup;
	c->timing.max_error = 1e-7;
}

static int event(cuco_txn *txn, const char *kind, uint64_t cand, const char *text)
{
	cuco_event ev = { .kind = cuco_event_kind_of(kind) };
	cuco_strlcpy(ev.author, "engine", sizeof ev.author);
	cuco_strlcpy(ev.text, text, sizeof ev.text);
	ev.candidate = cand;
	return cuco_event_add(txn, &ev);
}

static int put(cuco_txn *txn, cuco_candidate *c, const char *src)
{
	int rc = cuco_source_put(txn, src, strlen(src), c->source_hash);
	if (rc == CUCO_OK)
		rc = cuco_cand_put(txn, c);
	if (rc == CUCO_OK)
		rc = event(txn, "candidate", c->id, cuco_origin_name(c->origin));
	return rc;
}

static int create_txn(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_candidate *c = calloc(1, sizeof *c);
	int rc = event(txn, "run-start", 0, "fixture run");
	cuco_meta_put(txn, "workload", "{\"name\": \"cpu-gemm-allgather\", \"design_space\": "
		"{\"backend\": {\"values\": [\"msg\", \"rma\", \"shm\"], \"help\": "
		"\"how bytes move: two-sided messages, one-sided put, direct load/store\"}}}");
	cuco_meta_put(txn, "strategy", "\"islands\"");
	cuco_meta_put(txn, "config", "{\"budget_usd\": 5, \"budget_tokens\": 100000}");

	base(c, 0, -1, CUCO_ORIGIN_BASELINE, CUCO_STATUS_DONE);
	cuco_strlcpy(c->directive.backend, "msg", sizeof c->directive.backend);
	timed(c, 1100, 1100);
	phases(c, 700, 400, 50, 350);
	if (rc == CUCO_OK)
		rc = put(txn, c, sources[0]);
	base(c, 1, 0, CUCO_ORIGIN_SEED, CUCO_STATUS_DONE);
	timed(c, 1000, 1100);
	phases(c, 700, 380, 40, 260);
	if (rc == CUCO_OK)
		rc = put(txn, c, sources[1]);
	base(c, 2, 0, CUCO_ORIGIN_LLM_DIFF, CUCO_STATUS_DONE);
	cuco_strlcpy(c->directive.placement, "interleave", sizeof c->directive.placement);
	cuco_strlcpy(c->directive.sync, "flag", sizeof c->directive.sync);
	cuco_strlcpy(c->directive.granularity, "8", sizeof c->directive.granularity);
	cuco_strlcpy(c->model, "test-model", sizeof c->model);
	c->tokens_prompt = 1200;
	c->tokens_completion = 300;
	c->cost_usd = 0.0125;
	cuco_strlcpy(c->note, "chunked puts overlapped with compute", sizeof c->note);
	const char *prompt = "PROMPT: overlap the all-gather with the GEMM";
	const char *reply = "REPLY: interleave puts chunk by chunk";
	if (rc == CUCO_OK)
		rc = cuco_source_put(txn, prompt, strlen(prompt), c->prompt_hash);
	if (rc == CUCO_OK)
		rc = cuco_source_put(txn, reply, strlen(reply), c->reply_hash);
	timed(c, 800, 1100);
	phases(c, 700, 380, 20, 80);
	if (rc == CUCO_OK)
		rc = put(txn, c, sources[2]);
	base(c, 2, 1, CUCO_ORIGIN_LLM_FULL, CUCO_STATUS_FAILED);
	cuco_strlcpy(c->failure.stage, "compile", sizeof c->failure.stage);
	cuco_strlcpy(c->failure.error_class, "compile-error", sizeof c->failure.error_class);
	cuco_strlcpy(c->failure.excerpt, "seed.c:4: error: expected ')' before '}' token",
		sizeof c->failure.excerpt);
	if (rc == CUCO_OK)
		rc = put(txn, c, sources[3]);
	base(c, 3, 1, CUCO_ORIGIN_TUNE, CUCO_STATUS_DONE);
	cuco_strlcpy(c->directive.granularity, "16", sizeof c->directive.granularity);
	timed(c, 900, 1100);
	c->timing.spread = 0.6;  /* measured on a busy machine */
	phases(c, 700, 390, 30, 170);
	if (rc == CUCO_OK)
		rc = put(txn, c, sources[2]);
	base(c, 3, 0, CUCO_ORIGIN_TUNE, CUCO_STATUS_QUEUED);
	if (rc == CUCO_OK)
		rc = put(txn, c, sources[2]);
	cuco_island isl = { .id = 0, .phase = "explore", .generation = 3, .members = 3, .champion = 3,
		.best_score = 1.375, .best_speedup = 1.375, .last_improvement = cuco_now() - 30 };
	if (rc == CUCO_OK)
		rc = cuco_island_put(txn, &isl);
	isl = (cuco_island){ .id = 1, .phase = "exploit", .generation = 2, .members = 2, .champion = 5,
		.best_score = 1.222, .best_speedup = 1.222, .last_improvement = cuco_now() - 600,
		.migrations = 1 };
	if (rc == CUCO_OK)
		rc = cuco_island_put(txn, &isl);
	free(c);
	return rc;
}

struct many {
	long n, done;
};

/* Candidates as a search makes them: each under an earlier one, in islands. */
static int many_txn(cuco_txn *txn, void *arg)
{
	struct many *m = arg;
	cuco_candidate *c = calloc(1, sizeof *c);
	uint64_t last = cuco_cand_last_id(txn);
	int rc = CUCO_OK;
	for (long i = 0; i < m->n && rc == CUCO_OK; i++) {
		uint64_t id = last + (uint64_t)i + 1;
		uint64_t parent = id > 1 ? 1 + (uint64_t)rand() % (id - 1) : 0;
		base(c, parent, (int)(id % 4), id % 7 == 0 ? CUCO_ORIGIN_LLM_DIFF : CUCO_ORIGIN_TUNE,
			id % 11 == 0 ? CUCO_STATUS_FAILED : CUCO_STATUS_DONE);
		snprintf(c->directive.granularity, sizeof c->directive.granularity, "%d", 1 << (id % 6));
		if (c->status == CUCO_STATUS_DONE) {
			timed(c, 800 + (double)(id % 300), 1100);
			phases(c, 700, 380, 20, 80 + (double)(id % 300));
		}
		cuco_strlcpy(c->source_hash, "", sizeof c->source_hash);
		rc = cuco_cand_put(txn, c);
		if (rc == CUCO_OK && (i % 100 == 0 || m->n < 100))
			rc = event(txn, "candidate", c->id, "appended");
	}
	free(c);
	return rc;
}

struct print {
	const char *kind;
};

static int print_command(const cuco_command *c, void *arg)
{
	(void)arg;
	printf("%s %llu %d %s %s [%s]\n", cuco_command_name(c->kind), (unsigned long long)c->candidate,
		c->island, c->author, c->source_hash[0] ? c->source_hash : "-", c->text);
	return 0;
}

static int commands_txn(cuco_txn *txn, void *arg)
{
	return cuco_command_each_pending(txn, print_command, arg);
}

static int print_event(const cuco_event *ev, void *arg)
{
	const struct print *p = arg;
	if (strcmp(ev->name, p->kind) == 0)
		printf("%s %llu %s [%s]\n", ev->name, (unsigned long long)ev->candidate, ev->author, ev->text);
	return 0;
}

static int events_txn(cuco_txn *txn, void *arg)
{
	return cuco_event_each(txn, 1, print_event, arg);
}

static int source_txn(cuco_txn *txn, void *arg)
{
	char *text = NULL;
	size_t len = 0;
	int rc = cuco_source_get(txn, arg, &text, &len);
	if (rc == CUCO_OK)
		fwrite(text, 1, len, stdout);
	free(text);
	return rc;
}

static int add_event_txn(cuco_txn *txn, void *arg)
{
	char **kt = arg;
	return event(txn, kt[0], 0, kt[1]);
}

static int baseline_txn(cuco_txn *txn, void *arg)
{
	cuco_candidate *c = calloc(1, sizeof *c);
	int rc = cuco_cand_get(txn, 1, c);
	if (rc == CUCO_OK) {
		timed(c, *(double *)arg, *(double *)arg);
		rc = cuco_cand_put(txn, c);
	}
	if (rc == CUCO_OK)
		rc = event(txn, "baseline", 1, "re-measured");
	free(c);
	return rc;
}

#define CLOCK_WHY "stage clock: the benchmark took 2.22 s for 34 more steps than the run " \
	"stage (0.00 s), at least 3.59e+04 us a step, yet reports 69.8 us"

static int refused_txn(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_measurement m;
	cuco_measurement_init(&m, 1, "confirm");
	strcpy(m.failure.stage, "bench");
	strcpy(m.failure.error_class, "suspect");
	snprintf(m.failure.excerpt, sizeof m.failure.excerpt, "bench: %s\nthe stage's last output", CLOCK_WHY);
	int rc = cuco_measure_add(txn, &m, NULL);
	if (rc == CUCO_OK)
		rc = event(txn, "confirm", 3, "#3 no verdict: the baseline failed in round 4 at bench: "
			"suspect: " CLOCK_WHY);
	return rc;
}

static int fail(const cuco_err *err)
{
	fprintf(stderr, "mkrun: %s\n", err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: mkrun DIR create|big N|append N MS|commands|events KIND|source HASH"
			"|event KIND TEXT|baseline US|refused\n");
		return 2;
	}
	const char *what = argv[2];
	cuco_err err = { 0 };
	cuco_store *st;
	if (cuco_store_open(argv[1], strcmp(what, "create") == 0 || strcmp(what, "big") == 0
		? CUCO_STORE_CREATE : 0, &st, &err) != CUCO_OK)
		return fail(&err);
	int rc = CUCO_OK;
	if (strcmp(what, "create") == 0)
		rc = cuco_store_write(st, create_txn, NULL, &err);
	else if (strcmp(what, "big") == 0 && argc > 3) {
		struct many m = { atol(argv[3]), 0 };
		srand(7);
		rc = cuco_store_write(st, create_txn, NULL, &err);
		if (rc == CUCO_OK)
			rc = cuco_store_write(st, many_txn, &m, &err);
	} else if (strcmp(what, "append") == 0 && argc > 4) {
		long n = atol(argv[3]), ms = atol(argv[4]);
		for (long i = 0; i < n && rc == CUCO_OK; i++) {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			struct many m = { 1, 0 };
			rc = cuco_store_write(st, many_txn, &m, &err);
		}
	} else if (strcmp(what, "commands") == 0)
		rc = cuco_store_read(st, commands_txn, NULL, &err);
	else if (strcmp(what, "events") == 0 && argc > 3) {
		struct print p = { argv[3] };
		rc = cuco_store_read(st, events_txn, &p, &err);
	} else if (strcmp(what, "source") == 0 && argc > 3)
		rc = cuco_store_read(st, source_txn, argv[3], &err);
	else if (strcmp(what, "event") == 0 && argc > 4)
		rc = cuco_store_write(st, add_event_txn, argv + 3, &err);
	else if (strcmp(what, "refused") == 0)
		rc = cuco_store_write(st, refused_txn, NULL, &err);
	else if (strcmp(what, "baseline") == 0 && argc > 3) {
		double us = atof(argv[3]);
		rc = cuco_store_write(st, baseline_txn, &us, &err);
	}
	else {
		fprintf(stderr, "mkrun: %s: unknown request\n", what);
		rc = CUCO_EUSAGE;
		cuco_errf(&err, rc, "bad request");
	}
	cuco_store_close(st);
	return rc == CUCO_OK ? 0 : fail(&err);
}
