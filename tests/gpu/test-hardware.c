/* test-hardware.c — the hardware profile and `cuco doctor`, with a fake
 * nvidia-smi on PATH standing in for two H200s joined by NVLink (so the
 * parsers run on every machine), then with none: CPU facts from /proc,
 * GPU name, memory, driver, datasheet peaks, NVLink pairs, the JSON form,
 * and doctor naming exactly what is missing with exit 3. */
#include "eval/eval.h"
#include "../eval/util.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[256], saved_path[4096];

/* A fake nvidia-smi answering the two queries hardware.c makes. */
static const char fake_smi[] =
	"#!/bin/sh\n"
	"case \"$*\" in\n"
	"*query-gpu*) printf 'NVIDIA H200, 143771, 580.159.04\\nNVIDIA H200, 143771, 580.159.04\\n' ;;\n"
	"*topo*) printf '\\tGPU0\\tGPU1\\tCPU Affinity\\tNUMA Affinity\\n"
	"GPU0\\t X \\tNV18\\t0-31\\t0\\nGPU1\\tNV18\\t X \\t0-31\\t0\\n\\nLegend:\\n  NV#  = NVLinks\\n' ;;\n"
	"*) echo 'CUDA Version: 13.0' ;;\n"
	"esac\n";

static int setup(void **state)
{
	(void)state;
	make_tmpdir(dir, sizeof dir);
	char path[512];
	snprintf(path, sizeof path, "%s/nvidia-smi", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(fake_smi, f);
	fclose(f);
	chmod(path, 0755);
	snprintf(saved_path, sizeof saved_path, "%s", getenv("PATH"));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	setenv("PATH", saved_path, 1);
	rm_rf(dir);
	return 0;
}

static void use_fake_smi(bool on)
{
	char path[sizeof saved_path + 300];
	/* Without the fake, a PATH where nothing is found, so that a real
	 * nvidia-smi on a GPU machine stays out too. */
	snprintf(path, sizeof path, "%s%s", dir, on ? ":/usr/bin:/bin" : "/none");
	setenv("PATH", path, 1);
}

static void test_cpu_from_proc(void **state)
{
	(void)state;
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	assert_int_equal(hw.cpus, (int)sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(hw.mem_mb > 0);
	assert_true(hw.cpu_model[0] != '\0');
}

static void test_two_h200_with_nvlink(void **state)
{
	(void)state;
	use_fake_smi(true);
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	assert_int_equal(hw.ngpus, 2);
	assert_string_equal(hw.gpu_model, "NVIDIA H200");
	assert_int_equal(hw.gpu_mem_mb, 143771);
	assert_string_equal(hw.driver, "580.159.04");
	assert_int_equal(hw.sm_count, 132);
	assert_true(hw.hbm_gbs == 4800 && hw.tensor_tflops == 989);
	assert_string_equal(hw.nvlink, "GPU0-GPU1 NV18");
	cJSON *j = cuco_hardware_to_json(&hw);
	assert_int_equal(cJSON_GetObjectItem(j, "gpus")->valueint, 2);
	assert_string_equal(cJSON_GetObjectItem(j, "nvlink")->valuestring, "GPU0-GPU1 NV18");
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(j, "gin")));
	assert_null(cJSON_GetObjectItem(j, "missing"));  /* only doctor fills it */
	cJSON_Delete(j);
}

static void test_no_gpu(void **state)
{
	(void)state;
	use_fake_smi(false);
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	assert_int_equal(hw.ngpus, 0);
	assert_string_equal(hw.nvlink, "");
	assert_false(hw.gin);  /* GIN needs a GPU and an RDMA NIC */
}

/* Run cuco doctor with extra environment; its stdout in out. */
static int doctor(const char *env, const char *args, char *out, size_t size)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "/usr/bin/env %s '%s' doctor %s", env, getenv("CUCO_BIN"), args);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_doctor_names_what_is_missing(void **state)
{
	(void)state;
	use_fake_smi(false);
	static char out[16384];
	int rc = doctor("-u NCCL_NVLS_ENABLE CUCO_CUDA_HOME=/nonexistent CUCO_NCCL_HOME=/nonexistent", "", out,
		sizeof out);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(out, "MISSING  nvcc"));
	assert_non_null(strstr(out, "MISSING  NCCL headers      /nonexistent/include/nccl.h missing"));
	assert_non_null(strstr(out, "MISSING  NCCL_NVLS_ENABLE"));
	assert_non_null(strstr(out, "MISSING  GPU               nvidia-smi finds none"));
	/* Nothing is on PATH: MPI is missing too; libnccl.so.2 may still load
	 * from the linker's cache, so the summary may or may not name it. */
	assert_non_null(strstr(out, "missing: nvcc; mpicc; mpirun; NCCL headers; "));
	assert_non_null(strstr(out, "NCCL_NVLS_ENABLE; GPU\n"));
}

static void test_doctor_json(void **state)
{
	(void)state;
	use_fake_smi(true);
	static char out[16384];
	int rc = doctor("NCCL_NVLS_ENABLE=0", "--json", out, sizeof out);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "gpus")->valueint, 2);
	const cJSON *checks = cJSON_GetObjectItem(j, "checks"), *c;
	int n = 0, failed = 0;
	cJSON_ArrayForEach(c, checks) {
		n++;
		/* A missing sandbox is a warning, not a missing part. */
		if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")) && !cJSON_IsTrue(cJSON_GetObjectItem(c, "optional")))
			failed++;
		if (strcmp(cJSON_GetObjectItem(c, "what")->valuestring, "NCCL_NVLS_ENABLE") == 0)
			assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
	}
	assert_int_equal(n, 8);
	/* Exit 3 exactly when a check failed, and then "missing" says which. */
	assert_int_equal(rc, failed ? 3 : 0);
	assert_int_equal(cJSON_GetObjectItem(j, "missing") != NULL, failed > 0);
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_from_proc),
		cmocka_unit_test(test_two_h200_with_nvlink),
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_doctor_names_what_is_missing),
		cmocka_unit_test(test_doctor_json),
	};
	return cmocka_run_group_tests_name("hardware", tests, setup, teardown);
}
