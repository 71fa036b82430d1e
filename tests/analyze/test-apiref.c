/* test-apiref.c — the API reference read from installed headers: a fake
 * NCCL tree (every rule: quoted includes from the includer and from the
 * root, topics to LSA, GIN or both, an unknown topic to both, the
 * implementations and backends out, licence blocks and guards dropped,
 * nccl.h's host calls from inside extern "C"), the NCCL of this machine
 * when it has one, MPI's one-sided calls through mpicc, and the errors. */
#include "env.h"
#include "analyze/analyze.h"
#include "../eval/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static void put(const char *dir, const char *rel, const char *text)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	cuco_err err;
	assert_int_equal(cuco_mkdir_p(path, &err), CUCO_OK);
	*slash = '/';
	assert_int_equal(cuco_write_file(path, text, strlen(text), &err), CUCO_OK);
}

static const char licence[] = "/*****\n * Copyright (c) NVIDIA.\n *****/\n\n";

static void fake_nccl(const char *home)
{
	char inc[1100];
	snprintf(inc, sizeof inc, "%s/include", home);
	put(inc, "nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n"
		"#define NCCL_WIN_DEFAULT 0x00\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
		"ncclResult_t  ncclMemAlloc(void** ptr, size_t size);\n"
		"ncclResult_t pncclMemAlloc(void** ptr, size_t size);\n"
		"ncclResult_t  ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,\n"
		"    ncclWindow_t* win, int winFlags);\n"
		"#ifdef __cplusplus\n} // end extern \"C\"\n#endif\n");
	put(inc, "nccl_device.h", "#include \"nccl_device/coop.h\"\n"
		"#include \"nccl_device/impl/lsa_barrier__funcs.h\"\n"
		"#include \"nccl_device/impl/gin__funcs.h\"\n#include \"nccl_device/future.h\"\n");
	char body[512];
	snprintf(body, sizeof body, "%s#ifndef _NCCL_DEVICE_COOP_H_\n#define _NCCL_DEVICE_COOP_H_\n"
		"#include \"utility.h\"\nstruct ncclCoopCta { int sync(); };\n#endif\n", licence);
	put(inc, "nccl_device/coop.h", body);
	put(inc, "nccl_device/utility.h", "struct ncclInternalHelper {};\n");
	put(inc, "nccl_device/impl/lsa_barrier__funcs.h", "#include \"lsa_barrier__types.h\"\n"
		"void ncclLsaBarrierImpl() { }\n");
	put(inc, "nccl_device/impl/lsa_barrier__types.h", "#include \"../lsa_barrier.h\"\n"
		"struct ncclLsaBarrierSession_internal { int epoch; };\n");
	put(inc, "nccl_device/lsa_barrier.h", "// Sessions pair coops across ranks.\n"
		"struct ncclLsaBarrierSession { void sync(); };\n");
	put(inc, "nccl_device/impl/gin__funcs.h", "#include \"gin__types.h\"\n"
		"#include \"nccl_device/gin/gin_device_api.h\"\n");
	put(inc, "nccl_device/impl/gin__types.h", "#include \"../gin.h\"\n");
	put(inc, "nccl_device/gin.h", "struct ncclGin { void put(); void flush(); };\n");
	put(inc, "nccl_device/gin/gin_device_api.h", "struct ncclGinBackendInternals {};\n");
	put(inc, "nccl_device/future.h", "struct ncclSomethingNew {};\n");
}

static char *reference(cuco_family family, const char *backend, int *rc, char *from)
{
	cuco_workload wl;
	memset(&wl, 0, sizeof wl);
	cuco_strlcpy(wl.name, "w", sizeof wl.name);
	wl.family = family;
	cuco_strlcpy(wl.compiler, "mpicc", sizeof wl.compiler);
	cuco_buf b = { 0 };
	cuco_err err = { 0 };
	char where[512];
	*rc = cuco_api_reference(&wl, backend, &b, where, sizeof where, &err);
	if (*rc != CUCO_OK) {
		cuco_buf_free(&b);
		return strdup(err.msg);
	}
	if (from)
		strcpy(from, where);
	return b.data;
}

