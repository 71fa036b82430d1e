/* test-devices.c — a GPU stage is shown its slot's GPUs and no other (issue
 * 24): on a machine of several GPUs a candidate of the slot of GPU 1 that
 * ignores CUDA_VISIBLE_DEVICES must find no other GPU's /dev/nvidiaN in its
 * sandbox, else it computes on every GPU and is timed as one, or disturbs
 * another slot's stage. CI has no GPU, so a folder stands in for /dev (empty
 * files named as the nodes) and one for /proc/driver/nvidia/gpus (each
 * GPU's information file, as the driver writes it), and the test reads
 * bwrap's words without running them: the nodes bound, the stage's
 * CUDA_VISIBLE_DEVICES. The fixture's minors are not in PCI order, so that
 * index k (nvidia-smi's, PCI bus order) is not /dev/nvidia<k>. Then the
 * fallback when the driver's list is missing (every node, and said), a
 * machine without any node (CI: bwrap's words as without a GPU), the
 * one-GPU machine (its node, the control nodes, nothing else) and a
 * container given one GPU of several. */
#include "env.h"
#include "eval/eval_int.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

static char root[256], dev[300], proc[300];

/* The driver's GPUs: PCI bus id, minor, UUID. Index 0 is 0000:1a:00.0. */
static const struct { const char *bus; int minor; const char *uuid; } fake_gpus[] = {
	{ "0000:3b:00.0", 0, "GPU-bbbbbbbb-0000-0000-0000-000000000001" },
	{ "0000:5c:00.0", 1, "GPU-cccccccc-0000-0000-0000-000000000002" },
	{ "0000:1a:00.0", 2, "GPU-aaaaaaaa-0000-0000-0000-000000000003" },
};

static void touch(const char *dir, const char *name)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(cuco_write_file(path, "", 0, NULL), CUCO_OK);
}

/* A /dev with the given nodes, a driver's list of the fake GPUs (none:
 * with_proc false). */
static void machine(const char *const *nodes, int ngpus, bool with_proc)
{
	make_tmpdir(root, sizeof root);
	snprintf(dev, sizeof dev, "%s/dev", root);
	snprintf(proc, sizeof proc, "%s/gpus", root);
	assert_int_equal(mkdir(dev, 0755), 0);
	touch(dev, "null");
	for (int i = 0; nodes[i]; i++)
		touch(dev, nodes[i]);
	if (!with_proc)
		return;
	assert_int_equal(mkdir(proc, 0755), 0);
	for (int i = 0; i < ngpus; i++) {
		char dir[600], text[600];
		snprintf(dir, sizeof dir, "%s/%s", proc, fake_gpus[i].bus);
		assert_int_equal(mkdir(dir, 0755), 0);
		int n = snprintf(text, sizeof text, "Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t %s\n"
			"Video BIOS: \t 96.00.af.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
			"Bus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n", fake_gpus[i].uuid,
			fake_gpus[i].bus, fake_gpus[i].minor);
		char path[700];
		snprintf(path, sizeof path, "%s/information", dir);
		assert_int_equal(cuco_write_file(path, text, (size_t)n, NULL), CUCO_OK);
	}
}

static const char *const three[] = { "nvidia0", "nvidia1", "nvidia2", "nvidiactl", "nvidia-uvm",
	"nvidia-uvm-tools", "nvidia-modeset", "nvidia-nvswitch0", "nvidia-nvswitchctl", NULL };

/* bwrap's words for a GPU run stage shown b (NULL: a CPU stage or a build). */
static char **words_for(const cuco_gpu_binds *b)
{
	eval_sandbox sb = { .on = true };
	snprintf(sb.bwrap, sizeof sb.bwrap, "bwrap");
	snprintf(sb.init, sizeof sb.init, "/usr/libexec/cuco-stage-init");
	eval_sandbox_view v = { .workdir = root, .gpu = b };
	return eval_sandbox_argv(&sb, &v);
}

/* Whether the words bind dev's node name at /dev/name. */
static bool bound(char **argv, const char *name)
{
	char src[700], dst[64];
	snprintf(src, sizeof src, "%s/%s", dev, name);
	snprintf(dst, sizeof dst, "/dev/%s", name);
	for (int i = 0; argv[i] && argv[i + 1] && argv[i + 2]; i++)
		if (strcmp(argv[i], "--dev-bind") == 0 && strcmp(argv[i + 1], src) == 0
				&& strcmp(argv[i + 2], dst) == 0)
			return true;
	return false;
}

static int binds(char **argv)
{
	int n = 0;
	for (int i = 0; argv[i]; i++)
		n += strcmp(argv[i], "--dev-bind") == 0;
	return n;
}

