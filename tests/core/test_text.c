/* test_text.c — the rules of program text (src/text.h): the marker rule
 * case by case, and that its readers agree on every case: the patcher
 * puts new text exactly into the blocks the rule finds and refuses what
 * it refuses, with the same words; `cuco init --seed` accepts and refuses
 * the same; the trust scan reads the blocks' insides whole, and the rest
 * (all of a program the rule finds none in) but for the workload's own
 * lines. Then comments, the normal form and includes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "eval/eval_int.h"
#include "strategies/strategies.h"
#include "text.h"

/* Each case: a text, then the rule's answer: its blocks' marker lines
 * (from 1), or the refusal's words. */
static const struct mcase {
	const char *what, *text;
	size_t n;
	size_t lines[2][2];
	const char *refused;
} cases[] = {
	{ "markers in comments", "int a;\n// EVOLVE-BLOCK-START\nint b;\n/* EVOLVE-BLOCK-END */\nint c;\n",
		1, { { 2, 4 } }, NULL },
	{ "a marker in a string is a marker", "int a;\nputs(\"EVOLVE-BLOCK-START\");\nint b;\n"
		"// EVOLVE-BLOCK-END\n", 1, { { 2, 4 } }, NULL },
	{ "indented, no final newline", "int a;\n\t\t// EVOLVE-BLOCK-START\nint b;\n    // EVOLVE-BLOCK-END",
		1, { { 2, 4 } }, NULL },
	{ "CRLF", "int a;\r\n// EVOLVE-BLOCK-START\r\nint b;\r\n// EVOLVE-BLOCK-END\r\n", 1, { { 2, 4 } },
		NULL },
	{ "two blocks, one empty", "// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\nint a;\n"
		"// EVOLVE-BLOCK-START\nint b;\n// EVOLVE-BLOCK-END\n", 2, { { 1, 2 }, { 4, 6 } }, NULL },
	{ "markers inside #if count", "#if 0\n// EVOLVE-BLOCK-START\n#endif\nint b;\n#if 1\n"
		"// EVOLVE-BLOCK-END\n#endif\n", 1, { { 2, 6 } }, NULL },
	{ "EVOLVE-BLOCK- alone is not a marker", "// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-MIDDLE\n"
		"// EVOLVE-BLOCK-END\n", 1, { { 1, 3 } }, NULL },
	{ "no markers", "int a;\nint b;\n", 0, { { 0 } }, NULL },
	{ "lone CR ends no line", "int a;\r// EVOLVE-BLOCK-START\rint b;\r// EVOLVE-BLOCK-END\r", 0,
		{ { 0 } }, "line 1: EVOLVE-BLOCK-START and EVOLVE-BLOCK-END on one line" },
	{ "nested", "// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-START\nint b;\n// EVOLVE-BLOCK-END\n"
		"// EVOLVE-BLOCK-END\n", 0, { { 0 } },
		"line 2: EVOLVE-BLOCK-START without a matching END before it" },
	{ "unterminated", "int a;\n// EVOLVE-BLOCK-START\nint b;\n", 0, { { 0 } },
		"line 2: EVOLVE-BLOCK-START is never closed" },
	{ "duplicate END", "// EVOLVE-BLOCK-START\nint b;\n// EVOLVE-BLOCK-END\n// EVOLVE-BLOCK-END\n", 0,
		{ { 0 } }, "line 4: EVOLVE-BLOCK-END without a matching START" },
	{ "END first", "// EVOLVE-BLOCK-END\nint b;\n// EVOLVE-BLOCK-START\n", 0, { { 0 } },
		"line 1: EVOLVE-BLOCK-END without a matching START" },
};
#define NCASES (sizeof cases / sizeof cases[0])

static void test_rule(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		const struct mcase *c = &cases[i];
		cuco_block *b;
		size_t n;
		cuco_err err = { 0 };
		int rc = cuco_text_blocks(c->text, strlen(c->text), "seed.c", &b, &n, &err);
		print_message("%s\n", c->what);
		if (c->refused) {
			assert_int_equal(rc, CUCO_EDATA);
			assert_null(b);
			assert_int_equal(n, 0);
			char want[256];
			snprintf(want, sizeof want, "seed.c: %s", c->refused);
			assert_string_equal(err.msg, want);
			assert_int_equal(cuco_text_nblocks(c->text, strlen(c->text)), 0);
			assert_true(cuco_text_marked(c->text, strlen(c->text)));
			continue;
		}
		assert_int_equal(rc, CUCO_OK);
		assert_int_equal(n, c->n);
		assert_int_equal(cuco_text_nblocks(c->text, strlen(c->text)), c->n);
		assert_int_equal(cuco_text_marked(c->text, strlen(c->text)), c->n > 0);
		for (size_t k = 0; k < n; k++) {
			assert_int_equal(b[k].start + 1, c->lines[k][0]);
			assert_int_equal(b[k].end + 1, c->lines[k][1]);
		}
		free(b);
	}
	/* The inside's bytes: after the START line's ending, up to the END line. */
	const char *crlf = cases[3].text;
	cuco_block *b;
	size_t n;
	assert_int_equal(cuco_text_blocks(crlf, strlen(crlf), "x", &b, &n, NULL), CUCO_OK);
	assert_int_equal(b[0].to - b[0].from, strlen("int b;\r\n"));
	assert_memory_equal(crlf + b[0].from, "int b;\r\n", b[0].to - b[0].from);
	free(b);
	assert_int_equal(cuco_text_marker("x = 1; // EVOLVE-BLOCK-START", 28), CUCO_MARKER_START);
	assert_int_equal(cuco_text_marker("EVOLVE-BLOCK-MIDDLE", 19), CUCO_MARKER_NONE);
	assert_true(cuco_text_names_marker("EVOLVE-BLOCK-MIDDLE", 19));
}

