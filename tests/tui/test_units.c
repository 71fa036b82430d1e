/* test_units.c — the screen's logic without a terminal: the line diff,
 * theme parsing with fallback, the key table, the tree model's folds and
 * filters on a real store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "tui/screen.h"
#include "tui/keys.h"
#include "tui/model.h"
#include "tui/theme.h"

/* Apply a diff's -/+ lines to old and compare with new: the hunks must
 * carry every change and nothing else. */
static char *render(const cuco_diff *d)
{
	cuco_buf b = { 0 };
	static const char marks[] = "@ -+";
	for (size_t i = 0; i < d->n; i++)
		cuco_buf_printf(&b, "%c%.*s\n", marks[d->lines[i].kind], d->lines[i].len, d->lines[i].text);
	cuco_buf_append(&b, "", 0);
	return b.data;
}

static void diff_small_change(void **state)
{
	(void)state;
	const char *a = "a\nb\nc\nd\ne\nf\ng\nh\n", *b = "a\nb\nc\nD\ne\nf\ng\nh\nI\n";
	cuco_diff d;
	cuco_diff_compute(&d, a, strlen(a), b, strlen(b), 1, 1000);
	assert_int_equal(d.added, 2);
	assert_int_equal(d.deleted, 1);
	char *out = render(&d);
	assert_string_equal(out, "@@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n@@@ -8,1 +8,2 @@\n h\n+I\n");
	free(out);
	cuco_diff_free(&d);
}

static void diff_identical_and_empty(void **state)
{
	(void)state;
	cuco_diff d;
	cuco_diff_compute(&d, "x\ny\n", 4, "x\ny\n", 4, 3, 1000);
	assert_int_equal(d.n, 0);
	cuco_diff_free(&d);
	cuco_diff_compute(&d, "", 0, "new\n", 4, 3, 1000);
	char *out = render(&d);
	assert_string_equal(out, "@@@ -0,0 +1,1 @@\n+new\n");
	free(out);
	cuco_diff_free(&d);
}

/* Myers finds the shortest script; past max_d it replaces the whole text. */
static void diff_minimal_and_cap(void **state)
{
	(void)state;
	const char *a = "1\n2\n3\n4\n5\n6\n", *b = "0\n1\n2\n4\n5\n6\n7\n";
	cuco_diff d;
	cuco_diff_compute(&d, a, strlen(a), b, strlen(b), 0, 1000);
	assert_int_equal(d.added + d.deleted, 3);  /* Myers' D */
	cuco_diff_free(&d);
	cuco_diff_compute(&d, a, strlen(a), b, strlen(b), 0, 2);
	assert_int_equal(d.deleted, 6);
	assert_int_equal(d.added, 7);
	cuco_diff_free(&d);
}

static void theme_parse_and_fallback(void **state)
{
	(void)state;
	tui_theme t;
	tui_theme_default(&t);
	tui_style dark_border = t.el[TUI_EL_BORDER];
	cuco_err err = { 0 };
	assert_int_equal(tui_theme_parse(&t, "# c\n\nnormal = bright-red on 17 bold\n  diff.add=color42 underline\n",
		"x.theme", &err), CUCO_OK);
	assert_int_equal(t.el[TUI_EL_NORMAL].fg, 9);
	assert_int_equal(t.el[TUI_EL_NORMAL].bg, 17);
	assert_int_equal(t.el[TUI_EL_NORMAL].attrs, TUI_ATTR_BOLD);
	assert_int_equal(t.el[TUI_EL_DIFF_ADD].fg, 42);
	assert_int_equal(t.el[TUI_EL_DIFF_ADD].attrs, TUI_ATTR_UNDERLINE);
	/* A key the file leaves out keeps the built-in value. */
	assert_memory_equal(&t.el[TUI_EL_BORDER], &dark_border, sizeof dark_border);
}

