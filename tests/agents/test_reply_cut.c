/* test_reply_cut.c — replies cut off anywhere, and mangled ones: the
 * parser and applier refuse or accept, never crash, and never take a
 * cut-off reply for a whole one when its form has an end marker. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/strategies.h"

static const char parent[] =
	"#include <stdio.h>\n"
	"// EVOLVE-BLOCK-START\n"
	"static int chunks = 4;\n"
	"static int tile = 64;\n"
	"// EVOLVE-BLOCK-END\n"
	"int main(void) { return chunks + tile; }\n";

static const char tagged[] =
	"DIRECTIVE:\nbackend: rma\n\n"
	"<NAME>deeper</NAME>\n<DESCRIPTION>more chunks, smaller tiles</DESCRIPTION>\n"
	"<DIFF>\n"
	"<<<<<<< SEARCH\nstatic int chunks = 4;\n=======\nstatic int chunks = 8;\n>>>>>>> REPLACE\n"
	"<<<<<<< SEARCH\nstatic int tile = 64;\n=======\nstatic int tile = 32;\n>>>>>>> REPLACE\n"
	"</DIFF>\n";

static const char full[] =
	"DIRECTIVE:\nbackend: shm\n\n<CODE>\n```c\n"
	"#include <stdio.h>\n// EVOLVE-BLOCK-START\nstatic int chunks = 2;\nstatic int tile = 64;\n"
	"// EVOLVE-BLOCK-END\nint main(void) { return chunks + tile; }\n```\n</CODE>\n";

/* Parse and apply a prefix of a reply; the status. */
static int try_prefix(const char *reply, size_t n, char **out)
{
	char *text = cuco_xmalloc(n + 1);
	memcpy(text, reply, n);
	text[n] = '\0';
	cuco_reply r;
	cuco_err err = { 0 };
	int rc = cuco_reply_parse(text, NULL, NULL, &r, &err);
	*out = NULL;
	if (rc == CUCO_OK) {
		cuco_patched p;
		rc = cuco_patch_apply(parent, strlen(parent), &r, NULL, &p, &err);
		if (rc == CUCO_OK)
			*out = p.text;
		else
			assert_null(p.text);
		free(p.levels);
		cuco_reply_free(&r);
	}
	assert_true(rc == CUCO_OK || (rc == CUCO_EDATA && err.msg[0] && !strchr(err.msg, '\n')));
	free(text);
	return rc;
}

/* Every prefix that stops before the closing tag is refused; the whole
 * reply (with or without its last newline) applies every change. */
static void every_prefix(const char *reply, const char *closing, const char *want)
{
	size_t len = strlen(reply), end = (size_t)(strstr(reply, closing) - reply) + strlen(closing);
	for (size_t n = 0; n <= len; n++) {
		char *out;
		int rc = try_prefix(reply, n, &out);
		if (n < end && rc == CUCO_OK)
			fail_msg("a reply cut after %zu of %zu bytes was accepted:\n%.*s", n, len, (int)n, reply);
		if (n >= end) {
			assert_int_equal(rc, CUCO_OK);
			assert_string_equal(out, want);
		}
		free(out);
	}
}

static void test_tagged_diff_cut_anywhere(void **state)
{
	(void)state;
	every_prefix(tagged, "</DIFF>",
		"#include <stdio.h>\n// EVOLVE-BLOCK-START\nstatic int chunks = 8;\nstatic int tile = 32;\n"
		"// EVOLVE-BLOCK-END\nint main(void) { return chunks + tile; }\n");
}

static void test_tagged_code_cut_anywhere(void **state)
{
	(void)state;
	every_prefix(full, "</CODE>",
		"#include <stdio.h>\n// EVOLVE-BLOCK-START\nstatic int chunks = 2;\nstatic int tile = 64;\n"
		"// EVOLVE-BLOCK-END\nint main(void) { return chunks + tile; }\n");
}

/* Bare hunks have no end marker for the reply as a whole (the finish
 * reason catches that), but a cut inside a hunk is always refused. */
static void test_bare_hunk_cut_inside(void **state)
{
	(void)state;
	const char *hunk = strstr(tagged, "<<<<<<< SEARCH");
	const char *end = strstr(hunk, ">>>>>>> REPLACE\n") + strlen(">>>>>>> REPLACE");
	for (size_t n = 1; n < (size_t)(end - hunk); n++) {
		char *out;
		if (try_prefix(hunk, n, &out) == CUCO_OK)
			fail_msg("a hunk cut after %zu bytes was accepted", n);
	}
}

/* Deterministic mangling: swap, drop and duplicate lines of valid replies
 * thousands of times; whatever comes out, nothing crashes or leaks (run
 * under the sanitizers) and every refusal is one line. */
static void test_mangled(void **state)
{
	(void)state;
	const char *sources[] = { tagged, full };
	uint64_t x = 0x2545F4914F6CDD1Dull;
	int accepted = 0;
	for (int round = 0; round < 4000; round++) {
		const char *src = sources[round % 2];
		char *lines[64];
		int n = 0;
		char *copy = cuco_xstrdup(src);
		for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l && n < 64;
			l = strtok_r(NULL, "\n", &save))
			lines[n++] = l;
		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int i = (int)(x % (uint64_t)n), j = (int)((x >> 20) % (uint64_t)n);
			switch ((x >> 40) % 3) {
			case 0: { char *t = lines[i]; lines[i] = lines[j]; lines[j] = t; break; }
			case 1: lines[i] = ""; break;
			default: lines[i] = lines[j]; break;
			}
		}
		cuco_buf b = { 0 };
		for (int i = 0; i < n; i++) {
			cuco_buf_puts(&b, lines[i]);
			cuco_buf_puts(&b, "\n");
		}
		char *out;
		accepted += try_prefix(b.data, b.len, &out) == CUCO_OK;
		free(out);
		cuco_buf_free(&b);
		free(copy);
	}
	/* Some manglings leave a valid reply (swapped lines of one hunk's
	 * context, say); most must not. */
	assert_true(accepted > 0 && accepted < 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tagged_diff_cut_anywhere),
		cmocka_unit_test(test_tagged_code_cut_anywhere),
		cmocka_unit_test(test_bare_hunk_cut_inside),
		cmocka_unit_test(test_mangled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
