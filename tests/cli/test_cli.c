/* test_cli.c — the CLI against a run the test builds with the store API:
 * exit codes, one-line errors, and the fixed JSON shapes of ls and report;
 * and cuco init and cuco analyze on the project's test programs
 * (tests/programs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "../eval/util.h"

static char rundir[64];
/* Shell words put before cuco: where, and in what environment, it runs. */
static char before[512];

struct out { int status; char *stdout_text; char *stderr_text; };

/* Run `cuco ARGS` through the shell, capturing both streams. */
static struct out cuco(const char *fmt, ...)
{
	char args[1024], cmd[2048], errpath[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(errpath, sizeof errpath, "%s.stderr", rundir);
	snprintf(cmd, sizeof cmd, "%s'%s' %s 2>'%s'", before, getenv("CUCO_BIN"), args, errpath);
	struct out o = { 0 };
	o.stdout_text = capture_output(cmd, &o.status);
	size_t len;
	if (cuco_read_file(errpath, 1 << 20, &o.stderr_text, &len, NULL))
		o.stderr_text = strdup("");
	return o;
}

static void out_free(struct out *o)
{
	free(o->stdout_text);
	free(o->stderr_text);
}

/* One line on standard error, naming what is wrong. */
static void assert_one_line(const struct out *o, int status, const char *why)
{
	assert_int_equal(o->status, status);
	assert_has(o->stderr_text, why);
	const char *nl = strchr(o->stderr_text, '\n');
	if (!nl || nl[1] != '\0')
		fail_msg("not one line:\n%s", o->stderr_text);
}

static bool exists(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static const char peak_meta[] =
	"{\"bandwidth_gbs\":450,\"bandwidth_of\":\"NVLink per direction (hardware profile)\",\"gflops\":989000}";

static int put_peak(cuco_txn *txn, void *arg)
{
	return cuco_meta_put(txn, "peak", arg);
}

static int populate(cuco_txn *txn, void *arg)
{
	(void)arg;
	/* #3 keeps #2's source, as a tuner's candidate does: its directive is its change. */
	const char *texts[5] = { "int baseline;\n", "int seed;\nint x;\n", "int seed;\nint x;\n",
		"int seed;\nint z;\n", "broken(\n" };
	cuco_origin origins[5] = { CUCO_ORIGIN_BASELINE, CUCO_ORIGIN_SEED, CUCO_ORIGIN_TUNE,
		CUCO_ORIGIN_TUNE, CUCO_ORIGIN_TUNE };
	double medians[5] = { 1000, 900, 800, 700, NAN };
	for (int i = 0; i < 5; i++) {
		cuco_candidate c;
		memset(&c, 0, sizeof c);
		c.island = i == 0 ? -1 : 0;
		c.origin = origins[i];
		if (i >= 2) {
			c.nparents = 1;
			c.parents[0] = 2;
		}
		c.status = isnan(medians[i]) ? CUCO_STATUS_FAILED : CUCO_STATUS_DONE;
		c.timing.median_us = c.timing.min_us = c.timing.p90_us = medians[i];
		c.speedup = 1000 / medians[i];
		c.score = c.speedup;
		c.rounds = 1;
		if (i == 2) {  /* confirmed in paired rounds, and crowned below */
			c.speedup = c.score = 1.24;
			c.speedup_lo = 1.15;
			c.speedup_hi = 1.33;
			c.confidence = 0.995;
			c.rounds = 12;
			c.verdict = CUCO_VERDICT_FASTER;
		}
		c.timing.max_error = c.timing.peak_fraction = c.timing.spread = NAN;
		if (i == 3)
			c.timing.peak_fraction = 0.61;
		strcpy(c.directive.backend, "rma");
		snprintf(c.directive.granularity, sizeof c.directive.granularity, "%d", 1 << i);
		if (c.status == CUCO_STATUS_FAILED) {
			strcpy(c.failure.stage, "compile");
			strcpy(c.failure.error_class, "compile-error");
			strcpy(c.failure.excerpt, "seed.c:1: error: expected ')'");
		}
		int rc = cuco_source_put(txn, texts[i], strlen(texts[i]), c.source_hash);
		if (!rc)
			rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
	}
	/* #4 screened fastest, but only #3 was crowned: the best is #3. #2 was
	 * crowned before it and lapsed, refused when measured again; #3 was
	 * revisited and stands. The last session left #4 without a verdict. */
	cuco_revisit lapsed = { 2, true, "failed when measured again (confirmation 2, round 1) at "
		"bench: suspect: spot check: 3 of 8 outputs differ" };
	cuco_revisit stands = { 3, false, "revisited: 4 later paired rounds put it at 1.1x; over all "
		"16 rounds 1.2x: its crown stands" };
	cuco_confirmation conf = { .session = 7, .state = CUCO_CONFIRM_DONE, .contenders = 2,
		.judged = 1, .crowned = 1, .nunjudged = 1 };
	conf.unjudged[0].id = 4;
	strcpy(conf.unjudged[0].why, "the baseline failed in round 2 at bench: suspect: stage clock: "
		"2.22 s for 34 more steps");
	return cuco_crown(txn, 1) || cuco_crown(txn, 2) || cuco_crown_revisit(txn, &lapsed) ||
	       cuco_crown(txn, 3) || cuco_crown_revisit(txn, &stands) ||
	       cuco_confirmation_put(txn, &conf) ||
	       cuco_meta_put(txn, "noise", "{\"reason\":\"load average 9.0 on 2 cores\"}") ||
	       cuco_meta_put(txn, "workload", "{\"name\":\"cpu-gemm-allgather\"}") ||
	       cuco_meta_put(txn, "strategy", "\"tune\"") || cuco_meta_put(txn, "peak", peak_meta);
}

static int setup_run(void **state)
{
	(void)state;
	strcpy(rundir, "/tmp/cuco-test-cli-XXXXXX");
	assert_non_null(mkdtemp(rundir));
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(rundir, CUCO_STORE_CREATE, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, populate, NULL, &err), CUCO_OK);
	cuco_store_close(st);
	return 0;
}

static int teardown_run(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.stderr'", rundir, rundir);
	return system(cmd);
}

static void test_help_and_version(void **state)
{
	(void)state;
	struct out o = cuco("--version");
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "cuco "));
	out_free(&o);
	o = cuco("--help");
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "report"));
	out_free(&o);
	o = cuco("ls --help");
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "usage: cuco ls"));
	out_free(&o);
	o = cuco("frobnicate");
	assert_int_equal(o.status, 1);
	assert_string_equal(o.stderr_text, "cuco: frobnicate: unknown command (see 'cuco --help')\n");
	out_free(&o);
	o = cuco("ls --bogus --run %s", rundir);
	assert_int_equal(o.status, 1);
	out_free(&o);
	/* A mistyped option: one line, with the option meant (it was two). */
	o = cuco("run cpu-gemm-allgather --budjet 3");
	assert_one_line(&o, 1, "cuco: run: unknown option --budjet; did you mean --budget? (see 'cuco run --help')");
	out_free(&o);
	o = cuco("run cpu-gemm-allgather --budget");
	assert_one_line(&o, 1, "cuco: run: --budget needs a value");
	out_free(&o);
	/* A provider's service without its key: said before anything is
	 * sent (it was 'cannot reach the server'). */
	strcpy(before, "env -u OPENAI_API_KEY ");
	o = cuco("run '%s/tests/agents/fixtures/toy' --run %s.key --llm openai:gpt-4o --budget 1 "
		"--headless", getenv("CUCO_SOURCE_ROOT"), rundir);
	before[0] = '\0';
	assert_one_line(&o, 3, "no API key: $OPENAI_API_KEY is not set");
	out_free(&o);
	char keyrun[128];
	snprintf(keyrun, sizeof keyrun, "%s.key", rundir);
	rm_rf(keyrun);
	/* run --help names every strategy and --llm-jobs. */
	o = cuco("run --help");
	assert_has(o.stdout_text, "--strategy tune|evolve|beam");
	assert_has(o.stdout_text, "--llm-jobs N");
	assert_has(o.stdout_text, "evolve (islands of");
	assert_has(o.stdout_text, "beam (planner");
	out_free(&o);
	/* check's problems are errors: on stderr, as cuco: lines. */
	o = cuco("check nosuch");
	assert_one_line(&o, 2, "cuco: nosuch: no such workload");
	assert_string_equal(o.stdout_text, "");
	out_free(&o);
	/* A theme that does not load is a usage error before any search starts. */
	o = cuco("run cpu-gemm-allgather --theme nosuch --run %s.never", rundir);
	assert_int_equal(o.status, 1);
	assert_non_null(strstr(o.stderr_text, "theme 'nosuch': not found"));
	out_free(&o);
	/* A bad search key is refused before the run writes anything (it was
	 * found only once the strategy opened, after the meta was rewritten). */
	char cfgdir[300], cfgfile[400], never[300];
	snprintf(cfgdir, sizeof cfgdir, "%s.xdg", rundir);
	snprintf(cfgfile, sizeof cfgfile, "%s/cuco", cfgdir);
	assert_int_equal(cuco_mkdir_p(cfgfile, NULL), CUCO_OK);
	strcat(cfgfile, "/config");
	assert_int_equal(cuco_write_file(cfgfile, "[evolve]\nislandz = 2\n", 21, NULL), CUCO_OK);
	setenv("XDG_CONFIG_HOME", cfgdir, 1);
	snprintf(never, sizeof never, "%s.never", rundir);
	o = cuco("run cpu-gemm-allgather --strategy evolve --run %s", never);
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.stderr_text, "config:2: evolve.islandz"));
	assert_ptr_equal(strchr(o.stderr_text, '\n'), o.stderr_text + strlen(o.stderr_text) - 1);  /* one line */
	assert_int_equal(access(never, F_OK), -1);
	out_free(&o);
	/* A theme the config or $CUCO_THEME names is bad input there (2), not a
	 * flag's usage error, and the line says where it came from. */
	assert_int_equal(cuco_write_file(cfgfile, "[screen]\ntheme = nosuch\n", 24, NULL), CUCO_OK);
	setenv("XDG_CONFIG_HOME", cfgdir, 1);
	o = cuco("run cpu-gemm-allgather --run %s", never);
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.stderr_text, "/cuco/config: [screen] theme: theme 'nosuch': not found"));
	out_free(&o);
	setenv("CUCO_THEME", "nosuch", 1);
	o = cuco("run cpu-gemm-allgather --run %s", never);
	unsetenv("CUCO_THEME");
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.stderr_text, "$CUCO_THEME: theme 'nosuch': not found"));
	assert_int_equal(access(never, F_OK), -1);
	out_free(&o);
	unlink(cfgfile);
	*strrchr(cfgfile, '/') = '\0';
	rmdir(cfgfile);
	rmdir(cfgdir);
}

