/* cmd-show.c — `cuco show ID`: one candidate, whole; or `cuco show rN`:
 * one refusal, a proposal no candidate came of. With --prompt a
 * candidate also shows the model calls behind it and the refusals made
 * from it as a parent, so every reply a run paid for can be found. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"

#define SHOW_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_SOURCE, "source", 0, NULL, 0, "also print the candidate's source") \
	X(O_PROMPT, "prompt", 0, NULL, 0, "also print the prompt and reply that produced it, the " \
		"model calls behind it and the refused replies asked from it (LLM candidates)") \
	X(O_JSON, "json", 0, NULL, 0, "print the record as JSON, with \"measurements\" (and " \
		"\"source\", \"prompt\", \"reply\", \"calls\" and \"refusals\" when asked)")
CMD_TABLE(options, SHOW_OPTIONS);

struct show_job {
	uint64_t id;
	bool refusal;           /* rN: a refusal record */
	bool source, prompt, json;
	cuco_candidate cand;
	cuco_refusal ref;
	char *texts[3];  /* source, prompt, reply */
	cuco_measurement *measurements;  /* every measurement, oldest first */
	size_t nmeasurements;
	char *peak;      /* meta "peak": what the fraction of peak is of; NULL in older runs */
	cuco_call *calls;       /* linked to it */
	size_t ncalls;
	cuco_refusal *refusals; /* asked from the candidate as a parent */
	size_t nrefusals;
	cuco_event marks[2];    /* the latest pin or unpin, reject or unreject of it */
};

/* A person's marks, newest last: who pinned or rejected it, and when. */
static int take_mark(const cuco_event *ev, void *arg)
{
	struct show_job *job = arg;
	int k = ev->kind == CUCO_EVENT_PIN || ev->kind == CUCO_EVENT_UNPIN ? 0
		: ev->kind == CUCO_EVENT_REJECT || ev->kind == CUCO_EVENT_UNREJECT ? 1 : -1;
	if (k >= 0 && ev->candidate == job->id && strcmp(ev->author, "engine") != 0)
		job->marks[k] = *ev;
	return 0;
}

static int take_call(const cuco_call *c, void *arg)
{
	struct show_job *job = arg;
	if (job->refusal ? c->refusal != job->id : c->candidate != job->id)
		return 0;
	job->calls = cuco_xrealloc(job->calls, (job->ncalls + 1) * sizeof *job->calls);
	job->calls[job->ncalls++] = *c;
	return 0;
}

static int take_refusal(const cuco_refusal *r, void *arg)
{
	struct show_job *job = arg;
	if (r->parent != job->id)
		return 0;
	job->refusals = cuco_xrealloc(job->refusals, (job->nrefusals + 1) * sizeof *job->refusals);
	job->refusals[job->nrefusals++] = *r;
	return 0;
}

static int get_texts(cuco_txn *txn, struct show_job *job, const char *const hashes[3],
	const bool want[3])
{
	for (int i = 0; i < 3; i++) {
		int rc;
		if (want[i] && hashes[i][0] && (rc = cuco_source_get(txn, hashes[i], &job->texts[i], NULL)))
			return rc;
	}
	return CUCO_OK;
}

static int add_measurement(const cuco_measurement *m, void *arg)
{
	struct show_job *job = arg;
	job->measurements = cuco_xrealloc(job->measurements,
		(job->nmeasurements + 1) * sizeof *job->measurements);
	job->measurements[job->nmeasurements++] = *m;
	return 0;
}

