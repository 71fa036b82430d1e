/* test-trust.c — the evaluator's defences alone (trust.c, elf.c, the
 * sealed native protocol of result.c): the seal against SipHash's
 * reference vector and a forged line, the source scan's regions and
 * escapes, the host-call rules on made-up binaries and counts, the verdict
 * rules, the clocks and the peak model, and the ELF reader on real and
 * hostile files. The corpus of whole hostile candidates is tests/hostile. */
#include "eval/eval_int.h"
#include "util.h"
#include "../../workloads/common/cuco_seal.h"
/* The frame's half of the ticket file, as a one-GPU frame includes it. */
#define CUCO_FRAME 1
#include "../../workloads/common/cuco_trust.h"

#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static void test_seal_reference(void **state)
{
	(void)state;
	/* SipHash-2-4's published vector: key 00..0f, message 00..0e. */
	unsigned char k[16], m[15];
	for (int i = 0; i < 16; i++)
		k[i] = (unsigned char)i;
	for (int i = 0; i < 15; i++)
		m[i] = (unsigned char)i;
	uint64_t k0 = cuco_seal_load(k, 8), k1 = cuco_seal_load(k + 8, 8);
	assert_true(cuco_seal(k0, k1, m, 15) == 0xa129ca6149be45e5ull);
	assert_true(cuco_seal(k0, k1, m, 0) == 0x726fdb47dd0e0e31ull);
}

static void test_ticket(void **state)
{
	(void)state;
	eval_ticket a, b;
	eval_ticket_new(&a);
	eval_ticket_new(&b);
	assert_true(a.k0 != b.k0 || a.k1 != b.k1);  /* a fresh key per stage */
	cuco_seal_ticket t = { 0, 0, 0 };
	assert_int_equal(cuco_seal_ticket_parse(a.env + strlen(CUCO_SEAL_ENV "="), &t), 0);
	assert_true(t.k0 == a.k0 && t.k1 == a.k1 && t.seed == a.seed);
	/* Malformed tickets are no tickets: short, long, not hex. */
	assert_int_equal(cuco_seal_ticket_parse("1:abc", &t), -1);
	assert_int_equal(cuco_seal_ticket_parse(NULL, &t), -1);
	char bad[80];
	snprintf(bad, sizeof bad, "%sx", a.env + strlen(CUCO_SEAL_ENV "="));
	assert_int_equal(cuco_seal_ticket_parse(bad, &t), -1);
	snprintf(bad, sizeof bad, "%s", a.env + strlen(CUCO_SEAL_ENV "="));
	bad[5] = 'g';
	assert_int_equal(cuco_seal_ticket_parse(bad, &t), -1);

	const char *json = "{\"correct\": true}";
	char line[256];
	snprintf(line, sizeof line, "%016llx %s", (unsigned long long)cuco_seal(a.k0, a.k1, json, strlen(json)),
		json);
	const char *got = NULL;
	assert_true(eval_ticket_open(&a, line, &got));
	assert_string_equal(got, json);
	assert_false(eval_ticket_open(&b, line, &got));  /* another stage's key */
	line[strlen(line) - 2] = 'X';                     /* a changed verdict */
	assert_false(eval_ticket_open(&a, line, &got));
	assert_false(eval_ticket_open(&a, "zz", &got));
}

/* A framed program's ticket: the evaluator writes it into the stage's
 * folder, owner-only; the frame, run there, takes it, empties the file
 * (a hard link shows it: in the sandbox the file is a mount point that
 * stays) and removes it. Run by hand, without a file, it is not sealed. */
static void test_ticket_file(void **state)
{
	(void)state;
	char dir[256], path[PATH_MAX + 32], kept[PATH_MAX + 32], cwd[PATH_MAX];
	make_tmpdir(dir, sizeof dir);
	eval_ticket t;
	eval_ticket_new(&t);
	cuco_err err = { 0 };
	assert_int_equal(eval_ticket_file(&t, dir, path, sizeof path, &err), CUCO_OK);
	assert_int_equal(eval_ticket_file(&t, dir, path, sizeof path, &err), CUCO_OK);  /* a stale one is replaced */
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	snprintf(kept, sizeof kept, "%s/kept", dir);
	assert_int_equal(link(path, kept), 0);

	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(dir), 0);
	assert_null(cuco_take_ticket_file());
	assert_true(cuco_ticket.sealed);
	assert_true(cuco_ticket.t.k0 == t.k0 && cuco_ticket.t.k1 == t.k1 && cuco_ticket.t.seed == t.seed);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(stat(kept, &sb), 0);
	assert_int_equal(sb.st_size, 0);

	memset(&cuco_ticket, 0, sizeof cuco_ticket);
	assert_null(cuco_take_ticket_file());
	assert_false(cuco_ticket.sealed);
	assert_int_equal(chdir(cwd), 0);
	rm_rf(dir);
}