static void test_fake_nccl(void **state)
{
	(void)state;
	char home[1024];
	make_tmpdir(home, sizeof home);
	fake_nccl(home);
	setenv("CUCO_NCCL_HOME", home, 1);
	cuco_env_reread();
	int rc;
	char from[512];
	char *lsa = reference(CUCO_FAMILY_CUDA_NCCL, "lsa", &rc, from);
	assert_int_equal(rc, CUCO_OK);
	assert_has(from, "NCCL 2.28.9, ");
	assert_has(lsa, "Device API 2.28.9 (LSA parts)");
	assert_has(lsa, "ncclResult_t ncclMemAlloc(void * *ptr, size_t size);");
	assert_has(lsa, "ncclCommWindowRegister(ncclComm_t comm, void * buff, size_t size, "
		"ncclWindow_t * win, int winFlags);");
	assert_lacks(lsa, "pncclMemAlloc");
	assert_has(lsa, "#define NCCL_WIN_DEFAULT 0x00");
	assert_has(lsa, "### nccl_device/coop.h\nstruct ncclCoopCta { int sync(); };\n");
	assert_has(lsa, "### nccl_device/lsa_barrier.h\n// Sessions pair coops across ranks.\n");
	assert_has(lsa, "### nccl_device/impl/lsa_barrier__types.h");
	assert_has(lsa, "ncclSomethingNew");           /* a topic of no table row: both */
	assert_lacks(lsa, "ncclGin");                  /* GIN's */
	assert_lacks(lsa, "ncclLsaBarrierImpl");       /* an implementation */
	assert_lacks(lsa, "ncclInternalHelper");       /* an internal helper */
	assert_lacks(lsa, "Copyright");
	assert_lacks(lsa, "_NCCL_DEVICE_COOP_H_");
	assert_lacks(lsa, "#include");
	/* The declarations come before their structs. */
	assert_true(strstr(lsa, "lsa_barrier.h") < strstr(lsa, "lsa_barrier__types.h"));
	char *gin = reference(CUCO_FAMILY_CUDA_NCCL, "gin", &rc, NULL);
	assert_has(gin, "(GIN parts)");
	assert_has(gin, "struct ncclGin { void put(); void flush(); };");
	assert_has(gin, "ncclCoopCta");
	assert_lacks(gin, "ncclLsaBarrierSession");
	assert_lacks(gin, "ncclGinBackendInternals");  /* the backends' internals */
	char *both = reference(CUCO_FAMILY_CUDA_NCCL, "tma", &rc, NULL);
	assert_has(both, "(LSA and GIN parts)");
	assert_has(both, "ncclGin");
	assert_has(both, "ncclLsaBarrierSession");
	free(lsa);
	free(gin);
	free(both);
	/* What is missing is named. */
	char path[1200];
	snprintf(path, sizeof path, "%s/include/nccl_device.h", home);
	unlink(path);
	char *msg = reference(CUCO_FAMILY_CUDA_NCCL, "lsa", &rc, NULL);
	assert_int_equal(rc, CUCO_EENV);
	assert_has(msg, "nccl_device.h: missing: the Device API needs NCCL >= 2.28");
	free(msg);
	setenv("CUCO_NCCL_HOME", "/nonexistent-nccl", 1);
	cuco_env_reread();
	msg = reference(CUCO_FAMILY_CUDA_NCCL, "lsa", &rc, NULL);
	assert_int_equal(rc, CUCO_EENV);
	assert_has(msg, "/nonexistent-nccl/include/nccl.h: no NCCL headers (set CUCO_NCCL_HOME)");
	free(msg);
	msg = reference(CUCO_FAMILY_CUDA, NULL, &rc, NULL);
	assert_int_equal(rc, CUCO_ENOTFOUND);
	free(msg);
	unsetenv("CUCO_NCCL_HOME");
	cuco_env_reread();
	rm_rf(home);
}