static void test_ls_json_shape(void **state)
{
	(void)state;
	struct out o = cuco("ls --json --run %s", rundir);
	assert_int_equal(o.status, 0);
	cJSON *a = cJSON_Parse(o.stdout_text);
	assert_non_null(a);
	assert_int_equal(cJSON_GetArraySize(a), 5);
	const char *keys[] = { "id", "parents", "island", "generation", "origin", "status", "pinned",
		"score", "latency_us", "speedup" };
	cJSON *c;
	cJSON_ArrayForEach(c, a)
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
			if (!cJSON_HasObjectItem(c, keys[k]))
				fail_msg("ls --json: candidate lacks %s", keys[k]);
	cJSON *third = cJSON_GetArrayItem(a, 2);
	assert_string_equal(cJSON_GetObjectItem(third, "origin")->valuestring, "tune");
	assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(third, "parents"), 0)->valueint, 2);
	cJSON_Delete(a);
	out_free(&o);

	o = cuco("ls --json --status failed --run %s", rundir);
	a = cJSON_Parse(o.stdout_text);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "id")->valueint, 5);
	cJSON_Delete(a);
	out_free(&o);

	o = cuco("ls --tree --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "\n  3 "));  /* a child is indented under 2 */
	/* Indented or not, every row's PARENT column starts where its header does. */
	const char *head = strstr(o.stdout_text, "PARENT");
	assert_non_null(head);
	long col = head - o.stdout_text;
	for (const char *line = strchr(o.stdout_text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		assert_true((long)strlen(line + 1) > col);
		assert_true(line[1 + col - 1] == ' ' && line[1 + col] >= '0' && line[1 + col] <= '9');
	}
	assert_non_null(strstr(o.stdout_text, "1.24x [1.15"));  /* the interval, one way for all */
	out_free(&o);
}

static void test_report_json_shape(void **state)
{
	(void)state;
	struct out o = cuco("report --json --run %s", rundir);
	assert_int_equal(o.status, 0);
	cJSON *r = cJSON_Parse(o.stdout_text);
	assert_non_null(r);
	assert_string_equal(cJSON_GetObjectItem(r, "workload")->valuestring, "cpu-gemm-allgather");
	assert_string_equal(cJSON_GetObjectItem(r, "strategy")->valuestring, "tune");
	cJSON *cands = cJSON_GetObjectItem(r, "candidates");
	assert_int_equal(cJSON_GetObjectItem(cands, "total")->valueint, 5);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cands, "by_status"), "failed")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cands, "by_origin"), "tune")->valueint, 3);
	cJSON *base = cJSON_GetObjectItem(r, "baseline"), *best = cJSON_GetObjectItem(r, "best");
	assert_int_equal(cJSON_GetObjectItem(base, "id")->valueint, 1);
	assert_true(cJSON_GetObjectItem(base, "latency_us")->valuedouble == 1000);
	assert_int_equal(cJSON_GetObjectItem(best, "id")->valueint, 3);  /* crowned, not top score */
	cJSON *sp = cJSON_GetObjectItem(best, "speedup");
	assert_true(cJSON_GetObjectItem(sp, "value")->valuedouble == 1.24);
	assert_true(cJSON_GetObjectItem(sp, "lo")->valuedouble == 1.15);
	assert_true(cJSON_GetObjectItem(sp, "hi")->valuedouble == 1.33);
	assert_int_equal(cJSON_GetObjectItem(sp, "rounds")->valueint, 12);
	assert_string_equal(cJSON_GetObjectItem(best, "verdict")->valuestring, "faster");
	assert_string_equal(cJSON_GetObjectItem(r, "noise")->valuestring, "load average 9.0 on 2 cores");
	/* Every crown looked at again, and how the last confirmation ended. */
	cJSON *rev = cJSON_GetObjectItem(r, "revisits");
	assert_int_equal(cJSON_GetArraySize(rev), 2);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(rev, 0), "id")->valueint, 2);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(rev, 0), "lapsed")));
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(rev, 0), "why")->valuestring,
		"spot check"));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(rev, 1), "lapsed")));
	cJSON *conf = cJSON_GetObjectItem(r, "confirmation");
	assert_string_equal(cJSON_GetObjectItem(conf, "state")->valuestring, "done");
	assert_int_equal(cJSON_GetObjectItem(conf, "judged")->valueint, 1);
	cJSON *un = cJSON_GetArrayItem(cJSON_GetObjectItem(conf, "unjudged"), 0);
	assert_int_equal(cJSON_GetObjectItem(un, "id")->valueint, 4);
	assert_non_null(strstr(cJSON_GetObjectItem(un, "why")->valuestring, "the baseline failed"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "tokens"), "prompt"));
	assert_non_null(cJSON_GetObjectItem(r, "cost_usd"));
	cJSON_Delete(r);
	out_free(&o);
	o = cuco("report --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "confirmed  done: 2 contenders, 1 judged, 1 crowned"));
	assert_non_null(strstr(o.stdout_text, "           #4 no verdict: the baseline failed in round 2 "
		"at bench: suspect: stage clock: "));
	assert_non_null(strstr(o.stdout_text, "crowns     #2 lapsed: failed when measured again "
		"(confirmation 2, round 1) at bench: suspect: spot check: 3 of 8 outputs differ\n"));
	assert_non_null(strstr(o.stdout_text, "           #3 stands: revisited: "));
	out_free(&o);
}

