/* test_compare.c — `cuco compare`: the tuner, sample, evolve and beam on
 * the toy fixture at one budget, against the scripted server, and the one
 * table they make (issue 26: no run showed whether the agents beat simple
 * controls). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_evolve_run.h"

static char toy[1100];

/* A reply that adds a line of its own ({n}: the request's number) after
 * the toy's main(): every one a new candidate, every one correct. As a
 * plan or a lesson it says enough too. */
static const char reply[] =
	"DIRECTIVE:\nbackend: rma\nissuer: one\nplacement: after\nsync: fence\ngranularity: 1\n\n"
	"<NAME>variant_{n}</NAME>\n<DESCRIPTION>Variant {n} adds a constant.</DESCRIPTION>\n<DIFF>\n"
	"<<<<<<< SEARCH\nint main(int argc, char **argv)\n{\n=======\nint main(int argc, char **argv)\n"
	"{\n\tenum { CUCO_VARIANT_{n} = {n} };\n>>>>>>> REPLACE\n</DIFF>\n";

static void test_compare(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject(), *r = cJSON_AddObjectToObject(o, "random");
	cJSON_AddObjectToObject(r, "faults");
	cJSON *kinds = cJSON_AddArrayToObject(r, "replies"), *k = cJSON_CreateObject();
	cJSON_AddStringToObject(k, "text", reply);
	cJSON_AddItemToArray(kinds, k);
	char *script = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	llm_server s;
	assert_int_equal(llm_server_start(&s, script), 0);
	free(script);
	run_env env;
	run_env_new(&env);
	run_env_config(&env, &s, "[evolve]\nfastpath = false\nmeta_interval = 0\n"
		"migration_interval = 0\nrepair = false\n[beam]\nwidth = 1\nplans = 1\nsamples = 2\n"
		"iterations = 1\n");
	char cmd[2500], out[300];
	snprintf(out, sizeof out, "%s/compare.txt", env.dir);
	snprintf(cmd, sizeof cmd, "XDG_CONFIG_HOME='%s/xdg' '%s' compare '%s' --runs '%s/cmp' "
		"--budget 2 -- --jobs 1 --llm-jobs 1 --rebench 0 > '%s' 2>&1", env.dir, getenv("CUCO_BIN"),
		toy, env.dir, out);
	int rc = system(cmd);
	char *text = slurp(out);
	if (rc != 0)
		fail_msg("cuco compare exited %d:\n%s", rc, text);
	/* Each strategy its own run, then one table, a row each. */
	assert_non_null(strstr(text, "compare: tune: cuco run"));
	assert_non_null(strstr(text, "STRATEGY CROWNED"));
	const char *table = strstr(text, "STRATEGY CROWNED");
	const char *names[] = { "tune", "sample", "evolve", "beam" };
	for (int i = 0; i < 4; i++) {
		char line[16];
		snprintf(line, sizeof line, "\n%-8s ", names[i]);
		const char *at = strstr(table, line);
		if (!at)
			fail_msg("no row for %s:\n%s", names[i], table);
		char row[512];
		snprintf(row, sizeof row, "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
		/* The tuner calls no model; the others do, and spend tokens. */
		int calls = -1;
		assert_int_equal(sscanf(row + 31, "%d", &calls), 1);
		if (i == 0)
			assert_int_equal(calls, 0);
		else
			assert_true(calls > 0);
		/* Two candidates of the strategy's own origins each (evolve's by
		 * its operators); each a verified improvement (rma: 1.25x) but the
		 * tuner's, at $0 a model call here. */
		const char *origin = i == 0 ? "tune 2" : i == 1 ? "llm-diff 2" : i == 2 ? "llm-" :
			"beam-plan 2";
		if (!strstr(row, origin))
			fail_msg("%s's row lacks `%s`: %s", names[i], origin, row);
		if (i > 0 && !strstr(row, " $0.0000 "))
			fail_msg("%s's row has no dollars per improvement: %s", names[i], row);
	}
	char path[300];
	snprintf(path, sizeof path, "%s/cmp/sample/cuco.log", env.dir);
	char *log = slurp(path);
	assert_non_null(log);
	free(log);
	free(text);
	llm_server_stop(&s);
	run_env_free(&env);
}

int main(int argc, char **argv)
{
	if (!e2e_args(argc, argv, toy, sizeof toy))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
