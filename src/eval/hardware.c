/* hardware.c — what this machine offers: CPU and memory from /proc, GPUs
 * and their NVLink topology from nvidia-smi, the CUDA toolkit from nvcc,
 * the NCCL that will be loaded (asked through dlopen, as a workload's
 * process would find it), GIN from the RDMA devices in sysfs, and peak
 * figures for the GPUs we know.
 *
 * Detection never fails: a missing tool leaves its fields empty, and
 * `cuco doctor` says what that means. Commands run with their stderr
 * discarded, their output and their time bounded (tool_output); none of
 * them needs a GPU to be idle. A process detects once (cuco_hardware_get)
 * and hands the profile down: the engine to its strategies. */
#include "eval/eval.h"
#include "env.h"
#include "proc.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Peak figures from the vendors' datasheets (dense bf16 tensor cores, HBM,
 * NVLink per direction per GPU: half the "bidirectional" figure), matched by
 * substring of nvidia-smi's name, most specific first. */
static const struct gpu_peak {
	const char *name;
	int sms;
	double hbm_gbs, tensor_tflops, nvlink_gbs;
} gpu_peaks[] = {
	{ "GH200", 132, 4000, 989, 450 },
	{ "H200", 132, 4800, 989, 450 },
	{ "H100 PCIe", 114, 2000, 756, 300 },
	{ "H100 NVL", 132, 3900, 835, 300 },
	{ "H100", 132, 3350, 989, 450 },
	{ "B200", 148, 8000, 2250, 900 },
	{ "A100-SXM4-80GB", 108, 2039, 312, 300 },
	{ "A100 80GB PCIe", 108, 1935, 312, 300 },
	{ "A100", 108, 1555, 312, 300 },
	{ "L40S", 142, 864, 362, 0 },
	{ NULL, 0, 0, 0, 0 },
};

/* A tool that hangs (nvidia-smi on a wedged driver) or floods is cut off
 * past these: detection never waits longer, nor reads more. */
#define TOOL_TIMEOUT_S 15
#define TOOL_OUTPUT 65536

/* What a shell command prints, at most size - 1 bytes, within
 * TOOL_TIMEOUT_S (cuco_proc_output). False when it cannot start, fails,
 * is cut off or prints nothing. */
static bool tool_output(const char *cmd, char *out, size_t size)
{
	char *const argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	return cuco_proc_output(argv, TOOL_TIMEOUT_S, out, size) && out[0];
}

/* The first line a shell command prints, without its newline. */
static bool first_line(const char *cmd, char *out, size_t size)
{
	char *all = cuco_xmalloc(TOOL_OUTPUT);
	bool got = tool_output(cmd, all, TOOL_OUTPUT);
	all[strcspn(all, "\r\n")] = '\0';
	got = got && all[0] && cuco_strlcpy(out, all, size);
	free(all);
	return got;
}

/* Copy field `n` (0-based) of a comma-separated line, trimmed. */
static void csv_field(const char *line, int n, char *out, size_t size)
{
	const char *p = line;
	for (int i = 0; i < n && p; i++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	out[0] = '\0';
	if (!p)
		return;
	p += strspn(p, " ");
	size_t len = strcspn(p, ",");
	while (len > 0 && p[len - 1] == ' ')
		len--;
	snprintf(out, size, "%.*s", (int)len, p);
}

static void detect_cpu(cuco_hardware *hw)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			char *v = strchr(line, ':') + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			cuco_strlcpy(hw->cpu_model, v, sizeof hw->cpu_model);
			break;
		}
	if (f)
		fclose(f);
	hw->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	f = fopen("/proc/meminfo", "r");
	long kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	hw->mem_mb = kb / 1024;
}

/* Of n GPUs, those CUDA_VISIBLE_DEVICES leaves a process: its entries up
 * to the first that is neither an index nor a UUID (where CUDA stops too). */
static int visible_gpus(int n)
{
	const char *v = cuco_env_get()->visible_gpus;
	if (!v)
		return n;
	int k = 0;
	for (const char *p = v; *p && k < n; p += *p == ',') {
		size_t len = strcspn(p, ",");
		bool index = len > 0 && strspn(p, "0123456789") >= len;
		if (!index && strncmp(p, "GPU-", 4) != 0 && strncmp(p, "MIG-", 4) != 0)
			break;
		k++;
		p += len;
	}
	return k;
}