static void test_show_export_and_errors(void **state)
{
	(void)state;
	struct out o = cuco("show 5 --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "compile-error"));
	out_free(&o);
	o = cuco("export best --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_string_equal(o.stdout_text, "int seed;\nint x;\n");  /* #3, the crowned (#2's source) */
	out_free(&o);
	o = cuco("show 3 --run %s", rundir);
	assert_non_null(strstr(o.stdout_text, "12 paired rounds, 99.5% interval: faster"));
	out_free(&o);
	o = cuco("show 4 --run %s", rundir);
	assert_non_null(strstr(o.stdout_text, "1.43x (one screening measurement)"));
	out_free(&o);
	/* An output that cannot be made is named as given (it named the
	 * temporary file beside it), as bad input. */
	o = cuco("export best -o /nonexistent/x.c --run %s", rundir);
	assert_one_line(&o, 2, "cuco: /nonexistent/x.c: cannot create: No such file or directory");
	assert_lacks(o.stderr_text, "tmp");
	out_free(&o);
	o = cuco("show 42 --run %s", rundir);
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.stderr_text, "candidate 42: no such candidate"));
	assert_int_equal(strchr(o.stderr_text, '\n') - o.stderr_text + 1, (long)strlen(o.stderr_text));
	out_free(&o);
	o = cuco("show 42 --run /nonexistent/run");
	assert_int_equal(o.status, 2);
	assert_string_equal(o.stderr_text, "cuco: /nonexistent/run: no run directory here\n");
	out_free(&o);
	o = cuco("show x1 --run %s", rundir);
	assert_int_equal(o.status, 1);
	out_free(&o);
}

/* show says what the fraction of peak is of; a meta "peak" of the wrong
 * shape (the store admits only valid JSON) costs only that remark. */
static void test_show_peak_basis(void **state)
{
	(void)state;
	struct out o = cuco("show 4 --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text,
		"peak fraction  0.61  (of 450 GB/s, NVLink per direction (hardware profile); 989 TFLOP/s)\n"));
	out_free(&o);
	o = cuco("show 3 --run %s", rundir);
	assert_non_null(strstr(o.stdout_text, "peak fraction  -\n"));
	out_free(&o);
	o = cuco("show 4 --json --run %s", rundir);
	cJSON *j = cJSON_Parse(o.stdout_text);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "peak"), "bandwidth_gbs")->valueint, 450);
	cJSON_Delete(j);
	out_free(&o);
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(rundir, 0, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, put_peak, (void *)"{\"bandwidth_gbs\":\"fast\",\"bandwidth_of\":7}", &err), CUCO_OK);
	cuco_store_close(st);
	o = cuco("show 4 --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.stdout_text, "peak fraction  0.61\n"));
	out_free(&o);
	/* A peak below a TFLOP/s is given in GFLOP/s (it read 0 TFLOP/s). */
	assert_int_equal(cuco_store_open(rundir, 0, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, put_peak, (void *)"{\"gflops\":40}", &err), CUCO_OK);
	cuco_store_close(st);
	o = cuco("show 4 --run %s", rundir);
	assert_has(o.stdout_text, "peak fraction  0.61  (of 40 GFLOP/s)\n");
	out_free(&o);
	assert_int_equal(cuco_store_open(rundir, 0, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, put_peak, (void *)peak_meta, &err), CUCO_OK);
	cuco_store_close(st);
}

