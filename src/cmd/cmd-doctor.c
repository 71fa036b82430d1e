/* cmd-doctor.c — `cuco doctor [--json]`: the hardware profile and the
 * toolchain the GPU workloads need (nvcc, mpicc and mpirun, NCCL's Device
 * API headers and a library of the same release, a GPU), saying exactly
 * what is missing. Exit 3 when anything is. The sandbox is checked too,
 * and what confines a stage (its user, its PID namespace, the system-call
 * filter, the keyrings, how leftovers are counted, the build cache), but
 * only warned about: without them stages still run, with resource limits
 * only. So is the runner (the config file's
 * [runner], or --runner): that its launcher answers (srun --version,
 * sinfo, mpirun, ssh) and its slots resolve. Last, which of the workloads
 * found can run here: their family's tools present, one GPU per rank
 * visible; and the folders cuco reads its workloads, themes, config and
 * manual from (core.h, cuco_paths). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "eval/eval.h"
#include "env.h"

enum { MAX_CHECKS = 32 };

typedef struct check {
	const char *what;
	bool ok;
	bool optional;  /* not ok: a warning, not something missing */
	char detail[640];
} check;

typedef struct report {
	int n;
	check checks[MAX_CHECKS];
} report;

static check *add(report *r, const char *what, bool ok, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static check *add(report *r, const char *what, bool ok, const char *fmt, ...)
{
	check *c = &r->checks[r->n++];
	c->what = what;
	c->ok = ok;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof c->detail, fmt, ap);
	va_end(ap);
	return c;
}