/* The NCCL this machine builds with, when it has one (CUDA 13 + NCCL 2.28
 * here): the calls a device-initiated program is written with are there. */
static void test_installed_nccl(void **state)
{
	(void)state;
	char home[1024], path[1100];
	cuco_nccl_home(home, sizeof home);
	snprintf(path, sizeof path, "%s/include/nccl_device.h", home);
	if (access(path, R_OK) != 0)
		skip();
	int rc;
	char *lsa = reference(CUCO_FAMILY_CUDA_NCCL, "lsa", &rc, NULL);
	assert_int_equal(rc, CUCO_OK);
	assert_has(lsa, "ncclGetLsaPointer");
	assert_has(lsa, "struct ncclLsaBarrierSession");
	assert_has(lsa, "struct ncclDevCommRequirements");
	assert_has(lsa, "ncclDevCommCreate");
	assert_has(lsa, "ncclMemAlloc");
	assert_lacks(lsa, "struct ncclGin ");
	char *gin = reference(CUCO_FAMILY_CUDA_NCCL, "gin", &rc, NULL);
	assert_has(gin, "ncclGin_SignalInc");
	assert_has(gin, "struct ncclBarrierSession");
	assert_lacks(gin, "ncclLLA2ASession");
	free(lsa);
	free(gin);
}

static void test_mpi(void **state)
{
	(void)state;
	int status;
	char *where = capture_output("command -v mpicc", &status);
	free(where);
	if (status != 0)
		skip();
	int rc;
	char from[512];
	char *both = reference(CUCO_FAMILY_CPU_MPI, "msg", &rc, from);
	assert_int_equal(rc, CUCO_OK);
	assert_has(from, "/mpi.h");
	assert_has(both, "int MPI_Put(const void * origin_addr,");
	assert_has(both, "int MPI_Win_allocate_shared(");
	assert_has(both, "int MPI_Win_fence(");
	assert_lacks(both, "PMPI_Put");
	char *rma = reference(CUCO_FAMILY_CPU_MPI, "rma", &rc, NULL);
	assert_has(rma, "MPI_Win_flush(");
	assert_lacks(rma, "MPI_Win_shared_query");
	char *shm = reference(CUCO_FAMILY_CPU_MPI, "shm", &rc, NULL);
	assert_has(shm, "MPI_Win_shared_query(");
	assert_lacks(shm, "MPI_Put(");
	free(both);
	free(rma);
	free(shm);
	setenv("CUCO_MPICC", "/bin/false", 1);
	cuco_env_reread();
	char *msg = reference(CUCO_FAMILY_CPU_MPI, "rma", &rc, NULL);
	assert_int_equal(rc, CUCO_EENV);
	assert_has(msg, "/bin/false cannot find mpi.h (is it an MPI compiler?)");
	free(msg);
	/* The compiler's words reach no shell: what a shell would run, is not. */
	char planted[64], compiler[160];
	snprintf(planted, sizeof planted, "/tmp/cuco-apiref-%d", (int)getpid());
	snprintf(compiler, sizeof compiler, "mpicc;touch %s $(touch %s)", planted, planted);
	setenv("CUCO_MPICC", compiler, 1);
	cuco_env_reread();
	msg = reference(CUCO_FAMILY_CPU_MPI, "rma", &rc, NULL);
	assert_int_equal(rc, CUCO_EENV);
	assert_int_equal(access(planted, F_OK), -1);
	free(msg);
	/* Flags after the compiler are its own. */
	setenv("CUCO_MPICC", "mpicc -O2", 1);
	cuco_env_reread();
	msg = reference(CUCO_FAMILY_CPU_MPI, "rma", &rc, NULL);
	assert_int_equal(rc, CUCO_OK);
	free(msg);
	unsetenv("CUCO_MPICC");
	cuco_env_reread();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake_nccl),
		cmocka_unit_test(test_installed_nccl),
		cmocka_unit_test(test_mpi),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