/* The text of case c with its blocks' insides replaced by `with` (one
 * line each, in the text's line ending): what the patcher must make. */
static void splice(const char *text, const cuco_block *b, size_t n, const char *with, cuco_buf *out)
{
	const char *eol = strstr(text, "\r\n") ? "\r\n" : "\n";
	size_t from = 0;
	for (size_t k = 0; k < n; k++) {
		cuco_buf_append(out, text + from, b[k].from - from);
		cuco_buf_printf(out, "%s%s", with, eol);
		from = b[k].to;
	}
	cuco_buf_puts(out, text + from);
}

/* The patcher: a reply of each block's new text lands in the rule's
 * blocks; where the rule refuses, the patcher refuses in its words. */
static void test_patcher_agrees(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		const struct mcase *c = &cases[i];
		print_message("%s\n", c->what);
		char *news[2] = { "int patched;", "int patched;" };
		cuco_reply r = { .kind = CUCO_REPLY_BLOCKS, .nblocks = (int)c->n, .blocks = news };
		cuco_patched p;
		cuco_err err = { 0 }, rule = { 0 };
		cuco_block *b;
		size_t n;
		int want = cuco_text_blocks(c->text, strlen(c->text), "parent", &b, &n, &rule);
		int rc = cuco_patch_apply(c->text, strlen(c->text), &r, NULL, &p, &err);
		if (want != CUCO_OK) {
			assert_int_equal(rc, CUCO_EDATA);
			assert_string_equal(err.msg, rule.msg);
			continue;
		}
		if (n == 0) {
			assert_int_equal(rc, CUCO_EDATA);
			assert_non_null(strstr(err.msg, "the parent has no EVOLVE-BLOCK"));
			continue;
		}
		assert_int_equal(rc, CUCO_OK);
		cuco_buf made = { 0 };
		splice(c->text, b, n, "int patched;", &made);
		assert_string_equal(p.text, made.data);
		cuco_buf_free(&made);
		cuco_patched_free(&p);
		free(b);
	}
}

/* The trust scan reads the blocks' insides whole, and around them only
 * the lines the workload's own text does not hold; a program whose
 * markers the rule refuses is all around them. Each case with `int b;`
 * made a call the scan refuses, trusted as the seed's own text: it is
 * found exactly when the rule puts its line inside a block. Before the
 * rule was one, the scan followed markers of its own: an unclosed START
 * hid every line above it, and a stray END the lines after it, though the
 * patcher refused both files. */
