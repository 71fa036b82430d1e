/* test_evolve_run.c — `cuco run --strategy evolve` end to end against the
 * scripted model server: the fast path on the CPU workload (stage A, a
 * stage-B attempt that does not compile and its error fed back, a passing
 * stage B) and then the islands with migration, meta summaries and the
 * explore→exploit switch, every candidate evaluated for real; a run with
 * no model (the shipped seed and the tuner); and a resumed run that
 * carries a person's hint and rejection into its prompts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_evolve_run.h"

static char root[1024];   /* the workloads folder */
static char toy[1100];     /* the engine's toy fixture */

static char *workload_file(const char *workload, const char *file)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s/%s", root, workload, file);
	return slurp(path);
}

static const char cpu_directive[] = "DIRECTIVE:\nbackend: rma\nissuer: one\nplacement: after\n"
	"sync: fence\ngranularity: 4\ntile: 256\n\n";
static const char toy_directive[] = "DIRECTIVE:\nbackend: msg\nissuer: one\nplacement: after\n"
	"sync: fence\ngranularity: 1\n\n";

/* A whole program as a reply: the directive, then one fenced file. */
static char *full_reply(const char *program)
{
	return program_reply(cpu_directive, program);
}

/* An edit that adds a distinct, harmless line after `anchor` (a line that
 * every descendant keeps), with a numbered recommendation in its
 * description so that the same reply also serves a meta summary. */
static char *variant_reply(const char *directive, const char *anchor, int k)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s<NAME>variant_%d</NAME>\n<DESCRIPTION>Variant %d.\n"
		"1. Keep the per-chunk structure; variant %d adds a constant.\n</DESCRIPTION>\n<DIFF>\n"
		"<<<<<<< SEARCH\n%s=======\n%s\tenum { CUCO_VARIANT_%d = %d };\n>>>>>>> REPLACE\n</DIFF>\n",
		directive, k, k, k, anchor, anchor, k, k);
	return b.data;
}

static bool is_temperature(double t, const double *set)
{
	for (int i = 0; i < 3; i++)
		if (fabs(t - set[i]) < 1e-9)
			return true;
	return false;
}

typedef struct events {
	int migrate, phase, meta, fastpath;
	char fastpath_text[512];
	int moved;                  /* candidates moved, by the migrate events */
	uint64_t moved_id[32];      /* and where each went last */
	int moved_to[32];
} events;

/* "generation G: N moved: #ID A->B #ID A->B …" */
static void parse_moves(events *e, const char *text)
{
	const char *p = strchr(text, '#');
	unsigned long long id;
	int from, to, used;
	while (p && sscanf(p, "#%llu %d->%d%n", &id, &from, &to, &used) == 3) {
		int k = 0;
		while (k < e->moved && e->moved_id[k] != id)
			k++;
		if (k == e->moved && k < 32)
			e->moved_id[e->moved++] = id;
		if (k < 32)
			e->moved_to[k] = to;
		p = strchr(p + used, '#');
	}
}

static int event_one(const cuco_event *ev, void *arg)
{
	events *e = arg;
	if (strcmp(ev->name, "migrate") == 0) {
		e->migrate++;
		parse_moves(e, ev->text);
	}
	e->phase += strcmp(ev->name, "phase") == 0;
	e->meta += strcmp(ev->name, "meta") == 0;
	if (strcmp(ev->name, "fastpath") == 0) {
		e->fastpath++;
		cuco_strlcpy(e->fastpath_text, ev->text, sizeof e->fastpath_text);
	}
	return 0;
}

typedef struct islands_seen {
	int n;
	int migrations, members;
	char phase[4][16];
	char *meta;
} islands_seen;

static int island_one(const cuco_island *isl, void *arg)
{
	islands_seen *s = arg;
	if (isl->id >= 0 && isl->id < 4)
		cuco_strlcpy(s->phase[isl->id], isl->phase, sizeof s->phase[0]);
	s->n++;
	s->migrations += isl->migrations;
	s->members += isl->members;
	return 0;
}