static void detect_gpus(cuco_hardware *hw, char *out)
{
	/* nvidia-smi exits non-zero (and prints an error) when no driver runs. */
	bool ok = tool_output("nvidia-smi --query-gpu=name,memory.total,driver_version "
		"--format=csv,noheader,nounits", out, TOOL_OUTPUT);
	int n = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
		if (n++ == 0) {
			char mem[32];
			csv_field(line, 0, hw->gpu_model, sizeof hw->gpu_model);
			csv_field(line, 1, mem, sizeof mem);
			csv_field(line, 2, hw->driver, sizeof hw->driver);
			hw->gpu_mem_mb = atol(mem);
		}
	}
	hw->ngpus = ok ? visible_gpus(n) : 0;
	for (const struct gpu_peak *p = gpu_peaks; hw->ngpus && p->name; p++)
		if (strstr(hw->gpu_model, p->name)) {
			hw->sm_count = p->sms;
			hw->hbm_gbs = p->hbm_gbs;
			hw->tensor_tflops = p->tensor_tflops;
			hw->nvlink_gbs = p->nvlink_gbs;  /* kept only if the topology shows NVLink */
			break;
		}
}

/* "GPU0-GPU1 NV18, ..." from the matrix of `nvidia-smi topo -m`: one entry
 * per pair of GPUs joined by NVLink. */
static void detect_nvlink(cuco_hardware *hw, char *out)
{
	if (hw->ngpus < 2)
		return;
	tool_output("nvidia-smi topo -m", out, TOOL_OUTPUT);  /* what it printed, whatever its end */
	size_t len = 0;
	char *lines = NULL;
	for (char *line = strtok_r(out, "\n", &lines); line; line = strtok_r(NULL, "\n", &lines)) {
		int row;
		if (sscanf(line, "GPU%d", &row) != 1)
			continue;
		/* Columns after the row name are GPU0, GPU1, ... in order. */
		char *save = NULL, *tok = strtok_r(line, " \t", &save);
		for (int col = 0; (tok = strtok_r(NULL, " \t", &save)) && col < hw->ngpus; col++)
			if (col > row && strncmp(tok, "NV", 2) == 0 && len + 32 < sizeof hw->nvlink)
				len += (size_t)snprintf(hw->nvlink + len, sizeof hw->nvlink - len, "%sGPU%d-GPU%d %s",
					len ? ", " : "", row, col, tok);
	}
}

/* The CUDA toolkit that compiles workloads: nvcc's release, else the
 * driver's CUDA version from nvidia-smi's banner. */
static void detect_cuda(cuco_hardware *hw)
{
	char line[256];
	const char *home = cuco_env_get()->cuda_home;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "'%s/bin/nvcc' --version | grep -o 'release [0-9.]*'",
		home ? home : "/usr/local/cuda");
	if (first_line(cmd, line, sizeof line) || first_line("nvcc --version | grep -o 'release [0-9.]*'", line, sizeof line))
		cuco_strlcpy(hw->cuda_version, line + strlen("release "), sizeof hw->cuda_version);
	else if (first_line("nvidia-smi | grep -o 'CUDA Version: [0-9.]*'", line, sizeof line))
		snprintf(hw->cuda_version, sizeof hw->cuda_version, "%.16s (driver)", line + strlen("CUDA Version: "));
}

