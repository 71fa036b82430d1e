/* test_text.c — the rules of program text (src/text.h): comments, the
 * normal form and includes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "text.h"

static void test_comments(void **state)
{
	(void)state;
	const char src[] = "a /* b\nc */ d // e \"f\"\ns = \"/* g */ // h\"; c = '\\'';";
	char *kept = cuco_text_strip(src, strlen(src), false);
	char *blank = cuco_text_strip(src, strlen(src), true);
	assert_string_equal(kept, "a     \n     d         \ns = \"/* g */ // h\"; c = '\\'';");
	assert_string_equal(blank, "a     \n     d         \ns = \"             ; c = '   ;");
	free(kept);
	free(blank);
	/* The normal form: comments gone, whitespace folded, quotes whole. */
	cuco_buf a = { 0 }, b = { 0 };
	const char *one = "int f(void)\n{\n\treturn 1; // one\n}\n";
	const char *two = "int f(void) { /* the same,\n reformatted */ return 1; }";
	cuco_text_normalize(one, strlen(one), &a);
	cuco_text_normalize(two, strlen(two), &b);
	assert_string_equal(a.data, "int f(void) { return 1; }");
	assert_string_equal(a.data, b.data);
	cuco_buf_free(&a);
	const char url[] = "const char *u = \"http://a\"; // x";
	cuco_text_normalize(url, strlen(url), &a);
	assert_string_equal(a.data, "const char *u = \"http://a\";");
	cuco_buf_free(&a);
	cuco_buf_free(&b);
}

static void test_includes(void **state)
{
	(void)state;
	const char *name;
	size_t n;
	bool local;
	assert_true(cuco_text_include(" #  include \"a/b.h\" // c", 24, &name, &n, &local));
	assert_true(local);
	assert_memory_equal(name, "a/b.h", n);
	assert_true(cuco_text_include("#include <mpi.h>", 16, &name, &n, &local));
	assert_false(local);
	assert_int_equal(n, 5);
	assert_false(cuco_text_include("#include_next <x.h>", 19, &name, &n, &local));
	assert_false(cuco_text_include("#include MACRO", 14, &name, &n, &local));
	assert_false(cuco_text_include("int include;", 12, &name, &n, &local));
	const char src[] = "#include <stdio.h>\n#include \"a.h\"\n/*\n#include \"hidden.h\"\n*/\n"
		"  # include \"b.h\"\n#include \"a.h\"\nconst char *s = \"#include \\\"no.h\\\"\";\n";
	char names[4][128];
	int k = 0;
	cuco_text_includes(src, strlen(src), names, &k, 4);
	assert_int_equal(k, 2);
	assert_string_equal(names[0], "a.h");
	assert_string_equal(names[1], "b.h");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_includes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
