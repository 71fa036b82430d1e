/* test-analyze.c — the communication analysis (`cuco analyze`, the fast
 * path's prompts) on the project's test programs (tests/programs) and on
 * small sources that exercise one rule each: the lexer's comments, strings
 * and directives, guarded defines, loops of every shape, buffers through
 * casts, MPI_IN_PLACE and assignments, lambdas, callers' loops, functions
 * used as values, kernels' stores and loads, streams. */
#include "analyze/analyze.h"
#include "../eval/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static cuco_program *program(const char *rel)
{
	const char *src = getenv("CUCO_SOURCE_ROOT");
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/programs/%s", src ? src : ".", rel);
	cuco_program *p = NULL;
	cuco_err err = { 0 };
	if (cuco_program_read(path, &p, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return p;
}

static cuco_program *parse(const char *text)
{
	cuco_program *p = NULL;
	cuco_err err = { 0 };
	if (cuco_program_parse("t.c", "", text, strlen(text), &p, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return p;
}

static char *report(const cuco_program *p, const cuco_size *size)
{
	cuco_buf b = { 0 };
	cuco_program_report(p, size, 2, &b);
	return b.data;
}

/* The text of entry n ("n. …" up to the next entry or the end). */
static char *entry(const char *rep, int n)
{
	char head[16], next[16];
	snprintf(head, sizeof head, "\n%d. ", n);
	snprintf(next, sizeof next, "\n%d. ", n + 1);
	const char *a = strstr(rep, head);
	if (!a) {
		/* cmocka's fail_msg is not declared noreturn: GCC's sanitized
		 * build would read a + 1 as a NULL pointer's. */
		fail_msg("no entry %d in:\n%s", n, rep);
		return NULL;
	}
	const char *b = strstr(a + 1, next);
	if (!b)
		b = strstr(a, "\nWhat this analysis cannot see");
	if (!b) {
		fail_msg("entry %d has no end in:\n%s", n, rep);
		return NULL;
	}
	return strndup(a, (size_t)(b - a));
}

static void test_allgather_gemm(void **state)
{
	(void)state;
	cuco_program *p = program("allgather_gemm.cu");
	assert_true(p->mpi && p->nccl && p->cuda);
	assert_false(p->cublas || p->device_api);
	assert_int_equal(p->main_line, 43);
	assert_int_equal(p->nmacros, 3);  /* ROWS, COLS, REPS: CHECK is no value */
	assert_string_equal(p->macros[0].name, "ROWS");
	assert_string_equal(p->macros[0].value, "1024");
	assert_int_equal(p->ncomm, 3);
	int line = 0;
	assert_true(cuco_program_prints(p, "Time: %.4f ms", &line));
	assert_int_equal(line, 90);
	assert_false(cuco_program_prints(p, "CUCO_RESULT", NULL));
	char *r = report(p, NULL);
	assert_has(r, "- kernels: gemm_rows (line 23): writes out; reads a, b; row_sums (line 32): "
		"writes sums; reads full");
	assert_has(r, "- streams created: stream (line 57)");
	char *e = entry(r, 2);
	assert_has(e, "ncclAllGather at line 75, in main()");
	assert_has(e, "inside the for loop of line 73");
	assert_has(e, "send local, receive full");
	assert_has(e, "count slice of ncclFloat");
	assert_has(e, "stream stream");
	assert_has(e, "written before it by: kernel gemm_rows<<<…>>> at line 74 on stream");
	assert_has(e, "read after it by: kernel row_sums<<<…>>> at line 76 on stream");
	free(e);
	assert_has(r, "- cudaEventRecord(start, stream) at line 72 in main()");
	assert_has(r, "What this analysis cannot see");
	/* A size's variables turn the count into bytes. */
	cuco_size sz = { .name = "small", .nvars = 2, .vars = { { "ROWS", 256 }, { "COLS", 128 } } };
	free(r);
	r = report(p, &sz);
	e = entry(r, 2);
	assert_lacks(e, "MiB");   /* slice is a variable, not a define: no bytes */
	free(e);
	free(r);
	cuco_program_free(p);
}

static void test_halo(void **state)
{
	(void)state;
	cuco_program *p = program("halo.c");
	assert_true(p->mpi);
	assert_false(p->nccl || p->cuda);
	assert_int_equal(p->ncomm, 6);
	char *r = report(p, NULL);
	char *e = entry(r, 1);
	assert_has(e, "MPI_Irecv at line 37, in main()");
	assert_has(e, "inside the for loop of line 35");
	assert_has(e, "receive &u[0]");
	assert_has(e, "count 1 of MPI_DOUBLE = 8 bytes");
	assert_has(e, "peer left");
	assert_has(e, "a nonblocking host call");
	assert_has(e, "update() at line 46");
	/* The code's own reads count, but the call's own argument (&u[0]) is
	 * the call's: the nearest reader is the next send, then the check. */
	assert_has(e, "read after it by: MPI_Isend at line 39\n");
	assert_has(e, "u[…] at line 56, in the code itself");
	assert_lacks(e, "u[…] at line 37");
	free(e);
	/* Written by the code itself too: the boundary cells, a loop earlier. */
	e = entry(r, 3);
	assert_has(e, "u[…] at line 43, in the code itself — in the previous iteration of the loop");
	free(e);
	e = entry(r, 5);
	assert_has(e, "MPI_Reduce at line 52");
	assert_has(e, "not inside a loop of main()");
	free(e);
	assert_has(r, "- MPI_Waitall(4, req, MPI_STATUSES_IGNORE) at line 41 in main(), in a loop");
	free(r);
	cuco_program_free(p);
}

static void test_cuco_style(void **state)
{
	(void)state;
	cuco_program *p = program("cuco_style.c");
	char *r = report(p, NULL);
	char *e = entry(r, 1);
	assert_has(e, "MPI_Allgather at line 45, in main()");
	assert_has(e, "send MPI_IN_PLACE (the data is in the receive buffer), receive all");
	/* In place: the receive side's count and type describe the data. */
	assert_has(e, "count ELEMS of MPI_FLOAT = 128 KiB at the program's sizes");
	/* mine = all + rank * ELEMS: scale() writes the gathered buffer. */
	assert_has(e, "written before it by: scale() at line 43");
	assert_has(e, "read after it by: total() at line 47");
	free(e);
	cuco_size sz = { .name = "big", .nvars = 1, .vars = { { "ELEMS", 1 << 20 } } };
	free(r);
	r = report(p, &sz);
	assert_has(r, "count ELEMS of MPI_FLOAT = 4 MiB at this size");
	free(r);
	cuco_program_free(p);
}

/* The lexer: comments, strings and directives hide nothing and invent
 * nothing; a define is guarded only right under its own #ifndef. */
static void test_lexer(void **state)
{
	(void)state;
	cuco_program *p = parse(
		"#include \"helper.h\"\n"
		"#include <mpi.h>\n"
		"#ifndef N\n"
		"#define N (4 * \\\n  256)\n"
		"#endif\n"
		"#define K 8\n"
		"#ifndef M\n"
		"int x;\n"
		"#define M 3\n"
		"#endif\n"
		"/* MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_INT, c); in a comment */\n"
		"// ncclAllGather(a, b, 1, ncclInt, c, s);\n"
		"static const char *s = \"MPI_Send(x, 1, MPI_INT, 0, 0, c); \\\" still a string\";\n"
		"static const char *raw = R\"x(ncclSend(a, 1, ncclInt, 0, c, s))x\";\n"
		"int main(void) { return 0; }\n");
	assert_int_equal(p->nincludes, 2);
	assert_string_equal(p->includes[0].name, "helper.h");
	assert_true(p->includes[0].local);
	assert_false(p->includes[1].local);
	assert_int_equal(p->nmacros, 1);
	assert_string_equal(p->macros[0].name, "N");
	assert_string_equal(p->macros[0].value, "(4 *   256)");
	assert_int_equal(p->ncomm, 0);
	assert_int_equal(p->main_line, 16);
	assert_true(cuco_program_prints(p, "still a string", NULL));
	assert_true(cuco_program_prints(p, "ncclSend(", NULL));
	cuco_program_free(p);
}

/* Loops of every shape, a call's loop seen through its callers, a
 * function passed as a value, and a do-while that is one loop. */
static void test_loops_and_callers(void **state)
{
	(void)state;
	cuco_program *p = parse(
		"#include <mpi.h>\n"
		"static void step(float *a, int n)\n"
		"{\n"
		"\tMPI_Allreduce(MPI_IN_PLACE, a, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);\n"
		"}\n"
		"static void twice(float *a) { step(a, 4); step(a, 4); }\n"
		"static void run(void (*f)(float *, int), float *a) { f(a, 1); }\n"
		"int main(int argc, char **argv)\n"
		"{\n"
		"\tfloat a[4];\n"
		"\tint i = 0;\n"
		"\tdo {\n"
		"\t\ttwice(a);\n"
		"\t} while (++i < 3);\n"
		"\twhile (i-- > 0)\n"
		"\t\tMPI_Barrier(MPI_COMM_WORLD);\n"
		"\tfor (;;) { if (i) break; }\n"
		"\trun(step, a);\n"
		"\tMPI_Bcast(a, 4, MPI_FLOAT, 0, MPI_COMM_WORLD);\n"
		"\treturn 0;\n"
		"}\n");
	char *r = report(p, NULL);
	char *e = entry(r, 1);
	assert_has(e, "MPI_Allreduce at line 4, in step()");
	assert_has(e, "step() is called at line 6 in twice(), outside any loop there");
	assert_has(e, "twice() is called at line 13 in main(), inside the do loop of line 12");
	assert_has(e, "step is passed as a value at line 18");
	free(e);
	e = entry(r, 2);
	assert_has(e, "MPI_Bcast at line 19, in main()");
	assert_has(e, "not inside a loop of main()");
	free(e);
	assert_has(r, "- MPI_Barrier(MPI_COMM_WORLD) at line 16 in main(), in a loop");
	free(r);
	cuco_program_free(p);
}

/* Buffers through casts, offsets, assignments and lambdas; what a kernel
 * does with each argument; a launch's stream; a callee defined nowhere. */
static void test_buffers(void **state)
{
	(void)state;
	cuco_program *p = parse(
		"#include <nccl.h>\n"
		"__global__ void produce(float *__restrict__ out, const float *in, int n)\n"
		"{ float *o = out + 1; o[threadIdx.x] = in[threadIdx.x]; }\n"
		"__global__ void consume(float *acc, float *seen)\n"
		"{ acc[0] += seen[1]; }\n"
		"int main(void)\n"
		"{\n"
		"\tfloat *buf, *big, *in, *acc;\n"
		"\tncclComm_t c; cudaStream_t s0, s1;\n"
		"\tcudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);\n"
		"\tfloat *slice = (float *)buf + 64;\n"
		"\tauto push = [&](int k) {\n"
		"\t\tncclAllGather(slice, big, 64 * k, ncclBfloat16, c, s1);\n"
		"\t};\n"
		"\tproduce<<<1, 64, 0, s0>>>(buf, in, 64);\n"
		"\tpush(2);\n"
		"\tconsume<<<1, 1>>>(acc, big);\n"
		"\tmystery(big);\n"
		"\treturn 0;\n"
		"}\n");
	char *r = report(p, NULL);
	assert_has(r, "produce (line 2): writes out; reads in; consume (line 4): writes acc; reads acc, seen");
	assert_has(r, "- streams created: s1 (line 10)");
	char *e = entry(r, 1);
	assert_has(e, "ncclAllGather at line 13, in push()");
	assert_has(e, "push() is called at line 16 in main(), outside any loop there");
	assert_has(e, "send slice, receive big");
	assert_has(e, "count 64 * k of ncclBfloat16");
	assert_has(e, "stream s1");
	assert_has(e, "written before it by: kernel produce<<<…>>> at line 15 on s0, around the call "
		"of push() at line 16");
	assert_has(e, "read after it by: kernel consume<<<…>>> at line 17 on the default stream, "
		"around the call of push() at line 16");
	assert_has(e, "mystery() at line 18 (not defined in the program or its local headers: "
		"assumed to read and write every argument)");
	free(e);
	free(r);
	cuco_program_free(p);
}

/* A program's local headers are read for the functions they define. */
static void test_local_headers(void **state)
{
	(void)state;
	const char *src = getenv("CUCO_SOURCE_ROOT");
	char path[1024];
	snprintf(path, sizeof path, "%s/workloads/cpu-gemm-allgather/baseline.c", src ? src : ".");
	cuco_program *p;
	cuco_err err = { 0 };
	assert_int_equal(cuco_program_read(path, &p, &err), CUCO_OK);
	char *r = report(p, NULL);
	assert_has(r, "- local headers read: kernels.h");
	char *e = entry(r, 1);
	assert_has(e, "MPI_Allgather at line 34, in cuco_step()");
	/* rmsnorm_rows stores through a local pointer made from its out. */
	assert_has(e, "written before it by: rmsnorm_rows() at line 30 (defined in kernels.h)");
	assert_has(e, "read after it by: gemm_rows() at line 38 (defined in kernels.h)");
	free(e);
	free(r);
	cuco_program_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allgather_gemm),
		cmocka_unit_test(test_halo),
		cmocka_unit_test(test_cuco_style),
		cmocka_unit_test(test_lexer),
		cmocka_unit_test(test_loops_and_callers),
		cmocka_unit_test(test_buffers),
		cmocka_unit_test(test_local_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