/* The full path of a program on $PATH (or under dir when given), or false. */
static bool find_program(const char *name, const char *dir, char *path, size_t size)
{
	if (dir && *dir) {
		snprintf(path, size, "%s/bin/%s", dir, name);
		if (access(path, X_OK) == 0)
			return true;
	}
	const char *env = getenv("PATH");
	for (const char *p = env ? env : ""; *p;) {
		size_t len = strcspn(p, ":");
		snprintf(path, size, "%.*s/%s", (int)len, p, name);
		if (len && access(path, X_OK) == 0)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

/* "2.28.9" from NCCL_VERSION_CODE in nccl.h, or "" when unreadable. */
static void header_version(const char *nccl_h, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen(nccl_h, "r");
	char line[256];
	int code = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "#define NCCL_VERSION_CODE %d", &code) == 1)
			break;
	if (f)
		fclose(f);
	if (code > 0)
		snprintf(out, size, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
}

static void check_toolchain(report *r, const cuco_hardware *hw)
{
	const cuco_env *env = cuco_env_get();
	const char *cuda_home = env->cuda_home ? env->cuda_home : "/usr/local/cuda";
	const char *nccl_home = env->nccl_home ? env->nccl_home : cuda_home;
	char path[1024];
	if (find_program("nvcc", cuda_home, path, sizeof path))
		add(r, "nvcc", true, "%s (CUDA %s)", path, hw->cuda_version);
	else
		add(r, "nvcc", false, "not under %s/bin nor on PATH (set CUCO_CUDA_HOME)", cuda_home);
	for (const char *const *p = (const char *const[]){ "mpicc", "mpirun", NULL }; *p; p++) {
		bool found = find_program(*p, NULL, path, sizeof path);
		add(r, *p, found, "%s", found ? path : "not on PATH (Open MPI: apt-get install openmpi-bin libopenmpi-dev)");
	}
	char hdr[1024], hver[32];
	snprintf(hdr, sizeof hdr, "%s/include/nccl_device.h", nccl_home);
	bool device_h = access(hdr, R_OK) == 0;
	snprintf(hdr, sizeof hdr, "%s/include/nccl.h", nccl_home);
	header_version(hdr, hver, sizeof hver);
	if (device_h && *hver)
		add(r, "NCCL headers", true, "%s/include: %s, with nccl_device.h", nccl_home, hver);
	else
		add(r, "NCCL headers", false, "%s/include/%s missing: the Device API needs NCCL >= 2.28 (set CUCO_NCCL_HOME)",
			nccl_home, *hver ? "nccl_device.h" : "nccl.h");
	if (!hw->nccl_version[0])
		add(r, "NCCL library", false, "libnccl.so.2 not loadable (put its lib/ in LD_LIBRARY_PATH)");
	else if (*hver && strcmp(hver, hw->nccl_version) != 0)
		add(r, "NCCL library", false, "libnccl.so.2 is %s but the headers are %s: kernels built with one and run "
			"with the other crash; put the matching lib/ first in LD_LIBRARY_PATH", hw->nccl_version, hver);
	else
		add(r, "NCCL library", true, "libnccl.so.2 %s", hw->nccl_version);
	/* The evaluator sets it for every stage (eval/env.c), whatever this
	 * environment says: nothing to do here. */
	const char *nvls = cuco_env_get()->nccl_nvls_enable;
	add(r, "NCCL_NVLS_ENABLE", true, "0 for every stage, set by cuco (NVLink multicast stays off)%s",
		nvls && strcmp(nvls, "0") != 0 ? "; this shell's value is not passed on" : "");
	add(r, "GPU", hw->ngpus > 0, "%s", hw->ngpus > 0 ? hw->gpu_model : "nvidia-smi finds none");
}

/* The checks above that each family's workloads need. */
static const char *const family_needs[][6] = {
	[CUCO_FAMILY_CPU_MPI] = { "mpicc", "mpirun", NULL },
	[CUCO_FAMILY_CUDA_NCCL] = { "nvcc", "mpicc", "mpirun", "NCCL headers", "NCCL library", NULL },
	[CUCO_FAMILY_CUDA] = { "nvcc", NULL },
};

/* Whether a workload can run here; when not, why in one line. */
static bool workload_runs(const report *r, const cuco_hardware *hw, const char *name, char *why, size_t size)
{
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(name, &wl, &err) != CUCO_OK) {
		snprintf(why, size, "invalid: %s", err.msg);
		return false;
	}
	bool ok = cuco_hardware_fits(hw, wl, why, size);
	for (int k = 0; ok && k < 6 && family_needs[wl->family][k]; k++)
		for (int i = 0; i < r->n; i++)
			if (!r->checks[i].ok && strcmp(r->checks[i].what, family_needs[wl->family][k]) == 0) {
				snprintf(why, size, "%s: %s", r->checks[i].what, r->checks[i].detail);
				ok = false;
			}
	if (ok)
		snprintf(why, size, "%d rank%s", wl->ranks, wl->ranks == 1 ? "" : "s");
	cuco_workload_free(wl);
	return ok;
}

/* Each workload found: whether it runs here, and why not. */
static void list_workloads(const report *r, const cuco_hardware *hw, cJSON *json)
{
	char **names = NULL, why[768];
	size_t n = 0;
	cuco_err err = { 0 };
	if (cuco_workload_list(&names, &n, &err) != CUCO_OK)
		snprintf(why, sizeof why, "%s", err.msg);
	cJSON *arr = json ? cJSON_AddArrayToObject(json, "workloads") : NULL;
	if (!json)
		printf("\nworkloads%s%s\n", n ? "" : ": none found; ", n ? "" : err.msg[0] ? err.msg : "");
	for (size_t i = 0; i < n; i++) {
		bool ok = workload_runs(r, hw, names[i], why, sizeof why);
		if (arr) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", names[i]);
			cJSON_AddBoolToObject(o, "runs", ok);
			cJSON_AddStringToObject(o, "detail", why);
			cJSON_AddItemToArray(arr, o);
		} else {
			printf("%-8s %-24s %s\n", ok ? "runs" : "no", names[i], why);
		}
		free(names[i]);
	}
	free(names);
}

/* Whether stages would run in bubblewrap, as `cuco run` would decide. */
static void check_sandbox(report *r, const cmd_config *file)
{
	bool on = false;
	char status[640];
	cuco_err err = { 0 };
	cuco_sandbox_mode mode = CUCO_SANDBOX_DEFAULT;
	if (cmd_sandbox_mode(file, &mode, &err) != CUCO_OK
			|| cuco_sandbox_check(mode, &on, status, sizeof status, &err) != CUCO_OK)
		add(r, "sandbox", false, "%s", err.msg);
	else
		add(r, "sandbox", on, "%s", status)->optional = !on;
}

