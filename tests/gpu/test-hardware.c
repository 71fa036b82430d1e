/* test-hardware.c — the hardware profile and `cuco doctor`, with a fake
 * nvidia-smi on PATH standing in for two H200s joined by NVLink (so the
 * parsers run on every machine), then with none: CPU facts from /proc,
 * GPU name, memory, driver, datasheet peaks, NVLink pairs, the JSON form,
 * doctor naming exactly what is missing with exit 3; the GPUs that
 * CUDA_VISIBLE_DEVICES leaves, which workloads fit, the peaks a workload
 * is scored against (HBM for one GPU, NVLink for several), doctor's list
 * of workloads and `cuco run` refusing one that does not fit. */
#include "env.h"
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

/* A tool that floods is read only so far: detection ends, and a profile
 * cut short counts no GPU (popen read it to its end, forever). Then the
 * profile a process detects once, for all who ask. */
static void test_flooding_tool(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/flood/nvidia-smi", dir);
	char folder[512];
	snprintf(folder, sizeof folder, "%s/flood", dir);
	mkdir(folder, 0755);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nexec yes 'NVIDIA H200, 143771, 580.159.04'\n", f);
	fclose(f);
	chmod(path, 0755);
	char env[sizeof folder + 32];
	snprintf(env, sizeof env, "%s:/usr/bin:/bin", folder);
	setenv("PATH", env, 1);
	double t0 = cuco_mono();
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	assert_true(cuco_mono() - t0 < 10);
	assert_int_equal(hw.ngpus, 0);
	use_fake_smi(true);
	const cuco_hardware *once = cuco_hardware_get();
	assert_int_equal(once->ngpus, 2);
	use_fake_smi(false);
	assert_ptr_equal(cuco_hardware_get(), once);
	assert_int_equal(cuco_hardware_get()->ngpus, 2);
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
	/* cuco sets NCCL_NVLS_ENABLE=0 for every stage itself: never missing. */
	assert_non_null(strstr(out, "ok       NCCL_NVLS_ENABLE  0 for every stage, set by cuco"));
	assert_non_null(strstr(out, "MISSING  GPU               nvidia-smi finds none"));
	/* Nothing is on PATH: MPI is missing too; libnccl.so.2 may still load
	 * from the linker's cache, so the summary may or may not name it. */
	assert_non_null(strstr(out, "missing: nvcc; mpicc; mpirun; NCCL headers; "));
	assert_non_null(strstr(out, "; GPU\n"));
	assert_null(strstr(out, "NCCL_NVLS_ENABLE;"));
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
	static const char *const stage[] = { "stage user", "stage user's own", "PID namespace", "seccomp",
		"keyrings", "GPU nodes", "leftovers", "build cache" };
	int n = 0, failed = 0, limits = 0, stages = 0;
	cJSON_ArrayForEach(c, checks) {
		n++;
		const char *what = cJSON_GetObjectItem(c, "what")->valuestring;
		limits += strcmp(what, "limits") == 0;
		for (size_t i = 0; i < sizeof stage / sizeof stage[0]; i++)
			if (strcmp(what, stage[i]) == 0) {
				stages++;
				assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok"))
					|| cJSON_IsTrue(cJSON_GetObjectItem(c, "optional")));
			}
		/* A missing sandbox is a warning, not a missing part. */
		if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")) && !cJSON_IsTrue(cJSON_GetObjectItem(c, "optional")))
			failed++;
		if (strcmp(cJSON_GetObjectItem(c, "what")->valuestring, "NCCL_NVLS_ENABLE") == 0)
			assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
	}
	/* the toolchain's 7, the sandbox, what confines a stage (8), the runner, the limits */
	assert_int_equal(n, 18);
	assert_int_equal(limits, 1);  /* the stages' cgroup or rlimits */
	assert_int_equal(stages, 8);  /* each a warning at worst, never a missing part */
	/* Exit 3 exactly when a check failed, and then "missing" says which. */
	assert_int_equal(rc, failed ? 3 : 0);
	assert_int_equal(cJSON_GetObjectItem(j, "missing") != NULL, failed > 0);
	cJSON_Delete(j);
}