/* The NCCL library a workload process would load, asked for its version. */
static void detect_nccl(cuco_hardware *hw)
{
	void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return;
	int (*get_version)(int *) = (int (*)(int *))dlsym(lib, "ncclGetVersion");
	int v = 0;
	if (get_version && get_version(&v) == 0 && v > 0)
		snprintf(hw->nccl_version, sizeof hw->nccl_version, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	dlclose(lib);
}

/* GIN needs an RDMA NIC (InfiniBand or RoCE): without one in
 * /sys/class/infiniband it is certainly unavailable. With one, NCCL may
 * still refuse, which the workloads report as "no GIN here". */
static bool rdma_present(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	if (!d)
		return false;
	bool any = false;
	for (struct dirent *e; !any && (e = readdir(d));)
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

void cuco_hardware_detect(cuco_hardware *hw)
{
	memset(hw, 0, sizeof *hw);
	detect_cpu(hw);
	char *out = cuco_xmalloc(TOOL_OUTPUT);
	detect_gpus(hw, out);
	detect_nvlink(hw, out);
	free(out);
	if (!hw->nvlink[0])
		hw->nvlink_gbs = 0;  /* no NVLink between the GPUs here: the datasheet figure is moot */
	detect_cuda(hw);
	detect_nccl(hw);
	hw->gin = hw->ngpus > 0 && rdma_present();
}

static pthread_once_t here_once = PTHREAD_ONCE_INIT;
static cuco_hardware here;

static void detect_here(void)
{
	cuco_hardware_detect(&here);
}

const cuco_hardware *cuco_hardware_get(void)
{
	pthread_once(&here_once, detect_here);
	return &here;
}

cJSON *cuco_hardware_to_json(const cuco_hardware *hw)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "cpu_model", hw->cpu_model);
	cJSON_AddNumberToObject(o, "cpus", hw->cpus);
	cJSON_AddNumberToObject(o, "mem_mb", (double)hw->mem_mb);
	cJSON_AddNumberToObject(o, "gpus", hw->ngpus);
	cJSON_AddStringToObject(o, "gpu_model", hw->gpu_model);
	cJSON_AddNumberToObject(o, "sm_count", hw->sm_count);
	cJSON_AddNumberToObject(o, "gpu_mem_mb", (double)hw->gpu_mem_mb);
	cJSON_AddNumberToObject(o, "hbm_gbs", hw->hbm_gbs);
	cJSON_AddNumberToObject(o, "tensor_tflops", hw->tensor_tflops);
	cJSON_AddStringToObject(o, "nvlink", hw->nvlink);
	cJSON_AddNumberToObject(o, "nvlink_gbs", hw->nvlink_gbs);
	cJSON_AddStringToObject(o, "driver", hw->driver);
	cJSON_AddStringToObject(o, "cuda", hw->cuda_version);
	cJSON_AddStringToObject(o, "nccl", hw->nccl_version);
	cJSON_AddBoolToObject(o, "gin", hw->gin);
	if (hw->missing[0])
		cJSON_AddStringToObject(o, "missing", hw->missing);
	return o;
}

bool cuco_hardware_fits(const cuco_hardware *hw, const cuco_workload *wl, char *why, size_t size)
{
	if (wl->family == CUCO_FAMILY_CPU_MPI || hw->ngpus >= wl->ranks)
		return true;
	if (hw->ngpus == 0)
		snprintf(why, size, "%s needs %d GPU%s (one per rank) and none is visible", wl->name, wl->ranks,
			wl->ranks == 1 ? "" : "s");
	else
		snprintf(why, size, "%s needs %d GPUs (one per rank) and %d %s visible", wl->name, wl->ranks,
			hw->ngpus, hw->ngpus == 1 ? "is" : "are");
	return false;
}

void cuco_hardware_peak(const cuco_hardware *hw, const cuco_workload *wl, cuco_peak *pk)
{
	pk->gflops = wl->family != CUCO_FAMILY_CPU_MPI && hw->tensor_tflops > 0 ? hw->tensor_tflops * 1000
		: wl->peak_gflops;
	pk->bandwidth_gbs = wl->peak_bandwidth_gbs;
	pk->bandwidth_of = "the manifest's peak.bandwidth_gbs";
	if (wl->family == CUCO_FAMILY_CUDA && hw->hbm_gbs > 0) {
		pk->bandwidth_gbs = hw->hbm_gbs;
		pk->bandwidth_of = "HBM (hardware profile)";
	} else if (wl->family == CUCO_FAMILY_CUDA_NCCL && hw->nvlink_gbs > 0) {
		/* The bytes a rank moves cross the link to its peers, not its HBM. */
		pk->bandwidth_gbs = hw->nvlink_gbs;
		pk->bandwidth_of = "NVLink per direction (hardware profile)";
	} else if (wl->family == CUCO_FAMILY_CUDA_NCCL) {
		pk->bandwidth_of = "the link (the manifest's peak.bandwidth_gbs)";
	}
}

/* ---- the GPUs' device nodes ------------------------------------------------------ */

/* The nodes CUDA needs besides a GPU's own, shown to every GPU stage: none
 * of them is a GPU (nvidia-caps/ holds MIG's capabilities; WSL's dxg is
 * every GPU at once). NVSwitch's and the fabric's nodes are no stage's. */
static const char *const control_nodes[] = { "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
	"nvidia-modeset", "nvidia-caps", "dxg" };

