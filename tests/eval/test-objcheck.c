/* test-objcheck.c — the candidate's object, checked before it is linked
 * (src/eval/objcheck.c). Red team first:
 *
 * - attacks: every case in tests/eval/fixtures/objcheck/{cpu,cuda} is
 *   compiled as the family's workloads compile (mpicc -std=c11; nvcc), then
 *   linked naively with a frame in miniature (frame.c, frame.cu) to show
 *   what it does today — the CPU ones run and print their ATTACK line, the
 *   CUDA ones link (no GPU needed), and the lexical scan (trust.c) is
 *   shown to miss those that say "scan: misses it" and to refuse those
 *   that say "scan: refuses it" (it reads splices, trigraphs, lone CRs
 *   and pastes since issue 24's red team) — and then checked: the
 *   first refusal must contain what the case's `expect:` says. honest.*
 *   must pass, keep only its entry points global, and still link (the CPU
 *   one run) with the frame after the check rewrote it.
 * - structure: what assembly could add that compiled code never has, one
 *   small object each, and the rules' own errors.
 * - shipped (`test-objcheck shipped`, its own test: it compiles them all):
 *   every workload's seed and baseline compiled with -c as its manifest
 *   builds it. Until the frame is compiled apart, each still holds main and
 *   its harness: a refusal is allowed only in that code (main, what main
 *   defines, a function the harness headers name), and each such name is
 *   printed, for the lead to see what the harness alone needs.
 *
 * Without mpicc or nvcc the cases of that family are skipped (said so). */
#include "eval/eval_int.h"
#include "util.h"

#include <dirent.h>
#include <elf.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#define ENTRIES "cuco_setup cuco_step cuco_teardown cuco_mpi_thread"
#define CPU_FLAGS "-O2 -std=c11 -D_GNU_SOURCE"
#define CUDA_FLAGS "-O3 -arch=sm_90 -std=c++17"

static char tmp[256];

static bool have(const char *prog)
{
	char path[4096];
	return cuco_which(prog, path, sizeof path);
}

/* Run a shell command; its output (both streams) and whether it exited 0. */
static bool sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool sh(char **out, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
	int status;
	char *text = capture_output(cmd, &status);
	if (out)
		*out = text;
	else
		free(text);
	return status == 0;
}

/* The value of " * key: " in a fixture's header comment, or "". */
static void header(const char *text, const char *key, char *out, size_t size)
{
	char tag[64];
	snprintf(tag, sizeof tag, " * %s: ", key);
	const char *at = strstr(text, tag), *end = strstr(text, "*/");
	out[0] = '\0';
	if (at && (!end || at < end)) {
		at += strlen(tag);
		snprintf(out, size, "%.*s", (int)strcspn(at, "\n"), at);
	}
}

/* The rules for a family, with a frame's object (NULL: none) that calls
 * entries (NULL: the miniature frames', ENTRIES). */
static eval_objrules *rules_with(cuco_family family, const char *frame, const char *entries, bool refereed)
{
	char *const frames[] = { (char *)frame, NULL };
	eval_objspec spec = { .family = family, .refereed = refereed, .entries = entries ? entries : ENTRIES,
		.frame = frame ? frames : NULL,
		.mpicc = "mpicc", .cuda_home = getenv("CUCO_CUDA_HOME"), .nccl_home = getenv("CUCO_NCCL_HOME") };
	eval_objrules *r = NULL;
	cuco_err err = { 0 };
	if (eval_objrules_new(&spec, &r, &err) != CUCO_OK)
		fail_msg("eval_objrules_new: %s", err.msg);
	return r;
}

static eval_objrules *rules_for(cuco_family family, const char *frame)
{
	return rules_with(family, frame, NULL, false);
}