static void theme_errors_name_the_line(void **state)
{
	(void)state;
	tui_theme t;
	tui_theme_default(&t);
	cuco_err err = { 0 };
	assert_int_equal(tui_theme_parse(&t, "normal = red\nbogus = red\n", "x.theme", &err), CUCO_EDATA);
	assert_string_equal(err.msg, "x.theme:2: unknown element 'bogus'");
	assert_int_equal(tui_theme_parse(&t, "\n\nnormal = purple\n", "y.theme", &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "y.theme:3: normal: 'purple'"));
	assert_int_equal(tui_theme_parse(&t, "normal = red on\n", "z.theme", &err), CUCO_EDATA);
	assert_int_equal(tui_theme_parse(&t, "normal = 256\n", "z.theme", &err), CUCO_EDATA);
	assert_int_equal(tui_theme_parse(&t, "normal red\n", "z.theme", &err), CUCO_EDATA);
}

/* Every shipped theme parses, and names only known elements. */
static void shipped_themes_load(void **state)
{
	(void)state;
	const char *names[] = { "dark", "light", "monochrome", "high-contrast" };
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/themes", getenv("CUCO_SOURCE_ROOT"));
	setenv("CUCO_THEMES", dir, 1);
	cuco_paths_reread();
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		tui_theme t;
		cuco_err err = { 0 };
		if (tui_theme_load(&t, names[i], &err) != CUCO_OK)
			fail_msg("%s: %s", names[i], err.msg);
	}
	tui_theme t;
	cuco_err err = { 0 };
	assert_int_equal(tui_theme_load(&t, "no-such-theme", &err), CUCO_EDATA);
	/* Text after a NUL would be dropped silently: the theme is refused,
	 * by path and by name. */
	char tdir[] = "/tmp/cuco-theme-XXXXXX", file[64];
	assert_non_null(mkdtemp(tdir));
	snprintf(file, sizeof file, "%s/nul.theme", tdir);
	static const char text[] = "normal = red\n\0bogus = red\n";
	assert_int_equal(cuco_write_file(file, text, sizeof text - 1, &err), CUCO_OK);
	assert_int_equal(tui_theme_load(&t, file, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "nul.theme: byte 14 is NUL; a text file holds none"));
	setenv("CUCO_THEMES", tdir, 1);
	cuco_paths_reread();
	assert_int_equal(tui_theme_load(&t, "nul", &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "nul.theme: byte 14 is NUL"));
	unlink(file);
	rmdir(tdir);
}

/* One action per key, and every action reachable and documented. */
static void keys_unique_and_documented(void **state)
{
	(void)state;
	for (int a = 1; a < TUI_ACT_COUNT; a++) {
		const tui_binding *b = tui_binding_of((tui_action)a);
		assert_int_equal(tui_key_action(b->key), a);
		if (b->alt)
			assert_int_equal(tui_key_action(b->alt), a);
		assert_true(strlen(b->help) > 5);
	}
	cuco_buf help = { 0 };
	tui_keys_help(&help);
	for (int a = 1; a < TUI_ACT_COUNT; a++)
		assert_non_null(strstr(help.data, tui_binding_of((tui_action)a)->help));
	cuco_buf_free(&help);
	assert_int_equal(tui_key_action('\r'), TUI_ACT_TOGGLE);
	assert_int_equal(tui_key_action('Z'), TUI_ACT_NONE);
}

/* troff's text of a key table entry: '-' is "\\-", '\\' is "\\\\". */
static void man_escape(cuco_buf *out, const char *s)
{
	for (; *s; s++)
		cuco_buf_puts(out, *s == '-' ? "\\-" : *s == '\\' ? "\\\\" : (char[2]){ *s, 0 });
}

