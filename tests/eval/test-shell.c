/* test-shell.c — no shell between a manifest and a stage (issue 18: a size
 * named `s;exit 7;` made the build exit 7). Every manifest field that
 * reaches a command — the workload's folder, a size's name, the compiler,
 * the literal text of the templates, a CUCO_*_HOME path — holds shell
 * syntax that would create a marker file if any shell read it. The
 * candidate knows the words it should be given and fails as a wrong
 * answer, printing them, unless each arrives as it was written; and no
 * marker may appear. Inside the sandbox and with limits only. */
#include "env.h"
#include "eval/eval.h"
#include "util.h"

#include <cjson/cJSON.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static char root[128], marker[160];

/* Shell syntax that, read by any shell, creates the marker (or ends the
 * command early, as `s;exit 7;` did). */
static void evil(char *out, size_t size, const char *tag)
{
	snprintf(out, size, "%s;touch %s;$(touch %s)`touch %s`|exit 7;", tag, marker, marker, marker);
}

/* A C string literal of text. */
static void c_string(cuco_buf *out, const char *text)
{
	cuco_buf_puts(out, "\"");
	for (const char *p = text; *p; p++) {
		if (*p == '"' || *p == '\\')
			cuco_buf_puts(out, "\\");
		cuco_buf_append(out, p, 1);
	}
	cuco_buf_puts(out, "\"");
}