static void test_visible_devices(void **state)
{
	(void)state;
	use_fake_smi(true);
	static const struct {
		const char *value;
		int gpus;
	} cases[] = {
		{ "1", 1 }, { "", 0 }, { "0,1", 2 }, { "0,GPU-8f2c", 2 }, { "0,,1", 1 }, { "-1", 0 }, { "0,1,2,3", 2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		setenv("CUDA_VISIBLE_DEVICES", cases[i].value, 1);
		cuco_env_reread();  /* cuco reads its environment once */
		cuco_hardware hw;
		cuco_hardware_detect(&hw);
		print_message("CUDA_VISIBLE_DEVICES='%s': %d GPU(s)\n", cases[i].value, hw.ngpus);
		assert_int_equal(hw.ngpus, cases[i].gpus);
		/* One GPU has no NVLink peer: no link figure either. */
		assert_true(hw.ngpus > 1 ? hw.nvlink_gbs == 450 : hw.nvlink_gbs == 0);
	}
	unsetenv("CUDA_VISIBLE_DEVICES");
	cuco_env_reread();
}

static cuco_workload *load(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/workloads/%s", getenv("CUCO_SOURCE_ROOT"), name);
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(path, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return wl;
}

static void test_fits_and_peaks(void **state)
{
	(void)state;
	use_fake_smi(true);
	cuco_workload *ring = load("flash-attention-cp"), *one = load("attention"), *cpu = load("cpu-gemm-allgather");
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	char why[256] = "";
	cuco_peak pk;
	assert_true(cuco_hardware_fits(&hw, ring, why, sizeof why));
	cuco_hardware_peak(&hw, ring, &pk);  /* the bytes cross NVLink, not HBM */
	assert_true(pk.bandwidth_gbs == 450 && pk.gflops == 989000);
	assert_string_equal(pk.bandwidth_of, "NVLink per direction (hardware profile)");
	cuco_hardware_peak(&hw, one, &pk);
	assert_true(pk.bandwidth_gbs == 4800 && pk.gflops == 989000);
	assert_string_equal(pk.bandwidth_of, "HBM (hardware profile)");

	setenv("CUDA_VISIBLE_DEVICES", "0", 1);
	cuco_env_reread();  /* cuco reads its environment once */
	cuco_hardware_detect(&hw);
	assert_false(cuco_hardware_fits(&hw, ring, why, sizeof why));
	assert_string_equal(why, "flash-attention-cp needs 2 GPUs (one per rank) and 1 is visible");
	assert_true(cuco_hardware_fits(&hw, one, why, sizeof why));
	cuco_hardware_peak(&hw, ring, &pk);  /* no NVLink seen: the manifest's link */
	assert_true(pk.bandwidth_gbs == ring->peak_bandwidth_gbs);
	assert_string_equal(pk.bandwidth_of, "the link (the manifest's peak.bandwidth_gbs)");
	ring->ranks = 1;  /* as --ranks 1 makes it */
	assert_true(cuco_hardware_fits(&hw, ring, why, sizeof why));
	unsetenv("CUDA_VISIBLE_DEVICES");
	cuco_env_reread();

	use_fake_smi(false);
	cuco_hardware_detect(&hw);
	assert_false(cuco_hardware_fits(&hw, one, why, sizeof why));
	assert_string_equal(why, "attention needs 1 GPU (one per rank) and none is visible");
	assert_true(cuco_hardware_fits(&hw, cpu, why, sizeof why));  /* ranks are processes */
	cuco_hardware_peak(&hw, one, &pk);  /* no GPU known: the manifest's figures */
	assert_true(pk.bandwidth_gbs == one->peak_bandwidth_gbs && pk.gflops == one->peak_gflops);
	cuco_workload_free(ring);
	cuco_workload_free(one);
	cuco_workload_free(cpu);
}

/* The workloads entry of doctor's JSON named `name`. */
static const cJSON *doctor_workload(const cJSON *j, const char *name)
{
	const cJSON *w;
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(j, "workloads"))
		if (strcmp(cJSON_GetObjectItem(w, "name")->valuestring, name) == 0)
			return w;
	fail_msg("doctor lists no workload %s", name);
	return NULL;
}

static void test_doctor_lists_workloads(void **state)
{
	(void)state;
	use_fake_smi(true);
	static char out[65536];
	doctor("NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=0", "--json", out, sizeof out);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	const cJSON *ring = doctor_workload(j, "flash-attention-cp"), *one = doctor_workload(j, "attention");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(ring, "runs")));
	assert_string_equal(cJSON_GetObjectItem(ring, "detail")->valuestring,
		"flash-attention-cp needs 2 GPUs (one per rank) and 1 is visible");
	/* One GPU is enough for attention unless nvcc is missing here. */
	const char *detail = cJSON_GetObjectItem(one, "detail")->valuestring;
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(one, "runs")) ? strcmp(detail, "1 rank") == 0
		: strncmp(detail, "nvcc: ", 6) == 0);
	cJSON_Delete(j);
	doctor("CUDA_VISIBLE_DEVICES=0", "", out, sizeof out);  /* the text form: one row per workload */
	assert_non_null(strstr(out, "\nno       flash-attention-cp       flash-attention-cp needs 2 GPUs"));
}

/* `cuco run` of a workload that needs more GPUs than are visible: exit 3,
 * one line, no run directory; --ranks that fits gets past the check. */
static void test_run_refuses_what_does_not_fit(void **state)
{
	(void)state;
	use_fake_smi(true);
	char cmd[2048], run[512], out[4096];
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES=0 '%s' run flash-attention-cp --budget 1 --headless --run '%s' 2>&1",
		getenv("CUCO_BIN"), run);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = '\0';
	int st = pclose(f);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	assert_string_equal(out, "cuco: flash-attention-cp needs 2 GPUs (one per rank) and 1 is visible: try --ranks 1 "
		"(cuco doctor lists what fits here)\n");
	struct stat sb;
	assert_int_not_equal(stat(run, &sb), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_from_proc),
		cmocka_unit_test(test_two_h200_with_nvlink),
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_flooding_tool),
		cmocka_unit_test(test_doctor_names_what_is_missing),
		cmocka_unit_test(test_doctor_json),
		cmocka_unit_test(test_visible_devices),
		cmocka_unit_test(test_fits_and_peaks),
		cmocka_unit_test(test_doctor_lists_workloads),
		cmocka_unit_test(test_run_refuses_what_does_not_fit),
	};
	return cmocka_run_group_tests_name("hardware", tests, setup, teardown);
}