/* The manual's SCREEN KEYS is the key table, entry by entry, in its order. */
static void keys_in_the_manual(void **state)
{
	(void)state;
	char path[1024], *man = NULL;
	size_t len;
	snprintf(path, sizeof path, "%s/docs/cuco.1", getenv("CUCO_SOURCE_ROOT") ? getenv("CUCO_SOURCE_ROOT") : ".");
	cuco_err err = { 0 };
	if (cuco_read_file(path, 1 << 20, &man, &len, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	const char *at = strstr(man, ".SH SCREEN KEYS\n");
	assert_non_null(at);
	for (int a = 1; a < TUI_ACT_COUNT; a++) {
		const tui_binding *b = tui_binding_of((tui_action)a);
		cuco_buf want = { 0 };
		if (a == 1 || b->group != tui_binding_of((tui_action)(a - 1))->group)
			cuco_buf_printf(&want, ".SS %s\n", tui_group_name(b->group));
		cuco_buf_puts(&want, ".TP\n.B ");
		char names[32];
		cuco_strlcpy(names, b->names, sizeof names);
		char *save = NULL;
		for (char *w = strtok_r(names, " ", &save), *first = w; w; w = strtok_r(NULL, " ", &save)) {
			cuco_buf_puts(&want, w == first ? "" : "\\fR, \\fB");
			man_escape(&want, w);
		}
		cuco_buf_puts(&want, "\n");
		man_escape(&want, b->help);
		cuco_buf_puts(&want, "\n");
		const char *hit = strstr(at, want.data);
		if (!hit)
			fail_msg("docs/cuco.1 SCREEN KEYS lacks, after the previous key:\n%s", want.data);
		at = hit + want.len;
		cuco_buf_free(&want);
	}
	free(man);
}

/* Explanations wrap at words; a long line continues under its own indent. */
static void wrap_at_words(void **state)
{
	(void)state;
	cuco_buf b = { 0 };
	tui_wrap("the quick brown fox jumps over\n  a lazy dog and keeps running far\n\nend", 12, &b);
	assert_string_equal(b.data, "the quick\nbrown fox\njumps over\n  a lazy dog\n  and keeps\n"
		"  running\n  far\n\nend\n");
	cuco_buf_free(&b);
	/* A word longer than the line is cut, UTF-8 by characters, not bytes
	 * (in a UTF-8 locale, as the screen sets it). */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		skip();
	tui_wrap("ééééééééééééé x", 8, &b);
	assert_string_equal(b.data, "éééééééé\nééééé x\n");
	cuco_buf_free(&b);
}

/* ---- the model on a real store ------------------------------------------ */

struct fixture {
	char dir[256];
	cuco_store *st;
};

static int add_tree(cuco_txn *txn, void *arg)
{
	(void)arg;
	/* 1 → {2 → {4, 5}, 3}; 3 is on island 1, the rest on island 0 */
	const uint64_t parent[] = { 0, 1, 1, 2, 2 };
	for (int i = 0; i < 5; i++) {
		cuco_candidate c = { 0 };
		c.nparents = parent[i] ? 1 : 0;
		c.parents[0] = parent[i];
		c.island = i == 2 ? 1 : 0;
		c.origin = i == 0 ? CUCO_ORIGIN_BASELINE : CUCO_ORIGIN_TUNE;
		c.status = i == 3 ? CUCO_STATUS_FAILED : CUCO_STATUS_DONE;
		c.score = c.speedup = i == 4 ? 2.0 : 1.0;
		c.timing.median_us = 100;
		int rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
		cuco_event ev = { .kind = i == 4 ? CUCO_EVENT_PAUSE : i == 3 ? CUCO_EVENT_MODEL_DOWN
			: CUCO_EVENT_CANDIDATE };
		ev.candidate = c.id;
		if ((rc = cuco_event_add(txn, &ev)))
			return rc;
	}
	return CUCO_OK;
}

static int setup_store(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/cuco-tui-unit-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_open(f->dir, CUCO_STORE_CREATE, &f->st, &err), CUCO_OK);
	assert_int_equal(cuco_store_write(f->st, add_tree, NULL, &err), CUCO_OK);
	*state = f;
	return 0;
}

static int teardown_store(void **state)
{
	struct fixture *f = *state;
	cuco_store_close(f->st);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	int rc = system(cmd);
	free(f);
	return rc;
}

static void rows_ids(const tui_model *m, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t r = 0; r < m->nrows; r++) {
		char one[24];
		snprintf(one, sizeof one, "%s%llu", r ? " " : "", (unsigned long long)m->sums[m->rows[r]].id);
		strncat(out, one, size - strlen(out) - 1);
	}
}