/* The names a (rewritten) object still defines globally, blank-separated. */
static void globals(const char *obj, char *out, size_t size)
{
	eval_obj o;
	cuco_err err = { 0 };
	if (eval_obj_read(obj, &o, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	out[0] = '\0';
	for (int k = 1; k < o.nsymbols; k++)
		if (o.symbols[k].bind != STB_LOCAL && o.symbols[k].shndx != SHN_UNDEF && *o.symbols[k].name)
			snprintf(out + strlen(out), size - strlen(out), "%s ", o.symbols[k].name);
	eval_obj_free(&o);
}

typedef struct family_cases {
	const char *dir;           /* under fixtures/objcheck */
	cuco_family family;
	const char *compile;       /* the compiler and flags, before -c */
	const char *frame_src;
	const char *link;          /* the linker, frame.o and case.o after it */
	const char *libs;
} family_cases;

/* One case: compile it, link it naively (and run it), check it. */
static void one_case(const family_cases *f, eval_objrules *r, const char *file)
{
	char rel[512], naive[256], expect[256], scan[64], obj[600], exe[600];
	snprintf(rel, sizeof rel, "objcheck/%s/%s", f->dir, file);
	size_t len;
	char *text = read_fixture(rel, &len), *out = NULL;
	header(text, "naive", naive, sizeof naive);
	header(text, "expect", expect, sizeof expect);
	header(text, "scan", scan, sizeof scan);
	if (!*naive || !*expect)
		fail_msg("%s: needs `naive:` and `expect:` in its header", rel);
	snprintf(obj, sizeof obj, "%s/%.*s.o", tmp, (int)strcspn(file, "."), file);
	snprintf(exe, sizeof exe, "%s/%.*s", tmp, (int)strcspn(file, "."), file);
	if (!sh(&out, "%s -c -o '%s' '%s'", f->compile, obj, fixture(rel)))
		fail_msg("%s does not compile:\n%s", rel, out);
	free(out);

	/* Today: a naive link. */
	bool linked = sh(&out, "%s '%s/frame.o' '%s' -o '%s' %s", f->link, tmp, obj, exe, f->libs);
	if (strncmp(naive, "fails ", 6) == 0) {
		assert_false(linked);
		assert_has(out, naive + 6);
	} else if (!linked) {
		fail_msg("%s: the naive link fails:\n%s", rel, out);
	}
	free(out);
	if (strncmp(naive, "runs ", 5) == 0) {
		sh(&out, "'%s'", exe);
		assert_has(out, naive + 5);
		free(out);
	}
	if (*scan) {
		char why[256] = "";
		assert_int_equal(eval_trust_scan(text, len, NULL, why, sizeof why), strcmp(scan, "refuses it") == 0);
	}
	printf("objcheck %s/%-22s naive link: %s\n", f->dir, file,
		strncmp(naive, "fails ", 6) == 0 ? "refused by the linker" : naive);

	/* With the check. */
	char why[512];
	cuco_err err = { 0 };
	bool unlinkable;
	if (eval_objcheck(obj, r, why, sizeof why, &unlinkable, &err) != CUCO_OK)
		fail_msg("%s: %s", rel, err.msg);
	printf("%*s -> %s\n", 9, "", *why ? why : "accepted");
	if (strcmp(expect, "accepted") == 0) {
		if (*why)
			fail_msg("%s refused: %s", rel, why);
		char names[4096];
		globals(obj, names, sizeof names);
		for (char *w = strtok(names, " "); w; w = strtok(NULL, " "))
			if (!strstr(ENTRIES, w) && strncmp(w, "cuco.candidate.", 15) != 0)
				fail_msg("%s: %s is still global after the check", rel, w);
		if (!sh(&out, "%s '%s/frame.o' '%s' -o '%s' %s", f->link, tmp, obj, exe, f->libs))
			fail_msg("%s: no link after the check:\n%s", rel, out);
		free(out);
		if (strncmp(naive, "runs ", 5) == 0) {
			sh(&out, "'%s'", exe);
			assert_has(out, naive + 5);
			assert_has(out, "frame: done");
			free(out);
		}
	} else {
		if (strncmp(why, "object: ", 8) != 0)
			fail_msg("%s: not refused (expected \"%s\")", rel, expect);
		assert_has(why, expect);
	}
	free(text);
}

static void run_family(const family_cases *f)
{
	char frame_obj[400];
	char *out = NULL;
	snprintf(frame_obj, sizeof frame_obj, "%s/frame.o", tmp);
	if (!sh(&out, "%s -c -o '%s' '%s'", f->compile, frame_obj, fixture(f->frame_src)))
		fail_msg("the frame does not compile:\n%s", out);
	free(out);
	eval_objrules *r = rules_for(f->family, frame_obj);
	char dir[300];
	snprintf(dir, sizeof dir, "objcheck/%s", f->dir);
	struct dirent **files = NULL;
	int n = scandir(fixture(dir), &files, NULL, alphasort);
	assert_true(n > 2);
	for (int i = 0; i < n; i++) {
		if (files[i]->d_name[0] != '.')
			one_case(f, r, files[i]->d_name);
		free(files[i]);
	}
	free(files);
	eval_objrules_free(r);
}

static void test_cpu_attacks(void **state)
{
	(void)state;
	if (!have("mpicc")) {
		printf("objcheck: no mpicc: the cpu-mpi cases are skipped\n");
		skip();
	}
	family_cases f = { "cpu", CUCO_FAMILY_CPU_MPI, "mpicc " CPU_FLAGS, "objcheck/frame.c", "mpicc",
		"-lm -pthread" };
	run_family(&f);
}

static void test_cuda_attacks(void **state)
{
	(void)state;
	if (!have("nvcc")) {
		printf("objcheck: no nvcc: the cuda cases are skipped\n");
		skip();
	}
	family_cases f = { "cuda", CUCO_FAMILY_CUDA, "nvcc " CUDA_FLAGS, "objcheck/frame.cu",
		"nvcc " CUDA_FLAGS, "-lcublas" };
	run_family(&f);
}

/* ---- structure ------------------------------------------------------------------- */

/* Compile C source (cc -c) and check it; the first refusal, "" if none,
 * and whether every refusal is of a name defined nowhere. */
static bool check_source_unlinkable(eval_objrules *r, const char *src, char *why, size_t size)
{
	char path[400], obj[400];
	char *out = NULL;
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/snippet.c", tmp);
	snprintf(obj, sizeof obj, "%s/snippet.o", tmp);
	assert_int_equal(cuco_write_file(path, src, strlen(src), &err), CUCO_OK);
	if (!sh(&out, "mpicc " CPU_FLAGS " -c -o '%s' '%s'", obj, path))
		fail_msg("does not compile:\n%s\n%s", src, out);
	free(out);
	bool unlinkable;
	if (eval_objcheck(obj, r, why, size, &unlinkable, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return unlinkable;
}

static void check_source(eval_objrules *r, const char *src, char *why, size_t size)
{
	(void)check_source_unlinkable(r, src, why, size);
}

/* A function the program calls and no longer defines (a model's edit in a
 * Qwen run of this stop) is the program's mistake, which the link would
 * refuse: a compile error, not a defence's verdict, so the model's repair
 * turn hears what it is. Beside a defence's refusal, the verdict stays the
 * defence's. */
static void test_undefined_is_not_suspect(void **state)
{
	(void)state;
	if (!have("mpicc"))
		skip();
	eval_objrules *r = rules_for(CUCO_FAMILY_CPU_MPI, NULL);
	char why[512];
	assert_true(check_source_unlinkable(r, "int produce(int);\n"
		"int cuco_step(int x) { return produce(x); }\n", why, sizeof why));
	assert_has(why, "imports produce (in cuco_step): defined nowhere");
	assert_false(check_source_unlinkable(r, "#include <unistd.h>\nint produce(int);\n"
		"long cuco_step(int x) { return produce(x) + syscall(39); }\n", why, sizeof why));
	assert_false(check_source_unlinkable(r, "#include <dlfcn.h>\n"
		"void *cuco_step(void) { return dlopen(\"x\", 0); }\n", why, sizeof why));
	assert_has(why, "imports dlopen");
	eval_objrules_free(r);
}

static void test_structure(void **state)
{
	(void)state;
	if (!have("mpicc"))
		skip();
	eval_objrules *r = rules_for(CUCO_FAMILY_CPU_MPI, NULL);
	static const struct { const char *src, *expect; } cases[] = {
		{ "__attribute__((weak)) int helper(int x) { return x; }\n"
		  "int cuco_step(int x) { return helper(x); }\n", "defines helper weakly" },
		{ "int cuco_step(int x) { return x; }\n"
		  "__asm__(\".section .evil,\\\"awx\\\",@progbits\\n.byte 0xc3\\n.text\\n\");\n",
		  "section .evil is writable and executable" },
		{ "int cuco_step(int x) { return x; }\n"
		  "__asm__(\".text\\n.type blob,@object\\nblob: .byte 0x0f, 0x05\\n.size blob, 2\\n\");\n",
		  "blob is data in the executable section .text" },
		{ "long cuco_step(long x) { __asm__ volatile(\"int $0x80\" : \"+a\"(x)); return x; }\n",
		  "instruction int    $0x80" },
		{ "void cuco_step(void) { __asm__ volatile(\"lret\"); }\n", "a far return" },
		{ "int cuco_step(int x) { return x; }\n"
		  "__asm__(\".section .init,\\\"ax\\\",@progbits\\nnop\\n.text\\n\");\n",
		  "section .init: code the linker puts into _init, run before main" },
		{ "int cuco_step(int x) { return x; }\n"
		  "__asm__(\".section .fini_array,\\\"aw\\\"\\n.quad cuco_step\\n.text\\n\");\n",
		  "section .fini_array runs cuco_step after main" },
		{ "int cuco_step(int x) { return x; }\n"
		  "__asm__(\".globl clock_gettime\\n.set clock_gettime, 0x1000\\n\");\n",
		  "defines clock_gettime, a name of libc" },
		{ "#include <unistd.h>\nlong cuco_step(void) { return syscall(39); }\n",
		  "imports syscall (in cuco_step)" },
		{ "#include <sys/mman.h>\nvoid *cuco_step(void *p) { mprotect(p, 4096, 7); return p; }\n",
		  "imports mprotect (in cuco_step): maps memory or changes its protection" },
		{ "#include <mpi.h>\nint cuco_step(void) { return PMPI_Barrier(MPI_COMM_WORLD); }\n",
		  "imports PMPI_Barrier (in cuco_step): MPI's profiling interface" },
		{ "#include <mpi.h>\nint cuco_step(MPI_File *f) { return MPI_File_open(MPI_COMM_WORLD, "
		  "\"x\", 0, MPI_INFO_NULL, f); }\n", "imports MPI_File_open (in cuco_step): MPI-IO" },
		{ "#include <stdlib.h>\nstatic void bye(void) {}\nint cuco_step(void) { return atexit(bye); }\n",
		  "imports atexit (in cuco_step): runs code after main" },
		{ "#include <mpi.h>\n#include <math.h>\n#include <string.h>\n"
		  "double cuco_step(double *x, int n) { memset(x, 0, 8); MPI_Allreduce(MPI_IN_PLACE, x, n, "
		  "MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); return erf(x[0]) + MPI_Wtime(); }\n", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char why[512];
		check_source(r, cases[i].src, why, sizeof why);
		printf("objcheck structure %zu -> %s\n", i, *why ? why : "accepted");
		if (!*cases[i].expect && *why)
			fail_msg("refused:\n%s\n%s", cases[i].src, why);
		if (*cases[i].expect)
			assert_has(why, cases[i].expect);
	}
	eval_objrules_free(r);
}

/* Files that are not a candidate's object: a refusal, or no verdict. */
static void test_not_objects(void **state)
{
	(void)state;
	if (!have("mpicc"))
		skip();
	eval_objrules *r = rules_for(CUCO_FAMILY_CPU_MPI, NULL);
	char path[400], why[512];
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/short.o", tmp);
	assert_int_equal(cuco_write_file(path, "\177ELF\2\1\1", 7, &err), CUCO_OK);
	bool unlinkable;
	assert_int_equal(eval_objcheck(path, r, why, sizeof why, &unlinkable, &err), CUCO_OK);
	assert_has(why, "object: ");
	assert_int_equal(eval_objcheck("/bin/true", r, why, sizeof why, &unlinkable, &err), CUCO_OK);
	assert_has(why, "not a relocatable object (ELF type 3)");
	snprintf(path, sizeof path, "%s/absent.o", tmp);
	assert_int_not_equal(eval_objcheck(path, r, why, sizeof why, &unlinkable, &err), CUCO_OK);
	eval_objrules_free(r);

	eval_objspec none = { .family = CUCO_FAMILY_CPU_MPI, .entries = "", .mpicc = "mpicc" };
	assert_int_equal(eval_objrules_new(&none, &r, &err), CUCO_EUSAGE);
	eval_objspec nompi = { .family = CUCO_FAMILY_CPU_MPI, .entries = ENTRIES,
		.mpicc = "/nonexistent/mpicc" };
	assert_int_equal(eval_objrules_new(&nompi, &r, &err), CUCO_EENV);
	assert_has(err.msg, "--showme:link");
}

/* ---- the tools ------------------------------------------------------------------------ */

/* objdump and objcopy read the candidate's object, which may aim at a bug
 * of their parsers: they run as a stage runs (the stage user, its sandbox
 * and filter, as the evaluator opens them), within a bound of time. A fake
 * objdump first on PATH says who it runs as, then hangs. */
static void test_tools_bounded(void **state)
{
	(void)state;
	if (!have("mpicc"))
		skip();
	char bin[300], tool[400], path[8192], why[512];
	make_tmpdir(bin, sizeof bin);  /* apart from the object's folder, which the sandbox replaces */
	assert_int_equal(chmod(bin, 0755), 0);
	snprintf(tool, sizeof tool, "%s/objdump", bin);
	cuco_err err = { 0 };
	static const char says[] = "#!/bin/sh\necho \"uid=$(id -u)\"\nexit 1\n";
	assert_int_equal(cuco_write_file(tool, says, sizeof says - 1, &err), CUCO_OK);
	assert_int_equal(chmod(tool, 0755), 0);
	const char *old = getenv("PATH");
	char *saved = strdup(old ? old : "/usr/bin:/bin");
	snprintf(path, sizeof path, "%s:%s", bin, saved);
	setenv("PATH", path, 1);
	eval_sandbox sb;
	assert_int_equal(eval_sandbox_open(CUCO_SANDBOX_DEFAULT, cuco_env_get(), &sb, &err), CUCO_OK);
	eval_filter f;
	eval_filter_build(&f, false);
	eval_objspec spec = { .family = CUCO_FAMILY_CPU_MPI, .entries = ENTRIES, .mpicc = "mpicc",
		.sandbox = &sb, .filter = eval_filter_available() ? &f : NULL, .tool_s = 2 };
	eval_objrules *r = NULL;
	if (eval_objrules_new(&spec, &r, &err) != CUCO_OK)
		fail_msg("eval_objrules_new: %s", err.msg);
	setenv("PATH", saved, 1);
	free(saved);
	check_source(r, "int cuco_step(int x) { return x; }\n", why, sizeof why);
	printf("objcheck tools: %s (%s)\n", why, sb.status);
	assert_has(why, "object: objdump cannot read it");
	if (geteuid() == 0 && strstr(why, "uid=0"))
		fail_msg("objdump ran as root on the candidate's object: %s", why);
	/* A tool that hangs on the object: refused at the bound. */
	static const char hangs[] = "#!/bin/sh\nexec sleep 600\n";
	assert_int_equal(cuco_write_file(tool, hangs, sizeof hangs - 1, &err), CUCO_OK);
	assert_int_equal(chmod(tool, 0755), 0);
	double t0 = cuco_mono();
	check_source(r, "int cuco_step(int x) { return x; }\n", why, sizeof why);
	double took = cuco_mono() - t0;
	printf("objcheck tools: %s (%.1f s)\n", why, took);
	assert_has(why, "object: objdump did not finish within 2 s");
	assert_true(took < 10);
	eval_objrules_free(r);
	rm_rf(bin);
}

/* ---- the shipped programs ----------------------------------------------------------- */

/* The source identifier of a symbol: "cuco_run" of _ZN8cuco_runD2Ev,
 * "rows_main" of _ZL9rows_mainiPPc..., "cuco_tasks" of cuco_tasks.part.0. */
static void identifier(const char *sym, char *out, size_t size)
{
	const char *p = sym;
	out[0] = '\0';
	if (strncmp(p, "_Z", 2) != 0) {
		snprintf(out, size, "%.*s", (int)strcspn(p, "."), p);
		return;
	}
	p += 2;
	while (*p == 'L' || *p == 'N' || *p == 'K' || *p == 'Z' || *p == 'S' || *p == 't')
		p++;
	long n = strtol(p, (char **)&p, 10);
	if (n > 0 && (size_t)n < size && strlen(p) >= (size_t)n)
		snprintf(out, size, "%.*s", (int)n, p);
}

/* Whether the headers define id: a function with a body, or a struct or
 * class (whose members its mangled names start with). */
static bool defined_in(const char *text, const char *id)
{
	char pattern[700];
	snprintf(pattern, sizeof pattern, "(^|[^A-Za-z0-9_])%s[[:space:]]*\\([^;{}]*\\)[[:space:]a-z]*\\{"
		"|(struct|class)[[:space:]]+%s[^A-Za-z0-9_;]", id, id);
	regex_t re;
	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	bool found = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return found;
}

/* Every header of the frame a program includes today: the workload's own,
 * ../common's, ../gpu-common's. */
static void frame_headers(const cuco_workload *wl, cuco_buf *out)
{
	static const char *const dirs[] = { "", "/../common", "/../gpu-common" };
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		char dir[1400];
		snprintf(dir, sizeof dir, "%s%s", wl->dir, dirs[i]);
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			const char *dot = strrchr(e->d_name, '.');
			if (!dot || (strcmp(dot, ".h") != 0 && strcmp(dot, ".cuh") != 0))
				continue;
			char path[2800], *text;
			size_t len;
			cuco_err err = { 0 };
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			if (cuco_read_file(path, 1 << 22, &text, &len, &err) == CUCO_OK) {
				cuco_buf_append(out, text, len);
				free(text);
			}
		}
		if (d)
			closedir(d);
	}
}

typedef struct shipped {
	const char *headers;
	bool framed;             /* compiled apart from its frame: every finding is the candidate's */
	char where[200];
	cuco_buf frame_only;     /* "name (function)" lines */
	int candidate;           /* refusals in the candidate's own code */
} shipped;

static bool on_finding(const char *why, const char *function, bool undefined, void *arg)
{
	(void)undefined;
	shipped *s = arg;
	char id[256];
	identifier(function, id, sizeof id);
	/* Main, what main defines (its lambdas: static functions of the
	 * candidate's inlined into them are seen there too), or what the
	 * harness headers define. Once the frame is compiled apart there is
	 * none of these in a candidate's object, and this goes. */
	bool frame = !s->framed && (strcmp(id, "main") == 0 || strstr(function, "Z4main")
		|| (*id && defined_in(s->headers, id)));
	if (frame) {
		cuco_buf_printf(&s->frame_only, "    frame %s: %s\n", *id ? id : "-", why);
	} else {
		printf("  REFUSED in the candidate's code, %s: %s\n", s->where, why);
		s->candidate++;
	}
	return true;
}

/* Compile file of the workload to an object at obj, with its build. */
static void compile_object(const cuco_workload *wl, const char *source, const char *obj)
{
	char compiler[512];
	cuco_workload_compiler(wl, cuco_env_get(), compiler, sizeof compiler);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	eval_vars v = { .wl = wl, .size = cuco_workload_size(wl, wl->default_size), .dir = &d,
		.compiler = compiler, .source = source, .output = obj,
		.nccl_home = getenv("CUCO_NCCL_HOME"), .cuda_home = getenv("CUCO_CUDA_HOME") };
	cuco_argv cmd = { 0 };
	cuco_err err = { 0 };
	if (eval_expand(wl->build_cmd, &v, &cmd, &err) != CUCO_OK)
		fail_msg("%s: %s", wl->name, err.msg);
	cuco_argv_push(&cmd, "-c");
	cuco_buf line = { 0 };
	cuco_argv_join(cmd.v, &line);
	char *out = NULL;
	if (!sh(&out, "%s", line.data))
		fail_msg("%s does not compile: %s\n%s", source, line.data, out);
	free(out);
	cuco_buf_free(&line);
	cuco_argv_free(&cmd);
}

static int check_program(const cuco_workload *wl, eval_objrules *r, const char *file, const char *headers)
{
	char source[2400], obj[600];
	snprintf(source, sizeof source, "%s/%s", wl->dir, file);
	snprintf(obj, sizeof obj, "%s/%s-%.*s.o", tmp, wl->name, (int)strcspn(file, "."), file);
	compile_object(wl, source, obj);
	cuco_err err = { 0 };
	shipped s = { .headers = headers, .framed = *wl->frame_file };
	snprintf(s.where, sizeof s.where, "%s/%s", wl->name, file);
	if (eval_objcheck_scan(obj, r, on_finding, &s, &err) != CUCO_OK)
		fail_msg("%s: %s", s.where, err.msg);
	printf("shipped %-36s %s\n%s", s.where, s.candidate ? "REFUSED" : s.frame_only.len
		? "passes but for main and the harness, still in its file:" : "passes", s.frame_only.data ? s.frame_only.data : "");
	cuco_buf_free(&s.frame_only);
	return s.candidate;
}

static void test_shipped(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_WORKLOADS");
	struct dirent **dirs = NULL;
	int n = root ? scandir(root, &dirs, NULL, alphasort) : -1;
	assert_true(n > 0);
	int refused = 0, checked = 0;
	eval_objrules *rules[3] = { NULL, NULL, NULL };
	for (int i = 0; i < n; i++) {
		cuco_workload *wl = NULL;
		cuco_err err = { 0 };
		char json[2400];
		snprintf(json, sizeof json, "%s/%s/workload.json", root, dirs[i]->d_name);
		bool ok = dirs[i]->d_name[0] != '.' && access(json, R_OK) == 0
			&& cuco_workload_load(dirs[i]->d_name, &wl, &err) == CUCO_OK;
		free(dirs[i]);
		if (!ok)
			continue;
		if (!have(wl->family == CUCO_FAMILY_CPU_MPI ? "mpicc" : "nvcc")) {
			printf("shipped %s: no compiler for its family here: skipped\n", wl->name);
			cuco_workload_free(wl);
			continue;
		}
		/* A framed program is held to its own frame's rules, with nothing
		 * of main or the harness in its object; a refereed one to the
		 * referee's too. */
		eval_objrules *framed = NULL;
		if (*wl->frame_file) {
			char src[2400], obj[600];
			snprintf(src, sizeof src, "%s/%s", wl->dir, wl->frame_file);
			snprintf(obj, sizeof obj, "%s/%s-frame.o", tmp, wl->name);
			compile_object(wl, src, obj);
			framed = rules_with(wl->family, obj, eval_frame_entries(wl->family),
				wl->protocol == CUCO_PROTO_REFEREE);
		} else if (!rules[wl->family]) {
			rules[wl->family] = rules_for(wl->family, NULL);
		}
		cuco_buf headers = { 0 };
		frame_headers(wl, &headers);
		const char *files[] = { wl->baseline_file, wl->seed_file };
		for (int k = 0; k < 2; k++)
			if (*files[k] && (k == 0 || strcmp(files[0], files[1]) != 0)) {
				refused += check_program(wl, framed ? framed : rules[wl->family], files[k],
					headers.data ? headers.data : "");
				checked++;
			}
		eval_objrules_free(framed);
		cuco_buf_free(&headers);
		cuco_workload_free(wl);
	}
	free(dirs);
	for (int f = 0; f < 3; f++)
		eval_objrules_free(rules[f]);
	printf("shipped: %d programs checked, %d refusal(s) in candidates' code\n", checked, refused);
	assert_int_equal(refused, 0);
	if (!checked)
		skip();
}

static int setup(void **state)
{
	(void)state;
	make_tmpdir(tmp, sizeof tmp);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(tmp);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest attacks[] = {
		cmocka_unit_test(test_cpu_attacks),
		cmocka_unit_test(test_cuda_attacks),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_undefined_is_not_suspect),
		cmocka_unit_test(test_not_objects),
		cmocka_unit_test(test_tools_bounded),
	};
	const struct CMUnitTest shipped_tests[] = {
		cmocka_unit_test(test_shipped),
	};
	if (argc > 1 && strcmp(argv[1], "shipped") == 0)
		return cmocka_run_group_tests(shipped_tests, setup, teardown);
	return cmocka_run_group_tests(attacks, setup, teardown);
}