/* The minor of a GPU's own node ("nvidia3": 3), or -1. */
static int node_minor(const char *name)
{
	const char *digits = name + strlen("nvidia");
	return strncmp(name, "nvidia", 6) == 0 && *digits && strspn(digits, "0123456789") == strlen(digits)
		? atoi(digits) : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int by_bus(const void *a, const void *b)
{
	return strcasecmp(((const cuco_gpu_dev *)a)->bus_id, ((const cuco_gpu_dev *)b)->bus_id);
}

/* The control nodes and the GPUs' nodes of dev, sorted. */
static void read_dev(const char *dev, cuco_gpu_nodes *out)
{
	DIR *d = opendir(dev);
	int max = (int)(sizeof out->present / sizeof out->present[0]);
	for (struct dirent *e; d && (e = readdir(d)) && out->npresent < max;) {
		bool control = cuco_name_index(control_nodes, sizeof control_nodes / sizeof control_nodes[0],
			e->d_name) >= 0;
		if ((control || node_minor(e->d_name) >= 0) && strlen(e->d_name) < sizeof out->present[0])
			cuco_strlcpy(out->present[out->npresent++], e->d_name, sizeof out->present[0]);
	}
	if (d)
		closedir(d);
	qsort(out->present, (size_t)out->npresent, sizeof out->present[0], by_name);
}

/* Whether dev has the node nvidia<minor>. */
static bool has_node(const cuco_gpu_nodes *nodes, int minor)
{
	for (int i = 0; i < nodes->npresent; i++)
		if (node_minor(nodes->present[i]) == minor)
			return true;
	return false;
}

/* One GPU of the driver's list, from its folder's information file; false
 * when the driver excludes it or this machine's /dev lacks its node (a
 * container's): CUDA does not see it, nor count it. */
static bool read_gpu(const char *proc, const char *bus_id, const cuco_gpu_nodes *nodes,
	cuco_gpu_dev *g)
{
	char path[PATH_MAX], line[256], excluded[16] = "";
	snprintf(path, sizeof path, "%s/%s/information", proc, bus_id);
	memset(g, 0, sizeof *g);
	g->minor = -1;
	cuco_strlcpy(g->bus_id, bus_id, sizeof g->bus_id);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f)) {
		sscanf(line, "Device Minor: %d", &g->minor);
		sscanf(line, "GPU UUID: %63s", g->uuid);
		sscanf(line, "GPU Excluded: %15s", excluded);
	}
	if (f)
		fclose(f);
	return strcmp(excluded, "Yes") != 0 && (g->minor < 0 || has_node(nodes, g->minor));
}

void cuco_gpu_nodes_read(const char *dev, const char *proc, cuco_gpu_nodes *out)
{
	memset(out, 0, sizeof *out);
	cuco_strlcpy(out->dev, dev, sizeof out->dev);
	read_dev(dev, out);
	DIR *d = opendir(proc);
	for (struct dirent *e; d && (e = readdir(d)) && out->ngpus < CUCO_MAX_GPUS;)
		if (e->d_name[0] != '.' && read_gpu(proc, e->d_name, out, &out->gpus[out->ngpus]))
			out->ngpus++;
	if (d)
		closedir(d);
	qsort(out->gpus, (size_t)out->ngpus, sizeof out->gpus[0], by_bus);
	int nodes = 0;
	for (int i = 0; i < out->npresent; i++)
		nodes += node_minor(out->present[i]) >= 0;
	for (int i = 0; i < out->ngpus && !out->unknown[0]; i++)
		if (out->gpus[i].minor < 0 || !out->gpus[i].uuid[0])
			snprintf(out->unknown, sizeof out->unknown, "%.40s/%.40s/information names no device minor "
				"or UUID", proc, out->gpus[i].bus_id);
	if (nodes > 0 && out->ngpus == 0)
		snprintf(out->unknown, sizeof out->unknown, "%s %.60s%s: which /dev/nvidiaN is which GPU is "
			"not known", d ? "no GPU in" : "no", proc, d ? " of this machine's nodes" : "");
}

static pthread_once_t nodes_once = PTHREAD_ONCE_INIT;
static cuco_gpu_nodes nodes_here;

static void read_nodes_here(void)
{
	cuco_gpu_nodes_read("/dev", "/proc/driver/nvidia/gpus", &nodes_here);
}