static void test_diff(void **state)
{
	(void)state;
	struct out o = cuco("diff 3 4 --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_string_equal(o.stdout_text, "directive #3 -> #4:\n  granularity  4 -> 8\n"
		"--- candidate 3\n+++ candidate 4\n@@ -1,2 +1,2 @@\n int seed;\n-int x;\n+int z;\n");
	out_free(&o);
	/* The same source: the directive is the whole change, and it says so. */
	o = cuco("diff 2 3 --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_string_equal(o.stdout_text, "directive #2 -> #3:\n  granularity  2 -> 4\n"
		"source: identical (the directive is the whole change)\n");
	out_free(&o);
	o = cuco("diff seed seed --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_string_equal(o.stdout_text, "#2 and #2: the same directive and the same source\n");
	out_free(&o);
	o = cuco("diff 2 --run %s", rundir);
	assert_int_equal(o.status, 1);
	out_free(&o);
}

static void test_pin_and_reject(void **state)
{
	(void)state;
	struct out o = cuco("pin 3 --run %s", rundir);
	assert_int_equal(o.status, 0);
	out_free(&o);
	o = cuco("reject 4 --reason 'races on the flag' --run %s", rundir);
	assert_int_equal(o.status, 0);
	out_free(&o);
	o = cuco("reject baseline --run %s", rundir);
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.stderr_text, "the baseline cannot be rejected"));
	out_free(&o);

	o = cuco("show 4 --json --run %s", rundir);
	cJSON *c = cJSON_Parse(o.stdout_text);
	assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "rejected");
	assert_string_equal(cJSON_GetObjectItem(c, "reject_reason")->valuestring, "races on the flag");
	cJSON_Delete(c);
	out_free(&o);
	o = cuco("show 3 --json --run %s", rundir);
	c = cJSON_Parse(o.stdout_text);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "pinned")));
	assert_non_null(cJSON_GetObjectItem(c, "pinned_by"));
	cJSON_Delete(c);
	out_free(&o);
	/* Who marked it and when, and a mark it has already is no success. */
	o = cuco("show 3 --run %s", rundir);
	assert_has(o.stdout_text, "\npinned         by ");
	out_free(&o);
	o = cuco("show 4 --run %s", rundir);
	assert_has(o.stdout_text, "\nrejected       by ");
	assert_has(o.stdout_text, ": races on the flag\n");
	out_free(&o);
	o = cuco("pin 3 --run %s", rundir);
	assert_one_line(&o, 2, "cuco: pin 3: already pinned: nothing changed");
	out_free(&o);
	o = cuco("unreject 3 --run %s", rundir);
	assert_one_line(&o, 2, "cuco: unreject 3: not rejected (it is done): nothing changed");
	assert_string_equal(o.stdout_text, "");
	out_free(&o);
	/* One rule with the screen: a rejected candidate is not pinned, it is
	 * un-rejected first, and comes back as it was. */
	o = cuco("pin 4 --run %s", rundir);
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.stderr_text, "rejected candidates cannot be pinned"));
	out_free(&o);
	o = cuco("unreject 4 --run %s", rundir);
	assert_int_equal(o.status, 0);
	assert_string_equal(o.stdout_text, "un-rejected 4\n");
	out_free(&o);
	o = cuco("show 4 --json --run %s", rundir);
	c = cJSON_Parse(o.stdout_text);
	assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "done");
	cJSON_Delete(c);
	out_free(&o);
	o = cuco("reject 4 --reason 'races on the flag' --run %s", rundir);
	assert_int_equal(o.status, 0);
	out_free(&o);
	/* Rejecting the top screen changes nothing: the crowned #3 is the best. */
	o = cuco("report --json --run %s", rundir);
	c = cJSON_Parse(o.stdout_text);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "best"), "id")->valueint, 3);
	cJSON_Delete(c);
	out_free(&o);
	/* A rejected best steps down to the crown before it, the baseline. */
	o = cuco("reject 3 --run %s", rundir);
	assert_int_equal(o.status, 0);
	out_free(&o);
	o = cuco("report --run %s", rundir);
	assert_non_null(strstr(o.stdout_text, "best       nothing beat the baseline"));
	out_free(&o);
}


/* The three programs the issue names: a host-NCCL all-gather + GEMM, an
 * MPI halo exchange, an MPI program printing CUCo's lines. Each becomes a
 * workload cuco check accepts, with no seed, its family and protocol
 * guessed and every guess in context.md. The CUDA one is not built: not
 * every machine that runs this has nvcc. */