/* The control nodes CUDA needs are shown; NVSwitch's are not. */
static void assert_controls(char **argv)
{
	static const char *const shown[] = { "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset" },
		*const hidden[] = { "nvidia-nvswitch0", "nvidia-nvswitchctl" };
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
		assert_true(bound(argv, shown[i]));
	for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
		assert_false(bound(argv, hidden[i]));
}

/* The attack: the slot of GPU 1 (PCI order: 0000:3b:00.0, /dev/nvidia0)
 * must not find /dev/nvidia1 nor /dev/nvidia2 in its sandbox. */
static void test_slot_sees_its_gpu_only(void **state)
{
	(void)state;
	machine(three, 3, true);
	cuco_gpu_nodes nodes;
	cuco_gpu_nodes_read(dev, proc, &nodes);
	assert_string_equal(nodes.unknown, "");
	assert_int_equal(nodes.ngpus, 3);
	assert_string_equal(nodes.gpus[0].bus_id, "0000:1a:00.0");
	cuco_gpu_binds b;
	cuco_gpu_nodes_pick(&nodes, "1", &b);
	char **argv = words_for(&b);
	assert_true(bound(argv, "nvidia0"));
	assert_false(bound(argv, "nvidia1"));
	assert_false(bound(argv, "nvidia2"));
	assert_controls(argv);
	assert_int_equal(binds(argv), 5);
	assert_string_equal(b.visible, fake_gpus[0].uuid);
	assert_string_equal(b.why, "");
	eval_sandbox_argv_free(argv);
	/* Two GPUs, in the slot's order; a UUID's prefix names its GPU too. */
	cuco_gpu_nodes_pick(&nodes, "2,0", &b);
	argv = words_for(&b);
	assert_true(bound(argv, "nvidia1") && bound(argv, "nvidia2"));
	assert_false(bound(argv, "nvidia0"));
	char both[200];
	snprintf(both, sizeof both, "%s,%s", fake_gpus[1].uuid, fake_gpus[2].uuid);
	assert_string_equal(b.visible, both);
	eval_sandbox_argv_free(argv);
	cuco_gpu_nodes_pick(&nodes, "GPU-cccccccc", &b);
	assert_string_equal(b.visible, fake_gpus[1].uuid);
	assert_int_equal(b.n, 5);
	assert_string_equal(b.names[4], "nvidia1");
	/* No slot of its own (one slot, no CUDA_VISIBLE_DEVICES): every GPU. */
	cuco_gpu_nodes_pick(&nodes, NULL, &b);
	assert_int_equal(b.n, 7);
	assert_string_equal(b.visible, "");
	assert_string_equal(b.why, "");
	char line[300];
	assert_true(cuco_gpu_nodes_say(&nodes, line, sizeof line));
	rm_rf(root);
}

/* A name cuco cannot map (a MIG device, an index past the driver's GPUs),
 * or no driver's list at all: every GPU's node, as before, and said. */
static void test_unknown_shows_every_gpu_and_says_so(void **state)
{
	(void)state;
	machine(three, 3, true);
	cuco_gpu_nodes nodes;
	cuco_gpu_nodes_read(dev, proc, &nodes);
	cuco_gpu_binds b;
	cuco_gpu_nodes_pick(&nodes, "MIG-1234", &b);
	assert_int_equal(b.n, 7);
	assert_string_equal(b.visible, "");
	assert_non_null(strstr(b.why, "MIG-1234: a MIG device"));
	cuco_gpu_nodes_pick(&nodes, "0,7", &b);
	assert_int_equal(b.n, 7);
	assert_non_null(strstr(b.why, "entry 7: not one of the driver's GPUs"));
	rm_rf(root);
	machine(three, 3, false);
	cuco_gpu_nodes_read(dev, proc, &nodes);
	assert_non_null(strstr(nodes.unknown, "which /dev/nvidiaN is which GPU is not known"));
	cuco_gpu_nodes_pick(&nodes, "1", &b);
	char **argv = words_for(&b);
	assert_true(bound(argv, "nvidia0") && bound(argv, "nvidia1") && bound(argv, "nvidia2"));
	assert_controls(argv);
	assert_string_equal(b.why, nodes.unknown);
	eval_sandbox_argv_free(argv);
	char line[300];
	assert_false(cuco_gpu_nodes_say(&nodes, line, sizeof line));
	assert_non_null(strstr(line, "every GPU's node (3)"));
	rm_rf(root);
	/* A driver's list of none of these nodes' GPUs: the same. */
	machine(three, 0, true);
	cuco_gpu_nodes_read(dev, proc, &nodes);
	assert_non_null(strstr(nodes.unknown, "no GPU in "));
	cuco_gpu_nodes_pick(&nodes, "1", &b);
	assert_int_equal(b.n, 7);
	rm_rf(root);
}