static int show_txn(cuco_txn *txn, void *arg)
{
	struct show_job *job = arg;
	int rc;
	if (job->refusal) {
		if ((rc = cuco_refusal_get(txn, job->id, &job->ref)))
			return rc;
		const char *hashes[3] = { "", job->ref.prompt_hash, job->ref.reply_hash };
		const bool want[3] = { false, job->prompt, job->prompt };
		rc = get_texts(txn, job, hashes, want);
		return rc ? rc : cuco_call_each(txn, 1, take_call, job);
	}
	if ((rc = cuco_cand_get(txn, job->id, &job->cand)))
		return rc;
	memset(job->marks, 0, sizeof job->marks);
	if ((rc = cuco_event_each(txn, 1, take_mark, job)))
		return rc;
	const char *hashes[3] = { job->cand.source_hash, job->cand.prompt_hash, job->cand.reply_hash };
	const bool want[3] = { job->source, job->prompt, job->prompt };
	if ((rc = get_texts(txn, job, hashes, want)))
		return rc;
	free(job->peak);  /* a retried read */
	job->peak = NULL;
	rc = cuco_meta_get(txn, "peak", &job->peak);
	if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
		return rc;
	job->ncalls = job->nrefusals = job->nmeasurements = 0;  /* a retried read */
	if ((rc = cuco_measure_each(txn, job->id, add_measurement, job)) || !job->prompt)
		return rc;
	if ((rc = cuco_call_each(txn, 1, take_call, job)))
		return rc;
	return cuco_refusal_each(txn, take_refusal, job);
}

static void print_calls(const struct show_job *job)
{
	for (size_t i = 0; i < job->ncalls; i++) {
		const cuco_call *c = &job->calls[i];
		printf("call %-9llu %s %s: %s, %lld+%lld tokens%s, $%.4f%s%s\n",
			(unsigned long long)c->id, cuco_call_kind_name(c->kind), c->model,
			cuco_call_outcome_name(c->outcome), (long long)c->tokens_in, (long long)c->tokens_out,
			c->estimated ? " (estimated)" : "", c->cost_usd, c->reason[0] ? ": " : "", c->reason);
	}
	for (size_t i = 0; i < job->nrefusals; i++)
		printf("refused        r%llu %s: %s\n", (unsigned long long)job->refusals[i].id,
			cuco_call_kind_name(job->refusals[i].kind), job->refusals[i].reason);
}

static void print_texts(const struct show_job *job)
{
	const char *titles[3] = { "source", "prompt", "reply" };
	for (int i = 0; i < 3; i++)
		if (job->texts[i])
			printf("\n--- %s ---\n%s%s", titles[i], job->texts[i],
				job->texts[i][0] && job->texts[i][strlen(job->texts[i]) - 1] == '\n' ? "" : "\n");
}

static void print_refusal(const struct show_job *job)
{
	const cuco_refusal *r = &job->ref;
	printf("refusal        r%llu\n", (unsigned long long)r->id);
	printf("kind           %s\n", cuco_call_kind_name(r->kind));
	if (r->parent)
		printf("parent         %llu\n", (unsigned long long)r->parent);
	if (r->island >= 0)
		printf("island         %d\n", r->island);
	printf("model          %s\n", r->model);
	printf("reason         %s\n", r->reason);
	print_calls(job);
	print_texts(job);
}