static void test_init(void **state)
{
	(void)state;
	static const struct {
		const char *name, *file, *family, *flags, *baseline;
	} progs[] = {
		{ "halo", "halo.c", "cpu-mpi", "", "baseline.c" },
		{ "cuco_style", "cuco_style.c", "cpu-mpi", "", "baseline.c" },
		{ "allgather_gemm", "allgather_gemm.cu", "cuda-nccl", "--no-build", "baseline.cu" },
	};
	if (system("command -v mpicc >/dev/null") != 0)
		skip();
	const char *src = getenv("CUCO_SOURCE_ROOT") ? getenv("CUCO_SOURCE_ROOT") : ".";
	char dir[64];
	make_tmpdir(dir, sizeof dir);
	for (size_t i = 0; i < sizeof progs / sizeof *progs; i++) {
		struct out o = cuco("init %s --from '%s/tests/programs/%s' --dir '%s/%s' %s",
			progs[i].name, src, progs[i].file, dir, progs[i].name, progs[i].flags);
		if (o.status != 0)
			fail_msg("cuco init %s: exit %d: %s", progs[i].file, o.status, o.stderr_text);
		char want[64];
		snprintf(want, sizeof want, "- family: %s, since", progs[i].family);
		assert_has(o.stdout_text, want);
		assert_has(o.stdout_text, "- protocol: compat, since the program prints CUCo's lines");
		assert_has(o.stdout_text, "- seed: none");
		out_free(&o);
		char wl[160], path[200];
		snprintf(wl, sizeof wl, "%s/%s", dir, progs[i].name);
		snprintf(path, sizeof path, "%s/workload.json", wl);
		char *text = NULL;
		assert_int_equal(cuco_read_file(path, 1 << 20, &text, NULL, NULL), CUCO_OK);
		cJSON *m = cJSON_Parse(text);
		assert_string_equal(cJSON_GetObjectItem(m, "family")->valuestring, progs[i].family);
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "protocol"),
			"kind")->valuestring, "compat");
		const cJSON *files = cJSON_GetObjectItem(m, "files");
		assert_string_equal(cJSON_GetObjectItem(files, "baseline")->valuestring,
			progs[i].baseline);
		assert_null(cJSON_GetObjectItem(files, "seed"));
		assert_true(exists(wl, progs[i].baseline) && exists(wl, "context.md"));
		if (i == 0) {
			/* halo.c's #ifndef values are its one size. */
			const cJSON *size = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "sizes"),
				"program");
			assert_int_equal(cJSON_GetObjectItem(size, "N")->valueint, 65536);
			assert_int_equal(cJSON_GetObjectItem(size, "STEPS")->valueint, 50);
		}
		cJSON_Delete(m);
		free(text);
		o = cuco("check '%s'", wl);
		assert_int_equal(o.status, 0);
		out_free(&o);
	}
	/* Never over what exists (a usage error), and bad programs (exit 2):
	 * one line naming what is missing, and no folder left behind. */
	struct out o = cuco("init halo --from '%s/tests/programs/halo.c' --dir '%s/halo'", src, dir);
	assert_one_line(&o, 1, "already exists: cuco init never overwrites");
	out_free(&o);
	static const struct {
		const char *name, *text, *why;
	} bad[] = {
		{ "quiet", "#include <mpi.h>\nint main(int c, char **v)\n{\n\tMPI_Init(&c, &v);\n"
			"\tMPI_Finalize();\n\treturn 0;\n}\n", "no result lines: it prints neither" },
		{ "nomain", "#include <mpi.h>\nint f(void) { return 0; }\n", "no main()" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char path[160];
		snprintf(path, sizeof path, "%s/%s.c", dir, bad[i].name);
		assert_int_equal(cuco_write_file(path, bad[i].text, strlen(bad[i].text), NULL), CUCO_OK);
		o = cuco("init %s --from '%s' --dir '%s/%s'", bad[i].name, path, dir, bad[i].name);
		assert_one_line(&o, 2, bad[i].why);
		assert_false(exists(dir, bad[i].name));
		out_free(&o);
	}
	o = cuco("init broken --from '%s/tests/programs/halo.c' --dir '%s/broken' "
		"--build 'false {output} {source}'", src, dir);
	assert_one_line(&o, 2, "the build failed (false {output} {source})");
	assert_false(exists(dir, "broken"));
	out_free(&o);
	/* A seed must mark what a search may change; a missing one is named. */
	o = cuco("init seedless --from '%s/tests/programs/halo.c' --dir '%s/seedless' --seed "
		"'%s/tests/programs/halo.c' --no-build", src, dir, src);
	assert_one_line(&o, 2, "halo.c: no EVOLVE-BLOCK-START / EVOLVE-BLOCK-END lines");
	assert_false(exists(dir, "seedless"));
	out_free(&o);
	o = cuco("init seedless --from '%s/tests/programs/halo.c' --dir '%s/seedless' --seed "
		"'%s/nonexistent.c' --no-build", src, dir, dir);
	assert_one_line(&o, 2, "nonexistent.c");
	assert_false(exists(dir, "seedless"));
	out_free(&o);
	o = cuco("init seeded --from '%s/tests/programs/halo.c' --dir '%s/seeded' --seed "
		"'%s/tests/agents/fixtures/halo_put.c' --no-build", src, dir, src);
	assert_int_equal(o.status, 0);
	assert_has(o.stdout_text, "copied as seed.c");
	out_free(&o);
	o = cuco("check '%s/seeded'", dir);
	assert_int_equal(o.status, 0);
	out_free(&o);
	rm_rf(dir);
}

/* An MPI program printing CUCo's lines: a Time line per repetition (or,
 * with BEST, only the best of them) and a verdict that the ranks agree on
 * through MPI_Allreduce (with COLL) or that each rank gives alone. */
static void write_program(const char *path, bool evolve, bool best, bool coll)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "#include <mpi.h>\n#include <stdio.h>\n\n%sstatic double work(int r)\n{\n"
		"\tdouble s = 0;\n\tfor (int i = 0; i < 100000; i++)\n\t\ts += (i %% 7) * (r + 1);\n"
		"\treturn s;\n}\n%s\nint main(int argc, char **argv)\n{\n\tMPI_Init(&argc, &argv);\n"
		"\tdouble best = 1e30, s = 0;\n\tfor (int r = 0; r < 5; r++) {\n"
		"\t\tMPI_Barrier(MPI_COMM_WORLD);\n\t\tdouble t0 = MPI_Wtime();\n\t\ts = work(r);\n"
		"\t\tdouble t = (MPI_Wtime() - t0) * 1e3;\n\t\tbest = t < best ? t : best;\n%s\t}\n%s"
		"\tint ok = s > 0, all = ok;\n%s\tprintf(\"Verification: %%s\\n\", all ? \"PASS\" : \"FAIL\");\n"
		"\tMPI_Finalize();\n\treturn 0;\n}\n",
		evolve ? "/* EVOLVE-BLOCK-START */\n" : "", evolve ? "/* EVOLVE-BLOCK-END */\n" : "",
		best ? "" : "\t\tprintf(\"Time: %.4f ms\\n\", t);\n",
		best ? "\tprintf(\"Time: %.4f ms\\n\", best);\n" : "",
		coll ? "\tMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);\n" : "");
	assert_int_equal(cuco_write_file(path, b.data, b.len, NULL), CUCO_OK);
	cuco_buf_free(&b);
}

/* init and check --try find what the run would, before it: a seed whose
 * own verification calls MPI_Allreduce (the host-call rule fails every
 * candidate of it as suspect), a program that prints one time per run,
 * and a seed that reads none of the directive's defines. */