static void test_trust_agrees(void **state)
{
	(void)state;
	char why[400];
	for (size_t i = 0; i < NCASES; i++) {
		const struct mcase *c = &cases[i];
		print_message("%s\n", c->what);
		cuco_buf t = { 0 };
		const char *b_at = strstr(c->text, "int b;");
		size_t line = SIZE_MAX;
		if (b_at) {
			cuco_buf_append(&t, c->text, (size_t)(b_at - c->text));
			cuco_buf_printf(&t, "int z = putenv(0);%s", b_at + strlen("int b;"));
			line = 0;
			for (const char *p = c->text; p < b_at; p++)
				line += *p == '\n';
		} else {
			cuco_buf_puts(&t, c->text);
		}
		cuco_block *b;
		size_t n;
		cuco_text_blocks(t.data, t.len, "x", &b, &n, NULL);
		bool inside = false;
		for (size_t k = 0; k < n; k++)
			inside |= b[k].start < line && line < b[k].end;
		/* A lone CR ends a line for the compiler and not for the rule:
		 * the scan refuses it wherever it is. */
		bool cr = false;
		for (size_t k = 0; k < t.len; k++)
			cr |= t.data[k] == '\r' && t.data[k + 1] != '\n';
		eval_known own = { 0 };
		eval_known_add(&own, t.data, t.len);
		assert_int_equal(eval_trust_scan(t.data, t.len, &own, why, sizeof why), inside || cr);
		if (cr)
			assert_non_null(strstr(why, "carriage return"));
		if (inside && !cr) {
			char want[64];
			snprintf(want, sizeof want, "source: line %zu uses putenv", line + 1);
			assert_non_null(strstr(why, want));
		}
		/* Without the workload's text, every line is read (comments aside). */
		char *code = cuco_text_strip(t.data, t.len, true);
		assert_int_equal(eval_trust_scan(t.data, t.len, NULL, why, sizeof why),
			cr || strstr(code, "putenv") != NULL);
		free(code);
		eval_known_free(&own);
		free(b);
		cuco_buf_free(&t);
	}
	/* The former disagreement, by name. */
	const char unclosed[] = "char *e = getenv(\"X\");\n// EVOLVE-BLOCK-START\nint b;\n";
	assert_true(eval_trust_scan(unclosed, strlen(unclosed), NULL, why, sizeof why));
	assert_non_null(strstr(why, "line 1 uses getenv"));
	const char stray[] = "// EVOLVE-BLOCK-END\nchar *e = getenv(\"X\");\n// EVOLVE-BLOCK-START\n"
		"int b;\n// EVOLVE-BLOCK-END\n";
	assert_true(eval_trust_scan(stray, strlen(stray), NULL, why, sizeof why));
	assert_non_null(strstr(why, "line 2 uses getenv"));
}

/* `cuco init --seed`: a seed the rule refuses is refused in its words; one
 * without blocks is refused; one with blocks is copied. */
static void test_init_agrees(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_SOURCE_ROOT");
	assert_non_null(root);
	char tmp[] = "/tmp/cuco-text-XXXXXX", program[512];
	assert_non_null(mkdtemp(tmp));
	snprintf(program, sizeof program, "%s/tests/programs/halo.c", root);
	for (size_t i = 0; i < NCASES; i++) {
		const struct mcase *c = &cases[i];
		print_message("%s\n", c->what);
		char seed[300], dir[300], name[16], made[512];
		snprintf(name, sizeof name, "w%zu", i);
		snprintf(seed, sizeof seed, "%s/seed%zu.c", tmp, i);
		snprintf(dir, sizeof dir, "%s/%s", tmp, name);
		assert_int_equal(cuco_write_file(seed, c->text, strlen(c->text), NULL), CUCO_OK);
		cuco_init_spec s = { .name = name, .program = program, .dir = dir, .seed = seed,
			.family = -1 };
		cuco_buf said = { 0 };
		cuco_err err = { 0 }, rule = { 0 };
		cuco_block *b;
		size_t n;
		int want = cuco_text_blocks(c->text, strlen(c->text), seed, &b, &n, &rule);
		free(b);
		int rc = cuco_workload_init(&s, &said, made, sizeof made, &err);
		if (want != CUCO_OK)
			assert_string_equal(err.msg, rule.msg);
		else if (n == 0)
			assert_non_null(strstr(err.msg, "no EVOLVE-BLOCK-START / EVOLVE-BLOCK-END lines"));
		assert_int_equal(rc, want == CUCO_OK && n > 0 ? CUCO_OK : CUCO_EDATA);
		cuco_buf_free(&said);
	}
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

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

/* Definitions at file scope and the calls in their bodies, as the edit
 * check reads them (cuco_text_functions): not a member's or a keyword's,
 * nor text in comments and quotes. */
static void test_functions(void **state)
{
	(void)state;
	const char src[] = "#include \"a.h\"\n#define TWICE(x) ((x) * 2)\n"
		"static int produce(layer *l,\n\tint c) __attribute__((hot))\n{\n"
		"\treturn TWICE(c) + (int)sizeof(l);\n}\n"
		"void step(void *s)\n{\n\tif (produce(s, 1)) { l->consume(1); ns::sync(); }\n"
		"\t/* gone(1) */ puts(\"never(2)\");\n}\nint declared(int x);\n";
	cuco_text_fn *v;
	size_t n = cuco_text_functions(src, strlen(src), &v);
	const char *want[][3] = { { "TWICE", "", "d" }, { "produce", "", "d" },
		{ "TWICE", "produce", "c" }, { "step", "", "d" }, { "produce", "step", "c" },
		{ "puts", "step", "c" } };
	const int lines[] = { 2, 3, 6, 8, 10, 11 };
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(v[i].name, want[i][0]);
		assert_string_equal(v[i].in, want[i][1]);
		assert_int_equal(v[i].defined, want[i][2][0] == 'd');
		assert_int_equal(v[i].line, lines[i]);
	}
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_patcher_agrees),
		cmocka_unit_test(test_trust_agrees),
		cmocka_unit_test(test_init_agrees),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_includes),
		cmocka_unit_test(test_functions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