/* Feed lines to a native parse under ticket t; o is the outcome. */
static void parse_lines(const eval_ticket *t, const char *const *lines, eval_parse *p, eval_outcome *o)
{
	static cuco_workload wl;
	wl.protocol = CUCO_PROTO_NATIVE;
	cuco_err err = { 0 };
	assert_int_equal(eval_parse_init(p, &wl, &err), CUCO_OK);
	p->ticket = t;
	for (int i = 0; lines[i]; i++)
		eval_parse_line(lines[i], strlen(lines[i]), p);
	eval_parse_finish(p, o);
}

static char *sealed(const eval_ticket *t, const char *json)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s%016llx %s", CUCO_SEAL_TAG,
		(unsigned long long)cuco_seal(t->k0, t->k1, json, strlen(json)), json);
	return b.data;
}

static void test_sealed_protocol(void **state)
{
	(void)state;
	eval_ticket t;
	eval_ticket_new(&t);
	char json[512];
	snprintf(json, sizeof json, "{\"correct\": true, \"max_error\": 0, \"latency_us\": {\"median\": 5}, "
		"\"seed\": \"%016llx\", \"ranks\": 2, \"checks\": 4, \"host_calls\": 30, "
		"\"host_calls_by\": \"MPI_Isend=15 MPI_Irecv=15\", \"wall_us\": 6}", (unsigned long long)t.seed);
	char *good = sealed(&t, json);
	eval_parse p;
	eval_outcome o;
	const char *one[] = { "log line", good, NULL };
	parse_lines(&t, one, &p, &o);
	assert_true(o.have_result);
	assert_true(o.correct);
	assert_true(o.seed == t.seed);
	assert_int_equal(o.ranks, 2);
	assert_int_equal(o.checks, 4);
	assert_int_equal(o.timing.host_calls, 30);
	assert_string_equal(o.host_calls_by, "MPI_Isend=15 MPI_Irecv=15");
	assert_string_equal(p.forged, "");
	eval_parse_free(&p);

	/* The candidate's own line, under a sealed one or alone. */
	const char *fake[] = { "CUCO_RESULT {\"correct\": true}", good, NULL };
	parse_lines(&t, fake, &p, &o);
	assert_non_null(strstr(p.forged, "printed a CUCO_RESULT line of its own"));
	eval_parse_free(&p);
	const char *fake_only[] = { "x CUCO_RESULT {\"correct\": true}", NULL };
	parse_lines(&t, fake_only, &p, &o);
	assert_false(o.have_result);
	assert_non_null(strstr(p.forged, "of its own"));
	eval_parse_free(&p);

	/* Sealed under another key; or two verdicts. */
	eval_ticket other;
	eval_ticket_new(&other);
	char *foreign = sealed(&other, json);
	const char *wrong_key[] = { foreign, NULL };
	parse_lines(&t, wrong_key, &p, &o);
	assert_false(o.have_result);
	assert_non_null(strstr(p.forged, "whose seal is not this run's"));
	eval_parse_free(&p);
	const char *twice[] = { good, good, NULL };
	parse_lines(&t, twice, &p, &o);
	assert_true(o.have_result);
	assert_non_null(strstr(p.forged, "a second sealed verdict"));
	eval_parse_free(&p);

	/* Nothing at all: a protocol failure, not a forgery. */
	const char *none[] = { "done", NULL };
	parse_lines(&t, none, &p, &o);
	assert_false(o.have_result);
	assert_string_equal(p.forged, "");
	assert_non_null(strstr(o.protocol_error, "no sealed verdict"));
	eval_parse_free(&p);
	free(good);
	free(foreign);
}

static bool verdict(const cuco_workload *wl, const eval_trust *tr, const eval_ticket *t, const char *json,
	char *why, size_t size)
{
	char *line = sealed(t, json);
	const char *lines[] = { line, NULL };
	eval_parse p;
	eval_outcome o;
	parse_lines(t, lines, &p, &o);
	bool refused = eval_trust_verdict(wl, tr, t, &p, &o, why, size);
	eval_parse_free(&p);
	free(line);
	return refused;
}