static void test_init_tries_the_run(void **state)
{
	(void)state;
	if (system("command -v mpicc >/dev/null && command -v mpirun >/dev/null") != 0)
		skip();
	char dir[64], base[160], coll[160], one[160], blind[160];
	make_tmpdir(dir, sizeof dir);
	snprintf(base, sizeof base, "%s/base.c", dir);
	snprintf(coll, sizeof coll, "%s/coll.c", dir);
	snprintf(one, sizeof one, "%s/one.c", dir);
	snprintf(blind, sizeof blind, "%s/blind.c", dir);
	write_program(base, false, false, true);
	write_program(coll, true, false, true);
	write_program(one, false, true, false);
	write_program(blind, true, false, false);
	struct out o = cuco("init coll --from '%s' --seed '%s' --dir '%s/coll'", base, coll, dir);
	assert_one_line(&o, 2, "coll.c: the run would fail it at compile: suspect: compile: host calls:");
	assert_has(o.stderr_text, "links MPI_Allreduce");
	assert_false(exists(dir, "coll"));
	out_free(&o);
	o = cuco("init one --from '%s' --dir '%s/one'", one, dir);
	assert_int_equal(o.status, 0);
	assert_has(o.stdout_text, "- warning: ");
	assert_has(o.stdout_text, "one.c: one timed sample per run");
	out_free(&o);
	o = cuco("init blind --from '%s' --seed '%s' --dir '%s/blind'", base, blind, dir);
	assert_int_equal(o.status, 0);
	assert_has(o.stdout_text, "- warning: ");
	assert_has(o.stdout_text, "blind.c: reads 0 of the directive's 5 defines");
	out_free(&o);
	/* check says it too (on stderr, not failing), and --try runs it. */
	o = cuco("check '%s/blind'", dir);
	assert_int_equal(o.status, 0);
	assert_has(o.stderr_text, "blind/seed.c: warning: reads 0 of the directive's 5 defines");
	out_free(&o);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s/blind/seed.c'", coll, dir);
	assert_int_equal(system(cmd), 0);
	o = cuco("check '%s/blind'", dir);
	assert_int_equal(o.status, 0);  /* the manifest is fine: only a run finds the seed's calls */
	out_free(&o);
	o = cuco("check '%s/blind' --try", dir);
	assert_int_equal(o.status, 2);
	assert_has(o.stderr_text, "cuco: blind/seed.c: the run would fail it at compile: suspect:");
	out_free(&o);
	rm_rf(dir);
}

/* cuco analyze prints the host calls the fast path's prompt carries. */
static void test_analyze(void **state)
{
	(void)state;
	const char *src = getenv("CUCO_SOURCE_ROOT") ? getenv("CUCO_SOURCE_ROOT") : ".";
	struct out o = cuco("analyze '%s/tests/programs/halo.c'", src);
	assert_int_equal(o.status, 0);
	assert_has(o.stdout_text, "- host communication calls: 6");
	assert_has(o.stdout_text, "1. MPI_Irecv at line 37, in main()\n   inside the for loop of "
		"line 35\n   receive &u[0]\n   count 1 of MPI_DOUBLE = 8 bytes");
	out_free(&o);
	o = cuco("analyze /nonexistent-%d.c", (int)getpid());
	assert_one_line(&o, 2, "no such program file");
	out_free(&o);
}

static const char clock_why[] = "bench: stage clock: the benchmark took 2.22 s for 34 more steps "
	"than the run stage (0.00 s), at least 3.59e+04 us a step, yet reports 69.8 us";
static const char host_why[] = "run: host calls: the directive (backend=rma says one-sided "
	"communication) rules them out, but the steps made 12 MPI_Allreduce calls";

static int measure(cuco_txn *txn, uint64_t id, const char *kind, double median, const char *why)
{
	cuco_measurement m;
	cuco_measurement_init(&m, id, kind);
	m.session = 3;
	m.ok = why == NULL;
	if (m.ok) {
		m.timing.median_us = median;
		m.speedup = m.score = 1000 / median;
	} else {
		snprintf(m.failure.stage, sizeof m.failure.stage, "%.*s", (int)strcspn(why, ":"), why);
		strcpy(m.failure.error_class, "suspect");
		snprintf(m.failure.excerpt, sizeof m.failure.excerpt, "%s\nthe stage's last output", why);
	}
	return cuco_measure_add(txn, &m, NULL);
}

/* A baseline refused in a confirmation round (its earlier measurement in
 * force), a candidate refused when measured again (its refusal in force),
 * and one that failed to compile. */
static int populate_refusals(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_origin origins[3] = { CUCO_ORIGIN_BASELINE, CUCO_ORIGIN_TUNE, CUCO_ORIGIN_TUNE };
	int rc = CUCO_OK;
	for (int i = 0; i < 3 && rc == CUCO_OK; i++) {
		cuco_candidate c;
		memset(&c, 0, sizeof c);
		c.island = i ? 0 : -1;
		c.origin = origins[i];
		c.status = CUCO_STATUS_QUEUED;
		c.score = c.speedup = c.timing.median_us = c.timing.min_us = c.timing.p90_us = NAN;
		c.timing.max_error = c.timing.peak_fraction = c.timing.spread = NAN;
		strcpy(c.directive.backend, "rma");
		rc = cuco_cand_put(txn, &c);
	}
	cuco_measurement m;
	cuco_measurement_init(&m, 3, "measure");
	strcpy(m.failure.stage, "compile");
	strcpy(m.failure.error_class, "compile-error");
	strcpy(m.failure.excerpt, "seed.c:1: error: expected ')'");
	return rc || measure(txn, 1, "baseline", 1000, NULL) || measure(txn, 1, "confirm", 0, clock_why) ||
		measure(txn, 2, "measure", 800, NULL) || measure(txn, 2, "confirm", 0, host_why) ||
		cuco_measure_add(txn, &m, NULL);
}

/* Every refusal's one-line reason, whole, where a person looks: ls
 * --status suspect, and show's record and measurement rows. */
static void test_refusal_reasons(void **state)
{
	(void)state;
	char dir[64];
	strcpy(dir, "/tmp/cuco-test-cli-XXXXXX");
	assert_non_null(mkdtemp(dir));
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, populate_refusals, NULL, &err), CUCO_OK);
	cuco_store_close(st);
	char want[512];
	struct out o = cuco("ls --status suspect --run %s", dir);
	assert_int_equal(o.status, 0);
	snprintf(want, sizeof want, "  run: suspect: %s\n", host_why + 5);
	assert_non_null(strstr(o.stdout_text, want));
	assert_null(strstr(o.stdout_text, "\n1 "));  /* the baseline is done, not refused */
	out_free(&o);
	o = cuco("ls --run %s", dir);
	assert_null(strstr(o.stdout_text, "expected ')'"));  /* only a refusal's reason */
	out_free(&o);
	o = cuco("show 2 --run %s", dir);
	assert_non_null(strstr(o.stdout_text, "failed         run (suspect)\n"));
	snprintf(want, sizeof want, "confirm    failed at run: suspect: %s\n", host_why + 5);
	assert_non_null(strstr(o.stdout_text, want));
	out_free(&o);
	o = cuco("show baseline --run %s", dir);
	assert_non_null(strstr(o.stdout_text, "status         done\n"));
	snprintf(want, sizeof want, "confirm    failed at bench: suspect: %s\n", clock_why + 7);
	assert_non_null(strstr(o.stdout_text, want));
	out_free(&o);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* From a folder of its own, with none of cuco's variables set, cuco finds
 * its workloads, themes and manual (the build tree's, here; the installed
 * ones: tests/cli/tutorial.py), says where, and names the nearest workload
 * to a typo. */