const cuco_gpu_nodes *cuco_gpu_nodes_get(void)
{
	pthread_once(&nodes_once, read_nodes_here);
	return &nodes_here;
}

static void add_name(cuco_gpu_binds *out, const char *name)
{
	if (out->n < (int)(sizeof out->names / sizeof out->names[0]))
		cuco_strlcpy(out->names[out->n++], name, sizeof out->names[0]);
}

/* The GPU a CUDA_VISIBLE_DEVICES entry names: an index in PCI bus order,
 * or a UUID or a unique prefix of one; NULL with why when none or several. */
static const cuco_gpu_dev *named_gpu(const cuco_gpu_nodes *nodes, const char *entry, char *why,
	size_t size)
{
	const cuco_gpu_dev *found = NULL;
	int matches = 0;
	if (*entry && strspn(entry, "0123456789") == strlen(entry)) {
		int k = atoi(entry);
		found = k < nodes->ngpus ? &nodes->gpus[k] : NULL;
		matches = found != NULL;
	} else if (strncmp(entry, "GPU-", 4) == 0) {
		for (int i = 0; i < nodes->ngpus; i++)
			if (strncmp(nodes->gpus[i].uuid, entry, strlen(entry)) == 0 && matches++ == 0)
				found = &nodes->gpus[i];
	}
	if (matches != 1)
		snprintf(why, size, "CUDA_VISIBLE_DEVICES entry %.60s: %s", entry, strncmp(entry, "MIG-", 4) == 0
			? "a MIG device, whose GPU cuco does not look up" : matches ? "more than one GPU's UUID"
			: "not one of the driver's GPUs");
	return matches == 1 ? found : NULL;
}

/* The GPUs of devices, by UUID into out->visible and their nodes into
 * out->names; false with out->why when one of them is not known. */
static bool pick_named(const cuco_gpu_nodes *nodes, const char *devices, cuco_gpu_binds *out)
{
	char list[1024];
	cuco_strlcpy(list, devices, sizeof list);
	char *save = NULL;
	size_t len = 0;
	for (char *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		const cuco_gpu_dev *g = named_gpu(nodes, cuco_trim(e), out->why, sizeof out->why);
		if (!g)
			return false;
		char name[24];
		snprintf(name, sizeof name, "nvidia%d", g->minor);
		add_name(out, name);
		if (len + strlen(g->uuid) + 2 > sizeof out->visible) {
			snprintf(out->why, sizeof out->why, "CUDA_VISIBLE_DEVICES=%.60s: too many GPUs to name",
				devices);
			return false;
		}
		len += (size_t)snprintf(out->visible + len, sizeof out->visible - len, "%s%s", len ? "," : "",
			g->uuid);
	}
	return true;
}

void cuco_gpu_nodes_pick(const cuco_gpu_nodes *nodes, const char *devices, cuco_gpu_binds *out)
{
	memset(out, 0, sizeof *out);
	out->dev = nodes->dev;
	for (int i = 0; i < nodes->npresent; i++)
		if (node_minor(nodes->present[i]) < 0)
			add_name(out, nodes->present[i]);
	int controls = out->n;
	if (devices && *devices && !nodes->unknown[0] && pick_named(nodes, devices, out))
		return;
	if (devices && *devices && nodes->unknown[0])
		cuco_strlcpy(out->why, nodes->unknown, sizeof out->why);
	out->n = controls;
	out->visible[0] = '\0';
	for (int i = 0; i < nodes->npresent; i++)
		if (node_minor(nodes->present[i]) >= 0)
			add_name(out, nodes->present[i]);
}

bool cuco_gpu_nodes_say(const cuco_gpu_nodes *nodes, char *line, size_t size)
{
	int n = 0;
	for (int i = 0; i < nodes->npresent; i++)
		n += node_minor(nodes->present[i]) >= 0;
	if (n == 0)
		snprintf(line, size, "no /dev/nvidiaN here: GPU stages are shown no GPU");
	else if (nodes->unknown[0])
		snprintf(line, size, "a GPU stage is shown every GPU's node (%d): %s", n, nodes->unknown);
	else
		snprintf(line, size, "a GPU stage is shown its slot's GPUs' nodes (of %d, told apart by "
			"/proc/driver/nvidia/gpus), nvidiactl and nvidia-uvm; a compile, none", n);
	return n <= 1 || !nodes->unknown[0];
}