static void test_verdict_rules(void **state)
{
	(void)state;
	cuco_workload wl = { .family = CUCO_FAMILY_CPU_MPI, .ranks = 2, .protocol = CUCO_PROTO_NATIVE };
	cuco_directive d = { .backend = "rma" };
	eval_trust tr;
	const char marked[] = "/* EVOLVE-BLOCK-START */\n/* EVOLVE-BLOCK-END */\n";
	eval_trust_rules(&wl, &d, marked, strlen(marked), &tr);
	assert_true(tr.claim.on);
	assert_false(tr.claim.p2p);
	eval_ticket t;
	eval_ticket_new(&t);
	char json[512], why[512];
	const char *fmt = "{\"correct\": true, \"latency_us\": {\"median\": %g, \"samples\": 30}, "
		"\"wall_us\": %g, \"seed\": "
		"\"%016llx\", \"ranks\": %d, \"checks\": %d, \"host_calls\": %d, \"host_calls_by\": \"%s\"%s}";
	unsigned long long seed = (unsigned long long)t.seed;
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed, 2, 5, 0, "", "");
	assert_false(verdict(&wl, &tr, &t, json, why, sizeof why));
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed ^ 1, 2, 5, 0, "", "");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_non_null(strstr(why, "channel: the verdict is for inputs of seed"));
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed, 1, 5, 0, "", "");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_non_null(strstr(why, "covers 1 rank(s); the stage ran 2"));
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed, 2, 2, 0, "", "");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_non_null(strstr(why, "verification: the verdict counts 2 checked steps"));
	/* Far below the harness's own clock: refused; near it, or small: not. */
	snprintf(json, sizeof json, fmt, 100.0, 5000.0, seed, 2, 5, 0, "", "");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_non_null(strstr(why, "timing: the latency reported (100.0 us)"));
	snprintf(json, sizeof json, fmt, 10.0, 900.0, seed, 2, 5, 0, "", "");
	assert_false(verdict(&wl, &tr, &t, json, why, sizeof why));
	/* One sample is one moment, not a median: the attention seed's run
	 * stage on one H200 (13.1 us, its one sample's host clock 1968 us while
	 * another context held the GPU) was refused by this rule. */
	char one[512];
	snprintf(one, sizeof one, "{\"correct\": true, \"latency_us\": {\"median\": 13.056, "
		"\"samples\": 1}, \"wall_us\": 1968.4, \"seed\": \"%016llx\", \"ranks\": 2, \"checks\": 7}",
		seed);
	assert_false(verdict(&wl, &tr, &t, one, why, sizeof why));
	/* The harness's own findings are the reason. */
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed, 2, 5, 0, "", ", \"suspect\": \"threads: on rank 1\"");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_string_equal(why, "threads: on rank 1");
	/* Calls the claim rules out: messages under rma; under msg they are
	 * the design, but a collective is not. */
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed, 2, 5, 12, "MPI_Isend=6 MPI_Irecv=6", "");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_non_null(strstr(why, "host calls: the directive (backend=rma says one-sided communication) "
		"rules them out, but the steps made 12 (MPI_Isend=6 MPI_Irecv=6)"));
	cuco_strlcpy(d.backend, "msg", sizeof d.backend);
	eval_trust_rules(&wl, &d, marked, strlen(marked), &tr);
	assert_true(tr.claim.p2p);
	assert_false(verdict(&wl, &tr, &t, json, why, sizeof why));
	snprintf(json, sizeof json, fmt, 100.0, 110.0, seed, 2, 5, 16, "MPI_Isend=6 MPI_Irecv=6 MPI_Allgather=4", "");
	assert_true(verdict(&wl, &tr, &t, json, why, sizeof why));
	assert_non_null(strstr(why, "made 4 (MPI_Allgather=4)"));
	/* No EVOLVE-BLOCKs (a baseline, fast-path stage A): no claim. */
	eval_trust_rules(&wl, &d, "int main;", 9, &tr);
	assert_false(tr.claim.on);
	assert_false(verdict(&wl, &tr, &t, json, why, sizeof why));
	/* compat: none of these apply. */
	const char *lines[] = { "anything", NULL };
	eval_parse p;
	eval_outcome o;
	parse_lines(&t, lines, &p, &o);
	assert_false(eval_trust_verdict(&wl, &tr, NULL, &p, &o, why, sizeof why));
	eval_parse_free(&p);
}

/* A scan with nothing known: every line is read. */
static bool scan(const char *src, char *why)
{
	return eval_trust_scan(src, strlen(src), NULL, why, 400);
}

/* A scan that knows the workload's own text. */
static bool scan_known(const char *src, const char *own, char *why)
{
	eval_known known = { 0 };
	eval_known_add(&known, own, strlen(own));
	bool found = eval_trust_scan(src, strlen(src), &known, why, 400);
	eval_known_free(&known);
	return found;
}