static void runner_line(const char *what, bool ok, const char *detail, void *arg)
{
	add(arg, what, ok, "%s", detail);
}

static void stage_line(const char *what, bool ok, const char *detail, void *arg)
{
	add(arg, what, ok, "%s", detail)->optional = !ok;
}

/* What confines a stage here, one line each, measured by a stage that
 * looks (cuco_stage_check); warnings, like the sandbox's. */
static void check_stages(report *r, const cmd_config *file)
{
	cuco_err err = { 0 };
	cuco_sandbox_mode mode = CUCO_SANDBOX_DEFAULT;
	if (cmd_sandbox_mode(file, &mode, &err) == CUCO_OK)
		cuco_stage_check(mode, stage_line, r, &err);
}

/* Where stages would run, and whether they can. The local runner's
 * mpirun is the toolchain's line already. */
static void check_runner(report *r, const cmd_config *file, const cmd_runner_flags *flags)
{
	cuco_runner_config rc;
	cuco_err err = { 0 };
	if (cmd_runner_config(file, flags, &rc, &err) != CUCO_OK) {
		add(r, "runner", false, "%s", err.msg);
		return;
	}
	add(r, "runner", true, "%s%s", cuco_runner_name(rc.kind),
		rc.kind == CUCO_RUNNER_LOCAL ? ": this machine, one slot" : "");
	if (rc.kind != CUCO_RUNNER_LOCAL)
		cuco_runner_check(&rc, 1, runner_line, r);
}

/* Whether a candidate's processes are limited together (a cgroup per
 * stage) or each alone (rlimits). Optional, like the sandbox. */
static void check_limits(report *r)
{
	char status[512];
	bool on = cuco_limits_check(status, sizeof status);
	add(r, "limits", on, "%s", status)->optional = !on;
}

/* The folders searched that exist, in order, with why each is. */
static void folders_json(cJSON *o, const char *key, const cuco_folder *list, int n)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);
	for (int i = 0; i < n; i++)
		if (cuco_folder_exists(&list[i])) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "path", list[i].path);
			cJSON_AddStringToObject(f, "from", list[i].from);
			cJSON_AddItemToArray(arr, f);
		}
}

static void print_folders(const char *what, const cuco_folder *list, int n)
{
	int shown = 0;
	for (int i = 0; i < n; i++)
		if (cuco_folder_exists(&list[i]))
			printf("%-10s %s (%s)\n", shown++ ? "" : what, list[i].path, list[i].from);
	if (!shown)
		printf("%-10s none found\n", what);
}

/* Where cuco reads its own files from. */
static void list_folders(cJSON *json)
{
	const cuco_paths *p = cuco_paths_get();
	if (json) {
		cJSON *o = cJSON_AddObjectToObject(json, "folders");
		folders_json(o, "workloads", p->workloads, p->nworkloads);
		folders_json(o, "themes", p->themes, p->nthemes);
		cJSON_AddStringToObject(o, "config", p->config);
		cJSON_AddBoolToObject(o, "config_found", p->config_found);
		cJSON_AddStringToObject(o, "manual", p->manual);
		return;
	}
	printf("\nfolders, searched in this order\n");
	print_folders("workloads", p->workloads, p->nworkloads);
	print_folders("themes", p->themes, p->nthemes);
	if (p->config[0])
		printf("%-10s %s (%s)%s\n", "config", p->config, p->config_from,
			p->config_found ? "" : ": none yet, the defaults apply");
	else
		printf("%-10s none: neither HOME nor XDG_CONFIG_HOME is set\n", "config");
	printf("%-10s %s\n", "manual", p->manual[0] ? p->manual : "not found");
}