/* The candidate: its words must be want[0..n), then the repetitions. */
static char *program(const char *const *want, int n)
{
	cuco_buf src = { 0 };
	cuco_buf_puts(&src, "#include <stdio.h>\n#include <string.h>\n#include \"report.h\"\n"
		"static const char *want[] = {");
	for (int i = 0; i < n; i++) {
		c_string(&src, want[i]);
		cuco_buf_puts(&src, ",\n");
	}
	cuco_buf_printf(&src,
		"};\nint main(int argc, char **argv)\n{\n\tint ok = argc == %d;\n"
		"\tfor (int i = 1; i < argc; i++) {\n"
		"\t\tprintf(\"word %%d [%%s]\\n\", i, argv[i]);\n"
		"\t\tok = ok && (i > %d || strcmp(argv[i], want[i - 1]) == 0);\n\t}\n"
		"\treport(ok);\n\treturn 0;\n}\n", n + 2, n);
	return src.data;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[2400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(cuco_write_file(path, text, strlen(text), NULL), CUCO_OK);
}

static cuco_buf manifest(const char *size, const char *compiler, const char *literal)
{
	cuco_buf m = { 0 };
	cJSON *s = cJSON_CreateString(size), *c = cJSON_CreateString(compiler);
	cJSON *l = cJSON_CreateString(literal);
	char *sz = cJSON_PrintUnformatted(s), *cc = cJSON_PrintUnformatted(c), *lit = cJSON_PrintUnformatted(l);
	cuco_buf_printf(&m,
		"{\"name\": \"evil\", \"title\": \"shell syntax in every field\", \"description\": \"-\",\n"
		" \"family\": \"cpu-mpi\", \"ranks\": 1,\n"
		" \"sizes\": {\"default\": %s, %s: {\"N\": 1}},\n"
		" \"files\": {\"baseline\": \"p.c\", \"seed\": \"p.c\"}, \"compiler\": %s,\n"
		" \"build\": \"{compiler} -O1 -I{workload} -o {output} {source} {defines}\",\n"
		" \"run\": \"{output} {size} {workload} {nccl_home} '%.*s' {reps}\",\n"
		" \"design_space\": {\"backend\": {\"values\": [\"none\"]}, \"issuer\": {\"values\": [\"one\"]},\n"
		"   \"placement\": {\"values\": [\"after\"]}, \"sync\": {\"values\": [\"none\"]},\n"
		"   \"granularity\": {\"values\": [1]}},\n"
		" \"tolerance\": 0, \"limits\": {\"compile_s\": 30, \"run_s\": 5, \"bench_s\": 5},\n"
		" \"bench\": {\"warmup\": 0, \"reps\": 1, \"max_spread\": 1000}}\n",
		sz, sz, cc, (int)strlen(lit) - 2, lit + 1);
	free(sz);
	free(cc);
	free(lit);
	cJSON_Delete(s);
	cJSON_Delete(c);
	cJSON_Delete(l);
	return m;
}

/* A workload folder evil/ in a folder whose name is shell syntax (a
 * name holds no slash: this one ends any shell early instead of touching
 * the marker), holding the manifest. */
static void make_workload(char *dir, size_t size, const char *size_name, const char *compiler,
	const char *literal)
{
	snprintf(dir, size, "%s/w;exit 7;$(exit 7)`exit 7`|cat 'x/evil", root);
	assert_int_equal(cuco_mkdir_p(dir, NULL), CUCO_OK);
	cuco_buf m = manifest(size_name, compiler, literal);
	put(dir, "workload.json", m.data);
	/* The workload's own code includes its header, as a harness's does:
	 * a candidate may include only what the workload's own code does. */
	put(dir, "p.c", "#include \"report.h\"\nint main(void) { report(1); return 0; }\n");
	/* The verdict, sealed by the workload's own header as a harness's is:
	 * the candidate itself may not seal (the evaluator's source scan). */
	cuco_buf h = { 0 };
	cuco_buf_printf(&h, "#include \"%s/workloads/common/cuco_seal.h\"\n"
		"static void report(int ok)\n{\n\tchar b[512];\n"
		"\tsnprintf(b, sizeof b, \"\\\"correct\\\": %%s, \\\"max_error\\\": 0, \\\"latency_us\\\": "
		"{\\\"min\\\": 5, \\\"median\\\": 6, \\\"p90\\\": 7, \\\"max\\\": 7, \\\"samples\\\": 1}, "
		"\\\"ranks\\\": 1, \\\"checks\\\": 3\", ok ? \"true\" : \"false\");\n"
		"\tcuco_seal_print(b);\n}\n", getenv("CUCO_SOURCE_ROOT"));
	put(dir, "report.h", h.data);
	cuco_buf_free(&h);
	cuco_buf_free(&m);
}

static void evaluate(const char *dir, const char *source, cuco_sandbox_mode mode,
	cuco_eval_result *res)
{
	cuco_workload *wl;
	cuco_err err = { 0 };
	if (cuco_workload_load(dir, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	char run[200];
	snprintf(run, sizeof run, "%s/run", root);
	cuco_eval_config cfg = { .jobs = 1, .max_procs = 64, .sandbox = mode };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run);
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	if (cuco_eval_candidate(ev, source, strlen(source), &d, false, res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static int setup(void **state)
{
	(void)state;
	make_tmpdir(root, sizeof root);
	snprintf(marker, sizeof marker, "%s/marker", root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(root);
	unsetenv("CUCO_NCCL_HOME");
	cuco_env_reread();
	return 0;
}

static void words_arrive(cuco_sandbox_mode mode)
{
	/* A size's name is at most 31 characters: the issue's own. */
	char size[] = "s;exit 7;$(exit 7)`exit 7`|x", literal[1024], home[1200], dir[2048];
	evil(literal, sizeof literal, "lit");
	snprintf(home, sizeof home, "%s/nccl $(touch %s)", root, marker);
	assert_int_equal(cuco_mkdir_p(home, NULL), CUCO_OK);
	setenv("CUCO_NCCL_HOME", home, 1);
	cuco_env_reread();
	make_workload(dir, sizeof dir, size, "cc", literal);
	const char *want[] = { size, dir, home, literal };
	char *src = program(want, 4);
	cuco_eval_result res;
	evaluate(dir, src, mode, &res);
	free(src);
	if (!res.ok)
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	assert_int_not_equal(access(marker, F_OK), 0);

	/* A compiler that is shell syntax is a program of that name, which
	 * does not exist: the environment's failure, and still no marker. */
	char compiler[1024];
	evil(compiler, sizeof compiler, "cc");
	rm_rf(dir);
	make_workload(dir, sizeof dir, "one", compiler, "x");
	evaluate(dir, "int main(void) { return 0; }\n", mode, &res);
	if (strcmp(res.failure.error_class, "environment") != 0)
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	assert_int_not_equal(access(marker, F_OK), 0);
}

static void test_no_shell_sandboxed(void **state)
{
	(void)state;
	words_arrive(CUCO_SANDBOX_BWRAP);
}

static void test_no_shell_fallback(void **state)
{
	(void)state;
	words_arrive(CUCO_SANDBOX_OFF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_shell_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_shell_sandboxed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