static void test_source_scan(void **state)
{
	(void)state;
	char why[400];
	/* A whole program without blocks is scanned, with its line. */
	assert_true(scan("int main(void)\n{\n\treturn getenv(\"X\") != 0;\n}\n", why));
	assert_string_equal(why, "source: line 3 uses getenv: the code reads the environment, where the "
		"harness's key travels");
	/* Around the blocks, the lines the workload's own text (its seed, its
	 * baseline) holds pass: the frame may do what it likes. A line the
	 * model wrote there is read like the blocks' insides (a fast-path
	 * stage B writes the whole program). */
	const char framed[] = "char *f(void) { return getenv(\"X\"); }\n/* EVOLVE-BLOCK-START */\n"
		"int g(void) { return 1; }\n/* EVOLVE-BLOCK-END */\n";
	assert_false(scan_known(framed, framed, why));
	assert_true(scan(framed, why));
	assert_non_null(strstr(why, "line 1 uses getenv"));
	/* The same line, indented, its comments changed: still the workload's. */
	assert_false(scan_known("  char *f(void) { return getenv(\"X\"); }  // mine\n", framed, why));
	/* Another argument is another line; code the workload has only in a
	 * comment is not its code. */
	assert_true(scan_known("char *f(void) { return getenv(\"Y\"); }\n", framed, why));
	const char commented[] = "/*\nchar *f(void) { return getenv(\"X\"); }\n*/\nint a;\n";
	assert_true(scan_known("char *f(void) { return getenv(\"X\"); }\n", commented, why));
	assert_true(scan_known("char *f(void) { return getenv(\"X\"); }\n",
		"// char *f(void) { return getenv(\"X\"); }\n", why));
	/* Inside a block every line is read, the workload's own too. */
	const char inside[] = "x\n// EVOLVE-BLOCK-START\nint a;\nextern char **environ;\n// EVOLVE-BLOCK-END\n";
	assert_true(scan_known(inside, inside, why));
	assert_non_null(strstr(why, "line 4 uses environ"));
	/* Comments and words that merely contain a name are fine. */
	assert_false(scan("/* getenv is not used */ int my_getenv_count; // environ\n", why));
	/* Inside strings only what matters there. */
	assert_true(scan("const char *p = \"/proc/self/environ\";\n", why));
	assert_non_null(strstr(why, "mentions \"/proc/\""));
	assert_false(scan("const char *p = \"getenv\";\n", why));
	assert_true(scan("static int x __attribute__((section(\".init_array\")));\n", why));
	/* Constructors: a default one runs after the ticket is taken. */
	assert_false(scan("__attribute__((constructor)) static void f(void) {}\n", why));
	assert_true(scan("__attribute__((constructor (101))) static void f(void) {}\n", why));
	assert_non_null(strstr(why, "constructor with a priority"));
	assert_true(scan("struct A a __attribute__((init_priority(101)));\n", why));
	/* The harness's state, its seal and the counter. */
	assert_true(scan("void f(void) { cuco_inputs_seed = 1; }\n", why));
	assert_true(scan("void f(void) { cuco_ticket.sealed = 0; }\n", why));
	assert_true(scan("void f(void) { cuco_seal_print(\"x\"); }\n", why));
	assert_true(scan("void f(void) { cuco_count_window(0); }\n", why));
	assert_true(scan("void *f(void) { return dlsym(0, \"x\"); }\n", why));
	/* An unclosed block: the rest of the file. */
	assert_true(scan("ok\n/* EVOLVE-BLOCK-START */\nint x = putenv(0);\n", why));
}

/* Red team (issue 24): a program that spells what the scan refuses so
 * that the scan and the compiler read it differently. Each compiles to the
 * construct (checked by hand: gcc -std=c11 as the toy fixture builds, or
 * gnu11, or g++ and nvcc -std=c++17) and got through the line-by-line scan
 * that read physical lines with its own lexer, trusting any line the
 * workload's text holds ("own": a fixture under tests/eval/fixtures, or
 * after '=' the text itself). */
static const struct { const char *what, *src, *own; } escapes[] = {
	{ "a splice inside a name", "int f(void) { return get\\\nenv(\"X\") != 0; }\n", NULL },
	{ "a splice onto a line the workload holds", "int f(void) { return get\\\nenv(\"X\") != 0; }\n",
		"=env(\"X\") != 0; }\n" },
	{ "a splice closing a comment", "/* c *\\\n/ int f(void) { return getenv(\"X\") != 0; } /* */\n", NULL },
	{ "a splice opening a // comment", "/\\\n/ /*\nint f(void) { return getenv(\"X\") != 0; }\n/* */\n", NULL },
	{ "a splice with blanks after the backslash", "int f(void) { return get\\ \t\nenv(\"X\") != 0; }\n", NULL },
	{ "a lone CR ending a // comment", "int f(void) {\n\t// nothing\rreturn getenv(\"X\") != 0;\n}\n", NULL },
	{ "a trigraph splice, ?\\?/ (-std=c11)", "int f(void) { return get?\?/\nenv(\"X\") != 0; }\n", NULL },
	{ "a trigraph that is no quote, ?\\?' (-std=c11)",
		"int f(void) { int a = 3 ?\?' 1; return getenv(\"X\") != 0 || a == ' '; }\n", NULL },
	{ "a raw string (C++, gnu C)",
		"const char *s = R\"(\")\"; int f(void) { return getenv(\"X\") != 0; } const char *t = \"\";\n", NULL },
	{ "a digit separator (C++14)", "int a = 1'0; int f() { return getenv(\"X\") != 0; } int b = 1'0;\n", NULL },
	{ "a header name holding /*",
		"#if __has_include(<none/*>)\n#endif\nint f(void) { return getenv(\"X\") != 0; }\n/* */\n", NULL },
	{ "a token paste", "#define G(a, b) a##b\nint f(void) { return G(get, env)(\"X\") != 0; }\n", NULL },
	{ "a token paste as a digraph", "#define G(a, b) a %:%: b\nint f(void) { return G(get, env)(\"X\") != 0; }\n",
		NULL },
	{ "a constructor spelled __constructor__",
		"__attribute__((__constructor__(101))) static void f(void) {}\n", NULL },
	{ "a constructor by .ctors", "static void (*f)(void) __attribute__((section(\".ctors.65435\"))) = 0;\n",
		NULL },
	{ "the environment as _environ", "extern char **_environ;\nchar *f(void) { return _environ[0]; }\n", NULL },
	{ "the harness's ticket by an asm label",
		"extern struct { int sealed; } t __asm__(\"cuco_\" \"ticket\");\nint f(void) { return t.sealed; }\n",
		NULL },
	{ "getenv called from inline assembly",
		"void f(void) { __asm__ volatile(\"lea x(%%rip), %%rdi\\n\\t\"\n\t\"call getenv\" ::: \"rdi\"); }\n", NULL },
	{ "getenv under another name by _Pragma(\"redefine_extname\")",
		"_Pragma(\"redefine_extname my_get getenv\")\nchar *my_get(const char *);\n"
		"int f(void) { return my_get(\"X\") != 0; }\n", NULL },
	{ "getenv by a weakref", "static char *g(const char *) __attribute__((weakref(\"get\" \"env\")));\n"
		"int f(void) { return g(\"X\") != 0; }\n", NULL },
	{ "the harness's ticket by an alias", "extern int t __attribute__((alias(\"cuco_\" \"ticket\")));\n", NULL },
	{ "the harness's strncmp calls bound to the candidate's",
		"#pragma redefine_extname strncmp my_cmp\nint my_cmp(const char *a, const char *b, unsigned long n) "
		"{ return 0; }\n", NULL },
	{ "the same by _Pragma", "_Pragma(\"redefine_extname strncmp my_cmp\")\n", NULL },
	{ "an ifunc resolver, run while the program loads",
		"static void *res(void) { return 0; }\nint r(void) __attribute__((ifunc(\"res\")));\n", NULL },
	{ "the workload's sealing line in a function of the candidate's",
		"#include \"cuco_seal.h\"\nstatic void forge(const char *body)\n{\n\tcuco_seal_print(body);\n}\n"
		"int main(void) { forge(\"\\\"correct\\\": true\"); return 0; }\n", "solo/solo.c" },
};

