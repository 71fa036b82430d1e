/* test_reply.c — reply parsing: each accepted format, the directive and
 * its validation against a workload, and every malformed reply. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategies/strategies.h"
#include "test_llm_toy.h"

static char top[] = "/tmp/cuco-test-reply-XXXXXX";
static cuco_workload *wl;
static cuco_directive base;

static int setup(void **state)
{
	(void)state;
	if (toy_workload_make(top, &wl) != 0)
		return -1;
	cuco_directive_default(wl, &base);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return toy_workload_remove(top, wl);
}

static void expect_refusal(const char *text, const cuco_workload *w, const char *needle)
{
	cuco_reply r;
	cuco_err err = { 0 };
	assert_int_equal(cuco_reply_parse(text, w, &base, &r, &err), CUCO_EDATA);
	if (!strstr(err.msg, needle))
		fail_msg("error `%s` lacks `%s`", err.msg, needle);
	assert_int_equal(r.nhunks, 0);
	assert_null(r.code);
}

static void test_hunks_with_directive(void **state)
{
	(void)state;
	const char *text =
		"I will overlap the gather with the GEMM.\n\n"
		"DIRECTIVE:\n"
		"- **backend**: `rma`\n"
		"- sync: flag\n"
		"granularity: 8\n"
		"tile: 64\n"
		"\n"
		"```c\n"
		"<<<<<<< SEARCH\n"
		"int a;\n"
		"=======\n"
		"int b;\n"
		"int c;\n"
		">>>>>>> REPLACE\n"
		"```\n"
		"<<<<<<<<< SEARCH\n"   /* 9 characters: models miscount */
		"x();\n"
		"=====\n"
		">>>>> REPLACE\n";
	cuco_reply r;
	cuco_err err = { 0 };
	assert_int_equal(cuco_reply_parse(text, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIFF);
	assert_true(r.has_directive);
	assert_string_equal(r.directive.backend, "rma");
	assert_string_equal(r.directive.sync, "flag");
	assert_string_equal(r.directive.granularity, "8");
	assert_string_equal(cuco_directive_value(&r.directive, "tile"), "64");
	/* Fields not stated keep the base's. */
	assert_string_equal(r.directive.issuer, base.issuer);
	assert_int_equal(r.nhunks, 2);
	assert_string_equal(r.hunks[0].search, "int a;\n");
	assert_string_equal(r.hunks[0].replace, "int b;\nint c;\n");
	assert_int_equal(r.hunks[0].line, 10);
	assert_string_equal(r.hunks[1].search, "x();\n");
	assert_string_equal(r.hunks[1].replace, "");
	cuco_reply_free(&r);
}