static void model_tree_fold_filter(void **state)
{
	struct fixture *f = *state;
	tui_model m;
	tui_model_init(&m, false);
	bool changed = false;
	cuco_err err = { 0 };
	assert_int_equal(tui_model_refresh(&m, f->st, false, &changed, &err), CUCO_OK);
	assert_true(changed);
	char ids[128];
	rows_ids(&m, ids, sizeof ids);
	assert_string_equal(ids, "1 2 4 5 3");
	assert_int_equal(m.best_id, 5);
	assert_int_equal(m.baseline_id, 1);
	assert_int_equal(m.count[CUCO_STATUS_FAILED], 1);
	assert_true(m.paused);
	assert_true(m.model_down);
	assert_int_equal(m.log_count, 5);
	assert_true(tui_model_has_children(&m, 1));
	assert_false(tui_model_has_children(&m, 3));

	m.folded[tui_model_find(&m, 2)] = 1;  /* fold #2: 4 and 5 hide */
	tui_model_rows(&m);
	rows_ids(&m, ids, sizeof ids);
	assert_string_equal(ids, "1 2 3");
	m.folded[tui_model_find(&m, 2)] = 0;
	m.filter.island = 0;
	tui_model_rows(&m);
	rows_ids(&m, ids, sizeof ids);
	assert_string_equal(ids, "1 2 4 5");
	m.filter = (tui_filter){ -2, CUCO_STATUS_FAILED, -1 };
	tui_model_rows(&m);
	rows_ids(&m, ids, sizeof ids);
	assert_string_equal(ids, "4");
	assert_int_equal(tui_model_row_of(&m, 4), 0);
	assert_int_equal(tui_model_row_of(&m, 5), -1);

	/* Nothing moved: no reload. */
	assert_int_equal(tui_model_refresh(&m, f->st, false, &changed, &err), CUCO_OK);
	assert_false(changed);
	tui_model_free(&m);
}

/* The tree's lines: 1 → {2 → {4, 5}, 3}. #2 has a sibling below (#3), so
 * #4 and #5 carry a line at level 0; #4 has one below it, #5 is last. */