static void test_found_from_anywhere(void **state)
{
	(void)state;
	char home[64], cfg[160];
	make_tmpdir(home, sizeof home);
	snprintf(before, sizeof before, "cd '%s' && env -u CUCO_WORKLOADS -u CUCO_THEMES -u CUCO_THEME "
		"-u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_DATA_DIRS HOME='%s' ", home, home);
	struct out o = cuco("workloads");
	assert_int_equal(o.status, 0);
	assert_has(o.stdout_text, "cpu-gemm-allgather ");
	assert_has(o.stdout_text, "rmsnorm ");
	out_free(&o);
	o = cuco("check cpu-gemm-allgather");
	assert_int_equal(o.status, 0);
	out_free(&o);
	/* The README's own [screen] theme = light: the theme is found, and the
	 * run goes on to its next check (the workload's). */
	snprintf(cfg, sizeof cfg, "%s/.config/cuco", home);
	assert_int_equal(cuco_mkdir_p(cfg, NULL), CUCO_OK);
	strcat(cfg, "/config");
	assert_int_equal(cuco_write_file(cfg, "[screen]\ntheme = light\n", 23, NULL), CUCO_OK);
	o = cuco("run cpu-gemm-allgathr --headless");
	assert_one_line(&o, 2, "cuco: cpu-gemm-allgathr: no such workload; did you mean cpu-gemm-allgather?");
	out_free(&o);
	o = cuco("run nothing-like-it --headless --theme monochrome");
	assert_one_line(&o, 2, "nothing-like-it: no such workload (cuco workloads lists them");
	out_free(&o);
	o = cuco("run cpu-gemm-allgather --theme lihgt");
	assert_one_line(&o, 1, "theme 'lihgt': not found; did you mean light?");
	out_free(&o);
	o = cuco("doctor");
	char want[1200];
	snprintf(want, sizeof want, "folders, searched in this order\nworkloads  %s/workloads (the "
		"source tree of this build)\nthemes     %s/themes (the source tree of this build)\n"
		"config     %s/.config/cuco/config (~/.config)\nmanual     %s/docs/cuco.1\n",
		getenv("CUCO_SOURCE_ROOT"), getenv("CUCO_SOURCE_ROOT"), home, getenv("CUCO_SOURCE_ROOT"));
	assert_has(o.stdout_text, want);
	/* cuco sets NCCL_NVLS_ENABLE=0 for every stage: never missing. */
	assert_has(o.stdout_text, "NCCL_NVLS_ENABLE  0 for every stage, set by cuco");
	assert_lacks(o.stdout_text, "MISSING  NCCL_NVLS_ENABLE");
	out_free(&o);
	before[0] = '\0';
	rm_rf(home);
}

/* A run whose baseline was measured again (1300 us) after #2 was screened
 * against an older measurement (1540 us): #2's 1400 us is longer than the
 * baseline's, its speedup 1.10x. #3 was confirmed in 12 paired rounds. */
static int numbers_run(cuco_txn *txn, void *arg)
{
	(void)arg;
	static const struct { cuco_origin o; double us, speedup, lo, hi; int rounds; } rows[] = {
		{ CUCO_ORIGIN_BASELINE, 1300, 1, NAN, NAN, 0 },
		{ CUCO_ORIGIN_TUNE, 1400, 1.10, NAN, NAN, 1 },
		{ CUCO_ORIGIN_TUNE, 1050, 1.24, 1.15, 1.33, 12 },
	};
	for (int i = 0; i < 3; i++) {
		cuco_candidate c;
		memset(&c, 0, sizeof c);
		c.origin = rows[i].o;
		c.island = i ? 0 : -1;
		c.nparents = i > 0;
		c.parents[0] = i ? 1 : 0;
		c.status = CUCO_STATUS_DONE;
		c.timing.median_us = c.timing.min_us = c.timing.p90_us = rows[i].us;
		c.speedup = c.score = rows[i].speedup;
		c.speedup_lo = rows[i].lo;
		c.speedup_hi = rows[i].hi;
		c.rounds = rows[i].rounds;
		c.timing.max_error = c.timing.peak_fraction = c.timing.spread = NAN;
		if (i == 1) {  /* as cpu-mpi's harness reports a busy machine */
			c.timing.spread = 7.206;
			static const cuco_phase ph[] = { { "compute", 500 }, { "comm", 9.6 }, { "sync", 3 },
				{ "exposed_comm", 9670 } };
			c.timing.nphases = 4;
			memcpy(c.timing.phases, ph, sizeof ph);
		}
		int rc = cuco_source_put(txn, "int x;\n", 7, c.source_hash);
		if (!rc)
			rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
	}
	return cuco_meta_put(txn, "workload", "{\"name\":\"cpu-gemm-allgather\"}");
}

/* ls marks which speedups were confirmed (their interval) and which are
 * one screening, and ~ the one timed against another baseline measurement
 * than the one listed, however wide its spread; show never gives a phase
 * larger than its whole. */
static void test_one_set_of_numbers(void **state)
{
	(void)state;
	char dir[64];
	make_tmpdir(dir, sizeof dir);
	cuco_store *st;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(st, numbers_run, NULL, &err), CUCO_OK);
	cuco_store_close(st);
	struct out o = cuco("ls --run %s", dir);
	assert_int_equal(o.status, 0);
	const char *row2 = strstr(o.stdout_text, "\n2 "), *row3 = strstr(o.stdout_text, "\n3 ");
	assert_non_null(row2);
	assert_non_null(row3);
	char line2[256], line3[256];
	snprintf(line2, sizeof line2, "%.*s", (int)strcspn(row2 + 1, "\n"), row2 + 1);
	snprintf(line3, sizeof line3, "%.*s", (int)strcspn(row3 + 1, "\n"), row3 + 1);
	assert_has(line2, "1.10x screened ~");
	assert_has(line3, "1.24x [1.15");
	assert_lacks(line3, "screened");
	assert_lacks(line3, "~");
	out_free(&o);
	o = cuco("show 2 --run %s", dir);
	assert_has(o.stdout_text, "phase exposed_comm 9.6 us (measured 9670 us, more than its whole: comm;");
	assert_has(o.stdout_text, "phase comm     9.6 us\n");
	assert_has(o.stdout_text, "\nspread         720.6%\n");  /* it read 7.206 */
	out_free(&o);
	rm_rf(dir);
}

