/* test-manifest.c — workload.json: loading, every kind of manifest error
 * with its exact message, placeholders, defines, slots, directives and the
 * peak model's arithmetic. */
#include "eval/eval_int.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

/* A fixture workload that must load. */
static cuco_workload *load(const char *name)
{
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(fixture(name), &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return wl;
}

static void test_load_mini(void **state)
{
	(void)state;
	cuco_workload *wl = load("mini");
	cuco_err err = { 0 };
	assert_string_equal(wl->name, "mini");
	assert_int_equal(wl->family, CUCO_FAMILY_CPU_MPI);
	assert_int_equal(wl->ranks, 2);
	assert_int_equal(wl->nsizes, 2);
	assert_string_equal(cuco_workload_size(wl, NULL)->name, "tiny");
	assert_int_equal(wl->ndims, 6);
	assert_true(cuco_workload_dim(wl, "granularity")->pow2);
	assert_false(cuco_workload_dim(wl, "scale")->directive);
	assert_int_equal(wl->nconstraints, 1);
	assert_int_equal(wl->warmup, 1);
	assert_int_equal(wl->reps, 5);
	assert_int_equal(wl->protocol, CUCO_PROTO_NATIVE);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	assert_string_equal(d.backend, "msg");
	assert_string_equal(d.granularity, "1");
	assert_string_equal(cuco_directive_value(&d, "scale"), "1");
	assert_true(cuco_directive_valid(wl, &d, &err));
	cuco_workload_free(wl);
}

static void test_directive_validity(void **state)
{
	(void)state;
	cuco_workload *wl = load("mini");
	cuco_err err = { 0 };
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_directive_set(&d, "sync", "flag");
	assert_false(cuco_directive_valid(wl, &d, &err));
	assert_string_equal(err.msg, "constraints[0]: forbidden combination: flags need RMA");
	cuco_directive_set(&d, "backend", "rma");
	assert_true(cuco_directive_valid(wl, &d, &err));
	cuco_directive_set(&d, "granularity", "3");
	assert_false(cuco_directive_valid(wl, &d, &err));
	assert_string_equal(err.msg, "granularity: \"3\" is outside the design space");
	cuco_directive_set(&d, "granularity", "8");
	cuco_directive_set(&d, "scale", "5");
	assert_false(cuco_directive_valid(wl, &d, &err));
	cuco_directive_set(&d, "scale", "4");
	cuco_directive_set(&d, "color", "red");
	assert_false(cuco_directive_valid(wl, &d, &err));
	assert_string_equal(err.msg, "color: no such knob in mini");
	cuco_workload_free(wl);
}

static void test_expand_defines_slots(void **state)
{
	(void)state;
	cuco_workload *wl = load("mini");
	cuco_err err = { 0 };
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_directive_set(&d, "backend", "rma");
	cuco_directive_set(&d, "granularity", "4");
	cuco_directive_set(&d, "scale", "3");
	eval_vars v = { .wl = wl, .size = cuco_workload_size(wl, "small"), .dir = &d,
		.compiler = "mpicc", .source = "/tmp/a b/c.c", .output = "/tmp/out", .warmup = 2, .reps = 7 };
	cuco_argv words = { 0 };
	cuco_buf out = { 0 };
	v.compiler = "mpicc -g";
	assert_int_equal(eval_expand("{compiler} {source} -o {output} {defines} "
		"{ranks} {size} {size.N} {backend} {warmup} {reps} 'q {size}' x\\ \"y\"", &v, &words, &err),
		CUCO_OK);
	cuco_argv_join(words.v, &out);
	assert_string_equal(out.data, "mpicc -g '/tmp/a b/c.c' -o /tmp/out "
		"-DCUCO_BACKEND_RMA=1 -DCUCO_BACKEND=2 -DCUCO_ISSUER_ONE=1 -DCUCO_ISSUER=1 "
		"-DCUCO_PLACEMENT_AFTER=1 -DCUCO_PLACEMENT=1 -DCUCO_SYNC_FENCE=1 -DCUCO_SYNC=1 "
		"-DCUCO_CHUNKS=4 -DN=4096 2 small 4096 rma 2 7 'q small' 'x y'");
	assert_string_equal(words.v[2], "/tmp/a b/c.c");  /* one word, as it is */
	cuco_argv_free(&words);
	cuco_buf_free(&out);
	static const struct { const char *tmpl, *msg; } bad[] = {
		{ "{output} {nope}", "unknown placeholder {nope}" },
		{ "{output} -x{defines}", "{defines} is a list of words: it must stand alone" },
		{ "'{compiler}' {output}", "{compiler} is a list of words: it must stand alone" },
		{ "{output} 'open", "unterminated ' quote" },
		{ "{output} {ranks", "unterminated placeholder at offset 9" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(eval_expand(bad[i].tmpl, &v, &words, &err), CUCO_EDATA);
		assert_string_equal(err.msg, bad[i].msg);
		cuco_argv_free(&words);
	}
	const char *src = "x = @SCALE@; y = @OTHER@; @SCALE@@";
	eval_apply_slots(wl, &d, src, strlen(src), &out);
	assert_string_equal(out.data, "x = 3; y = @OTHER@; 3@");
	cuco_buf_free(&out);
	cuco_workload_free(wl);
}

static void test_expr(void **state)
{
	(void)state;
	cuco_size sz = { .name = "s", .nvars = 2, .vars = { { "M", 10 }, { "K", 4 } } };
	cuco_err err = { 0 };
	double v = 0;
	assert_int_equal(cuco_expr("2*(M+1)-K/2", &sz, 2, &v, &err), CUCO_OK);
	assert_true(v == 20);
	assert_int_equal(cuco_expr(" M * K * 4 * (ranks - 1) ", &sz, 3, &v, &err), CUCO_OK);
	assert_true(v == 320);
	assert_int_equal(cuco_expr("-M + 1e3", &sz, 1, &v, &err), CUCO_OK);
	assert_true(v == 990);
	assert_int_equal(cuco_expr("M*Q", &sz, 1, &v, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "\"M*Q\": unknown variable Q");
	assert_int_equal(cuco_expr("M/(K-4)", &sz, 1, &v, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "\"M/(K-4)\": division by zero at offset 7");
	assert_int_equal(cuco_expr("(M+1", &sz, 1, &v, &err), CUCO_EDATA);
	assert_string_equal(err.msg, "\"(M+1\": expected ) at offset 4");
	assert_int_equal(cuco_expr("M K", &sz, 1, &v, &err), CUCO_EDATA);
	assert_int_equal(cuco_expr("", &sz, 1, &v, &err), CUCO_EDATA);

	cuco_workload *wl = load("mini");
	double bytes, flops;
	assert_int_equal(cuco_workload_peak(wl, NULL, &bytes, &flops, &err), CUCO_OK);
	assert_true(bytes == 256 * 8 * 2);
	assert_true(flops == 256);
	cuco_workload_free(wl);
}

/* ---- manifest errors: one broken copy of a valid manifest per kind ---------- */

static const char *base_manifest =
	"{\"name\": \"bad\", \"title\": \"t\", \"description\": \"d\", \"family\": \"cpu-mpi\","
	" \"ranks\": 2, \"sizes\": {\"default\": \"s\", \"s\": {\"N\": 4}},"
	" \"files\": {\"baseline\": \"seed.c\", \"seed\": \"seed.c\"},"
	" \"build\": \"{compiler} -o {output} {source}\", \"run\": \"{output}\","
	" \"design_space\": {\"backend\": {\"values\": [\"msg\", \"rma\"]}, \"issuer\": {\"values\": [\"one\"]},"
	"  \"placement\": {\"values\": [\"after\"]}, \"sync\": {\"values\": [\"fence\"]},"
	"  \"granularity\": {\"int\": {\"min\": 1, \"max\": 4}}},"
	" \"tolerance\": 0, \"limits\": {\"compile_s\": 1, \"run_s\": 1, \"bench_s\": 1},"
	" \"bench\": {\"warmup\": 0, \"reps\": 1, \"max_spread\": 1}}";

typedef struct tmp { char dir[256]; char manifest[PATH_MAX]; } tmp;

/* Write the base manifest with `key` set to the JSON `value` (NULL: removed)
 * into a fresh folder named bad/, with its seed.c; returns the real path. */
static void write_variant(tmp *t, const char *key, const char *value)
{
	make_tmpdir(t->dir, sizeof t->dir);
	char path[512];
	snprintf(path, sizeof path, "%s/bad", t->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/bad/seed.c", t->dir);
	cuco_write_file(path, "int main(void){return 0;}\n", 26, NULL);
	cJSON *root = cJSON_Parse(base_manifest);
	assert_non_null(root);
	if (key) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, key);
		if (value)
			cJSON_AddItemToObject(root, key, cJSON_Parse(value));
	}
	char *text = cJSON_Print(root);
	snprintf(path, sizeof path, "%s/bad/workload.json", t->dir);
	cuco_write_file(path, text, strlen(text), NULL);
	free(text);
	cJSON_Delete(root);
	assert_non_null(realpath(path, t->manifest));
}

static void collect(const char *line, void *arg)
{
	cuco_buf_printf(arg, "%s\n", line);
}

/* Load must fail with exactly `want` (after "<manifest>: "), and check must
 * report the same line. */
static void expect_refused(tmp *t, const char *want)
{
	char dir[300], expected[PATH_MAX + 256];
	snprintf(dir, sizeof dir, "%s/bad", t->dir);
	snprintf(expected, sizeof expected, "%s: %s", t->manifest, want);
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(dir, &wl, &err), CUCO_EDATA);
	assert_string_equal(err.msg, expected);
	cuco_buf lines = { 0 };
	assert_int_equal(cuco_workload_check(dir, collect, &lines), 1);
	strcat(expected, "\n");
	assert_string_equal(lines.data, expected);
	cuco_buf_free(&lines);
	rm_rf(t->dir);
}

/* expect_refused for the base manifest with `key` set to `value`. */
static void expect_error(const char *key, const char *value, const char *want)
{
	tmp t;
	write_variant(&t, key, value);
	expect_refused(&t, want);
}

/* The same for a manifest written byte for byte (len bytes of text). */
static void expect_text_error(const char *text, size_t len, const char *want)
{
	tmp t;
	write_variant(&t, NULL, NULL);
	assert_int_equal(cuco_write_file(t.manifest, text, len, NULL), CUCO_OK);
	expect_refused(&t, want);
}

/* A NUL would end the text early; what follows it must not be dropped silently. */
static void test_error_nul(void **state)
{
	(void)state;
	static const char text[] = "{\"name\": \"bad\"}\0\"ignored\"";
	expect_text_error(text, sizeof text - 1, "byte 16 is NUL; a text file holds none");
}

/* A key given twice would be read once and the other copy ignored. */
static void test_error_duplicate_key(void **state)
{
	(void)state;
	expect_error("sizes", "{\"default\": \"s\", \"s\": {\"N\": 4, \"N\": 8}}",
		"sizes.s.N: given twice");
	char text[2048];
	int n = snprintf(text, sizeof text, "%.*s, \"name\": \"other\"}", (int)strlen(base_manifest) - 1,
		base_manifest);
	expect_text_error(text, (size_t)n, "name: given twice");
}

static void test_valid_base(void **state)
{
	(void)state;
	tmp t;
	write_variant(&t, NULL, NULL);
	char dir[300];
	snprintf(dir, sizeof dir, "%s/bad", t.dir);
	cuco_buf lines = { 0 };
	assert_int_equal(cuco_workload_check(dir, collect, &lines), 0);
	assert_null(lines.data);
	rm_rf(t.dir);
}

static void test_error_missing_field(void **state)
{
	(void)state;
	expect_error("ranks", NULL, "ranks: missing");
}

static void test_error_bad_type(void **state)
{
	(void)state;
	expect_error("ranks", "\"two\"", "ranks: expected an integer");
}

static void test_error_unknown_placeholder(void **state)
{
	(void)state;
	expect_error("build", "\"{compiler} -o {output} {source} {bogus}\"", "build: unknown placeholder {bogus}");
}

static void test_error_missing_file(void **state)
{
	(void)state;
	expect_error("files", "{\"baseline\": \"seed.c\", \"seed\": \"nope.c\"}", "files.seed: nope.c: no such file");
	expect_error("files", "{\"baseline\": \"../../../../../../etc/passwd\"}",
		"files.baseline: ../../../../../../etc/passwd: outside the workload's folder and its siblings");
	expect_error("files", "{\"baseline\": \"/etc/passwd\"}",
		"files.baseline: /etc/passwd: outside the workload's folder and its siblings");
}

static void test_error_constraint_dimension(void **state)
{
	(void)state;
	expect_error("constraints", "[{\"forbid\": {\"color\": [\"red\"]}}]",
		"constraints[0].forbid.color: no such dimension");
}

static void test_error_bad_value(void **state)
{
	(void)state;
	expect_error("family", "\"gpu\"", "family: \"gpu\": expected cpu-mpi, cuda-nccl or cuda");
	expect_error("constraints", "[{\"forbid\": {\"backend\": [\"shm\"]}}]",
		"constraints[0].forbid.backend: shm: not a value of backend");
	expect_error("limits", "{\"compile_s\": 1, \"run_s\": -3, \"bench_s\": 1}", "limits.run_s: -3: must be at least 0.1");
	expect_error("protocol", "{\"kind\": \"compat\", \"pass\": \"OK\", \"time\": \"Time: [0-9.]+\"}",
		"protocol.time: \"Time: [0-9.]+\": needs a group around the number, e.g. ([0-9.]+)");
	expect_error("peak", "{\"bytes\": \"N*W\"}", "peak.bytes: size s: \"N*W\": unknown variable W");
}

/* Values that were once taken silently: cut, counted twice, or run as nothing. */
static void test_error_silent_values(void **state)
{
	(void)state;
	expect_error("ranks", "99999999999", "ranks: 99999999999: must be at most 4096");
	expect_error("design_space", "{\"backend\": {\"values\": [\"msg\", \"msg\"]}, \"issuer\": {\"values\": [\"one\"]},"
		" \"placement\": {\"values\": [\"after\"]}, \"sync\": {\"values\": [\"fence\"]},"
		" \"granularity\": {\"int\": {\"min\": 1, \"max\": 4}}}",
		"design_space.backend.values: \"msg\": given twice");
	expect_error("build", "\"\"", "build: empty: the command that builds {source} into {output}");
	expect_error("run", "\"  \"", "run: empty: the command that runs {output}");
	expect_error("sizes", "{\"default\": \"s\", \"s\": {\"N\": -5}}", "sizes.s.N: -5: a size is at least 0");
	expect_error("limits", "{\"compile_s\": 1, \"run_s\": 1e300, \"bench_s\": 1}",
		"limits.run_s: 1e+300: at most 86400 s (a day)");
}

static void test_error_unknown_field(void **state)
{
	(void)state;
	expect_error("rank", "2", "rank: unknown field");
}

static void test_check_reports_all(void **state)
{
	(void)state;
	tmp t;
	write_variant(&t, "ranks", "0");
	char path[PATH_MAX + 64];
	/* A second, independent problem: the seed disappears. */
	snprintf(path, sizeof path, "%s/bad/seed.c", t.dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/bad", t.dir);
	cuco_buf lines = { 0 };
	assert_int_equal(cuco_workload_check(path, collect, &lines), 3);
	assert_non_null(strstr(lines.data, "ranks: 0: must be at least 1\n"));
	assert_non_null(strstr(lines.data, "files.baseline: seed.c: no such file\n"));
	assert_non_null(strstr(lines.data, "files.seed: seed.c: no such file\n"));
	cuco_buf_free(&lines);
	assert_int_equal(cuco_workload_check("/nonexistent/wl", collect, &lines), 1);
	assert_string_equal(lines.data, "/nonexistent/wl: no such workload (no /nonexistent/wl)\n");
	cuco_buf_free(&lines);
	rm_rf(t.dir);
}

static void test_invalid_json(void **state)
{
	(void)state;
	tmp t;
	write_variant(&t, NULL, NULL);
	cuco_write_file(t.manifest, "{\n\"name\": \"bad\",\n oops\n}", 24, NULL);
	char dir[300], want[PATH_MAX + 64];
	snprintf(dir, sizeof dir, "%s/bad", t.dir);
	snprintf(want, sizeof want, "%s: (json): invalid JSON near line 3", t.manifest);
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(dir, &wl, &err), CUCO_EDATA);
	assert_string_equal(err.msg, want);
	rm_rf(t.dir);
}

static void test_list_and_find_by_name(void **state)
{
	(void)state;
	char dirs[4200];
	snprintf(dirs, sizeof dirs, "/nonexistent:%s", fixture(""));
	setenv("CUCO_WORKLOADS", dirs, 1);
	cuco_paths_reread();
	char **names = NULL;
	size_t n = 0;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_list(&names, &n, &err), CUCO_OK);
	assert_true(n >= 3);
	/* ./workloads is searched too: the fixtures are among the names, sorted. */
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		found += strcmp(names[i], "compat") == 0 || strcmp(names[i], "mini") == 0
			|| strcmp(names[i], "solo") == 0;
		if (i > 0)
			assert_true(strcmp(names[i - 1], names[i]) < 0);
	}
	assert_int_equal(found, 3);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	cuco_workload *wl = NULL;
	assert_int_equal(cuco_workload_load("solo", &wl, &err), CUCO_OK);
	assert_int_equal(wl->ranks, 1);
	assert_int_equal(cuco_workload_dim(wl, "granularity")->kind, CUCO_DIM_INT);
	cuco_workload_free(wl);
	assert_int_equal(cuco_workload_load("no-such-thing", &wl, &err), CUCO_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_mini),
		cmocka_unit_test(test_directive_validity),
		cmocka_unit_test(test_expand_defines_slots),
		cmocka_unit_test(test_expr),
		cmocka_unit_test(test_valid_base),
		cmocka_unit_test(test_error_missing_field),
		cmocka_unit_test(test_error_nul),
		cmocka_unit_test(test_error_duplicate_key),
		cmocka_unit_test(test_error_bad_type),
		cmocka_unit_test(test_error_unknown_placeholder),
		cmocka_unit_test(test_error_missing_file),
		cmocka_unit_test(test_error_constraint_dimension),
		cmocka_unit_test(test_error_bad_value),
		cmocka_unit_test(test_error_silent_values),
		cmocka_unit_test(test_error_unknown_field),
		cmocka_unit_test(test_check_reports_all),
		cmocka_unit_test(test_invalid_json),
		cmocka_unit_test(test_list_and_find_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