/* ... and what honest code writes beside them. */
static const char *const honest[] = {
	"#define CHECK(x) do { \\\n\tif (!(x)) \\\n\t\tabort(); \\\n} while (0)\n",
	"#define LOG(f, ...) printf(f, ## __VA_ARGS__)\n",
	"int a;\r\nint b = 0x1e+2, c = 'a';\r\n#include <stdio.h>\n",
	"const char *w = \"why?\"; /* what? */\n",
	"__attribute__((__constructor__)) static void f(void) {}\n",
	"__device__ int ld(const int *p) { int v; asm volatile(\"ld.acquire.gpu.b32 %0, [%1];\" : \"=r\"(v) : \"l\"(p)); "
	"return v; }\n",
};

static void test_scan_escapes(void **state)
{
	(void)state;
	int through = 0;
	for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
		char why[400] = "";
		size_t len = 0;
		const char *o = escapes[i].own;
		char *own = !o ? NULL : *o == '=' ? strdup(o + 1) : read_fixture(o, &len);
		bool refused = own ? scan_known(escapes[i].src, own, why) : scan(escapes[i].src, why);
		printf("scan escape %-60s %s%s\n", escapes[i].what, refused ? "refused: " : "GOT THROUGH", why);
		through += !refused;
		free(own);
	}
	/* gcc reads a NUL as a blank: a backslash, a NUL and a newline splice. */
	char why[400];
	const char nul[] = "int f(void) { return get\\\0\nenv(\"X\") != 0; }\n";
	bool refused = eval_trust_scan(nul, sizeof nul - 1, NULL, why, sizeof why);
	printf("scan escape %-60s %s%s\n", "a splice with a NUL after the backslash",
		refused ? "refused: " : "GOT THROUGH", refused ? why : "");
	assert_int_equal(through + !refused, 0);

	/* What honest code writes beside them is read as it is. */
	for (size_t i = 0; i < sizeof honest / sizeof honest[0]; i++)
		if (scan(honest[i], why))
			fail_msg("honest code refused: %s\n%s", why, honest[i]);
	/* Splices are read as the compiler reads them, then by line. */
	assert_true(scan("int a;\nint f(void) { return get\\\nenv(\"X\") != 0; }\n", why));
	assert_non_null(strstr(why, "line 2 uses getenv"));
}

/* A shipped workload's evaluator-side texts (its seed, baseline and the
 * headers they include), as the evaluator reads them. */