static void test_tagged_forms(void **state)
{
	(void)state;
	cuco_reply r;
	cuco_err err = { 0 };
	const char *diff =
		"DIRECTIVE:\nbackend: shm\n\n"
		"<NAME>shm_window</NAME>\n"
		"<DESCRIPTION>\nUse a shared window;\n  loads replace the gather.\n</DESCRIPTION>\n"
		"<DIFF>\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n</DIFF>\n";
	assert_int_equal(cuco_reply_parse(diff, wl, &base, &r, &err), CUCO_OK);
	assert_string_equal(r.name, "shm_window");
	assert_string_equal(r.description, "Use a shared window; loads replace the gather.");
	assert_int_equal(r.nhunks, 1);
	cuco_reply_free(&r);

	const char *code_fenced =
		"DIRECTIVE:\nbackend: msg\n\n<NAME>x</NAME>\n<CODE>\n```c\nint main(void) { return 1; }\n```\n</CODE>\n";
	assert_int_equal(cuco_reply_parse(code_fenced, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_FULL);
	assert_string_equal(r.code, "int main(void) { return 1; }\n");
	cuco_reply_free(&r);

	const char *code_bare = "DIRECTIVE:\nbackend: msg\n<CODE>\nint x;\nint y;\n</CODE>";
	assert_int_equal(cuco_reply_parse(code_bare, wl, &base, &r, &err), CUCO_OK);
	assert_string_equal(r.code, "int x;\nint y;\n");
	cuco_reply_free(&r);
}

static void test_fenced_file(void **state)
{
	(void)state;
	cuco_reply r;
	cuco_err err = { 0 };
	const char *text = "DIRECTIVE:\nissuer: several\n\nHere is the file:\n\n```c\n#include <mpi.h>\n\nint main(void)\n{\n}\n```\nDone.\n";
	assert_int_equal(cuco_reply_parse(text, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_FULL);
	assert_string_equal(r.code, "#include <mpi.h>\n\nint main(void)\n{\n}\n");
	assert_string_equal(r.directive.issuer, "several");
	cuco_reply_free(&r);
	/* A fenced directive is not the file. */
	text = "```\nDIRECTIVE:\nbackend: shm\n```\n\n```c\nint main(void) { return 2; }\n```\n";
	assert_int_equal(cuco_reply_parse(text, wl, &base, &r, &err), CUCO_OK);
	assert_string_equal(r.directive.backend, "shm");
	assert_string_equal(r.code, "int main(void) { return 2; }\n");
	cuco_reply_free(&r);
	/* A reasoning model's thinking, drafts and all, is not the reply. */
	text = "<think>\nMaybe:\n```c\nint draft;\n```\nDIRECTIVE:\nbackend: msg\n</think>\n"
		"DIRECTIVE:\nbackend: rma\n\n```c\nint final;\n```\n";
	assert_int_equal(cuco_reply_parse(text, wl, &base, &r, &err), CUCO_OK);
	assert_string_equal(r.directive.backend, "rma");
	assert_string_equal(r.code, "int final;\n");
	cuco_reply_free(&r);
	expect_refusal("<think>\nstill thinking", wl, "reply ends inside <think>; cut off?");
	/* Without a workload the directive is optional. */
	assert_int_equal(cuco_reply_parse("```\nint x;\n```\n", NULL, NULL, &r, &err), CUCO_OK);
	assert_false(r.has_directive);
	cuco_reply_free(&r);
}

static void test_directive_refusals(void **state)
{
	(void)state;
	expect_refusal("```c\nint x;\n```\n", wl, "reply states no DIRECTIVE before its code");
	expect_refusal("```c\nint x;\n```\nDIRECTIVE:\nbackend: rma\n", wl,
		"directive line 4: DIRECTIVE comes after the code");
	expect_refusal("DIRECTIVE:\nbackend: nvlink\n```c\nint x;\n```\n", wl,
		"directive outside the design space:");
	expect_refusal("DIRECTIVE:\nbackend: msg\nsync: pscw\n```c\nint x;\n```\n", wl,
		"directive outside the design space:");
	expect_refusal("DIRECTIVE:\nbackend: rma\ngranularity: 3\n```c\nint x;\n```\n", wl,
		"directive outside the design space:");
	/* A sign is part of the value, not markdown: -8 is not 8. */
	expect_refusal("DIRECTIVE:\n- backend: rma\n- granularity: -8\n```c\nint x;\n```\n", wl,
		"directive outside the design space: granularity: \"-8\"");
	expect_refusal("DIRECTIVE:\ncolour: blue\n```c\nint x;\n```\n", wl,
		"directive line 2: `colour` is not a dimension of toy (backend, issuer, placement, sync, "
		"granularity, tile)");
	expect_refusal("DIRECTIVE:\n\n```c\nint x;\n```\n", wl, "DIRECTIVE states no `name: value` line");
	/* Which of two values was meant is unknowable: neither is taken. */
	expect_refusal("DIRECTIVE:\nbackend: rma\nsync: flag\n**Backend**: shm\n```c\nint x;\n```\n", wl,
		"directive line 4: `backend` stated twice (first on line 2); state each dimension once");
	expect_refusal("DIRECTIVE:\ntile: 64\ntile: 32\n```c\nint x;\n```\n", NULL,
		"directive line 3: `tile` stated twice (first on line 2)");
}

static void test_cut_off_and_malformed(void **state)
{
	(void)state;
	expect_refusal("<<<<<<< SEARCH\nint a;\n=======\nint b;\n", NULL,
		"hunk 1 (reply line 1): reply ends before its >>>>>>> REPLACE; cut off?");
	expect_refusal("```c\nint a;\n", NULL, "reply ends inside the code fence opened at line 1; cut off?");
	expect_refusal("<CODE>\nint a;\n", NULL, "reply ends before </CODE>");
	expect_refusal("<DIFF>\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", NULL,
		"reply ends before </DIFF>");
	expect_refusal("<DESCRIPTION>why\n```c\nint a;\n```\n", NULL, "reply ends before </DESCRIPTION>");
	expect_refusal("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", NULL,
		"hunk 1 (reply line 1): >>>>>>> REPLACE at line 3 without ======= before it");
	expect_refusal("<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", NULL, "a new SEARCH at line 3");
	expect_refusal("<DIFF>\nint a;\n</DIFF>\n", NULL, "<DIFF> holds no SEARCH/REPLACE hunk");
	expect_refusal("Sorry, I cannot help.", NULL, "reply holds no code");
	expect_refusal("```c\n  \n```\n", NULL, "reply's code is empty");
	expect_refusal("<CODE></CODE>\n", NULL, "reply's code is empty");
	expect_refusal("```c\nint a;\n```\n```c\nint b;\n```\n", NULL, "reply holds 2 fenced blocks");
	/* Four '<' are not a marker: this is prose, then no code at all. */
	expect_refusal("<<<< SEARCH\na\n=======\nb\n>>>> REPLACE\n", NULL, "reply holds no code");
}


/* A directive read from text: its five fields and its tile, or the refusal. */
static void expect_directive(const char *text, const char *backend, const char *issuer,
	const char *placement, const char *sync, const char *gran, const char *tile)
{
	cuco_reply r;
	cuco_err err = { 0 };
	if (cuco_reply_parse(text, wl, &base, &r, &err) != CUCO_OK)
		fail_msg("refused `%s`: %s", text, err.msg);
	assert_true(r.has_directive);
	assert_string_equal(r.directive.backend, backend);
	assert_string_equal(r.directive.issuer, issuer);
	assert_string_equal(r.directive.placement, placement);
	assert_string_equal(r.directive.sync, sync);
	assert_string_equal(r.directive.granularity, gran);
	assert_string_equal(cuco_directive_value(&r.directive, "tile"), tile);
	cuco_reply_free(&r);
}

/* Every form cuco itself prints a directive in is read back (issue 26:
 * 17 of 26 replies of a 1.5B model wrote cuco's short notation, which the
 * prompt shows for every candidate, and were refused). */
static void test_directive_forms(void **state)
{
	(void)state;
	const char *code = "\n```c\nint x;\n```\n";
	char text[512];
	/* The short notation after `backend:`, after the head, after `# Backend:`. */
	snprintf(text, sizeof text, "DIRECTIVE:\nbackend: rma/several/interleave/flag/8 tile=64\n%s", code);
	expect_directive(text, "rma", "several", "interleave", "flag", "8", "64");
	snprintf(text, sizeof text, "Directive: shm/one/after/fence/4%s", code);
	expect_directive(text, "shm", "one", "after", "fence", "4", base.knobs[0].value);
	snprintf(text, sizeof text, "# Backend: rma/one/interleave/pscw/16 tile=32%s", code);
	expect_directive(text, "rma", "one", "interleave", "pscw", "16", "32");
	/* As a prompt shows a candidate's: `- directive: …`. */
	snprintf(text, sizeof text, "- directive: `msg/several/interleave/flag/2`%s", code);
	expect_directive(text, "msg", "several", "interleave", "flag", "2", base.knobs[0].value);
	/* Inline pairs, with `:` or `=`. */
	snprintf(text, sizeof text, "DIRECTIVE: backend: shm, issuer: one, placement: interleave, "
		"sync: flag, granularity: 32, tile: 32%s", code);
	expect_directive(text, "shm", "one", "interleave", "flag", "32", "32");
	snprintf(text, sizeof text, "DIRECTIVE: backend=rma; sync=flag granularity=2%s", code);
	expect_directive(text, "rma", base.issuer, base.placement, "flag", "2", base.knobs[0].value);
	/* A schema line copied with its comment. */
	snprintf(text, sizeof text, "DIRECTIVE:\nbackend: shm   # how bytes move\nsync: flag # ok%s", code);
	expect_directive(text, "shm", base.issuer, base.placement, "flag", base.granularity,
		base.knobs[0].value);
	/* No head at all: the dimensions' lines before the code. */
	snprintf(text, sizeof text, "**Backend**: rma\n**Sync**: flag\n%s", code);
	expect_directive(text, "rma", base.issuer, base.placement, "flag", base.granularity,
		base.knobs[0].value);
	/* `-` in the short notation keeps the parent's value. */
	snprintf(text, sizeof text, "DIRECTIVE:\nbackend: shm/-/-/flag/-%s", code);
	expect_directive(text, "shm", base.issuer, base.placement, "flag", base.granularity,
		base.knobs[0].value);
	/* The schema's list of values copied whole names no choice. */
	expect_refusal("DIRECTIVE:\nbackend: msg | rma | shm\n```c\nint x;\n```\n", wl,
		"directive line 2: `backend: msg | rma | shm` lists the allowed values; state one of them");
	/* Short notation with the wrong number of parts is not guessed at. */
	expect_refusal("DIRECTIVE:\nbackend: rma/one/flag\n```c\nint x;\n```\n", wl,
		"directive line 2: `rma/one/flag` is not the short notation");
}

/* A reply in the JSON a server's structured output gives (docs/replies.md). */
static void test_json_replies(void **state)
{
	(void)state;
	cuco_reply r;
	cuco_err err = { 0 };
	const char *diff = "{\"directive\": {\"backend\": \"rma\", \"issuer\": \"one\", \"placement\": "
		"\"interleave\", \"sync\": \"flag\", \"granularity\": 8, \"tile\": 32}, \"name\": \"puts\", "
		"\"description\": \"one-sided\", \"edits\": [{\"search\": \"int a;\", \"replace\": "
		"\"int b;\\nint c;\\n\"}, {\"search\": \"x();\\n\", \"replace\": \"\"}]}";
	assert_int_equal(cuco_reply_parse(diff, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIFF);
	assert_string_equal(r.directive.backend, "rma");
	assert_string_equal(r.directive.granularity, "8");
	assert_string_equal(cuco_directive_value(&r.directive, "tile"), "32");
	assert_string_equal(r.name, "puts");
	assert_string_equal(r.description, "one-sided");
	assert_int_equal(r.nhunks, 2);
	assert_string_equal(r.hunks[0].search, "int a;\n");
	assert_string_equal(r.hunks[0].replace, "int b;\nint c;\n");
	assert_string_equal(r.hunks[1].replace, "");
	cuco_reply_free(&r);
	/* Fenced as ```json, a block's new text, and a directive alone. */
	const char *blocks = "```json\n{\"directive\": {\"backend\": \"shm\"}, \"blocks\": "
		"[\"int y = 2;\"]}\n```\n";
	assert_int_equal(cuco_reply_parse(blocks, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_BLOCKS);
	assert_int_equal(r.nblocks, 1);
	assert_string_equal(r.blocks[0], "int y = 2;\n");
	cuco_reply_free(&r);
	const char *only = "{\"directive\": {\"backend\": \"shm\", \"sync\": \"flag\"}, \"name\": \"n\", "
		"\"description\": \"d\"}";
	expect_refusal(only, wl, "reply holds no code, only a directive");
	assert_int_equal(cuco_reply_parse_any(only, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_string_equal(r.directive.sync, "flag");
	cuco_reply_free(&r);
	expect_refusal("{\"directive\": {\"backend\": \"nvlink\"}, \"edits\": []}", wl,
		"directive outside the design space");
	expect_refusal("{\"directive\": {\"colour\": \"red\"}, \"code\": \"int x;\"}", wl,
		"`colour` is not a dimension of toy");
	expect_refusal("{\"directive\": {\"backend\": \"rma\"}, \"edits\": [{\"search\": 3}]}", wl,
		"JSON reply: edits[0].search is not a string");
	expect_refusal("{\"directive\": {\"backend\": \"rma\"}, \"edits\": [{\"search\": \"a", wl,
		"JSON reply is cut off or not JSON");
}

/* A reply with a directive and no code is a directive-only child where
 * the caller knows the reply is whole (a cut-off one looks the same);
 * "no code" is said as that when there is no directive either. */
static void test_directive_only(void **state)
{
	(void)state;
	cuco_reply r;
	cuco_err err = { 0 };
	const char *text = "DIRECTIVE:\nbackend: shm\nsync: flag\n\nShared loads are cheaper here.\n";
	expect_refusal(text, wl, "reply holds no code, only a directive: give the change as "
		"SEARCH/REPLACE hunks");
	assert_int_equal(cuco_reply_parse_any(text, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_string_equal(r.directive.backend, "shm");
	cuco_reply_free(&r);
	expect_refusal("I would use shared memory.", wl, "reply states no DIRECTIVE and holds no code");
}

/* A hunk that edits the directive as if it were a line of the program
 * (Qwen2.5-Coder 1.5B wrote `"search": "sync: pscw", "replace": "sync:
 * flag"` beside a directive stating the change): set aside, its value
 * taken where the stated directive kept the parent's, and a reply left
 * with no other hunk is a directive-only child where one may be. */
static void test_directive_hunks(void **state)
{
	(void)state;
	cuco_reply r;
	cuco_err err = { 0 };
	const char *only = "{\"directive\": {\"backend\": \"shm\", \"sync\": \"flag\"}, "
		"\"name\": \"n\", \"description\": \"d\", \"edits\": [{\"search\": \"sync: pscw\", "
		"\"replace\": \"sync: flag\"}]}";
	assert_int_equal(cuco_reply_parse_any(only, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_int_equal(r.nhunks, 0);
	assert_int_equal(r.set_aside, 1);
	assert_string_equal(r.directive.sync, "flag");
	cuco_reply_free(&r);
	expect_refusal(only, wl, "its edits only restate the directive (`sync: flag`)");
	/* The hunk's value where the directive kept the parent's; a code hunk
	 * beside it stays. */
	const char *mixed = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"**backend**: msg\", \"replace\": \"**backend**: rma\"}, {\"search\": \"int a;\", "
		"\"replace\": \"int b;\"}]}";
	assert_int_equal(cuco_reply_parse(mixed, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIFF);
	assert_string_equal(r.directive.backend, "rma");
	assert_int_equal(r.nhunks, 1);
	assert_int_equal(r.set_aside, 1);
	assert_string_equal(r.hunks[0].search, "int a;\n");
	cuco_reply_free(&r);
	/* The directive's stated value stands against the hunk's; a value out
	 * of the design space is refused as the directive's. */
	const char *both = "DIRECTIVE:\nbackend: rma\nsync: pscw\n\n<<<<<<< SEARCH\nsync: fence\n"
		"=======\nsync: flag\n>>>>>>> REPLACE\n";
	assert_int_equal(cuco_reply_parse_any(both, wl, &base, &r, &err), CUCO_OK);
	assert_string_equal(r.directive.sync, "pscw");
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	cuco_reply_free(&r);
	expect_refusal("{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"sync: fence\", \"replace\": \"sync: pscw\"}]}", wl, "directive outside the design space");
	expect_refusal("{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"granularity: 1\", \"replace\": \"granularity: many\"}]}", wl,
		"directive outside the design space: granularity: \"many\"");
	expect_refusal("{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"sync: fence\", \"replace\": \"sync: a_value_longer_than_a_field_holds_0123456789\"}]}",
		wl, "hunk 1 (`sync: a_value_longer_than_a_field_holds_0123456789`): cannot set sync");
	/* The short notation the prompt shows the parent's directive in,
	 * edited as a line (Qwen2.5-Coder 1.5B, after the schema held its
	 * directive): each value it changes is taken. */
	const char *short_form = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"msg/one/after/fence/1 tile=32\", \"replace\": \"- directive: shm/one/after/flag/1 "
		"tile=64\"}]}";
	assert_int_equal(cuco_reply_parse_any(short_form, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_int_equal(r.set_aside, 1);
	assert_string_equal(r.directive.backend, "shm");  /* the directive kept the parent's */
	assert_string_equal(r.directive.sync, "flag");
	assert_string_equal(cuco_directive_value(&r.directive, "tile"), "64");
	cuco_reply_free(&r);
	expect_refusal(short_form, wl, "its edits only restate the directive (`backend: shm`)");
	/* The parent's value alone into another (Qwen2.5-Coder 1.5B's `shm`
	 * into `rma`, three replies of this stop's run); a word no dimension
	 * holds, or a value the dimension does not allow, stays a hunk. */
	const char *bare = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"msg\", \"replace\": \"rma\"}]}";
	assert_int_equal(cuco_reply_parse_any(bare, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_string_equal(r.directive.backend, "rma");
	cuco_reply_free(&r);
	const char *words[][2] = { { "step", "walk" }, { "msg", "nvlink" }, { "msg;", "rma;" } };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "{\"directive\": {\"backend\": \"msg\"}, \"edits\": "
			"[{\"search\": \"%s\", \"replace\": \"%s\"}]}", words[i][0], words[i][1]);
		assert_int_equal(cuco_reply_parse(text, wl, &base, &r, &err), CUCO_OK);
		assert_int_equal(r.nhunks, 1);
		assert_int_equal(r.set_aside, 0);
		cuco_reply_free(&r);
	}
	/* A line of the program that only looks like one is code. */
	const char *code = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"tile: 32,\\nx: 1\", \"replace\": \"tile: 64,\\nx: 1\"}]}";
	assert_int_equal(cuco_reply_parse(code, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.nhunks, 1);
	assert_int_equal(r.set_aside, 0);
	cuco_reply_free(&r);
}

/* The reply form's own edit sent back (run 2 of bench/results/agents.md:
 * 18 of 68 refused replies) is set aside: with a new directive it is a
 * directive-only child, where code is required it is refused as the form,
 * and an edit of real lines beside it stays. */
static void test_form_echo(void **state)
{
	(void)state;
	cuco_reply r;
	cuco_err err = { 0 };
	const char *json = "{\"directive\": {\"backend\": \"rma\", \"sync\": \"flag\"}, "
		"\"name\": \"short_snake_case_name\", \"description\": \"d\", \"edits\": [{\"search\": "
		"\"" CUCO_SEARCH_PLACEHOLDER "\", \"replace\": \"" CUCO_REPLACE_PLACEHOLDER "\"}]}";
	assert_int_equal(cuco_reply_parse_any(json, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_int_equal(r.nhunks, 0);
	assert_true(r.echoed);
	assert_string_equal(r.directive.backend, "rma");
	cuco_reply_free(&r);
	expect_refusal(json, wl, "reply is the reply form sent back: its only edit is the form's "
		"placeholder");
	/* The text form's skeleton, sent back the same way. */
	const char *text = "DIRECTIVE:\nbackend: shm\n\n<NAME>n</NAME>\n<DIFF>\n<<<<<<< SEARCH\n"
		CUCO_SEARCH_PLACEHOLDER "\n=======\n" CUCO_REPLACE_PLACEHOLDER "\n>>>>>>> REPLACE\n"
		"</DIFF>\n";
	assert_int_equal(cuco_reply_parse_any(text, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	assert_string_equal(r.directive.backend, "shm");
	cuco_reply_free(&r);
	/* Beside a real edit the placeholder goes and the edit stays. */
	const char *mixed = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"" CUCO_SEARCH_PLACEHOLDER "\", \"replace\": \"" CUCO_REPLACE_PLACEHOLDER "\"}, "
		"{\"search\": \"int a;\", \"replace\": \"int b;\"}]}";
	assert_int_equal(cuco_reply_parse(mixed, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIFF);
	assert_int_equal(r.nhunks, 1);
	assert_string_equal(r.hunks[0].search, "int a;\n");
	cuco_reply_free(&r);
	/* A placeholder SEARCH with a REPLACE of the model's own is an edit
	 * that quotes no line: patch.c refuses it, saying so. */
	const char *half = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"search\": "
		"\"" CUCO_SEARCH_PLACEHOLDER "\", \"replace\": \"int b;\"}]}";
	assert_int_equal(cuco_reply_parse(half, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.nhunks, 1);
	assert_false(r.echoed);
	cuco_reply_free(&r);
	/* An edit may name a function and give its new definition. */
	const char *fn = "{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"function\": "
		"\"step\", \"text\": \"void step(void) {}\"}, {\"search\": \"int a;\", \"replace\": "
		"\"int b;\"}]}";
	assert_int_equal(cuco_reply_parse(fn, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.nhunks, 2);
	assert_true(r.hunks[0].function);
	assert_string_equal(r.hunks[0].search, "step\n");
	assert_string_equal(r.hunks[0].replace, "void step(void) {}\n");
	assert_false(r.hunks[1].function);
	cuco_reply_free(&r);
	expect_refusal("{\"directive\": {\"backend\": \"msg\"}, \"edits\": [{\"function\": "
		"\"step\"}]}", wl, "JSON reply: edits[0].text is not a string");
	/* An empty list of edits, as the schema allows: the directive alone. */
	const char *none = "{\"directive\": {\"backend\": \"shm\"}, \"name\": \"n\", "
		"\"description\": \"d\", \"edits\": []}";
	assert_int_equal(cuco_reply_parse_any(none, wl, &base, &r, &err), CUCO_OK);
	assert_int_equal(r.kind, CUCO_REPLY_DIRECTIVE);
	cuco_reply_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hunks_with_directive),
		cmocka_unit_test(test_tagged_forms),
		cmocka_unit_test(test_fenced_file),
		cmocka_unit_test(test_directive_refusals),
		cmocka_unit_test(test_cut_off_and_malformed),
		cmocka_unit_test(test_directive_forms),
		cmocka_unit_test(test_json_replies),
		cmocka_unit_test(test_directive_only),
		cmocka_unit_test(test_directive_hunks),
		cmocka_unit_test(test_form_echo),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