static int after_txn(cuco_txn *txn, void *arg)
{
	void **a = arg;
	int rc = cuco_event_each(txn, 1, event_one, a[0]);
	if (rc == CUCO_OK)
		rc = cuco_island_each(txn, island_one, a[1]);
	if (rc == CUCO_OK) {
		islands_seen *s = a[1];
		rc = cuco_meta_get(txn, "evolve-meta", &s->meta);
		if (rc == CUCO_ENOTFOUND)
			rc = CUCO_OK;
	}
	return rc;
}

static void read_after(cuco_store *st, events *ev, islands_seen *isl)
{
	memset(ev, 0, sizeof *ev);
	memset(isl, 0, sizeof *isl);
	void *a[2] = { ev, isl };
	cuco_err err = { 0 };
	if (cuco_store_read(st, after_txn, a, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
}

static const double explore_t[3] = { 0.2, 0.5, 0.8 }, exploit_t[3] = { 0.0, 0.2, 0.5 };

static void test_fastpath_then_islands(void **state)
{
	(void)state;
	/* The CPU workload needs Open MPI; without it there is nothing to run. */
	if (system("command -v mpicc >/dev/null && command -v mpirun >/dev/null") != 0)
		skip();
	char *baseline = workload_file("cpu-gemm-allgather", "baseline.c");
	char *seed = workload_file("cpu-gemm-allgather", "seed.c");
	const char anchor[] = "static void transfer(layer *l, int chunk)\n{\n";
	assert_non_null(strstr(seed, anchor));
	/* Stage A keeps the baseline's collective; the first stage-B attempt
	 * does not compile; the second is a correct device-initiated program. */
	cuco_buf broken = { 0 };
	const char *at = strstr(seed, anchor) + strlen(anchor);
	cuco_buf_append(&broken, seed, (size_t)(at - seed));
	cuco_buf_puts(&broken, "\tthis is not C;\n");
	cuco_buf_puts(&broken, at);
	cuco_buf stage_a = { 0 };
	cuco_buf_printf(&stage_a, "/* stage A: windows allocated, collective kept */\n%s", baseline);
	char *texts[12];
	int n = 0;
	texts[n++] = full_reply(stage_a.data);
	texts[n++] = full_reply(broken.data);
	texts[n++] = full_reply(seed);
	for (int k = 1; n < 12; k++)
		texts[n++] = variant_reply(cpu_directive, anchor, k);
	e2e tc;
	e2e_begin(&tc, texts, n, "[evolve]\ngenerations = 3\nmigration_interval = 1\n"
		"meta_interval = 1\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "6", "--size", "small", NULL };
	e2e_run(&tc, "cpu-gemm-allgather", args);
	const run_rows rows = tc.rows;
	const cuco_candidate *fp[3] = { 0 }, *base = NULL, *seed_row = NULL;
	int nfp = 0, nllm = 0;
	for (size_t i = 0; i < rows.n; i++) {
		const cuco_candidate *c = &rows.c[i];
		/* Every candidate was evaluated for real: measured, or failed at a stage. */
		assert_true(c->status == CUCO_STATUS_DONE || c->status == CUCO_STATUS_FAILED);
		if (c->status == CUCO_STATUS_DONE)
			assert_true(c->timing.median_us > 0 && c->timing.samples > 0);
		else
			assert_true(c->failure.stage[0] != '\0');
		if (c->origin == CUCO_ORIGIN_BASELINE)
			base = c;
		if (c->origin == CUCO_ORIGIN_SEED)
			seed_row = c;
		if (c->origin == CUCO_ORIGIN_FASTPATH && nfp < 3)
			fp[nfp++] = c;
		if (c->origin == CUCO_ORIGIN_LLM_DIFF || c->origin == CUCO_ORIGIN_LLM_FULL ||
				c->origin == CUCO_ORIGIN_LLM_CROSS) {
			nllm++;
			assert_true(c->island == 0 || c->island == 1);
			assert_true(c->prompt_hash[0] && c->reply_hash[0]);
			assert_string_equal(c->model, "test");
			assert_true(c->tokens_prompt >= 1000);
		}
	}
	assert_non_null(base);
	assert_non_null(seed_row);
	assert_int_equal(nfp, 3);
	if (nllm != 3) {
		for (size_t i = 0; i < rows.n; i++)
			fprintf(stderr, "#%llu %s %s: %s\n", (unsigned long long)rows.c[i].id,
				cuco_origin_name(rows.c[i].origin), cuco_status_name(rows.c[i].status),
				rows.c[i].note);
		fail_msg("%d LLM children, not 3:\n%s", nllm, tc.out);
	}
	/* Stage A from the baseline passed; stage B's first attempt failed to
	 * compile; the second edited that attempt and passed. */
	assert_int_equal(fp[0]->parents[0], base->id);
	assert_int_equal(fp[0]->status, CUCO_STATUS_DONE);
	assert_int_equal(fp[0]->island, -1);  /* host collectives: no island's parent */
	assert_non_null(strstr(fp[0]->note, "fast path stage A 1/5"));
	assert_int_equal(fp[1]->status, CUCO_STATUS_FAILED);
	assert_string_equal(fp[1]->failure.stage, "compile");
	assert_int_equal(fp[1]->parents[0], fp[0]->id);
	assert_int_equal(fp[2]->status, CUCO_STATUS_DONE);
	assert_int_equal(fp[2]->parents[0], fp[1]->id);
	assert_true(fp[2]->island >= 0);  /* island 0's, unless a migration moved it */
	assert_non_null(strstr(fp[2]->note, "fast path stage B 2/10"));

	events ev;
	islands_seen isl;
	read_after(tc.st, &ev, &isl);
	assert_int_equal(ev.fastpath, 1);
	assert_non_null(strstr(ev.fastpath_text, "device-initiated seed #"));
	assert_true(ev.migrate >= 1);
	/* Every move is in the store: the candidate's island and the islands'
	 * counters. */
	assert_true(ev.moved >= 1);
	for (int k = 0; k < ev.moved; k++)
		for (size_t i = 0; i < rows.n; i++)
			if (rows.c[i].id == ev.moved_id[k])
				assert_int_equal(rows.c[i].island, ev.moved_to[k]);
	int on_islands = 0;
	for (size_t i = 0; i < rows.n; i++)
		on_islands += rows.c[i].island >= 0 && rows.c[i].origin != CUCO_ORIGIN_SEED;
	assert_int_equal(isl.members, on_islands);  /* moves keep the counts right */
	assert_true(isl.migrations >= ev.moved);
	assert_true(ev.meta >= 1);
	assert_int_equal(ev.phase, 1);
	assert_int_equal(isl.n, 2);
	assert_string_equal(isl.phase[0], "exploit");
	assert_string_equal(isl.phase[1], "exploit");
	assert_non_null(isl.meta);
	assert_non_null(strstr(isl.meta, "1. Keep the per-chunk structure"));

	/* What the model was asked: the stages in order, the compile error
	 * fed back, then island edits at the phases' temperatures. */
	int nb = 0;
	cJSON **b = server_bodies(&tc.s, &nb);
	assert_true(nb >= 8);
	assert_non_null(strstr(body_message(b[0], "user"), "Stage A"));
	assert_non_null(strstr(body_message(b[1], "user"), "Stage B"));
	const char *fix = body_message(b[2], "user");
	assert_non_null(strstr(fix, "Attempt 1 of stage B failed: compile stage"));
	assert_non_null(strstr(fix, "this is not C"));
	int edits = 0, metas = 0;
	for (int i = 3; i < nb; i++) {
		const char *sys = body_message(b[i], "system");
		double t = cJSON_GetObjectItemCaseSensitive(b[i], "temperature")->valuedouble;
		if (strstr(sys, "You review an evolutionary search")) {
			metas++;
			continue;
		}
		/* Generations 0 and 1 explore (40 % of 3), generation 2 exploits. */
		assert_true(is_temperature(t, edits < 2 ? explore_t : exploit_t));
		edits++;
	}
	assert_int_equal(edits, 3);
	assert_int_equal(metas, ev.meta);
	free_bodies(b, nb);

	char *logtext = e2e_log(&tc);
	assert_non_null(strstr(logtext, "fastpath: device-initiated seed"));
	free(logtext);
	free(isl.meta);
	e2e_end(&tc);
	free(baseline);
	free(seed);
	cuco_buf_free(&broken);
	cuco_buf_free(&stage_a);
}

static void test_no_model(void **state)
{
	(void)state;
	e2e tc;
	e2e_begin(&tc, NULL, 0, "[evolve]\nislands = 2\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "3", NULL };
	e2e_run(&tc, toy, args);
	const run_rows rows = tc.rows;
	int tune = 0, islands[2] = { 0 };
	for (size_t i = 0; i < rows.n; i++)
		if (rows.c[i].origin == CUCO_ORIGIN_TUNE) {
			tune++;
			/* Evaluated: the toy's shm with fence is wrong on purpose. */
			assert_true(rows.c[i].status == CUCO_STATUS_DONE ||
				rows.c[i].status == CUCO_STATUS_FAILED);
			islands[rows.c[i].island]++;
			assert_non_null(strstr(rows.c[i].note, "no model is configured"));
		}
	assert_int_equal(tune, 3);
	assert_true(islands[0] >= 1 && islands[1] >= 1);  /* generations go round the islands */
	events ev;
	islands_seen isl;
	read_after(tc.st, &ev, &isl);
	assert_int_equal(ev.fastpath, 1);
	assert_non_null(strstr(ev.fastpath_text, "no model is configured; the workload's shipped "
		"seed is used"));
	char *logtext = e2e_log(&tc);
	assert_non_null(strstr(logtext, "the islands run the directive tuner alone"));
	assert_non_null(strstr(logtext, "the workload's shipped seed is used"));
	free(logtext);
	free(isl.meta);
	e2e_end(&tc);
}

/* A person's rejection and hint, queued between two sessions, reach the
 * resumed session's prompts, and so do the first session's meta
 * recommendations; the rejected candidate is never a parent; the resumed
 * generations continue the phase schedule; a third session still gives
 * the hint. */
static void test_resume_hint_reject(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	char *texts[10];
	for (int k = 0; k < 10; k++)
		texts[k] = variant_reply(toy_directive, anchor, k + 1);
	e2e tc;
	e2e_begin(&tc, texts, 10, "[evolve]\nfastpath = false\ngenerations = 5\nmeta_interval = 2\n");
	const char *first[] = { "--strategy", "evolve", "--budget", "3", NULL };
	e2e_run(&tc, toy, first);
	const cuco_candidate *kids[3];
	assert_int_equal(llm_children(&tc.rows, kids, 3), 3);
	uint64_t rejected = kids[2]->id;  /* the last child */

	const char *bin = getenv("CUCO_BIN");
	char cmd[1024], id[24];
	snprintf(id, sizeof id, "%llu", (unsigned long long)rejected);
	snprintf(cmd, sizeof cmd, "'%s' reject --run '%s' --reason 'reads past the window' %s "
		">/dev/null && '%s' hint --next-session --run '%s' 'keep the rows in the shared window' "
		">/dev/null",
		bin, tc.r.run, id, bin, tc.r.run);
	assert_int_equal(system(cmd), 0);

	const char *second[] = { "--strategy", "evolve", "--budget", "5", NULL };
	e2e_run(&tc, toy, second);
	const run_rows rows = tc.rows;
	int children = 0;
	for (size_t i = 0; i < rows.n; i++)
		if (rows.c[i].id > rejected) {
			children++;
			assert_int_not_equal(rows.c[i].parents[0], rejected);
			assert_int_not_equal(rows.c[i].parents[1], rejected);
		}
	assert_int_equal(children, 2);

	/* Requests: edits of generations 0, 1; a meta summary and the edit of
	 * generation 2; then resumed: the edit of 3; a meta summary and the
	 * edit of 4. */
	int nb = 0;
	cJSON **b = server_bodies(&tc.s, &nb);
	assert_int_equal(nb, 7);
	static const bool meta[7] = { false, false, true, false, false, true, false };
	for (int i = 0, g = 0; i < nb; i++) {
		bool is_meta = strstr(body_message(b[i], "system"), "You review an evolutionary search");
		assert_int_equal(is_meta, meta[i]);
		if (is_meta)
			continue;
		/* Generations 0 and 1 explore (40 % of 5); 2, 3 and 4 exploit. */
		double t = cJSON_GetObjectItemCaseSensitive(b[i], "temperature")->valuedouble;
		assert_true(is_temperature(t, g++ < 2 ? explore_t : exploit_t));
	}
	/* The resumed session's first edit has the first session's
	 * recommendations (the meta reply was the third scripted reply). */
	char *first_resumed = cJSON_PrintUnformatted(b[4]);
	assert_non_null(strstr(first_resumed, "variant 3 adds a constant"));
	free(first_resumed);
	/* By the last request the engine has applied both commands. */
	char *last = cJSON_PrintUnformatted(b[nb - 1]);
	assert_non_null(strstr(last, "keep the rows in the shared window"));
	assert_non_null(strstr(last, "reads past the window"));
	free(last);
	free_bodies(b, nb);

	/* A third session, one generation longer (the config's 5 are done):
	 * the hint the second one took is still given. */
	const char *third[] = { "--strategy", "evolve", "--budget", "6", "--generations", "6", NULL };
	e2e_run(&tc, toy, third);
	b = server_bodies(&tc.s, &nb);
	assert_true(nb > 7);
	last = cJSON_PrintUnformatted(b[nb - 1]);
	assert_non_null(strstr(last, "keep the rows in the shared window"));
	free(last);
	free_bodies(b, nb);
	e2e_end(&tc);
}

/* A token budget in the config ends the run cleanly once spent: each
 * scripted call costs 1100 tokens, so the third one spends 2500. */
static void test_llm_budget(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	char *texts[6];
	for (int k = 0; k < 6; k++)
		texts[k] = variant_reply(toy_directive, anchor, k + 1);
	e2e tc;
	e2e_begin(&tc, texts, 6, "[evolve]\nfastpath = false\n");
	/* The client's budget is a top-level key: put it before the sections. */
	char *cfg = slurp(tc.r.config);
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "budget_tokens = 2500\n%s", cfg);
	assert_int_equal(cuco_write_file(tc.r.config, b.data, b.len, NULL), CUCO_OK);
	const char *args[] = { "--strategy", "evolve", "--budget", "6", NULL };
	e2e_run(&tc, toy, args);
	const cuco_candidate *kids[6];
	assert_int_equal(llm_children(&tc.rows, kids, 6), 3);
	int nreq = 0;
	free(llm_server_requests(&tc.s, &nreq));
	assert_int_equal(nreq, 3);
	char *logtext = e2e_log(&tc);
	assert_non_null(strstr(logtext, "the model budget is spent"));
	free(logtext);
	e2e_end(&tc);
	free(cfg);
	cuco_buf_free(&b);
}

/* The model and its budget from the command line alone: `--llm` replaces
 * the config file's models (there are none here), implies the evolve
 * strategy, `--max-tokens` ends the run cleanly like budget_tokens, and
 * `--generations` sets the phase schedule over the search's length. */
static void test_llm_flags(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	char *texts[6];
	for (int k = 0; k < 6; k++)
		texts[k] = variant_reply(toy_directive, anchor, k + 1);
	e2e tc;
	e2e_begin(&tc, texts, 6, "");
	run_env_config(&tc.r, NULL, "retries = 0\n[evolve]\nfastpath = false\n");
	char spec[160];
	snprintf(spec, sizeof spec, "vllm:test@%s", tc.s.url);
	/* Four generations in all: 0 and 1 explore (40 % of 4), the later
	 * edits exploit — without the flag the budget's 6 would explore 3.
	 * The token budget ends the run after three. */
	const char *args[] = { "--llm", spec, "--max-tokens", "2500", "--budget", "6",
		"--generations", "4", NULL };
	e2e_run(&tc, toy, args);
	const cuco_candidate *kids[6];
	assert_int_equal(llm_children(&tc.rows, kids, 6), 3);
	assert_string_equal(kids[0]->model, "test");
	int nb = 0;
	cJSON **b = server_bodies(&tc.s, &nb);
	assert_int_equal(nb, 3);
	for (int i = 0; i < nb; i++)
		assert_true(is_temperature(cJSON_GetObjectItemCaseSensitive(b[i], "temperature")->valuedouble,
			i < 2 ? explore_t : exploit_t));
	free_bodies(b, nb);
	events ev;
	islands_seen isl;
	read_after(tc.st, &ev, &isl);
	assert_true(ev.phase >= 1);  /* the switch to exploit happened within 3 generations */
	free(isl.meta);
	char *logtext = e2e_log(&tc);
	assert_non_null(strstr(logtext, "the model budget is spent"));
	free(logtext);
	e2e_end(&tc);
}

/* Stopping a run abandons the model call in flight: the first call meets a
 * 429 asking for 30 s, and SIGTERM a moment later ends the run in seconds,
 * not after the wait. */
static void test_stop_cancels_call(void **state)
{
	(void)state;
	llm_server srv;
	assert_int_equal(llm_server_start(&srv, "{\"replies\": [{\"status\": 429, \"retry_after\": \"30\"}]}"), 0);
	run_env r;
	run_env_new(&r);
	char cfg[512];
	snprintf(cfg, sizeof cfg, "retries = 3\n[model test]\nprovider = openai\nmodel = test\nurl = %s\n"
		"api_key_env =\n[evolve]\nfastpath = false\n", srv.url);
	assert_int_equal(cuco_write_file(r.config, cfg, strlen(cfg), NULL), CUCO_OK);
	const char *args[] = { "--strategy", "evolve", "--budget", "4", NULL };
	pid_t pid = spawn_cuco(&r, toy, args);
	int nreq = 0;
	struct timespec tick = { 0, 50 * 1000000L };
	for (int i = 0; i < 400 && nreq == 0; i++, nanosleep(&tick, NULL))
		free(llm_server_requests(&srv, &nreq));
	assert_int_equal(nreq, 1);  /* the call is now waiting out its Retry-After */
	nanosleep(&(struct timespec){ 0, 300 * 1000000L }, NULL);
	double t0 = cuco_mono();
	kill(pid, SIGTERM);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	double waited = cuco_mono() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != CUCO_EXIT_STOPPED)
		fail_msg("cuco run ended with status %d:\n%s", status, slurp(r.out));
	if (waited > 10)
		fail_msg("cuco run took %.1f s to stop: the model call was not cancelled", waited);
	llm_server_stop(&srv);
	run_env_free(&r);
}

/* An island whose members all failed is in fix mode: its next parent is
 * a failed member and the model is asked to fix it. */
static void test_fix_mode(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	/* shm with fence is the toy's wrong answer: island 1's first child fails. */
	static const char wrong[] = "DIRECTIVE:\nbackend: shm\nissuer: one\nplacement: after\n"
		"sync: fence\ngranularity: 1\n\n";
	char *texts[4] = { variant_reply(toy_directive, anchor, 1), variant_reply(wrong, anchor, 2),
		variant_reply(toy_directive, anchor, 3), variant_reply(toy_directive, anchor, 4) };
	e2e tc;
	e2e_begin(&tc, texts, 4, "[evolve]\nfastpath = false\nrepair = false\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "4", NULL };
	e2e_run(&tc, toy, args);
	const cuco_candidate *kids[4];
	assert_int_equal(llm_children(&tc.rows, kids, 4), 4);
	assert_int_equal(kids[1]->island, 1);
	assert_int_equal(kids[1]->status, CUCO_STATUS_FAILED);
	assert_int_equal(kids[3]->island, 1);
	assert_int_equal(kids[3]->parents[0], kids[1]->id);
	assert_non_null(strstr(kids[3]->note, "fix mode (island 1 had no correct candidate)"));
	assert_int_equal(kids[3]->status, CUCO_STATUS_DONE);
	assert_null(strstr(kids[2]->note, "fix mode"));  /* island 0 has the seed */
	int nb = 0;
	cJSON **b = server_bodies(&tc.s, &nb);
	assert_int_equal(nb, 4);
	assert_non_null(strstr(body_message(b[3], "user"), "No program of this island is correct yet"));
	assert_null(strstr(body_message(b[2], "user"), "No program of this island is correct yet"));
	free_bodies(b, nb);
	e2e_end(&tc);
}

typedef struct kinds_seen {
	int n;
	cuco_call_kind kind[8];
	uint64_t candidate[8];
} kinds_seen;

static int kind_one(const cuco_call *c, void *arg)
{
	kinds_seen *k = arg;
	if (k->n < 8) {
		k->kind[k->n] = c->kind;
		k->candidate[k->n] = c->candidate;
	}
	k->n++;
	return 0;
}

static int kinds_txn(cuco_txn *txn, void *arg)
{
	return cuco_call_each(txn, 1, kind_one, arg);
}

/* A failed child gets one repair turn, told its first error (issue 26:
 * 0 of 26 edit replies compiled, and none was mended); the repair is a
 * call of its own kind, and `cuco report` counts the repairs that came
 * out correct. */
static void test_repair(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	cuco_buf broken = { 0 }, mend = { 0 };
	cuco_buf_printf(&broken, "%s<NAME>oops</NAME>\n<DIFF>\n<<<<<<< SEARCH\n%s=======\n%s"
		"\tthis is not C;\n>>>>>>> REPLACE\n</DIFF>\n", toy_directive, anchor, anchor);
	cuco_buf_printf(&mend, "%s<NAME>mended</NAME>\n<DIFF>\n<<<<<<< SEARCH\n\tthis is not C;\n"
		"=======\n\tenum { MENDED = 1 };\n>>>>>>> REPLACE\n</DIFF>\n", toy_directive);
	char *texts[2] = { broken.data, mend.data };
	e2e tc;
	e2e_begin(&tc, texts, 2, "[evolve]\nfastpath = false\nislands = 1\ndirective_rate = 0\n"
		"meta_interval = 0\nmigration_interval = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "2", NULL };
	e2e_run(&tc, toy, args);
	const cuco_candidate *kids[2];
	assert_int_equal(llm_children(&tc.rows, kids, 2), 2);
	assert_int_equal(kids[0]->status, CUCO_STATUS_FAILED);
	assert_string_equal(kids[0]->failure.stage, "compile");
	char want[64];
	snprintf(want, sizeof want, "repair of #%llu: mended", (unsigned long long)kids[0]->id);
	assert_non_null(strstr(kids[1]->note, want));
	assert_int_equal(kids[1]->parents[0], kids[0]->id);
	assert_int_equal(kids[1]->status, CUCO_STATUS_DONE);
	assert_int_equal(kids[1]->origin, CUCO_ORIGIN_LLM_DIFF);
	kinds_seen k = { 0 };
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_read(tc.st, kinds_txn, &k, &err), CUCO_OK);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.kind[0], CUCO_CALL_PROPOSE);
	assert_int_equal(k.kind[1], CUCO_CALL_REPAIR);
	assert_int_equal(k.candidate[1], kids[1]->id);
	int nb = 0;
	cJSON **b = server_bodies(&tc.s, &nb);
	assert_int_equal(nb, 2);
	const char *u = body_message(b[1], "user");
	assert_non_null(strstr(u, "# Your task\nThe current program failed; its first error is below."));
	assert_non_null(strstr(u, "The first error: "));
	assert_non_null(strstr(strstr(u, "The first error: "), "error"));
	free_bodies(b, nb);
	char *report = cuco_output(&tc, "report");
	assert_non_null(strstr(report, "repairs    1 failed child mended, 1 correct\n"));
	assert_non_null(strstr(report, "  repair "));
	free(report);
	e2e_end(&tc);
}

/* A model's child that grew past the model's context (this stop's Qwen
 * run ended so, exit 3, when a longer child's repair prompt fit no
 * profile) costs its repair turn, not the run: the next proposal is made. */
static void test_parent_too_long(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	cuco_buf broken = { 0 };
	/* Declarations at file scope: a lean view shows them (it summarises
	 * function bodies outside the blocks, all of them in the toy's). */
	cuco_buf_printf(&broken, "%s<NAME>long</NAME>\n<DIFF>\n<<<<<<< SEARCH\n%s=======\n",
		toy_directive, anchor);
	for (int i = 0; i < 1500; i++)
		cuco_buf_printf(&broken, "int line_the_model_wrote_%04d = %d;\n", i, i);
	cuco_buf_printf(&broken, "%s\tthis is not C;\n", anchor);
	cuco_buf_puts(&broken, ">>>>>>> REPLACE\n</DIFF>\n");
	char *texts[2] = { broken.data, variant_reply(toy_directive, anchor, 2) };
	e2e tc;
	e2e_begin(&tc, texts, 2, "context = 4096\n[evolve]\nfastpath = false\nislands = 1\n"
		"directive_rate = 0\nmeta_interval = 0\nmigration_interval = 0\n");
	const char *args[] = { "--strategy", "evolve", "--budget", "2", NULL };
	e2e_run(&tc, toy, args);
	const cuco_candidate *kids[2];
	assert_int_equal(llm_children(&tc.rows, kids, 2), 2);
	assert_int_equal(kids[0]->status, CUCO_STATUS_FAILED);
	char *log = e2e_log(&tc);
	if (kids[1]->parents[0] == kids[0]->id)
		fail_msg("the repair was asked:\n%s", log);
	char want[64];
	snprintf(want, sizeof want, "repair of #%llu: parent #%llu: llm test: no prompt profile fits",
		(unsigned long long)kids[0]->id, (unsigned long long)kids[0]->id);
	if (!strstr(log, want))
		fail_msg("the log lacks `%s`:\n%s", want, log);
	free(log);
	e2e_end(&tc);
}

/* A pinned candidate is always an eligible parent, whatever its island:
 * with island 0's own members rejected, island 0's next parent can only
 * be island 1's pinned child. */
static void test_pinned_parent(void **state)
{
	(void)state;
	const char anchor[] = "int main(int argc, char **argv)\n{\n";
	char *texts[3];
	for (int k = 0; k < 3; k++)
		texts[k] = variant_reply(toy_directive, anchor, k + 1);
	e2e tc;
	e2e_begin(&tc, texts, 3, "[evolve]\nfastpath = false\n");
	const char *first[] = { "--strategy", "evolve", "--budget", "2", NULL };
	e2e_run(&tc, toy, first);
	const cuco_candidate *kids[2];
	assert_int_equal(llm_children(&tc.rows, kids, 2), 2);
	assert_int_equal(kids[0]->island, 0);
	assert_int_equal(kids[1]->island, 1);
	uint64_t x = kids[0]->id, y = kids[1]->id, seed = 0;
	for (size_t i = 0; i < tc.rows.n; i++)
		if (tc.rows.c[i].origin == CUCO_ORIGIN_SEED)
			seed = tc.rows.c[i].id;
	const char *bin = getenv("CUCO_BIN");
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "'%s' reject --run '%s' %llu >/dev/null && '%s' reject --run '%s' "
		"%llu >/dev/null && '%s' pin --run '%s' %llu >/dev/null", bin, tc.r.run,
		(unsigned long long)seed, bin, tc.r.run, (unsigned long long)x, bin, tc.r.run,
		(unsigned long long)y);
	assert_int_equal(system(cmd), 0);
	const char *second[] = { "--strategy", "evolve", "--budget", "3", NULL };
	e2e_run(&tc, toy, second);
	const cuco_candidate *all[3];
	assert_int_equal(llm_children(&tc.rows, all, 3), 3);
	assert_int_equal(all[2]->island, 0);
	assert_int_equal(all[2]->parents[0], y);
	e2e_end(&tc);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const char *w = getenv("CUCO_WORKLOADS");
	cuco_strlcpy(root, w ? w : "workloads", sizeof root);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_model),
		cmocka_unit_test(test_resume_hint_reject),
		cmocka_unit_test(test_llm_budget),
		cmocka_unit_test(test_llm_flags),
		cmocka_unit_test(test_stop_cancels_call),
		cmocka_unit_test(test_fix_mode),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_parent_too_long),
		cmocka_unit_test(test_pinned_parent),
		cmocka_unit_test(test_fastpath_then_islands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