static void model_tree_lines_sort_search(void **state)
{
	struct fixture *f = *state;
	tui_model m;
	tui_model_init(&m, false);
	cuco_err err = { 0 };
	assert_int_equal(tui_model_refresh(&m, f->st, true, NULL, &err), CUCO_OK);
	const uint32_t last = 1u << 31;
	assert_true(m.lines[tui_model_find(&m, 1)] & last);
	assert_int_equal(m.lines[tui_model_find(&m, 2)], 0);          /* ├─ */
	assert_int_equal(m.lines[tui_model_find(&m, 3)], last);       /* └─ */
	assert_int_equal(m.lines[tui_model_find(&m, 4)], 1);          /* │ ├─ */
	assert_int_equal(m.lines[tui_model_find(&m, 5)], 1 | last);   /* │ └─ */

	/* Sorted, the list is flat and ordered by the figure (ties by id). */
	char ids[128];
	m.sort = TUI_SORT_SPEEDUP;
	tui_model_rows(&m);
	rows_ids(&m, ids, sizeof ids);
	assert_string_equal(ids, "5 1 2 3 4");
	m.sort = TUI_SORT_NEWEST;
	m.folded[tui_model_find(&m, 2)] = 1;  /* folds belong to the tree */
	tui_model_rows(&m);
	rows_ids(&m, ids, sizeof ids);
	assert_string_equal(ids, "5 4 3 2 1");
	m.sort = TUI_SORT_LINEAGE;
	m.folded[tui_model_find(&m, 2)] = 0;
	tui_model_rows(&m);

	/* Filters cycle through the statuses and origins that are there. */
	assert_int_equal(tui_model_next_status(&m, -1), CUCO_STATUS_DONE);
	assert_int_equal(tui_model_next_status(&m, CUCO_STATUS_DONE), CUCO_STATUS_FAILED);
	assert_int_equal(tui_model_next_status(&m, CUCO_STATUS_FAILED), -1);
	assert_int_equal(tui_model_next_origin(&m, -1), CUCO_ORIGIN_BASELINE);
	assert_int_equal(tui_model_next_origin(&m, CUCO_ORIGIN_BASELINE), CUCO_ORIGIN_TUNE);
	assert_int_equal(tui_model_next_origin(&m, CUCO_ORIGIN_TUNE), -1);

	/* A search marks its matches, counts them and steps both ways. */
	assert_int_equal(tui_model_search(&m, f->st, "tune", 1000, &err), CUCO_OK);
	assert_int_equal(m.nmatch, 4);
	/* A chunk at a time: the count grows as the search goes on. */
	assert_int_equal(tui_model_search(&m, f->st, "tune", 2, &err), CUCO_OK);
	assert_int_equal(m.searched, 2);
	assert_int_equal(m.nmatch, 1);   /* #1 baseline, #2 tune */
	assert_true(tui_model_search_step(&m, f->st, 2));
	assert_int_equal(m.nmatch, 3);
	assert_false(tui_model_search_step(&m, f->st, 2));
	assert_int_equal(m.nmatch, 4);
	assert_false(tui_model_search_step(&m, f->st, 2));
	assert_int_equal(tui_model_search(&m, f->st, "FAILED", 1000, &err), CUCO_OK);
	assert_int_equal(m.nmatch, 1);
	long r4 = tui_model_row_of(&m, 4);
	assert_int_equal(tui_model_next_match(&m, 0, 1), r4);
	assert_int_equal(tui_model_next_match(&m, 0, -1), r4);
	assert_int_equal(tui_model_next_match(&m, (size_t)r4, 1), r4);  /* wraps to itself */
	assert_int_equal(tui_model_search(&m, f->st, "#3 ", 1000, &err), CUCO_OK);
	assert_int_equal(m.nmatch, 1);
	assert_int_equal(tui_model_search(&m, f->st, "", 1000, &err), CUCO_OK);
	assert_int_equal(m.nmatch, 0);
	assert_int_equal(tui_model_next_match(&m, 0, 1), -1);
	tui_model_free(&m);
}

/* The run's state from its events: searching, paused, re-timing, the end. */
static int add_events(cuco_txn *txn, void *arg)
{
	const char *const *list = arg;
	int rc = CUCO_OK;
	for (int i = 0; list[i] && rc == CUCO_OK; i += 2) {
		cuco_event ev = { .time = 1000.0 + i, .kind = cuco_event_kind_of(list[i]) };
		cuco_strlcpy(ev.text, list[i + 1], sizeof ev.text);
		rc = cuco_event_add(txn, &ev);
	}
	return rc;
}

/* A model's reply for candidate #2 (used) and one refused: the candidate
 * carries only the used call's tokens. */
static int add_calls(cuco_txn *txn, void *arg)
{
	(void)arg;
	cuco_candidate c;
	int rc = cuco_cand_get(txn, 2, &c);
	if (rc)
		return rc;
	c.tokens_prompt = 100;
	c.tokens_completion = 50;
	c.cost_usd = 0.01;
	if ((rc = cuco_cand_put(txn, &c)))
		return rc;
	cuco_call used = { .kind = CUCO_CALL_PROPOSE, .outcome = CUCO_CALL_USED, .tokens_in = 100,
		.tokens_out = 50, .cost_usd = 0.01, .priced = true, .candidate = 2 };
	cuco_call refused = { .kind = CUCO_CALL_PROPOSE, .outcome = CUCO_CALL_REFUSED, .tokens_in = 200,
		.tokens_out = 80, .cost_usd = 0.02, .priced = true };
	if ((rc = cuco_call_add(txn, &used)))
		return rc;
	return cuco_call_add(txn, &refused);
}

/* The header's tokens and cost are the report's: every call's, the
 * refused one's too (they counted only candidates'), summed a chunk at a
 * time. */