static void print_profile(const cuco_hardware *hw)
{
	printf("CPU      %s, %d cores, %ld MiB\n", *hw->cpu_model ? hw->cpu_model : "?", hw->cpus, hw->mem_mb);
	if (hw->ngpus > 0) {
		printf("GPU      %d x %s, %ld MiB", hw->ngpus, hw->gpu_model, hw->gpu_mem_mb);
		if (hw->sm_count)
			printf(", %d SMs, HBM %.0f GB/s, bf16 %.0f TFLOP/s (datasheet)", hw->sm_count, hw->hbm_gbs,
				hw->tensor_tflops);
		printf("\nNVLink   %s\n", *hw->nvlink ? hw->nvlink : "none");
	} else {
		printf("GPU      none\n");
	}
	printf("driver   %s   CUDA %s   NCCL %s\n", *hw->driver ? hw->driver : "-",
		*hw->cuda_version ? hw->cuda_version : "-", *hw->nccl_version ? hw->nccl_version : "-");
	printf("GIN      %s\n", hw->gin ? "an RDMA NIC is present (NCCL decides at run time)"
		: "not available (no RDMA NIC in /sys/class/infiniband): LSA only");
}

/* The runner checked: the config file's [runner], with these over it. */
#define DOCTOR_OPTIONS(X) \
	X(O_JSON, "json", 'j', NULL, 0, "one JSON object: the profile and each check") \
	X(O_RUNNER, CMD_OPT_RUNNER) \
	X(O_HOSTFILE, CMD_OPT_HOSTFILE) \
	X(O_HOSTS, CMD_OPT_HOSTS)
CMD_TABLE(options, DOCTOR_OPTIONS);

static int doctor_exec(int argc, char **argv)
{
	bool json = false;
	cmd_runner_flags flags = { 0 };
	int o;
	cmd_args a = CMD_ARGS(&cmd_doctor, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		if (o == O_JSON)
			json = true;
		else if (cmd_runner_option(&a, o, &flags) != CUCO_OK)
			return CUCO_EUSAGE;
	}
	if (!cmd_operands(&a, 0, 0, "takes no arguments"))
		return a.rc;

	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	report r = { 0 };
	check_toolchain(&r, &hw);
	cmd_config file;  /* read once, for the sandbox's and the runner's checks */
	cmd_config_read(&file);
	check_sandbox(&r, &file);
	check_stages(&r, &file);
	check_runner(&r, &file, &flags);
	check_limits(&r);
	size_t len = 0;
	for (int i = 0; i < r.n; i++)
		if (!r.checks[i].ok && !r.checks[i].optional && len + 2 < sizeof hw.missing)
			len += (size_t)snprintf(hw.missing + len, sizeof hw.missing - len, "%s%s", len ? "; " : "",
				r.checks[i].what);
	if (json) {
		cJSON *o = cuco_hardware_to_json(&hw), *arr = cJSON_AddArrayToObject(o, "checks");
		for (int i = 0; i < r.n; i++) {
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "what", r.checks[i].what);
			cJSON_AddBoolToObject(c, "ok", r.checks[i].ok);
			cJSON_AddBoolToObject(c, "optional", r.checks[i].optional);
			cJSON_AddStringToObject(c, "detail", r.checks[i].detail);
			cJSON_AddItemToArray(arr, c);
		}
		list_workloads(&r, &hw, o);
		list_folders(o);
		char *text = cJSON_Print(o);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(o);
	} else {
		print_profile(&hw);
		printf("\n");
		for (int i = 0; i < r.n; i++)
			printf("%-8s %-17s %s\n", r.checks[i].ok ? "ok" : r.checks[i].optional ? "warn" : "MISSING",
				r.checks[i].what, r.checks[i].detail);
		list_workloads(&r, &hw, NULL);
		list_folders(NULL);
		if (hw.missing[0])
			printf("\nmissing: %s\n", hw.missing);
	}
	return hw.missing[0] ? CUCO_EENV : CUCO_OK;
}

const cuco_cmd cmd_doctor = { "doctor", "",
	"print the hardware profile, check nvcc, MPI, NCCL, the GPU, the sandbox and the runner (exit 3 when\n"
	"       something is missing), list which workloads can run here and the folders cuco reads",
	doctor_exec, CMD_OPTIONS(options) };
