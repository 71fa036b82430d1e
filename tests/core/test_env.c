/* test_env.c — cuco's environment variables (src/env.h): the table read
 * once into one struct, read again only when asked, and the ENVIRONMENT
 * section of docs/cuco.1 against the table in both directions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "env.h"

/* Set, set to "" (not set), unset; a default given as a value fills the
 * field, one in brackets leaves it NULL; nothing changes until asked. */
static void test_read(void **state)
{
	(void)state;
	setenv("CUCO_MPICC", "mpicc -g", 1);
	setenv("CUCO_NVCC", "", 1);
	unsetenv("CUCO_RUN");
	unsetenv("CUCO_BWRAP");
	unsetenv("CUCO_CUDA_HOME");
	cuco_env_reread();
	const cuco_env *env = cuco_env_get();
	assert_string_equal(env->mpicc, "mpicc -g");
	assert_null(env->nvcc);
	assert_null(env->cuda_home);
	assert_string_equal(env->run, "runs/latest");
	assert_string_equal(env->bwrap, "bwrap");
	setenv("CUCO_MPICC", "other", 1);
	setenv("CUCO_RUN", "elsewhere", 1);
	assert_string_equal(cuco_env_get()->mpicc, "mpicc -g");
	assert_string_equal(cuco_env_get()->run, "runs/latest");
	cuco_env_reread();
	assert_string_equal(cuco_env_get()->mpicc, "other");
	assert_string_equal(cuco_env_get()->run, "elsewhere");
	unsetenv("CUCO_MPICC");
	unsetenv("CUCO_NVCC");
	unsetenv("CUCO_RUN");
	cuco_env_reread();
	assert_null(cuco_env_get()->mpicc);
}

/* Variables cuco sets for its stages and never reads itself. */
static bool set_by_cuco(const char *name)
{
	return strcmp(name, "CUCO_HARNESS") == 0;
}

static bool in_table(const char *name)
{
	size_t n;
	const cuco_env_var *v = cuco_env_vars(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return true;
	return false;
}

/* Every CUCO_ name the ENVIRONMENT section's terms (the line after each
 * .TP) give, as "\nNAME" entries, with a "\n" at the end. */
static void doc_names(const char *text, cuco_buf *out)
{
	const char *sec = strstr(text, "\n.SH ENVIRONMENT\n");
	assert_non_null(sec);
	const char *end = strstr(sec + 1, "\n.SH ");
	for (const char *tp = strstr(sec, "\n.TP\n"); tp && (!end || tp < end);
			tp = strstr(tp + 1, "\n.TP\n")) {
		const char *term = tp + strlen("\n.TP\n"), *eol = strchr(term, '\n');
		for (const char *p = strstr(term, "CUCO_"); p && p < eol; p = strstr(p + 1, "CUCO_")) {
			size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
			cuco_buf_printf(out, "\n%.*s", (int)len, p);
		}
	}
	cuco_buf_puts(out, "\n");
}

static void test_documented(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_SOURCE_ROOT");
	char doc[1024];
	snprintf(doc, sizeof doc, "%s/docs/cuco.1", root ? root : ".");
	char *text;
	cuco_err err = { 0 };
	assert_int_equal(cuco_read_text(doc, 1 << 20, &text, NULL, &err), CUCO_OK);
	cuco_buf names = { 0 };
	doc_names(text, &names);
	size_t n;
	const cuco_env_var *v = cuco_env_vars(&n);
	for (size_t i = 0; i < n; i++) {
		char want[64];
		snprintf(want, sizeof want, "\n%s\n", v[i].name);
		if (!strstr(names.data, want))
			fail_msg("%s: not in docs/cuco.1's ENVIRONMENT", v[i].name);
		assert_true(v[i].type[0] && v[i].def[0] && v[i].help[0]);
	}
	char *save = NULL;
	for (char *name = strtok_r(names.data, "\n", &save); name; name = strtok_r(NULL, "\n", &save))
		if (!in_table(name) && !set_by_cuco(name))
			fail_msg("docs/cuco.1: %s: not in src/env.h's table", name);
	cuco_buf_free(&names);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_documented),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