static void model_usage_is_the_reports(void **state)
{
	struct fixture *f = *state;
	cuco_err err = { 0 };
	assert_int_equal(cuco_store_write(f->st, add_calls, NULL, &err), CUCO_OK);
	tui_model m;
	tui_model_init(&m, false);
	assert_int_equal(tui_model_refresh(&m, f->st, true, NULL, &err), CUCO_OK);
	assert_true(tui_model_summing(&m));
	int steps = 0;
	while (tui_model_sum_step(&m, f->st, 2))
		steps++;
	assert_true(steps >= 2);  /* 2 calls, then 5 candidates, 2 at a time */
	assert_false(tui_model_summing(&m));
	assert_int_equal(m.tokens, 430);
	assert_float_equal(m.cost_usd, 0.03, 1e-12);
	tui_model_free(&m);
}

static void model_run_state(void **state)
{
	struct fixture *f = *state;
	tui_model m;
	tui_model_init(&m, true);
	cuco_err err = { 0 };
	const char *start[] = { "run-start", "islands", "resume", "resumed", NULL };
	assert_int_equal(cuco_store_write(f->st, add_events, start, &err), CUCO_OK);
	assert_int_equal(tui_model_refresh(&m, f->st, true, NULL, &err), CUCO_OK);
	assert_int_equal(m.state, TUI_RUN_SEARCHING);
	assert_false(m.paused);
	assert_true(tui_model_engine_live(&m));
	assert_string_equal(tui_model_state_text(&m), "running");
	assert_true(m.started == 1000.0);
	const char *retime[] = { "pause", "paused", "retime", "re-timed", NULL };
	assert_int_equal(cuco_store_write(f->st, add_events, retime, &err), CUCO_OK);
	assert_int_equal(tui_model_refresh(&m, f->st, false, NULL, &err), CUCO_OK);
	assert_int_equal(m.state, TUI_RUN_RETIMING);
	assert_string_equal(tui_model_state_text(&m), "PAUSED");
	const char *end[] = { "resume", "resumed", "run-end", "budget reached after 3 strategy candidates", NULL };
	assert_int_equal(cuco_store_write(f->st, add_events, end, &err), CUCO_OK);
	assert_int_equal(tui_model_refresh(&m, f->st, false, NULL, &err), CUCO_OK);
	assert_int_equal(m.state, TUI_RUN_FINISHED);
	assert_false(tui_model_engine_live(&m));
	assert_string_equal(tui_model_state_text(&m), "finished");
	/* The clock stopped at run-end: 2 s after the run-start. */
	assert_true(tui_model_elapsed(&m) == 2.0);
	const char *again[] = { "run-start", "resumed", "run-end", "stopped after 0 strategy candidates", NULL };
	assert_int_equal(cuco_store_write(f->st, add_events, again, &err), CUCO_OK);
	assert_int_equal(tui_model_refresh(&m, f->st, false, NULL, &err), CUCO_OK);
	assert_int_equal(m.state, TUI_RUN_STOPPED);
	assert_string_equal(tui_model_state_text(&m), "stopped");
	tui_model_free(&m);

	/* A viewer of a run no session drives (no run.lock here) sees it stopped. */
	tui_model_init(&m, false);
	const char *restart[] = { "run-start", "resumed", NULL };
	assert_int_equal(cuco_store_write(f->st, add_events, restart, &err), CUCO_OK);
	assert_int_equal(tui_model_refresh(&m, f->st, true, NULL, &err), CUCO_OK);
	assert_true(tui_model_engine_live(&m));
	tui_model_check_engine(&m);
	assert_false(tui_model_engine_live(&m));
	assert_int_equal(m.state, TUI_RUN_STOPPED);
	tui_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_small_change),
		cmocka_unit_test(diff_identical_and_empty),
		cmocka_unit_test(diff_minimal_and_cap),
		cmocka_unit_test(theme_parse_and_fallback),
		cmocka_unit_test(theme_errors_name_the_line),
		cmocka_unit_test(shipped_themes_load),
		cmocka_unit_test(keys_unique_and_documented),
		cmocka_unit_test(keys_in_the_manual),
		cmocka_unit_test(wrap_at_words),
		cmocka_unit_test_setup_teardown(model_tree_fold_filter, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(model_tree_lines_sort_search, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(model_run_state, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(model_usage_is_the_reports, setup_store, teardown_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