/* The manual renders without a warning from groff (man -l shows them). */
static void test_manual_renders(void **state)
{
	(void)state;
	if (system("command -v groff >/dev/null") != 0)
		skip();
	char cmd[1024];
	int status;
	snprintf(cmd, sizeof cmd, "groff -man -ww -z '%s/docs/cuco.1' 2>&1", getenv("CUCO_SOURCE_ROOT"));
	char *warnings = capture_output(cmd, &status);
	assert_string_equal(warnings, "");
	free(warnings);
}

/* The paragraph of docs/cuco.1's COMMANDS that documents cmd: the first
 * whose heading (the line after .TP) names it as a word. */
static const char *man_entry(const char *commands, const char *cmd, size_t *len)
{
	size_t n = strlen(cmd);
	for (const char *tp = strstr(commands, ".TP\n"); tp; tp = strstr(tp + 1, ".TP\n")) {
		const char *head = tp + 4, *end = strstr(head, ".TP\n");
		size_t head_len = strcspn(head, "\n");
		for (const char *w = strstr(head, cmd); w && w < head + head_len; w = strstr(w + 1, cmd)) {
			char b = w > head ? w[-1] : ' ', a = w[n];
			bool font = w >= head + 3 && w[-3] == '\\' && w[-2] == 'f';  /* \fB: a font */
			if ((font || (!isalnum((unsigned char)b) && b != '-')) && !isalnum((unsigned char)a) &&
			    a != '-') {
				*len = end ? (size_t)(end - tp) : strlen(tp);
				return tp;
			}
		}
	}
	return NULL;
}

/* text as roff writes it in the manual: every '-' as '\-'. */
static void man_dashes(const char *text, char *out, size_t size)
{
	size_t k = 0;
	for (; *text && k + 3 < size; text++) {
		if (*text == '-')
			out[k++] = '\\';
		out[k++] = *text;
	}
	out[k] = '\0';
}

static bool man_has(const char *entry, size_t len, const char *what)
{
	size_t n = strlen(what);
	for (const char *p = entry; p + n <= entry + len; p++)
		if (memcmp(p, what, n) == 0 && !isalnum((unsigned char)p[n]) && strncmp(p + n, "\\-", 2) != 0)
			return true;
	return false;
}

/* Every option `cuco COMMAND --help` lists is in the command's entry of
 * docs/cuco.1, long or short; one the DESCRIPTION gives for every command
 * (--run) may be there instead. */
static void test_options_in_the_manual(void **state)
{
	(void)state;
	char path[1024], *man = NULL;
	size_t len;
	snprintf(path, sizeof path, "%s/docs/cuco.1", getenv("CUCO_SOURCE_ROOT"));
	assert_int_equal(cuco_read_file(path, 1 << 20, &man, &len, NULL), CUCO_OK);
	const char *desc = strstr(man, ".SH DESCRIPTION\n"), *commands = strstr(man, ".SH COMMANDS\n");
	assert_non_null(desc);
	assert_non_null(commands);
	char *end = strstr(commands + 1, "\n.SH ");
	assert_non_null(end);
	end[1] = '\0';
	size_t desc_len = (size_t)(commands - desc), checked = 0;
	struct out list = cuco("--help");
	const char *line = strstr(list.stdout_text, "commands:\n");
	assert_non_null(line);
	for (line = strchr(line, '\n') + 1; strncmp(line, "  ", 2) == 0; line = strchr(line, '\n') + 1) {
		char cmd[32];
		if (line[2] == ' ')
			continue;  /* a summary's second line */
		if (sscanf(line, " %31s", cmd) != 1 || !strchr(line, '\n'))
			break;
		size_t entry_len = 0;
		const char *entry = man_entry(commands, cmd, &entry_len);
		if (!entry)
			fail_msg("docs/cuco.1 has no entry for cuco %s", cmd);
		struct out help = cuco("%s --help", cmd);
		assert_int_equal(help.status, 0);
		const char *o = strstr(help.stdout_text, "\noptions:\n");
		for (o = o ? strchr(o + 1, '\n') + 1 : ""; strncmp(o, "  -", 3) == 0 || *o == ' ';
				o = strchr(o, '\n') + 1) {
			char word[64], letter[8] = "", want[160];
			if (strncmp(o, "  -", 3) != 0)
				continue;  /* a help line's continuation */
			if (o[3] != '-' && sscanf(o, " -%1[^,]", letter) == 1)
				o = strchr(o, ',') + 1;
			assert_int_equal(sscanf(o, " %63[^ \n]", word), 1);
			man_dashes(word, want, sizeof want);
			char short_form[8];
			snprintf(short_form, sizeof short_form, "\\-%s", letter);
			if (!man_has(entry, entry_len, want) && !(*letter && man_has(entry, entry_len, short_form)) &&
			    !man_has(desc, desc_len, want))
				fail_msg("docs/cuco.1 does not say cuco %s's %s", cmd, word);
			checked++;
		}
		out_free(&help);
	}
	assert_true(checked > 60);
	out_free(&list);
	free(man);
}

int main(void)
{
	if (!getenv("CUCO_BIN")) {
		fprintf(stderr, "test_cli: CUCO_BIN is not set (run through meson test)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_ls_json_shape),
		cmocka_unit_test(test_report_json_shape),
		cmocka_unit_test(test_show_export_and_errors),
		cmocka_unit_test(test_show_peak_basis),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_pin_and_reject),
		cmocka_unit_test(test_refusal_reasons),
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_analyze),
		cmocka_unit_test(test_init_tries_the_run),
		cmocka_unit_test(test_found_from_anywhere),
		cmocka_unit_test(test_manual_renders),
		cmocka_unit_test(test_options_in_the_manual),
		cmocka_unit_test(test_one_set_of_numbers),
	};
	return cmocka_run_group_tests(tests, setup_run, teardown_run);
}
