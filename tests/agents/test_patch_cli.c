/* test_patch_cli.c — `cuco patch FILE REPLY` as a reviewer runs it: the
 * patched file on stdout, or one error line and exit status 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core.h"

static char dir[] = "/tmp/cuco-test-patch-cli-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(cuco_write_file(path, text, strlen(text), NULL), CUCO_OK);
}

/* Run `cuco patch ARGS`; returns the exit status, *out and *errs the output. */
static int run(const char *args, char **out, char **errs)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' patch %s >out 2>err", dir, getenv("CUCO_BIN"), args);
	int st = system(cmd);
	char path[128];
	snprintf(path, sizeof path, "%s/out", dir);
	assert_int_equal(cuco_read_file(path, 1 << 20, out, NULL, NULL), CUCO_OK);
	snprintf(path, sizeof path, "%s/err", dir);
	assert_int_equal(cuco_read_file(path, 1 << 20, errs, NULL, NULL), CUCO_OK);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
	(void)state;
	if (!getenv("CUCO_BIN") || !mkdtemp(dir))
		return -1;
	put("k.c", "#include <mpi.h>\n// EVOLVE-BLOCK-START\nstatic int chunks = 4;\n// EVOLVE-BLOCK-END\n");
	put("good.txt", "DIRECTIVE:\ngranularity: 8\n\n<<<<<<< SEARCH\nstatic int chunks = 4;\n=======\n"
		"static int chunks = 8;\n>>>>>>> REPLACE\n");
	put("outside.txt", "<<<<<<< SEARCH\n#include <mpi.h>\n=======\n#include <stdio.h>\n"
		">>>>>>> REPLACE\n");
	put("cut.txt", "<<<<<<< SEARCH\nstatic int chunks = 4;\n=======\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd);
}

static void test_applies(void **state)
{
	(void)state;
	char *out, *errs;
	assert_int_equal(run("-v k.c good.txt", &out, &errs), 0);
	assert_string_equal(out, "#include <mpi.h>\n// EVOLVE-BLOCK-START\nstatic int chunks = 8;\n"
		"// EVOLVE-BLOCK-END\n");
	assert_string_equal(errs, "cuco: patch: 1 hunk: exact\n");
	free(out);
	free(errs);
	/* The reply on standard input, as a reviewer pipes it from cuco show. */
	assert_int_equal(run("k.c - <good.txt", &out, &errs), 0);
	assert_non_null(strstr(out, "static int chunks = 8;"));
	free(out);
	free(errs);
}

static void test_refusals(void **state)
{
	(void)state;
	static const struct { const char *args, *err; } cases[] = {
		{ "k.c outside.txt", "cuco: k.c: hunk 1 (`#include <mpi.h>`): edits line 1, outside every "
			"EVOLVE-BLOCK; only code between EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change\n" },
		{ "k.c cut.txt", "cuco: cut.txt: hunk 1 (reply line 1): reply ends before its "
			">>>>>>> REPLACE; cut off?\n" },
		{ "k.c missing.txt", "cuco: missing.txt: cannot open: No such file or directory\n" },
		{ "k.c nul.txt", "cuco: nul.txt: byte 22 is NUL; a text file holds none\n" },
		{ "k.c empty.txt", "cuco: empty.txt: reply's code is empty: a full rewrite is the whole "
			"program\n" },
	};
	/* What follows a NUL would be dropped without a word. */
	static const char nul[] = "DIRECTIVE:\nbackend: r\0ma\n";
	char path[128];
	snprintf(path, sizeof path, "%s/nul.txt", dir);
	assert_int_equal(cuco_write_file(path, nul, sizeof nul - 1, NULL), CUCO_OK);
	put("empty.txt", "Here it is:\n```c\n\n```\n");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *out, *errs;
		assert_int_equal(run(cases[i].args, &out, &errs), 2);
		assert_string_equal(out, "");  /* nothing half-patched */
		assert_string_equal(errs, cases[i].err);
		free(out);
		free(errs);
	}
	char *out, *errs;
	assert_int_equal(run("k.c", &out, &errs), 1);  /* usage */
	free(out);
	free(errs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applies),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