static void when_text(double t, char *buf, size_t size)
{
	time_t s = (time_t)t;
	struct tm tm;
	if (!localtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		cuco_strlcpy(buf, "-", size);
}

/* A rate in GFLOP/s as people read it: 40 GFLOP/s, 989 TFLOP/s. */
static void rate_text(double gflops, char *buf, size_t size)
{
	if (gflops >= 1000)
		snprintf(buf, size, "%.4g TFLOP/s", gflops / 1000);
	else
		snprintf(buf, size, "%.4g GFLOP/s", gflops);
}

/* "pinned by ann@box at 2026-...", from the mark's event (marks: 0 pin,
 * 1 reject); the event's kind must be the mark the record shows. */
static void print_mark(const struct show_job *job, int k, const char *label, cuco_event_kind kind,
	const char *what)
{
	const cuco_event *ev = &job->marks[k];
	char when[32];
	if (ev->kind != kind) {
		printf("%-14s %s\n", label, what);
		return;
	}
	when_text(ev->time, when, sizeof when);
	printf("%-14s by %s at %s%s%s\n", label, ev->author, when, *what ? ": " : "", what);
}

/* One line per measurement: when, which session, what it found (a
 * failure's reason whole: a refusal names its defence). */
static void print_measurements(const struct show_job *job)
{
	printf("%-14s %zu\n", "measurements", job->nmeasurements);
	for (size_t i = 0; i < job->nmeasurements; i++) {
		const cuco_measurement *m = &job->measurements[i];
		char when[32], line[700];
		when_text(m->time, when, sizeof when);
		cuco_measurement_line(m, line, sizeof line);
		printf("  %-3u %s  %s\n", m->seq, when, line);
	}
}

/* The fraction of peak, and what the peaks were: the link or memory the
 * bytes cross, and the arithmetic rate. */
static void print_peak(const struct show_job *job)
{
	double f = job->cand.timing.peak_fraction;
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
	char rate[32];
	if (cJSON_IsNumber(gf) && gf->valuedouble > 0) {
		rate_text(gf->valuedouble, rate, sizeof rate);
		printf("%s%s)", cJSON_IsNumber(bw) && bw->valuedouble > 0 ? "; " : "  (of ", rate);
	}
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
	if (c->pinned)
		print_mark(job, 0, "pinned", CUCO_EVENT_PIN, "");
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
	print_num("median", c->timing.median_us, " us");
	print_num("min", c->timing.min_us, " us");
	print_num("p90", c->timing.p90_us, " us");
	printf("%-14s %d\n", "samples", c->timing.samples);
	if (isfinite(c->timing.spread))  /* a fraction of the median: 7.206 is 720.6 % */
		printf("%-14s %.1f%%\n", "spread", 100 * c->timing.spread);
	else
		printf("%-14s -\n", "spread");
	char sp[64];
	cuco_speedup_text(c->speedup, c->speedup_lo, c->speedup_hi, c->rounds, !cuco_utf8_locale(),
		sp, sizeof sp);
	if (c->rounds >= 2)
		printf("%-14s %s, %d paired rounds, %.4g%% interval: %s\n", "speedup", sp, c->rounds,
			100 * c->confidence, c->verdict ? cuco_verdict_name(c->verdict) : "-");
	else
		printf("%-14s %s%s\n", "speedup", sp, c->rounds == 1 ? " (one screening measurement)" : "");
	print_num("score", c->score, "");
	print_peak(job);
	print_num("max error", c->timing.max_error, "");
	if (c->timing.host_counted)
		printf("%-14s %lld (host communication calls in its steps, all ranks)\n", "host calls",
			(long long)c->timing.host_calls);
	else
		printf("%-14s -\n", "host calls");
	cuco_phase ph[CUCO_MAX_PHASES];
	double measured[CUCO_MAX_PHASES];
	int nph = cuco_phases_view(c, ph, measured);
	for (int i = 0; i < nph; i++)
		if (measured[i] > ph[i].us)
			printf("phase %-8s %.4g us (measured %.4g us, more than its whole: %s)\n", ph[i].name,
				ph[i].us, measured[i], strcmp(ph[i].name, "exposed_comm") == 0 && ph[i].us <
				c->timing.median_us ? "comm; the rest is waiting outside compute and comm"
				: "the median latency");
		else
			printf("phase %-8s %.4g us\n", ph[i].name, ph[i].us);
	if (c->status == CUCO_STATUS_FAILED)
		printf("failed         %s (%s)\n%s\n", c->failure.stage, c->failure.error_class,
			c->failure.excerpt);
	if (c->status == CUCO_STATUS_REJECTED)
		print_mark(job, 1, "rejected", CUCO_EVENT_REJECT, c->reject_reason);
	if (c->model[0])
		printf("model          %s  tokens %lld+%lld  cost $%.4f\n", c->model,
			(long long)c->tokens_prompt, (long long)c->tokens_completion, c->cost_usd);
	print_measurements(job);
	printf("source         %s\n", c->source_hash);
	print_calls(job);
	print_texts(job);
}

static void print_json(const struct show_job *job)
{
	cJSON *o = job->refusal ? cuco_refusal_to_json(&job->ref) : cuco_candidate_to_json(&job->cand);
	const char *keys[3] = { "source", "prompt", "reply" };
	for (int i = 0; i < 3; i++)
		if (job->texts[i])
			cJSON_AddStringToObject(o, keys[i], job->texts[i]);
	if (job->prompt || job->refusal) {
		cJSON *calls = cJSON_AddArrayToObject(o, "calls");
		for (size_t i = 0; i < job->ncalls; i++)
			cJSON_AddItemToArray(calls, cuco_call_to_json(&job->calls[i]));
	}
	cJSON *pk = job->peak ? cJSON_Parse(job->peak) : NULL;
	if (pk)
		cJSON_AddItemToObject(o, "peak", pk);
	static const cuco_event_kind mark_kind[2] = { CUCO_EVENT_PIN, CUCO_EVENT_REJECT };
	static const char *const marks[2][2] = { { "pinned_by", "pinned_at" },
		{ "rejected_by", "rejected_at" } };
	for (int k = 0; !job->refusal && k < 2; k++)
		if (job->marks[k].kind == mark_kind[k] && (k ? job->cand.status ==
				CUCO_STATUS_REJECTED : job->cand.pinned)) {
			cJSON_AddStringToObject(o, marks[k][0], job->marks[k].author);
			cJSON_AddNumberToObject(o, marks[k][1], job->marks[k].time);
		}
	if (!job->refusal) {
		cJSON *ms = cJSON_AddArrayToObject(o, "measurements");
		for (size_t i = 0; i < job->nmeasurements; i++)
			cJSON_AddItemToArray(ms, cuco_measurement_to_json(&job->measurements[i]));
	}
	if (job->prompt && !job->refusal) {
		cJSON *refusals = cJSON_AddArrayToObject(o, "refusals");
		for (size_t i = 0; i < job->nrefusals; i++)
			cJSON_AddItemToArray(refusals, cuco_refusal_to_json(&job->refusals[i]));
	}
	char *text = cJSON_Print(o);
	puts(text);
	free(text);
	cJSON_Delete(o);
}

/* "rN": refusal N. */
static bool refusal_id(const char *text, uint64_t *id)
{
	if (text[0] != 'r' || !isdigit((unsigned char)text[1]))
		return false;
	char *end = NULL;
	unsigned long long v = strtoull(text + 1, &end, 10);
	if (*end || v == 0)
		return false;
	*id = v;
	return true;
}

static int show_exec(int argc, char **argv)
{
	bool flag[O_JSON + 1] = { 0 };
	int o, rc;
	cmd_args a = CMD_ARGS(&cmd_show, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0)
		flag[o] = true;
	if (!cmd_operands(&a, 1, 1, "expected one candidate id (or rN, a refusal)"))
		return a.rc;
	struct show_job *job = cuco_xcalloc(1, sizeof *job);
	job->source = flag[O_SOURCE];
	job->prompt = flag[O_PROMPT];
	job->json = flag[O_JSON];
	cuco_store *st;
	if ((rc = cmd_open_store(a.run, CUCO_STORE_RDONLY, &st))) {
		free(job);
		return rc;
	}
	cuco_err err = { 0 };
	job->refusal = refusal_id(a.args[0], &job->id);
	rc = job->refusal ? CUCO_OK : cmd_resolve_id(st, a.args[0], &job->id);
	if (rc == CUCO_OK && (rc = cuco_store_read(st, show_txn, job, &err)))
		rc = cmd_fail(&err);
	cuco_store_close(st);
	if (rc == CUCO_OK && job->json)
		print_json(job);
	else if (rc == CUCO_OK && job->refusal)
		print_refusal(job);
	else if (rc == CUCO_OK)
		print_text(job);
	for (int i = 0; i < 3; i++)
		free(job->texts[i]);
	free(job->calls);
	free(job->refusals);
	free(job->measurements);
	free(job->peak);
	free(job);
	return rc;
}

const cuco_cmd cmd_show = { "show", "ID|rN",
	"show one candidate (directive, metrics, phases, failure, every measurement, source) or one "
	"refusal", show_exec, CMD_OPTIONS(options),
	"ID is a number, or best, baseline or seed; rN is refusal N (a proposal no\n"
	"candidate came of: its prompt and replies with --prompt).\n" };