/* A machine without a GPU (CI): no node is bound, whatever the slot, and
 * bwrap's words are those of a stage without GPUs. */
static void test_no_gpu_changes_nothing(void **state)
{
	(void)state;
	const char *const none[] = { NULL };
	machine(none, 0, false);
	cuco_gpu_nodes nodes;
	cuco_gpu_nodes_read(dev, proc, &nodes);
	assert_int_equal(nodes.npresent, 0);
	assert_string_equal(nodes.unknown, "");
	cuco_gpu_binds b;
	cuco_gpu_nodes_pick(&nodes, "1", &b);
	char **with = words_for(&b), **without = words_for(NULL);
	int i = 0;
	for (; with[i] && without[i]; i++)
		assert_string_equal(with[i], without[i]);
	assert_null(with[i]);
	assert_null(without[i]);
	eval_sandbox_argv_free(with);
	eval_sandbox_argv_free(without);
	char line[300];
	assert_true(cuco_gpu_nodes_say(&nodes, line, sizeof line));
	/* This machine as cuco reads it: where it has no GPU node, none is bound. */
	const cuco_gpu_nodes *here = cuco_gpu_nodes_get();
	cuco_gpu_nodes_pick(here, "0", &b);
	for (int k = 0; k < b.n; k++)
		assert_true(strncmp(b.names[k], "nvidia", 6) == 0 || strcmp(b.names[k], "dxg") == 0);
	rm_rf(root);
}

/* One GPU (the H200 machine: /dev/nvidia0, the slot of every GPU or of
 * GPU 0): its node and the control nodes. */
static void test_one_gpu_machine(void **state)
{
	(void)state;
	const char *const one[] = { "nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", NULL };
	machine(one, 1, true);
	cuco_gpu_nodes nodes;
	cuco_gpu_nodes_read(dev, proc, &nodes);
	assert_int_equal(nodes.ngpus, 1);
	cuco_gpu_binds b;
	cuco_gpu_nodes_pick(&nodes, NULL, &b);
	char **argv = words_for(&b);
	assert_true(bound(argv, "nvidia0") && bound(argv, "nvidiactl") && bound(argv, "nvidia-uvm")
		&& bound(argv, "nvidia-uvm-tools"));
	assert_int_equal(binds(argv), 4);
	assert_string_equal(b.visible, "");
	eval_sandbox_argv_free(argv);
	cuco_gpu_nodes_pick(&nodes, "0", &b);
	assert_int_equal(b.n, 4);
	assert_string_equal(b.visible, fake_gpus[0].uuid);
	rm_rf(root);
}

/* A container given one GPU of three (its /dev has /dev/nvidia1 alone,
 * the driver lists all three): its GPU 0 is that one, as CUDA counts. */
static void test_container_counts_its_gpus(void **state)
{
	(void)state;
	const char *const given[] = { "nvidia1", "nvidiactl", "nvidia-uvm", NULL };
	machine(given, 3, true);
	cuco_gpu_nodes nodes;
	cuco_gpu_nodes_read(dev, proc, &nodes);
	assert_int_equal(nodes.ngpus, 1);
	cuco_gpu_binds b;
	cuco_gpu_nodes_pick(&nodes, "0", &b);
	assert_int_equal(b.n, 3);
	assert_string_equal(b.names[2], "nvidia1");
	assert_string_equal(b.visible, fake_gpus[1].uuid);
	rm_rf(root);
}

/* The stage's CUDA_VISIBLE_DEVICES: the GPUs by UUID in place of the slot's
 * indices, set by env(1) before the program. */
static void test_launch_names_uuids(void **state)
{
	(void)state;
	cuco_slot_spec slot = { .name = "local/1", .gpus = "1" };
	cuco_runner_config rc = { .kind = CUCO_RUNNER_LOCAL };
	eval_launch l = { .kind = CUCO_RUNNER_LOCAL, .rc = &rc, .slot = &slot, .ranks = 1,
		.visible = fake_gpus[0].uuid };
	char *const prog[] = { "./prog", NULL };
	cuco_argv out = { 0 };
	eval_launch_argv(&l, prog, "./prog", NULL, 0, &out);
	char want[100];
	snprintf(want, sizeof want, "CUDA_VISIBLE_DEVICES=%s", fake_gpus[0].uuid);
	assert_string_equal(out.v[0], "env");
	assert_string_equal(out.v[1], want);
	cuco_argv_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_sees_its_gpu_only),
		cmocka_unit_test(test_unknown_shows_every_gpu_and_says_so),
		cmocka_unit_test(test_no_gpu_changes_nothing),
		cmocka_unit_test(test_one_gpu_machine),
		cmocka_unit_test(test_container_counts_its_gpus),
		cmocka_unit_test(test_launch_names_uuids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