static cuco_workload *shipped(const char *name, eval_known *known, char **seed, size_t *len)
{
	const char *root = getenv("CUCO_SOURCE_ROOT");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/workloads/%s", root ? root : ".", name);
	cuco_workload *wl;
	cuco_err err = { 0 };
	if (cuco_workload_load(path, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	eval_known_read(known, wl);
	snprintf(path, sizeof path, "%s/%s", wl->dir, wl->seed_file);
	assert_int_equal(cuco_read_file(path, 16u << 20, seed, len, &err), CUCO_OK);
	return wl;
}

/* A macro the candidate defines before code of the workload's own rewrites
 * that code: `#define fabsf(x) 0.0f` above the harness's #include makes
 * the gemm check's error 0 for any output (nvcc -E shows `float e = 0.0f
 * / (0.0f + 1.0f)`), a rewrite the fast path's stage B may write; a block's
 * #define rewires the trusted main() after it. Both got through. A knob
 * the seed's own block defines, or a macro of the candidate's own, passes. */
static void test_scan_macros(void **state)
{
	(void)state;
	eval_known known = { 0 };
	char *seed, why[400];
	size_t len;
	cuco_workload *wl = shipped("gemm-allgather", &known, &seed, &len);
	cuco_buf src = { 0 };
	const char *const tops[] = {
		"#include <cmath>\n#define fabsf(x) 0.0f\n",       /* the harness's check: refused */
		"#define __builtin_isnan(x) 0\n",                  /* the library's, under std::isnan: refused */
		"#define main base_main\n#include \"baseline.cu\"\n#undef main\n",  /* unscanned text: refused */
		"#define H __FILE__\n#include H\n",               /* what a macro names: refused */
		"#include <seed.cu>\n",                            /* unscanned, by the -I search: refused */
		"#include \"/etc/hostname\"\n",                    /* a path of its own: refused */
		"#define _GNU_SOURCE\n#define TILE 64\n#include \"cuco_lsa.cuh\"\n#include \"cuda_runtime.h\"\n",
	};
	for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++) {
		cuco_buf_free(&src);
		cuco_buf_printf(&src, "%s%s", tops[i], seed);
		bool refused = eval_trust_scan(src.data, src.len, &known, why, sizeof why);
		printf("scan above the includes %-35.*s %s%s\n", (int)strcspn(tops[i] + (i == 0) * 17, "\n"),
			tops[i] + (i == 0) * 17, refused ? "refused: " : "passes", refused ? why : "");
		assert_int_equal(refused, i < 6);  /* the last: its own names, the seed's header, a system one */
	}

	const char *start = strstr(seed, "// EVOLVE-BLOCK-START\n");
	assert_non_null(start);
	size_t head = (size_t)(start - seed) + strlen("// EVOLVE-BLOCK-START\n");
	const char *const inserts[] = {
		"#define cuco_parse_args(c, v) my_args(c, v)\n",  /* rewires main(): refused */
		"#undef CUCO_CHUNKS\n#define CUCO_CHUNKS 4\n#define TILE 64\n",  /* the seed's knob, a name of its own */
		"#define cuco_rel_err(g, w) 0.0\n",  /* a harness name main does not use, after its #include */
	};
	for (size_t i = 0; i < sizeof inserts / sizeof inserts[0]; i++) {
		cuco_buf_free(&src);
		cuco_buf_append(&src, seed, head);
		cuco_buf_printf(&src, "%s%s", inserts[i], seed + head);
		bool refused = eval_trust_scan(src.data, src.len, &known, why, sizeof why);
		printf("scan macro %-58.*s %s%s\n", (int)strcspn(inserts[i], "\n"), inserts[i],
			refused ? "refused: " : "passes", refused ? why : "");
		assert_int_equal(refused, i == 0);
	}
	cuco_buf_free(&src);
	free(seed);
	eval_known_free(&known);
	cuco_workload_free(wl);
}

/* Every shipped workload's seed and baseline, as the evaluator scans them
 * (its slots filled with the first values, the workload's own text
 * known, or not), pass: an honest program is never suspect. A framed workload's
 * program is not scanned (its object is checked), but its texts pass too. */
static void test_shipped_pass(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_SOURCE_ROOT");
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/workloads", root ? root : ".");
	DIR *d = opendir(dir);
	assert_non_null(d);
	int seen = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[PATH_MAX + 300];
		snprintf(path, sizeof path, "%s/%s/workload.json", dir, e->d_name);
		if (e->d_name[0] == '.' || access(path, F_OK) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		cuco_workload *wl;
		cuco_err err = { 0 };
		if (cuco_workload_load(path, &wl, &err) != CUCO_OK)
			fail_msg("%s", err.msg);
		eval_known known = { 0 };
		eval_known_read(&known, wl);
		assert_true(known.nframes > 0);
		cuco_directive first;
		cuco_directive_default(wl, &first);
		const char *files[] = { wl->baseline_file, wl->seed_file };
		for (size_t i = 0; i < sizeof files / sizeof files[0] && *files[i]; i++) {
			char *text, why[400];
			size_t len;
			snprintf(path, sizeof path, "%s/%s", wl->dir, files[i]);
			assert_int_equal(cuco_read_file(path, 16u << 20, &text, &len, &err), CUCO_OK);
			cuco_buf src = { 0 };
			eval_apply_slots(wl, &first, text, len, &src);
			if (eval_trust_scan(src.data, src.len, &known, why, sizeof why))
				fail_msg("%s's %s: %s", e->d_name, files[i], why);
			/* A rewrite that keeps every line but changes its frame is read whole. */
			if (eval_trust_scan(src.data, src.len, NULL, why, sizeof why))
				fail_msg("%s's %s, its frame not known: %s", e->d_name, files[i], why);
			cuco_buf_free(&src);
			free(text);
		}
		eval_known_free(&known);
		cuco_workload_free(wl);
		seen++;
	}
	closedir(d);
	assert_true(seen >= 10);
}

static eval_elf fake_elf(const char *const *undefined, const char *const *defined)
{
	eval_elf e = { 0 };
	for (int i = 0; undefined && undefined[i]; i++)
		e.nundefined++;
	for (int i = 0; defined && defined[i]; i++)
		e.ndefined++;
	e.undefined = (char **)undefined;
	e.defined = (char **)defined;
	return e;
}

static void test_binary_rules(void **state)
{
	(void)state;
	const char marked[] = "/* EVOLVE-BLOCK-START */\n/* EVOLVE-BLOCK-END */\n";
	char why[400];
	eval_trust tr;
	cuco_workload gpu = { .family = CUCO_FAMILY_CUDA_NCCL, .ranks = 2 };
	cuco_directive lsa = { .backend = "lsa" };
	eval_trust_rules(&gpu, &lsa, marked, strlen(marked), &tr);
	const char *seed_like[] = { "ncclCommInitRank", "ncclDevCommCreate", "MPI_Bcast", "MPI_Allreduce",
		"cudaLaunchKernel", NULL };
	eval_elf e = fake_elf(seed_like, NULL);
	assert_false(eval_trust_binary(&gpu, &tr, &e, why, sizeof why));
	const char *stage_b[] = { "ncclCommInitRank", "ncclAllGather", "ncclGroupStart", NULL };
	e = fake_elf(stage_b, NULL);
	assert_true(eval_trust_binary(&gpu, &tr, &e, why, sizeof why));
	assert_string_equal(why, "host calls: the directive (backend=lsa says device-initiated communication) "
		"rules them out, but the built program links ncclAllGather ncclGroupStart");
	const char *defines[] = { "ncclSend", NULL };
	e = fake_elf(NULL, defines);
	assert_true(eval_trust_binary(&gpu, &tr, &e, why, sizeof why));
	assert_non_null(strstr(why, "defines ncclSend itself"));
	/* The baseline has no blocks: it may link anything. */
	eval_trust_rules(&gpu, &lsa, "int main;", 9, &tr);
	e = fake_elf(stage_b, NULL);
	assert_false(eval_trust_binary(&gpu, &tr, &e, why, sizeof why));

	cuco_workload cpu = { .family = CUCO_FAMILY_CPU_MPI, .ranks = 2 };
	cuco_directive rma = { .backend = "rma" }, msg = { .backend = "msg" };
	const char *two_sided[] = { "MPI_Init", "MPI_Isend", "MPI_Irecv", "MPI_Allreduce", "MPI_Barrier", NULL };
	e = fake_elf(two_sided, NULL);
	eval_trust_rules(&cpu, &rma, marked, strlen(marked), &tr);
	assert_true(eval_trust_binary(&cpu, &tr, &e, why, sizeof why));
	assert_non_null(strstr(why, "links MPI_Isend MPI_Irecv"));
	eval_trust_rules(&cpu, &msg, marked, strlen(marked), &tr);
	assert_false(eval_trust_binary(&cpu, &tr, &e, why, sizeof why));
	/* MPI_Allreduce is the harness's own in a native program; a compat
	 * program has no harness, so there it is the collective a stage B
	 * kept (a gradient's sum, say), whatever else the program reports. */
	const char *kept[] = { "MPI_Init", "MPI_Win_create", "MPI_Put", "MPI_Allreduce", NULL };
	e = fake_elf(kept, NULL);
	eval_trust_rules(&cpu, &rma, marked, strlen(marked), &tr);
	assert_false(eval_trust_binary(&cpu, &tr, &e, why, sizeof why));
	cuco_workload foreign = { .family = CUCO_FAMILY_CPU_MPI, .ranks = 2,
		.protocol = CUCO_PROTO_COMPAT };
	eval_trust_rules(&foreign, &rma, marked, strlen(marked), &tr);
	assert_true(eval_trust_binary(&foreign, &tr, &e, why, sizeof why));
	assert_non_null(strstr(why, "links MPI_Allreduce"));
	cuco_workload solo = { .family = CUCO_FAMILY_CUDA, .ranks = 1 };
	eval_trust_rules(&solo, &lsa, marked, strlen(marked), &tr);
	assert_false(tr.claim.on);  /* one GPU: nothing to claim */
}

static void test_preload_fits(void **state)
{
	(void)state;
	const char *ompi[] = { "libmpi.so.40", "libc.so.6", NULL }, *mpich[] = { "libmpi.so.12", NULL },
		*nccl_only[] = { "libnccl.so.2", "libcudart.so.13", NULL }, *plain[] = { "libc.so.6", NULL },
		*lib_ompi[] = { "libmpi.so.40", NULL };
	eval_elf lib = { .needed = (char **)lib_ompi, .nneeded = 1 };
	eval_elf prog = { .needed = (char **)ompi, .nneeded = 2 };
	assert_true(eval_trust_preload_fits(&prog, &lib));
	prog = (eval_elf){ .needed = (char **)mpich, .nneeded = 1 };
	assert_false(eval_trust_preload_fits(&prog, &lib));  /* another MPI's types */
	prog = (eval_elf){ .needed = (char **)nccl_only, .nneeded = 2 };
	assert_false(eval_trust_preload_fits(&prog, &lib));  /* would load an MPI it lacks */
	eval_elf bare = { 0 };
	assert_true(eval_trust_preload_fits(&prog, &bare));
	prog = (eval_elf){ .needed = (char **)plain, .nneeded = 1 };
	assert_false(eval_trust_preload_fits(&prog, &bare));  /* nothing to count */
}

static void test_clocks_and_peak(void **state)
{
	(void)state;
	char why[400];
	/* 1 GB at 10 GB/s takes 100 ms at best. */
	assert_true(eval_trust_physics(0.1, 50e3, "1e9 bytes at 10 GB/s", why, sizeof why));
	assert_non_null(strstr(why, "physical minimum: 5e+04 us per repetition is below what the peak model "
		"allows (1e+05 us: 1e9 bytes at 10 GB/s)"));
	assert_false(eval_trust_physics(0.1, 150e3, "x", why, sizeof why));
	assert_false(eval_trust_physics(0, 1, "no model", why, sizeof why));
	/* 17 more steps took 5 s longer than the run stage's 1.5 s: at least
	 * (5 - 1.5) / 17 = 206 ms a step; 1 ms reported is a lie, 30 ms not. */
	assert_true(eval_trust_clock(1.5, 6.5, 3, 15, 1000, why, sizeof why));
	assert_non_null(strstr(why, "stage clock:"));
	assert_false(eval_trust_clock(1.5, 6.5, 3, 15, 30000, why, sizeof why));
	/* Start-up noise within the allowance says nothing. */
	assert_false(eval_trust_clock(1.5, 2.9, 3, 15, 1, why, sizeof why));
	/* A confirmation round benchmarks a cached build with no run stage:
	 * its 0 s is no clock (the attention workload's fused kernel, 69.8 us
	 * in a 2.22 s benchmark, was refused every round). */
	assert_false(eval_trust_clock(0, 2.22, 5, 30, 69.8, why, sizeof why));
}

static void test_elf_reader(void **state)
{
	(void)state;
	eval_elf e;
	cuco_err err = { 0 };
	assert_int_equal(eval_elf_read("/proc/self/exe", &e, &err), CUCO_OK);
	assert_true(eval_elf_has(e.undefined, e.nundefined, "malloc"));
	assert_true(eval_elf_has(e.needed, e.nneeded, "libc.so.6"));
	assert_true(eval_elf_has(e.defined, e.ndefined, "eval_elf_read"));  /* its static symbols */
	assert_false(eval_elf_has(e.undefined, e.nundefined, "eval_elf_read"));
	eval_elf_free(&e);

	/* Hostile files: one clear line each, nothing read out of bounds. */
	char dir[256], path[512];
	make_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/script", dir);
	cuco_write_file(path, "#!/bin/sh\nexit 0\n", 17, NULL);
	assert_int_equal(eval_elf_read(path, &e, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "not an ELF file"));
	char *self;
	size_t len;
	assert_int_equal(cuco_read_file("/proc/self/exe", 64u << 20, &self, &len, &err), CUCO_OK);
	snprintf(path, sizeof path, "%s/cut", dir);
	cuco_write_file(path, self, 200, NULL);  /* the header, whose sections are past the end */
	assert_int_equal(eval_elf_read(path, &e, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "section header 0 lies outside the file"));
	/* Section offsets and sizes scrambled: the reader skips what is outside. */
	for (size_t i = 64; i + 8 < len; i += 97)
		self[i] ^= 0x5a;
	snprintf(path, sizeof path, "%s/scrambled", dir);
	cuco_write_file(path, self, len, NULL);
	int rc = eval_elf_read(path, &e, &err);
	assert_true(rc == CUCO_OK || rc == CUCO_EDATA);
	if (rc == CUCO_OK)
		eval_elf_free(&e);
	snprintf(path, sizeof path, "%s/empty", dir);
	cuco_write_file(path, "", 0, NULL);
	assert_int_equal(eval_elf_read(path, &e, &err), CUCO_EDATA);
	assert_int_equal(eval_elf_read("/nonexistent/prog", &e, &err), CUCO_EENV);
	free(self);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seal_reference),
		cmocka_unit_test(test_ticket),
		cmocka_unit_test(test_ticket_file),
		cmocka_unit_test(test_sealed_protocol),
		cmocka_unit_test(test_verdict_rules),
		cmocka_unit_test(test_source_scan),
		cmocka_unit_test(test_scan_escapes),
		cmocka_unit_test(test_scan_macros),
		cmocka_unit_test(test_shipped_pass),
		cmocka_unit_test(test_binary_rules),
		cmocka_unit_test(test_preload_fits),
		cmocka_unit_test(test_clocks_and_peak),
		cmocka_unit_test(test_elf_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
