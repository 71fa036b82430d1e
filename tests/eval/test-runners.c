/* test-runners.c — the commands each runner builds, exactly; the [runner]
 * settings, Slurm hostlists and Open MPI hostfiles, hostile ones too; the
 * pool of slots (rest, retirement, the slot idle longest first); and the
 * runners for real: a hostfile of this machine, a hostfile of two "hosts"
 * that are this machine's 127.0.0.2 and 127.0.0.3 reached over an sshd
 * started here (mpirun really launches through ssh), with a third host
 * that does not answer, and the ssh runner against the same sshd, with
 * a refereed workload too (its referee on the host). */
#include "eval/eval_int.h"
#include "daemons.h"
#include "util.h"

#include <dirent.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

/* The command each runner builds, as a line: the words quoted where they
 * need it; for ssh, /bin/sh -c and its script. */
static void expect_command(const eval_launch *l, const char *want)
{
	cuco_buf out = { 0 };
	cuco_argv argv = { 0 };
	const char *extras[] = { "/w/data.bin" };
	char *const prog[] = { "./abc", "--reps", "1", NULL };
	eval_launch_argv(l, prog, "/run/cache/abc", extras, 1, &argv);
	if (l->kind == CUCO_RUNNER_SSH) {
		assert_string_equal(argv.v[0], "/bin/sh");
		assert_string_equal(argv.v[1], "-c");
		assert_null(argv.v[3]);
		cuco_buf_puts(&out, argv.v[2]);
	} else {
		cuco_argv_join(argv.v, &out);
	}
	assert_string_equal(out.data, want);
	cuco_argv_free(&argv);
	cuco_buf_free(&out);
}

static void test_commands(void **state)
{
	(void)state;
	cuco_runner_config rc = { 0 };
	cuco_slot_spec local = { "local", "", "" };
	eval_launch l = { .kind = CUCO_RUNNER_LOCAL, .launcher = "/usr/bin/mpirun", .rc = &rc, .slot = &local,
		.ranks = 2, .mpi = true };
	expect_command(&l, "/usr/bin/mpirun --oversubscribe --bind-to none -np 2 ./abc --reps 1");
	l.as_root = true;
	l.bind = true;
	expect_command(&l, "/usr/bin/mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "
		"./abc --reps 1");
	l.mpi = false;
	expect_command(&l, "./abc --reps 1");
	/* The ticket for remote ranks, the interposer for the ranks only. */
	l = (eval_launch){ .kind = CUCO_RUNNER_LOCAL, .launcher = "mpirun", .rc = &rc, .slot = &local,
		.ranks = 2, .mpi = true, .ticket = "CUCO_HARNESS=1:k:s",
		.preload = "/run/cache/cuco-count-1.so" };
	expect_command(&l, "mpirun --oversubscribe --bind-to none -x CUCO_HARNESS "
		"-x LD_PRELOAD=/run/cache/cuco-count-1.so -np 2 ./abc --reps 1");
	l.mpi = false;
	expect_command(&l, "env LD_PRELOAD=/run/cache/cuco-count-1.so ./abc --reps 1");
	/* A compat program's lines name their ranks. */
	l = (eval_launch){ .kind = CUCO_RUNNER_LOCAL, .launcher = "mpirun", .rc = &rc, .slot = &local,
		.ranks = 2, .mpi = true, .tag_output = true };
	expect_command(&l, "mpirun --oversubscribe --bind-to none --tag-output -np 2 ./abc --reps 1");

	/* [runner] options are words split as the shell would, no shell after. */
	cuco_slot_spec pair = { "a+b", "a:2,b:2", "" };
	snprintf(rc.options, sizeof rc.options, "--mca plm_rsh_agent 'ssh -p 22'");
	l = (eval_launch){ .kind = CUCO_RUNNER_HOSTFILE, .launcher = "mpirun", .rc = &rc, .slot = &pair,
		.ranks = 4, .mpi = true, .limit_s = 30 };
	expect_command(&l, "mpirun --host a:2,b:2 --mca plm_rsh_agent 'ssh -p 22' -np 4 timeout -k 2 30 "
		"./abc --reps 1");
	cuco_argv argv = { 0 };
	char *const prog[] = { "./abc", NULL };
	eval_launch_argv(&l, prog, "/run/cache/abc", NULL, 0, &argv);
	assert_string_equal(argv.v[5], "ssh -p 22");  /* one word */
	cuco_argv_free(&argv);

	/* Outside an allocation: a job of its own, on the slot's nodes whole. */
	cuco_slot_spec nodes = { "n1+n2", "n1,n2", "" };
	rc = (cuco_runner_config){ .kind = CUCO_RUNNER_SLURM, .partition = "gpu", .account = "lab",
		.gpus_per_task = 1, .options = "--mpi=pmix" };
	l = (eval_launch){ .kind = CUCO_RUNNER_SLURM, .launcher = "/usr/bin/srun", .rc = &rc, .slot = &nodes,
		.job_name = "cuco-abc-1-7", .ranks = 8, .mpi = true, .limit_s = 30 };
	expect_command(&l, "/usr/bin/srun --nodes=2 --ntasks=8 --exclusive --kill-on-bad-exit=1 "
		"--nodelist=n1,n2 --job-name=cuco-abc-1-7 --partition=gpu --account=lab --time=2 "
		"--gpus-per-task=1 --mpi=pmix timeout -k 2 30 ./abc --reps 1");
	/* Inside one: a step, where partition and account are the allocation's. */
	l.in_allocation = true;
	rc.time_limit_min = 10;
	rc.gpus_per_task = 0;
	rc.options[0] = '\0';
	expect_command(&l, "/usr/bin/srun --nodes=2 --ntasks=8 --exclusive --kill-on-bad-exit=1 "
		"--nodelist=n1,n2 --job-name=cuco-abc-1-7 --time=10 timeout -k 2 30 ./abc --reps 1");

	/* GPU sets: here through the environment, on other hosts mpirun's -x
	 * or the far side's env; several Slurm slots on a node share it. */
	cuco_slot_spec set = { "local/1", "", "2,3" };
	rc = (cuco_runner_config){ .slots_per_host = 2 };
	l = (eval_launch){ .kind = CUCO_RUNNER_LOCAL, .launcher = "mpirun", .rc = &rc, .slot = &set,
		.ranks = 2, .mpi = true };
	expect_command(&l, "env CUDA_VISIBLE_DEVICES=2,3 mpirun --oversubscribe --bind-to none -np 2 "
		"./abc --reps 1");
	cuco_slot_spec host_set = { "a/0", "a:1", "0" };
	l = (eval_launch){ .kind = CUCO_RUNNER_HOSTFILE, .launcher = "mpirun", .rc = &rc, .slot = &host_set,
		.ranks = 1, .mpi = false, .limit_s = 9 };
	expect_command(&l, "mpirun -x CUDA_VISIBLE_DEVICES=0 --host a:1 -np 1 timeout -k 2 9 ./abc --reps 1");
	cuco_slot_spec node_set = { "n1/1", "n1", "" };
	rc = (cuco_runner_config){ .kind = CUCO_RUNNER_SLURM, .slots_per_host = 2, .gpus_per_task = 1 };
	l = (eval_launch){ .kind = CUCO_RUNNER_SLURM, .launcher = "srun", .rc = &rc, .slot = &node_set,
		.job_name = "cuco-x-1-0", .ranks = 2, .mpi = true, .limit_s = 30 };
	expect_command(&l, "srun --nodes=1 --ntasks=2 --kill-on-bad-exit=1 --nodelist=n1 --job-name=cuco-x-1-0 "
		"--time=2 --gpus-per-task=1 timeout -k 2 30 ./abc --reps 1");

	cuco_slot_spec gpu1 = { "me@gpu1:2222", "me@gpu1:2222", "" };
	rc = (cuco_runner_config){ .kind = CUCO_RUNNER_SSH, .options = "-i k" };
	l = (eval_launch){ .kind = CUCO_RUNNER_SSH, .launcher = "ssh", .rc = &rc, .slot = &gpu1,
		.remote_dir = "/tmp/cuco-x", .ranks = 2, .mpi = true, .limit_s = 30 };
	expect_command(&l,
		"ssh -o BatchMode=yes -i k -p 2222 me@gpu1 'mkdir -m 700 /tmp/cuco-x'"
		" || { echo 'cuco-ssh: cannot reach the host, or make a new folder there' >&2; exit 255; }; "
		"scp -q -o BatchMode=yes -i k -P 2222 /run/cache/abc /w/data.bin me@gpu1:/tmp/cuco-x/"
		" || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; "
		"ssh -o BatchMode=yes -i k -p 2222 me@gpu1 'cd /tmp/cuco-x && timeout -k 2 30 "
		"env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 "
		"./abc --reps 1'; rc=$?; ssh -o BatchMode=yes -i k -p 2222 me@gpu1 'rm -rf /tmp/cuco-x'; exit $rc");
	cuco_slot_spec gpu2 = { "gpu2/1", "gpu2", "1" };
	l.slot = &gpu2;
	rc.options[0] = '\0';
	l.mpi = false;
	l.ticket = "CUCO_HARNESS=1:k:s";  /* ssh passes no environment: the far side sets it */
	expect_command(&l,
		"ssh -o BatchMode=yes gpu2 'mkdir -m 700 /tmp/cuco-x'"
		" || { echo 'cuco-ssh: cannot reach the host, or make a new folder there' >&2; exit 255; }; "
		"scp -q -o BatchMode=yes /run/cache/abc /w/data.bin gpu2:/tmp/cuco-x/"
		" || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; "
		"ssh -o BatchMode=yes gpu2 'cd /tmp/cuco-x && env CUDA_VISIBLE_DEVICES=1 CUCO_HARNESS=1:k:s "
		"timeout -k 2 30 ./abc --reps 1'; rc=$?; ssh -o BatchMode=yes gpu2 'rm -rf /tmp/cuco-x'; exit $rc");

	/* A refereed stage's referee: copied to a new folder of its own,
	 * checked against its sum there, started in a session of its own
	 * (exec: its output is ssh's); as root there, the channel given to the
	 * stage user and the stage's group made first, and the line that says
	 * so; and its folders and group removed. */
	char *args[] = { "--channel", "/dev/shm/cuco-chan-1-0-ab", "--ready", NULL };
	cuco_buf script = { 0 }, cleanup = { 0 };
	l.cgroups = true;
	eval_ssh_referee(&l, "/run/cache/referee-12", "5e", args, "/dev/shm/cuco-chan-1-0-ab", &script, &cleanup);
	assert_string_equal(script.data,
		"ssh -o BatchMode=yes gpu2 'mkdir -m 700 /tmp/cuco-x-referee'"
		" || { echo 'cuco-ssh: cannot reach the host, or make a new folder there' >&2; exit 255; }; "
		"scp -q -o BatchMode=yes /run/cache/referee-12 gpu2:/tmp/cuco-x-referee/"
		" || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; "
		"exec ssh -o BatchMode=yes gpu2 'cd /tmp/cuco-x-referee && { echo '\\''5e  referee-12'\\'' | sha256sum -c "
		"--status || { echo '\\''cuco-ssh: the referee on the host is not the one copied'\\'' >&2; exit 255; }; } "
		"&& mkdir -m 700 /dev/shm/cuco-chan-1-0-ab && set -- && k=none && if [ \"$(id -u)\" = 0 ]; then "
		"{ u=$((0x40000000 + $(od -An -N4 -tu4 /dev/urandom) % 0x1000000)) && g=$u && ! getent passwd \"$u\" "
		">/dev/null; } || { echo '\\''cuco-ssh: no fresh uid for the stage on the host'\\'' >&2; exit 255; } && "
		"{ [ \"$u\" = 0 ] || { chgrp \"$g\" /dev/shm/cuco-chan-1-0-ab && chmod 710 /dev/shm/cuco-chan-1-0-ab && "
		"set -- --owner \"$u:$g\"; }; } && if [ \"$(stat -f -c %T /sys/fs/cgroup)\" = cgroup2fs ]; then "
		"c=/sys/fs/cgroup/cuco-chan-1-0-ab f=cgroup.freeze v=v2; else "
		"c=/sys/fs/cgroup/freezer/cuco-chan-1-0-ab f=freezer.state v=v1; fi && if mkdir \"$c\" 2>/dev/null; "
		"then if [ -e \"$c/$f\" ]; then k=$v; else rmdir \"$c\"; fi; fi; else u=- g=-; fi && "
		"echo \"CUCO_SSH_STAGE $u $g $k\" && exec env CUDA_VISIBLE_DEVICES=1 ./referee-12 --channel "
		"/dev/shm/cuco-chan-1-0-ab --ready \"$@\"'");
	assert_string_equal(cleanup.data, "ssh -o BatchMode=yes gpu2 'u=$(stat -c %g /dev/shm/cuco-chan-1-0-ab "
		"2>/dev/null); rm -rf /tmp/cuco-x-referee /tmp/cuco-x /dev/shm/cuco-chan-1-0-ab; for c in "
		"/sys/fs/cgroup/cuco-chan-1-0-ab /sys/fs/cgroup/freezer/cuco-chan-1-0-ab; do [ -d $c ] || continue; "
		"if [ -e $c/cgroup.kill ]; then echo 1 > $c/cgroup.kill; else echo 1 > $c/cgroup.freeze 2>/dev/null "
		"|| echo FROZEN > $c/freezer.state; p=$(cat $c/cgroup.procs); [ -n \"$p\" ] && kill -9 $p; "
		"echo 0 > $c/cgroup.freeze 2>/dev/null || echo THAWED > $c/freezer.state; fi; for i in 1 2 3 4 5 6 "
		"7 8 9 10 11 12 13 14 15 16 17 18 19 20; do p=$(cat $c/cgroup.procs); [ -z \"$p\" ] && break; "
		"kill -9 $p; sleep 0.1; done; rmdir $c; done; [ \"${u:-0}\" -ge $((0x40000000)) ] 2>/dev/null && "
		"find /tmp /var/tmp /dev/shm -xdev -mindepth 1 -maxdepth 1 -user \"$u\" -exec rm -rf {} + "
		"2>/dev/null; true'");

	/* What the host said: as root, ranks as 65534 in a v2 group named as
	 * the channel; as another user, as it, in none. The stage then: its
	 * folder the stage user's, its shell in the group, setpriv to that
	 * user. */
	eval_ssh_stage far;
	assert_false(eval_ssh_stage_parse("Welcome!", "/dev/shm/c-1", &far));
	assert_true(eval_ssh_stage_parse("CUCO_SSH_STAGE - - none", "/dev/shm/c-1", &far));
	assert_false(far.root || far.drop || *far.cgroup);
	assert_true(eval_ssh_stage_parse("CUCO_SSH_STAGE 0 0 v1", "/dev/shm/c-1", &far));
	assert_true(far.root && !far.drop && !far.v2);
	assert_string_equal(far.cgroup, "/sys/fs/cgroup/freezer/c-1");
	assert_true(eval_ssh_stage_parse("CUCO_SSH_STAGE 65534 65534 v2", "/dev/shm/c-1", &far));
	assert_true(far.root && far.drop && far.v2 && far.uid == 65534 && far.gid == 65534);
	assert_string_equal(far.cgroup, "/sys/fs/cgroup/c-1");
	l.far = &far;
	expect_command(&l,
		"ssh -o BatchMode=yes gpu2 'mkdir -m 700 /tmp/cuco-x'"
		" || { echo 'cuco-ssh: cannot reach the host, or make a new folder there' >&2; exit 255; }; "
		"scp -q -o BatchMode=yes /run/cache/abc /w/data.bin gpu2:/tmp/cuco-x/"
		" || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; "
		"ssh -o BatchMode=yes gpu2 'chown -R 65534:65534 /tmp/cuco-x && cd /tmp/cuco-x && { echo $$ > "
		"/sys/fs/cgroup/c-1/cgroup.procs || { echo '\\''cuco-ssh: cannot move the stage into its cgroup'\\'' "
		">&2; exit 255; }; } && env CUDA_VISIBLE_DEVICES=1 CUCO_HARNESS=1:k:s setpriv --reuid 65534 "
		"--regid 65534 --clear-groups --no-new-privs -- timeout -k 2 30 ./abc --reps 1'; rc=$?; ssh -o BatchMode=yes gpu2 "
		"'rm -rf /tmp/cuco-x'; exit $rc");
	/* CUCO_STAGE_USER, a name: one the host lacks ends the script, naming it. */
	l.stage_user = "cuco-stage";
	l.cgroups = false;
	cuco_buf_free(&script);
	cuco_buf_free(&cleanup);
	eval_ssh_referee(&l, "/run/cache/referee-12", "5e", args, "/dev/shm/cuco-chan-1-0-ab", &script, &cleanup);
	assert_non_null(strstr(script.data, "{ u=$(id -u -- cuco-stage 2>/dev/null) && g=$(id -g -- cuco-stage) "
		"|| { echo '\\''cuco-ssh: CUCO_STAGE_USER=cuco-stage: no such user on the host"));
	assert_null(strstr(script.data, "cgroup2fs"));
	cuco_buf_free(&script);
	cuco_buf_free(&cleanup);
}

/* ---- settings and host lists ------------------------------------------------ */

static void expect_set(cuco_runner_config *c, const char *key, const char *value, const char *why_has)
{
	char why[256] = "";
	bool ok = cuco_runner_config_set(c, key, value, why, sizeof why);
	if (!why_has) {
		if (!ok)
			fail_msg("%s = %s: %s", key, value, why);
		return;
	}
	if (ok)
		fail_msg("%s = %s was taken", key, value);
	if (!strstr(why, why_has))
		fail_msg("%s = %s: \"%s\" does not say \"%s\"", key, value, why, why_has);
}

static void test_runner_config(void **state)
{
	(void)state;
	static const char *const good[][2] = {
		{ "kind", "slurm" }, { "partition", "gpu-a100" }, { "account", "lab_1" },
		{ "time_limit", "15" }, { "gpus_per_task", "1" }, { "hosts", "n[1-4]" },
		{ "hosts_per_slot", "2" }, { "slots", "3" }, { "options", "--mpi=pmix --qos=high" },
		{ "retry_after", "0.5" }, { "retire_after", "5" },
	};
	/* key, value, what the refusal says */
	static const char *const bad[][3] = {
		{ "kind", "pbs", "not local, hostfile, slurm or ssh" },
		{ "queue", "x", "unknown key in [runner]" },
		{ "partition", "gpu; rm -rf ~", "not a Slurm name" },
		{ "account", "", "not a Slurm name" },
		{ "hosts_per_slot", "0", "not 1 to" },
		{ "slots", "65", "not 1 to 64 slots" },
		{ "time_limit", "ten", "not 1 to" },
		{ "gpus_per_task", "-1", "not 1 to" },
		{ "retry_after", "nan", "not a number of seconds" },
		{ "retry_after", "0", "not a number of seconds" },
		{ "options", "a\x01z", "a control character" },
		{ "options", "--mca plm_rsh_agent 'ssh -p 22", "unterminated ' quote" },
	};
	cuco_runner_config c = { 0 };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		expect_set(&c, good[i][0], good[i][1], NULL);
	assert_int_equal(c.kind, CUCO_RUNNER_SLURM);
	assert_string_equal(c.partition, "gpu-a100");
	assert_int_equal(c.time_limit_min, 15);
	assert_int_equal(c.max_slots, 3);
	assert_true(c.retry_after_s == 0.5);
	assert_string_equal(cuco_runner_name(c.kind), "slurm");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect_set(&c, bad[i][0], bad[i][1], bad[i][2]);
	char longer[2048];
	memset(longer, 'h', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	expect_set(&c, "hosts", longer, "longer than");
	/* What failed left the setting as it was. */
	assert_int_equal(c.kind, CUCO_RUNNER_SLURM);
	assert_int_equal(c.max_slots, 3);
	assert_string_equal(c.partition, "gpu-a100");
}

static void expect_hosts(const char *expr, const char *want)
{
	eval_host h[64];
	int n = 0;
	cuco_err err = { 0 };
	if (eval_hostlist_expand(expr, h, 64, &n, &err) != CUCO_OK)
		fail_msg("%s: %s", expr, err.msg);
	cuco_buf got = { 0 };
	for (int i = 0; i < n; i++)
		cuco_buf_printf(&got, "%s%s", i ? " " : "", h[i].name);
	assert_string_equal(got.data, want);
	cuco_buf_free(&got);
}

static void expect_bad_hosts(const char *expr, const char *why)
{
	eval_host h[64];
	int n = 0;
	cuco_err err = { 0 };
	assert_int_equal(eval_hostlist_expand(expr, h, 64, &n, &err), CUCO_EDATA);
	if (!strstr(err.msg, why) || !strstr(err.msg, "hosts \""))
		fail_msg("%s: \"%s\" does not say \"%s\"", expr, err.msg, why);
}

static void test_hostlist(void **state)
{
	(void)state;
	expect_hosts("n1", "n1");
	expect_hosts("n[1-3]", "n1 n2 n3");
	expect_hosts("gpu[01-03,07]", "gpu01 gpu02 gpu03 gpu07");
	expect_hosts("gpu[8-10]", "gpu8 gpu9 gpu10");
	expect_hosts("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
	expect_hosts("a,b[9-10]-ib,c", "a b9-ib b10-ib c");

	expect_bad_hosts("", "no host");
	expect_bad_hosts("n[1-", "a [ without its ]");
	expect_bad_hosts("n]1", "a ] without its [");
	expect_bad_hosts("n[3-1]", "not a range of numbers");
	expect_bad_hosts("n[a-b]", "not a range of numbers");
	expect_bad_hosts("n[]", "not a range of numbers");
	expect_bad_hosts("n[1,]", "not a range of numbers");
	expect_bad_hosts("n[1234567890]", "not a range of numbers");
	expect_bad_hosts("n[1-100000]", "more than 64 hosts");
	expect_bad_hosts("n[1-2],n2", "n2 is listed twice");
	expect_bad_hosts("a,,b", "an empty host name");
	expect_bad_hosts("n 1", "a space or control character");
	expect_bad_hosts("n[[1]]", "a [ without its ]");
}

static void write_text(const char *path, const char *text)
{
	cuco_err err = { 0 };
	if (cuco_write_file(path, text, strlen(text), &err) != CUCO_OK)
		fail_msg("%s", err.msg);
}

static void expect_bad_hostfile(const char *dir, const char *text, const char *why)
{
	char path[512];
	snprintf(path, sizeof path, "%s/bad-hosts", dir);
	write_text(path, text);
	eval_host h[8];
	int n = 0;
	cuco_err err = { 0 };
	assert_int_equal(eval_hostfile_read(path, h, 8, &n, &err), CUCO_EDATA);
	if (!strstr(err.msg, path) || !strstr(err.msg, why))
		fail_msg("%s: \"%s\" does not name the file or say \"%s\"", text, err.msg, why);
}

static void test_hostfile_format(void **state)
{
	(void)state;
	char dir[256], path[512];
	make_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/hosts", dir);
	write_text(path, "# two nodes\nnodeA slots=2\n\n  nodeB slots=2 max_slots=4  # a comment\nnodeC\n");
	eval_host h[8];
	int n = 0;
	cuco_err err = { 0 };
	assert_int_equal(eval_hostfile_read(path, h, 8, &n, &err), CUCO_OK);
	assert_int_equal(n, 3);
	assert_string_equal(h[1].name, "nodeB");
	assert_int_equal(h[1].slots, 2);
	assert_int_equal(h[2].slots, 0);

	/* Slots: one host per slot when it holds the ranks, else enough hosts. */
	cuco_slot_spec s[8];
	int ns = 0;
	assert_int_equal(eval_hosts_to_slots(h, 3, 0, 2, CUCO_RUNNER_HOSTFILE, s, 8, &ns, &err), CUCO_OK);
	assert_int_equal(ns, 3);
	assert_string_equal(s[0].name, "nodeA");
	assert_string_equal(s[0].hosts, "nodeA:2");
	assert_string_equal(s[2].hosts, "nodeC:2");
	assert_int_equal(eval_hosts_to_slots(h, 2, 0, 4, CUCO_RUNNER_HOSTFILE, s, 8, &ns, &err), CUCO_OK);
	assert_int_equal(ns, 1);
	assert_string_equal(s[0].name, "nodeA+nodeB");
	assert_string_equal(s[0].hosts, "nodeA:2,nodeB:2");
	assert_int_equal(eval_hosts_to_slots(h, 3, 2, 4, CUCO_RUNNER_SLURM, s, 8, &ns, &err), CUCO_OK);
	assert_int_equal(ns, 1);  /* nodeC alone cannot hold a two-node slot */
	assert_string_equal(s[0].hosts, "nodeA,nodeB");
	assert_int_equal(eval_hosts_to_slots(h, 2, 0, 8, CUCO_RUNNER_HOSTFILE, s, 8, &ns, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, "cannot hold one slot of 8 ranks"));
	assert_int_equal(eval_hosts_to_slots(h, 2, 3, 2, CUCO_RUNNER_SLURM, s, 8, &ns, &err), CUCO_EDATA);

	expect_bad_hostfile(dir, "a slots=x\n", ":1: slots=x: expected slots=N");
	expect_bad_hostfile(dir, "a\nb slots=0\n", ":2: slots=0: expected slots=N");
	expect_bad_hostfile(dir, "a cpus=4\n", ":1: cpus=4: expected slots=N");
	expect_bad_hostfile(dir, "a\nb\na\n", ":3: a is listed twice");
	expect_bad_hostfile(dir, "# nothing\n\n", "no host in the hostfile");
	expect_bad_hostfile(dir, "a,b slots=2\n", ":1: a,b: not a host name");
	expect_bad_hostfile(dir, "a\nb\nc\nd\ne\nf\ng\nh\ni\n", ":9: more than 8 hosts");
	snprintf(path, sizeof path, "%s/none", dir);
	assert_int_not_equal(eval_hostfile_read(path, h, 8, &n, &err), CUCO_OK);
	assert_non_null(strstr(err.msg, path));
	rm_rf(dir);
}

static void test_ssh_hosts(void **state)
{
	(void)state;
	static const struct { const char *hosts; int code; const char *says; } cases[] = {
		{ "me@a,b:2222 c", CUCO_OK, NULL },
		{ "", CUCO_EUSAGE, "ssh runner: no host given" },
		{ "a,a", CUCO_EDATA, "ssh runner: a is listed twice" },
		{ "a,b'c", CUCO_EDATA, "ssh runner: host b'c: not user@host[:port]" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cuco_runner_config c = { .kind = CUCO_RUNNER_SSH };
		snprintf(c.hosts, sizeof c.hosts, "%s", cases[i].hosts);
		cuco_slot_spec s[4];
		int n = 0;
		char where[128];
		cuco_err err = { 0 };
		assert_int_equal(cuco_runner_slots(&c, 2, s, 4, &n, where, sizeof where, &err), cases[i].code);
		if (cases[i].says && !strstr(err.msg, cases[i].says))
			fail_msg("%s: \"%s\" does not say \"%s\"", cases[i].hosts, err.msg, cases[i].says);
		if (!cases[i].says) {
			assert_int_equal(n, 3);
			assert_string_equal(s[1].hosts, "b:2222");
		}
	}
}

/* A host's GPUs in sets of the workload's ranks, a slot each. */
static void test_slots_per_host(void **state)
{
	(void)state;
	cuco_slot_spec s[8];
	int n = 0;
	char where[128];
	cuco_err err = { 0 };
	char *saved = getenv("CUDA_VISIBLE_DEVICES") ? cuco_xstrdup(getenv("CUDA_VISIBLE_DEVICES")) : NULL;
	setenv("CUDA_VISIBLE_DEVICES", "4,5, 6,7", 1);
	cuco_env_reread();
	cuco_runner_config c = { .kind = CUCO_RUNNER_LOCAL, .slots_per_host = 2 };
	assert_int_equal(cuco_runner_slots(&c, 2, s, 8, &n, where, sizeof where, &err), CUCO_OK);
	assert_int_equal(n, 2);
	assert_string_equal(s[0].name, "local/0");
	assert_string_equal(s[0].gpus, "4,5");
	assert_string_equal(s[1].gpus, "6,7");
	c.slots_per_host = 3;
	assert_int_equal(cuco_runner_slots(&c, 2, s, 8, &n, where, sizeof where, &err), CUCO_EENV);
	assert_non_null(strstr(err.msg, "slots_per_host: 3 GPU sets of the workload's ranks need 6 GPUs here; "
		"4 are visible"));
	/* One slot: its ranks' GPUs alone, so a stage cannot compute on the
	 * others (redgpu's second-gpu); five ranks on four GPUs (a CPU
	 * workload's) keep the empty set. */
	c.slots_per_host = 1;
	assert_int_equal(cuco_runner_slots(&c, 1, s, 8, &n, where, sizeof where, &err), CUCO_OK);
	assert_int_equal(n, 1);
	assert_string_equal(s[0].gpus, "4");
	assert_int_equal(cuco_runner_slots(&c, 2, s, 8, &n, where, sizeof where, &err), CUCO_OK);
	assert_string_equal(s[0].gpus, "4,5");
	assert_int_equal(cuco_runner_slots(&c, 5, s, 8, &n, where, sizeof where, &err), CUCO_OK);
	assert_string_equal(s[0].gpus, "");
	if (saved)
		setenv("CUDA_VISIBLE_DEVICES", saved, 1);
	else
		unsetenv("CUDA_VISIBLE_DEVICES");
	cuco_env_reread();
	free(saved);

	c = (cuco_runner_config){ .kind = CUCO_RUNNER_SSH, .hosts = "g1,g2", .slots_per_host = 2 };
	assert_int_equal(cuco_runner_slots(&c, 1, s, 8, &n, where, sizeof where, &err), CUCO_OK);
	assert_int_equal(n, 4);
	assert_string_equal(s[3].name, "g2/1");
	assert_string_equal(s[3].hosts, "g2");
	assert_string_equal(s[3].gpus, "1");
	assert_int_equal(cuco_runner_slots(&c, 1, s, 3, &n, where, sizeof where, &err), CUCO_EDATA);
	c = (cuco_runner_config){ .kind = CUCO_RUNNER_SLURM, .hosts = "n[1-2]", .slots_per_host = 2 };
	assert_int_equal(cuco_runner_slots(&c, 1, s, 8, &n, where, sizeof where, &err), CUCO_EUSAGE);
	assert_non_null(strstr(err.msg, "set gpus_per_task too"));
	c.gpus_per_task = 1;
	assert_int_equal(cuco_runner_slots(&c, 1, s, 8, &n, where, sizeof where, &err), CUCO_OK);
	assert_int_equal(n, 4);
	assert_string_equal(s[1].name, "n1/1");
	assert_string_equal(s[1].gpus, "");

	/* A CPU workload's slots on one host would share its cores. */
	cuco_workload *wl;
	assert_int_equal(cuco_workload_load(fixture("mini"), &wl, &err), CUCO_OK);
	char dir[256];
	make_tmpdir(dir, sizeof dir);
	cuco_eval_config cfg = { .runner = { .kind = CUCO_RUNNER_SSH, .hosts = "g1", .slots_per_host = 2 } };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", dir);
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_EUSAGE);
	assert_non_null(strstr(err.msg, "mini is a CPU workload"));
	cuco_workload_free(wl);
	rm_rf(dir);
}

/* ---- the pool ------------------------------------------------------------------- */

/* Two processes on one GPU set: the second waits for the first's lock;
 * each set its own lock file. */
static void test_gpu_lock(void **state)
{
	(void)state;
	cuco_slot_spec spec = { 0 };
	snprintf(spec.gpus, sizeof spec.gpus, "test%d,1", (int)getpid());
	char path[128];
	snprintf(path, sizeof path, "/tmp/cuco-gpu-test%d-1.lock", (int)getpid());
	cuco_err err = { 0 };
	int fd, ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int rc = eval_gpu_lock(&spec, NULL, &fd, &err);
		(void)!write(ready[1], "x", 1);
		usleep(600000);
		eval_gpu_unlock(fd);
		_exit(rc == CUCO_OK ? 0 : 1);
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	double t0 = cuco_mono();
	assert_int_equal(eval_gpu_lock(&spec, NULL, &fd, &err), CUCO_OK);
	assert_true(cuco_mono() - t0 > 0.3);
	eval_gpu_unlock(fd);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	/* Free now: taken at once. */
	t0 = cuco_mono();
	assert_int_equal(eval_gpu_lock(&spec, NULL, &fd, &err), CUCO_OK);
	assert_true(cuco_mono() - t0 < 0.1);
	eval_gpu_unlock(fd);
	close(ready[0]);
	close(ready[1]);
	assert_int_equal(unlink(path), 0);
}

static void test_pool(void **state)
{
	(void)state;
	cuco_slot_spec specs[2] = { { "a", "a", "" }, { "b", "b", "" } };
	eval_pool p;
	eval_pool_init(&p, specs, 2, 0.2, 2);
	cuco_slot_info info;
	cuco_err err = { 0 };
	int s0, s1, s;
	char text[256];
	assert_int_equal(eval_pool_take(&p, -1, &s0, &info, &err), CUCO_OK);
	assert_int_equal(info.state, CUCO_SLOT_BUSY);
	assert_int_equal(eval_pool_take(&p, -1, &s1, &info, &err), CUCO_OK);
	assert_int_not_equal(s0, s1);

	eval_pool_give(&p, s0, NULL, &info, text, sizeof text);
	assert_string_equal(text, "");
	eval_pool_give(&p, s1, "the host hung up", &info, text, sizeof text);
	assert_int_equal(info.state, CUCO_SLOT_RESTING);
	assert_non_null(strstr(text, "slot b: environment failure 1: the host hung up; tried again in 0 s"));
	/* b rests: a is taken; b itself only after its rest. */
	assert_int_equal(eval_pool_take(&p, -1, &s, &info, &err), CUCO_OK);
	assert_int_equal(s, s0);
	eval_pool_give(&p, s, NULL, &info, text, sizeof text);
	double t0 = cuco_mono();
	assert_int_equal(eval_pool_take(&p, s1, &s, &info, &err), CUCO_OK);
	assert_true(cuco_mono() - t0 > 0.1);
	eval_pool_give(&p, s, NULL, &info, text, sizeof text);
	assert_non_null(strstr(text, "slot b works again"));
	assert_int_equal(info.failures, 0);

	/* The slot idle longest goes first: a was given back before b. */
	assert_int_equal(eval_pool_take(&p, -1, &s, &info, &err), CUCO_OK);
	assert_int_equal(s, s0);
	/* Two failures in a row retire a. */
	eval_pool_give(&p, s, "node down", &info, text, sizeof text);
	usleep(250000);
	assert_int_equal(eval_pool_take(&p, s0, &s, &info, &err), CUCO_OK);
	eval_pool_give(&p, s, "node down", &info, text, sizeof text);
	assert_int_equal(info.state, CUCO_SLOT_RETIRED);
	assert_non_null(strstr(text, "slot a retired after 2 environment failures in a row: node down"));
	assert_int_equal(eval_pool_take(&p, s0, &s, &info, &err), CUCO_EENV);
	assert_non_null(strstr(err.msg, "slot a is retired"));
	assert_int_equal(eval_pool_take(&p, -1, &s, &info, &err), CUCO_OK);
	assert_int_equal(s, s1);
	eval_pool_give(&p, s, "x", &info, text, sizeof text);
	usleep(250000);
	assert_int_equal(eval_pool_take(&p, -1, &s, &info, &err), CUCO_OK);
	eval_pool_give(&p, s, "x", &info, text, sizeof text);
	assert_int_equal(eval_pool_take(&p, -1, &s, &info, &err), CUCO_EENV);
	assert_non_null(strstr(err.msg, "every slot is retired"));
	assert_int_equal(eval_pool_take(&p, 2, &s, &info, &err), CUCO_EUSAGE);

	cuco_slot_info list[4];
	assert_int_equal(eval_pool_list(&p, list, 4), 2);
	assert_string_equal(list[1].name, "b");
	assert_string_equal(cuco_slot_state_name(list[1].state), "retired");
	assert_int_equal(list[0].holds, 4);
	eval_pool_free(&p);
}

/* A fake /sys/devices/system/cpu: cpu i in package pkg[i], core core[i]. */
static void fake_sysfs(const char *root, int n, const int *pkg, const int *core)
{
	for (int i = 0; i < n; i++) {
		char path[2048];
		snprintf(path, sizeof path, "mkdir -p %s/cpu%d/topology && echo %d > %s/cpu%d/topology/"
			"physical_package_id && echo %d > %s/cpu%d/topology/core_id", root, i, pkg[i], root, i,
			core[i], root, i);
		assert_int_equal(system(path), 0);
	}
}

static void expect_device(const char *root, int ncpu, int ranks, const char *want)
{
	cpu_set_t allowed, device;
	CPU_ZERO(&allowed);
	for (int i = 0; i < ncpu; i++)
		CPU_SET(i, &allowed);
	bool fits = eval_device_cpus(root, &allowed, ranks, &device);
	char got[128] = "";
	for (int i = 0; fits && i < ncpu; i++)
		if (CPU_ISSET(i, &device))
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", *got ? "," : "", i);
	assert_string_equal(fits ? got : "none", want);
}

/* The ranks' cores in the order Open MPI binds them: whole cores (every
 * hardware thread), the first package first, whatever the numbering. */
static void test_device_cpus(void **state)
{
	(void)state;
	char root[256], dir[300];
	make_tmpdir(root, sizeof root);
	snprintf(dir, sizeof dir, "%s/plain", root);
	fake_sysfs(dir, 4, (int[]){ 0, 0, 0, 0 }, (int[]){ 0, 1, 2, 3 });
	expect_device(dir, 4, 2, "0,1");
	expect_device(dir, 4, 4, "0,1,2,3");
	expect_device(dir, 4, 5, "none");
	snprintf(dir, sizeof dir, "%s/smt", root);  /* cpu k and k+4 share a core */
	fake_sysfs(dir, 8, (int[]){ 0, 0, 0, 0, 0, 0, 0, 0 }, (int[]){ 0, 1, 2, 3, 0, 1, 2, 3 });
	expect_device(dir, 8, 2, "0,1,4,5");
	expect_device(dir, 8, 5, "none");
	snprintf(dir, sizeof dir, "%s/sockets", root);  /* numbered across two packages */
	fake_sysfs(dir, 4, (int[]){ 0, 1, 0, 1 }, (int[]){ 0, 0, 1, 1 });
	expect_device(dir, 4, 2, "0,2");
	expect_device(dir, 4, 3, "0,1,2");
	snprintf(dir, sizeof dir, "%s/missing", root);  /* no topology: a core per CPU */
	expect_device(dir, 3, 2, "0,1");
	rm_rf(root);
}

/* ---- for real ------------------------------------------------------------------ */

static cuco_evaluator *evaluator(const cuco_eval_config *cfg, cuco_workload **wl)
{
	cuco_err err = { 0 };
	if (cuco_workload_load(fixture("mini"), wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(*wl, cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return ev;
}

static void evaluate(cuco_evaluator *ev, const cuco_workload *wl, const char *rel, cuco_eval_result *res)
{
	size_t len;
	char *src = read_fixture(rel, &len);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_err err = { 0 };
	if (cuco_eval_candidate(ev, src, len, &d, true, res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	free(src);
}

/* One program of a fixture workload under cfg's runner: it must pass. */
static void evaluate_fixture(const cuco_eval_config *cfg, const char *workload, const char *source)
{
	cuco_workload *wl;
	cuco_evaluator *ev;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(fixture(workload), &wl, &err), CUCO_OK);
	assert_int_equal(cuco_evaluator_new(wl, cfg, &ev, &err), CUCO_OK);
	cuco_eval_result res;
	evaluate(ev, wl, source, &res);
	if (!res.ok)
		fail_msg("%s: %s: %s", source, res.failure.error_class, res.failure.excerpt);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_hostfile_for_real(void **state)
{
	(void)state;
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_HOSTFILE, .jobs = 1 };
	char dir[256];
	make_tmpdir(dir, sizeof dir);
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", dir);
	snprintf(cfg.runner.hostfile, sizeof cfg.runner.hostfile, "%s/hosts", dir);
	write_text(cfg.runner.hostfile, "localhost slots=2\n");
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(&cfg, &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 5);
	assert_int_equal(res.slot, 0);
	assert_string_equal(res.slot_name, "localhost");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	/* One rank goes to its host through mpirun too; a framed program's
	 * frame finds its ticket file there (the run folder is shared). */
	evaluate_fixture(&cfg, "solo", "solo/solo.c");
	evaluate_fixture(&cfg, "framed", "framed/prog.c");
	assert_int_equal(count_processes(cfg.run_dir), 0);
	rm_rf(cfg.run_dir);
}

static const char *const loopbacks[] = { "127.0.0.1", "127.0.0.2", "127.0.0.3", NULL };

static int ssh_setup(void **state)
{
	sshd *s = cuco_xcalloc(1, sizeof *s);
	const char *why = sshd_start(s, loopbacks);
	if (why) {
		fprintf(stderr, "the tests over ssh will be skipped: %s\n", why);
		sshd_stop(s);
		s->port = 0;
	}
	*state = s;
	return 0;
}

/* Runs even when the test fails, so no sshd outlives the test. */
static int ssh_teardown(void **state)
{
	sshd *s = *state;
	if (s->port)
		sshd_stop(s);
	free(s);
	return 0;
}

typedef struct parallel {
	cuco_evaluator *ev;
	const cuco_workload *wl;
	cuco_eval_result res;
} parallel;

static void *evaluate_thread(void *arg)
{
	parallel *p = arg;
	evaluate(p->ev, p->wl, "mini/seed.c", &p->res);
	return NULL;
}

typedef struct slot_log {
	pthread_mutex_t lock;
	cuco_buf text;
} slot_log;

static void log_slot(void *arg, const cuco_slot_info *slot, const char *text)
{
	slot_log *l = arg;
	pthread_mutex_lock(&l->lock);
	cuco_buf_printf(&l->text, "%s %s%s%s\n", slot->name, cuco_slot_state_name(slot->state),
		*text ? ": " : "", text);
	pthread_mutex_unlock(&l->lock);
}

/* Two hosts of a hostfile, which Open MPI takes for other machines (their
 * addresses are none of this one's interfaces) and reaches through ssh:
 * two evaluations at once use both; a third host that refuses ssh fails
 * for the environment, rests, and the evaluation moves to another; a
 * deadlock there is a timeout. */
static void test_two_hosts_for_real(void **state)
{
	sshd *s = *state;
	if (!s->port)
		skip();
	char dir[256];
	make_tmpdir(dir, sizeof dir);
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_HOSTFILE, .jobs = 2,
		.runner.retry_after_s = 60, .slot_changed = log_slot };
	slot_log log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	cfg.slot_changed_arg = &log;
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", dir);
	snprintf(cfg.runner.hostfile, sizeof cfg.runner.hostfile, "%s/hosts", dir);
	write_text(cfg.runner.hostfile, "127.0.0.2 slots=2\n127.0.0.3 slots=2\n127.0.0.4 slots=2\n");
	snprintf(cfg.runner.options, sizeof cfg.runner.options, "--mca plm_rsh_agent 'ssh -p %d %.300s'",
		s->port, s->options);
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(&cfg, &wl);
	cuco_slot_info slots[4];
	assert_int_equal(cuco_evaluator_slots(ev, slots, 4), 3);
	parallel p[2] = { { ev, wl, { 0 } }, { ev, wl, { 0 } } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, evaluate_thread, &p[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		if (!p[i].res.ok)
			fail_msg("%s on %s: %s", p[i].res.failure.error_class, p[i].res.slot_name,
				p[i].res.failure.excerpt);
	assert_int_not_equal(p[0].res.slot, p[1].res.slot);
	assert_true(p[0].res.slot <= 1 && p[1].res.slot <= 1);

	/* The third slot, idle longest now, refuses: the evaluation is the
	 * environment's failure there and ends on a slot that works. */
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", &res);
	if (!res.ok)
		fail_msg("%s on %s: %s", res.failure.error_class, res.slot_name, res.failure.excerpt);
	assert_int_equal(res.slot_retries, 1);
	assert_true(res.slot <= 1);
	assert_int_equal(cuco_evaluator_slots(ev, slots, 4), 3);
	assert_string_equal(slots[2].name, "127.0.0.4");
	assert_int_equal(slots[2].state, CUCO_SLOT_RESTING);
	assert_int_equal(slots[2].failures, 1);
	assert_true(slots[2].rest_s > 30);
	/* A deadlock on another host is held to its limit there: a timeout. */
	evaluate(ev, wl, "broken/deadlock.c", &res);
	if (strcmp(res.failure.error_class, "timeout") != 0)
		fail_msg("%s on %s: %s", res.failure.error_class, res.slot_name, res.failure.excerpt);
	pthread_mutex_lock(&log.lock);
	if (!strstr(log.text.data, "127.0.0.4 resting: slot 127.0.0.4: environment failure 1: run: the "
			"environment failed"))
		fail_msg("no line for the failure in:\n%s", log.text.data);
	pthread_mutex_unlock(&log.lock);
	cuco_buf_free(&log.text);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	rm_rf(dir);
}

/* A search from the command line over the two hosts: it completes, and
 * both slots measured candidates (`cuco report --json`). */
static void test_two_host_search(void **state)
{
	sshd *s = *state;
	const char *bin = getenv("CUCO_BIN");
	if (!s->port || !bin)
		skip();
	char dir[256], path[300], cmd[1500];
	make_tmpdir(dir, sizeof dir);
	char conf[800];
	snprintf(conf, sizeof conf, "[runner]\noptions = --mca plm_rsh_agent 'ssh -p %d %.300s'\n", s->port,
		s->options);
	config_home(dir, conf);
	snprintf(path, sizeof path, "%s/hosts", dir);
	write_text(path, "127.0.0.2 slots=2\n127.0.0.3 slots=2\n");
	/* timeout: should the test die, the run goes too. */
	snprintf(cmd, sizeof cmd, "XDG_CONFIG_HOME='%s' timeout 600 '%s' run '%s' --size none --hostfile '%s' "
		"--budget 4 --rebench 0 --headless --run '%s/run' 2>&1", dir, bin, fixture("sleepy"), path, dir);
	int status;
	char *out = capture_output(cmd, &status);
	if (status != 0 || !strstr(out, "cuco: hostfile runner: 2 slots") ||
			!strstr(out, "4 candidates from the strategy: 4 done"))
		fail_msg("status %d:\n%s", status, out);
	free(out);
	snprintf(cmd, sizeof cmd, "'%s' report --run '%s/run'", bin, dir);
	out = capture_output(cmd, &status);
	const char *a = strstr(out, "127.0.0.2  idle, "), *b = strstr(out, "127.0.0.3  idle, ");
	if (status != 0 || !a || !b || atoi(a + 17) < 1 || atoi(b + 17) < 1)
		fail_msg("both slots should have measured candidates:\n%s", out);
	free(out);
	rm_rf(dir);
}

/* cfg's run folder (a fresh dir) and its one ssh host: this user at the
 * test's sshd. */
static void ssh_config(const sshd *s, cuco_eval_config *cfg, char *dir, size_t size)
{
	make_tmpdir(dir, size);
	snprintf(cfg->run_dir, sizeof cfg->run_dir, "%s", dir);
	struct passwd *pw = getpwuid(getuid());
	snprintf(cfg->runner.hosts, sizeof cfg->runner.hosts, "%s@127.0.0.1:%d", pw ? pw->pw_name : "root",
		s->port);
	snprintf(cfg->runner.options, sizeof cfg->runner.options, "%.300s", s->options);
}

static void test_ssh_for_real(void **state)
{
	sshd *s = *state;
	if (!s->port)
		skip();
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_SSH, .jobs = 1 };
	char dir[256];
	ssh_config(s, &cfg, dir, sizeof dir);
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(&cfg, &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 5);
	evaluate(ev, wl, "broken/wrong.c", &res);
	if (strcmp(res.failure.error_class, "wrong-answer") != 0)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	/* A deadlock is held to its limit on the far side: a timeout. */
	evaluate(ev, wl, "broken/deadlock.c", &res);
	if (strcmp(res.failure.error_class, "timeout") != 0)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	/* A framed program's ticket file goes with it, and its frame takes it there. */
	evaluate_fixture(&cfg, "framed", "framed/prog.c");

	/* A host that does not answer is the environment's failure. */
	snprintf(cfg.runner.hosts, sizeof cfg.runner.hosts, "127.0.0.1:%d", free_port());
	cfg.runner.retry_after_s = 0.01;
	ev = evaluator(&cfg, &wl);
	evaluate(ev, wl, "mini/seed.c", &res);
	assert_true(res.environment);
	assert_int_equal(res.slot_retries, 2);  /* the one slot, tried three times */
	assert_non_null(strstr(res.failure.excerpt, "cuco-ssh: cannot reach the host"));
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	rm_rf(dir);
}

/* Whether dir holds an entry that starts with prefix. */
static bool holds(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	bool found = false;
	for (struct dirent *e; d && !found && (e = readdir(d));)
		found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return found;
}

/* Nothing of a refereed stage is left on the host (here, the same
 * machine): no remote folder of any evaluation's (the stage's, the
 * referee's), no channel of this process's, no group made for a stage. */
static void expect_host_clean(const char *run_dir)
{
	char work[512], prefix[300];
	snprintf(work, sizeof work, "%.300s/work", run_dir);
	DIR *d = opendir(work);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		snprintf(prefix, sizeof prefix, "cuco-%.256s-", e->d_name);
		if (e->d_name[0] != '.' && holds("/tmp", prefix))
			fail_msg("/tmp/%s* is left on the host", prefix);
	}
	closedir(d);
	snprintf(prefix, sizeof prefix, "cuco-chan-%ld-", (long)getpid());
	static const char *const places[] = { "/dev/shm", "/sys/fs/cgroup", "/sys/fs/cgroup/freezer" };
	for (size_t i = 0; i < sizeof places / sizeof places[0]; i++)
		if (holds(places[i], prefix))
			fail_msg("%s/%s* is left on the host", places[i], prefix);
}

/* Whether every bench stage's referee log in the run says it froze the
 * stage at each "done" (its --trace line a step), and there was one. */
static bool referee_froze(const char *run_dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "cd '%s/work' && ls */bench-referee.log >/dev/null && "
		"! grep -L 'frozen .* us after done' */bench-referee.log | grep -q .", run_dir);
	return system(cmd) == 0;
}

/* The refereed fixture's evaluator over ssh to the test's sshd (cfg's
 * run folder in dir). */
static cuco_evaluator *refd_evaluator(const sshd *s, cuco_eval_config *cfg, char *dir, size_t size,
	cuco_workload **wl)
{
	ssh_config(s, cfg, dir, size);
	cuco_evaluator *ev;
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(fixture("refd"), wl, &err), CUCO_OK);
	if (cuco_evaluator_new(*wl, cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return ev;
}

/* A refereed workload over ssh: the referee is copied to the host and
 * runs there in an ssh session of its own. Its verdict times the honest
 * program, finds the wrong one wrong, and is the only one believed: a
 * program that prints a verdict of its own (on the stage's session) is
 * judged by the referee's. A step that never returns is a timeout; and
 * however the stage ended, the host keeps nothing. A referee that cannot
 * start is the environment's failure, with ssh's reason. The hostfile runner,
 * which may spread the ranks over hosts, is refused. */
static void test_ssh_refereed(void **state)
{
	sshd *s = *state;
	if (!s->port)
		skip();
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_SSH, .jobs = 1, .limit_scale = 0.25,
		.keep_workdirs = true };
	char dir[256];
	cuco_workload *wl;
	cuco_evaluator *ev = refd_evaluator(s, &cfg, dir, sizeof dir, &wl);
	cuco_err err = { 0 };
	cuco_eval_result res;
	evaluate(ev, wl, "refd/seed.c", &res);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 5);
	assert_true(res.timing.min_us > 0 && res.timing.min_us <= res.timing.median_us);
	assert_true(res.timing.median_us < 1e6);
	assert_true(res.timing.max_error <= 1e-5);
	/* As root there (the test's sshd logs in as this user), the referee
	 * freezes the stage between steps, in a group made there for it. */
	if (geteuid() == 0 && !referee_froze(cfg.run_dir))
		fail_msg("the referee over ssh, as root, did not freeze the stage at each step's end");
	evaluate(ev, wl, "refd/wrong.c", &res);
	if (strcmp(res.failure.error_class, "wrong-answer") != 0 || !strstr(res.failure.excerpt, "verification"))
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	evaluate(ev, wl, "refd/forged.c", &res);
	if (res.ok || strcmp(res.failure.error_class, "wrong-answer") != 0)
		fail_msg("a verdict the program printed was believed: %s: %s", res.ok ? "ok" : res.failure.error_class,
			res.failure.excerpt);
	/* Work left running after "done" is cut off there as here. */
	evaluate(ev, wl, "refd/late.c", &res);
	if (res.ok || !strstr(res.failure.excerpt, "step 2 of 6 (timed), on fresh inputs: output left unwritten"))
		fail_msg("work after done: %s: %s", res.ok ? "ok" : res.failure.error_class, res.failure.excerpt);
	evaluate(ev, wl, "refd/stuck.c", &res);
	if (strcmp(res.failure.error_class, "timeout") != 0)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	cuco_evaluator_free(ev);
	assert_int_equal(count_processes(cfg.run_dir), 0);
	expect_host_clean(cfg.run_dir);

	/* A referee that cannot start there (a host that does not answer):
	 * no stage, the environment's failure, ssh's words. */
	snprintf(cfg.runner.hosts, sizeof cfg.runner.hosts, "127.0.0.1:%d", free_port());
	cfg.runner.retry_after_s = 0.01;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_OK);
	evaluate(ev, wl, "refd/seed.c", &res);
	assert_true(res.environment);
	if (!strstr(res.failure.excerpt, "did not start: cuco-ssh: cannot reach the host"))
		fail_msg("%s", res.failure.excerpt);
	cuco_evaluator_free(ev);

	cfg.runner.kind = CUCO_RUNNER_HOSTFILE;
	snprintf(cfg.runner.hostfile, sizeof cfg.runner.hostfile, "%s/hosts", dir);
	write_text(cfg.runner.hostfile, "localhost slots=2\n");
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_EUSAGE);
	assert_non_null(strstr(err.msg, "the hostfile runner may spread"));
	cuco_workload_free(wl);
	rm_rf(dir);
}

/* The hijacker's process on the host is gone (its files with it). */
static void await_hijacker(void)
{
	for (int i = 0; i < 600; i++) {
		bool left = false;
		DIR *d = opendir("/tmp");
		assert_non_null(d);
		for (struct dirent *e; (e = readdir(d));)
			left |= strncmp(e->d_name, ".hijack-", 8) == 0;
		closedir(d);
		if (!left)
			return;
		usleep(100000);
	}
	fail_msg("the hijacker is still on the host after 60 s");
}

/* A refd fixture over ssh (stage user and cgroups as env says), into
 * res; then nothing of it is left here or on the host. */
static void attack(const sshd *s, const cuco_env *env, const char *source, cuco_eval_result *res)
{
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_SSH, .jobs = 1, .limit_scale = 0.25,
		.runner.retry_after_s = 0.01, .env = env };
	char dir[256];
	cuco_workload *wl;
	cuco_evaluator *ev = refd_evaluator(s, &cfg, dir, sizeof dir, &wl);
	evaluate(ev, wl, source, res);
	if (strstr(source, "hijack"))
		await_hijacker();
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	assert_int_equal(count_processes(cfg.run_dir), 0);
	expect_host_clean(cfg.run_dir);
	rm_rf(dir);
}

/* The hijacker's evaluation: how many times the sum's check refused a
 * replaced referee (each the environment's failure, then a retry, until
 * the slot is retired: a hijacker a retry's run stage leaves may replace
 * the next one); never a forged verdict believed, nor any other failure. */
static int hijack_refused(const sshd *s, const cuco_env *env)
{
	cuco_eval_result res;
	attack(s, env, "refd/hijack.c", &res);
	if (res.ok && res.timing.median_us < 0.02)
		fail_msg("a forged referee's verdict was believed: median %.3f us", res.timing.median_us);
	bool refused = res.environment && strstr(res.failure.excerpt, "the referee on the host is not the one copied");
	if (!res.ok && !refused)
		fail_msg("the hijacker's honest steps: %s: %s", res.failure.error_class, res.failure.excerpt);
	return res.slot_retries + refused;
}

/* Whether a stage that stops its referee and kills it got away with it:
 * no verdict (a timeout) when it could, an honest pass when it could not;
 * never anything else. */
static bool signal_reached(const sshd *s, const cuco_env *env)
{
	cuco_eval_result res;
	attack(s, env, "refd/signal.c", &res);
	if (!res.ok && strcmp(res.failure.error_class, "timeout") != 0)
		fail_msg("a stage that killed its referee: %s: %s", res.failure.error_class, res.failure.excerpt);
	return !res.ok;
}

/* Whether a stage's ranks got out of the group their referee freezes
 * (refd/escape.c: then they answer nothing, a wrong answer; else they pass
 * honestly); never anything else. */
static bool escaped(const sshd *s, const cuco_env *env)
{
	cuco_eval_result res;
	attack(s, env, "refd/escape.c", &res);
	bool out = !res.ok && strcmp(res.failure.error_class, "wrong-answer") == 0;
	if (!res.ok && !out)
		fail_msg("a stage leaving its group: %s: %s", res.failure.error_class, res.failure.excerpt);
	return out;
}

/* The red team's over ssh, where the ranks run on the referee's host. As
 * root there the ranks run as the stage user (a fresh uid), the referee and
 * its folder are root's, and what the stage leaves in its group dies with
 * it: a stage that signals its referee reaches none, and passes honestly;
 * one that leaves a process behind to replace later stages' referees
 * (its own bench stage's, here) with one that rewrites the times can
 * neither read nor replace one, and passes at once, honestly timed, with
 * its group or without (CUCO_CGROUPS=off); one that tries to leave its
 * group or thaw it cannot (the group's files are root's; a control, ranks
 * as root, leaves it). The
 * control, ranks root's too
 * (CUCO_STAGE_USER=root, no group: every run as root before this): the
 * referee is killed (a timeout), and replaced, which only the check of its
 * sum before it runs stops (the environment's failure, and a retry).
 * (Without that check the forged 0.010 us was believed; a replacement
 * timed between the check and the exec would still run: docs/trust.md,
 * "Over ssh". Not as root there, that is all there is.) */
static void test_ssh_referee_attacks(void **state)
{
	sshd *s = *state;
	if (!s->port)
		skip();
	cuco_env env = *cuco_env_get();
	bool root = geteuid() == 0;
	if (signal_reached(s, &env) == root)
		fail_msg("%s", root ? "as root there, a stage signalled its referee" : "the signal fixture passed");
	int refused = hijack_refused(s, &env);
	if (!root)
		return;  /* the ranks are the referee's user there: the check of its sum is all */
	if (refused != 0)
		fail_msg("as root there, the hijacker replaced a referee (%d refused)", refused);
	if (escaped(s, &env))
		fail_msg("as root there, a rank left the group its referee freezes");
	cuco_env as_root = env;
	as_root.stage_user = "root";
	if (!escaped(s, &as_root))
		fail_msg("the control, ranks as root: the escaper was frozen in its group");
	env.cgroups = "off";
	if ((refused = hijack_refused(s, &env)) != 0)
		fail_msg("without a group there, the hijacker replaced a referee (%d refused)", refused);
	env.stage_user = "root";
	if (!signal_reached(s, &env))
		fail_msg("the control, ranks as root: the signal fixture did not reach its referee");
	if (hijack_refused(s, &env) < 1)
		fail_msg("the control, ranks as root: the hijacker replaced no referee");
}

/* Whether a process refd/outlive.c left is alive on the host (it
 * touches /tmp/.outlive-PID every 100 ms), once it has had 1 s to show. */
static bool outliver_alive(void)
{
	sleep(1);
	bool alive = false;
	DIR *d = opendir("/tmp");
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		char path[300];
		struct stat st;
		snprintf(path, sizeof path, "/tmp/%s", e->d_name);
		if (strncmp(e->d_name, ".outlive-", 9) == 0 && stat(path, &st) == 0)
			alive |= time(NULL) - st.st_mtime < 1;
	}
	closedir(d);
	return alive;
}

/* The outliver gone (it leaves 40 s after it starts), its marks with it. */
static void await_outliver(void)
{
	for (int i = 0; i < 60 && outliver_alive(); i++)
		;
	assert_int_equal(system("rm -f /tmp/.outlive-*"), 0);
}

/* A stage that leaves behind a process that forks and leaves over and
 * over (refd/outlive.c), so that a cleanup that lists its group and kills
 * what it listed kills only the gone: as root there, it is gone with its
 * stage's cleanup, and the next candidate's stages (refd/seed.c, whose
 * ranks it would kill) pass; nothing of either is left. */
static void test_ssh_referee_outlive(void **state)
{
	sshd *s = *state;
	if (!s->port || geteuid() != 0)
		skip();  /* not root there: the ranks are the referee's user, no group to empty */
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_SSH, .jobs = 1, .limit_scale = 0.25 };
	char dir[256];
	cuco_workload *wl;
	cuco_evaluator *ev = refd_evaluator(s, &cfg, dir, sizeof dir, &wl);
	cuco_eval_result res, next;
	evaluate(ev, wl, "refd/outlive.c", &res);
	evaluate(ev, wl, "refd/seed.c", &next);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	bool alive = outliver_alive();
	/* Its heartbeat files, /tmp/.outlive-*, are the stage user's: gone with
	 * the cleanup, as whatever a stage of a uid of its own leaves there. */
	bool left = system("ls /tmp/.outlive-* >/dev/null 2>&1") == 0;
	await_outliver();
	if (alive)
		fail_msg("a process the outliver's stage left outlived its cleanup");
	if (left)
		fail_msg("the files the outliver's stage left in /tmp outlived its cleanup");
	if (!next.ok)
		fail_msg("the next candidate, after the outliver: %s: %s", next.failure.error_class,
			next.failure.excerpt);
	if (!res.ok)
		fail_msg("the outliver's honest steps: %s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(count_processes(cfg.run_dir), 0);
	expect_host_clean(cfg.run_dir);
	rm_rf(dir);
}

typedef struct beside {
	cuco_evaluator *ev;
	const cuco_workload *wl;
	cuco_eval_result res;
} beside;

static void *evaluate_spoiler(void *arg)
{
	beside *b = arg;
	evaluate(b->ev, b->wl, "refd/spoil.c", &b->res);
	return NULL;
}

/* Two slots' stages on one host at once (as slots_per_host makes them,
 * here two names of this machine): refd/spoil.c, whose rank kills every
 * process of the evaluator's other stages it may signal, beside the
 * honest refd/seed.c, which must pass (and the spoiler too). */
static void test_ssh_slots_apart(void **state)
{
	sshd *s = *state;
	if (!s->port || geteuid() != 0)
		skip();  /* not root there: the ranks are the referee's user, all of them */
	cuco_eval_config cfg = { .runner.kind = CUCO_RUNNER_SSH, .jobs = 2, .limit_scale = 0.25 };
	char dir[256];
	cuco_workload *wl;
	ssh_config(s, &cfg, dir, sizeof dir);
	size_t n = strlen(cfg.runner.hosts);
	snprintf(cfg.runner.hosts + n, sizeof cfg.runner.hosts - n, ",root@127.0.0.2:%d", s->port);
	cuco_err err = { 0 };
	assert_int_equal(cuco_workload_load(fixture("refd"), &wl, &err), CUCO_OK);
	cuco_evaluator *ev;
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	beside b = { .ev = ev, .wl = wl };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, evaluate_spoiler, &b), 0);
	cuco_eval_result res;
	usleep(1500000);  /* the spoiler's run stage under way */
	evaluate(ev, wl, "refd/seed.c", &res);
	pthread_join(t, NULL);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	if (!res.ok || res.slot_retries)
		fail_msg("an honest candidate beside the spoiler: %s (%d retries): %s", res.ok ? "ok" :
			res.failure.error_class, res.slot_retries, res.failure.excerpt);
	if (!b.res.ok)
		fail_msg("the spoiler's honest steps: %s: %s", b.res.failure.error_class, b.res.failure.excerpt);
	assert_int_equal(count_processes(cfg.run_dir), 0);
	expect_host_clean(cfg.run_dir);
	rm_rf(dir);
}

/* `cuco run` and `cuco doctor` take --runner, --hostfile and --hosts: a
 * bad one is a usage error (1), a bad hostfile bad input (2) naming the
 * file and line, in one line each; doctor's referee line over ssh. */
static void test_cli_flags(void **state)
{
	(void)state;
	char dir[256], cmd[1024];
	make_tmpdir(dir, sizeof dir);
	const char *bin = getenv("CUCO_BIN");
	if (!bin)
		skip();
	static const struct { const char *args; int status; const char *says; } cases[] = {
		{ "run %s --runner pbs --run %s/r", 1, "cuco: run: --runner pbs: not local, hostfile, slurm or ssh" },
		{ "run %s --hosts '' --run %s/r", 1, "cuco: run: --hosts: empty or too long" },
		{ "run %s --runner hostfile --run %s/r", 1, "cuco: hostfile runner: no hostfile given" },
		{ "run %s --hostfile %s/hosts --run %s/r", 2, "/hosts:2: slots=many: expected slots=N" },
		{ "run %s --runner ssh --run %s/r", 1, "cuco: ssh runner: no host given" },
		{ "doctor --runner lsf %s %s", 1, "cuco: doctor: --runner lsf: not local" },
	};
	char hosts[300];
	snprintf(hosts, sizeof hosts, "%s/hosts", dir);
	write_text(hosts, "a slots=2\nb slots=many\n");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char args[600];
		if (strstr(cases[i].args, "doctor"))
			snprintf(args, sizeof args, cases[i].args, "", "");
		else if (strstr(cases[i].args, "--hostfile"))
			snprintf(args, sizeof args, cases[i].args, fixture("sleepy"), dir, dir);
		else
			snprintf(args, sizeof args, cases[i].args, fixture("sleepy"), dir);
		snprintf(cmd, sizeof cmd, "'%s' %s 2>&1 >/dev/null", bin, args);
		int status;
		char *out = capture_output(cmd, &status);
		if (status != cases[i].status || !strstr(out, cases[i].says) || strchr(out, '\n') != strrchr(out, '\n'))
			fail_msg("cuco %s: status %d, said:\n%s", args, status, out);
		free(out);
	}
	/* doctor says what becomes of refereed workloads over ssh. */
	snprintf(cmd, sizeof cmd, "'%s' doctor --runner ssh --hosts me@localhost 2>&1", bin);
	char *said = capture_output(cmd, &(int){ 0 });
	if (!strstr(said, "referee") || !strstr(said, "in an ssh session of its own") ||
			!strstr(said, "as root there, the ranks run as the stage user (CUCO_STAGE_USER, else a uid of "
			"each stage's own)") ||
			!strstr(said, "as another user there, stages and referee share a uid, no freezer: its verdict is "
			"defence in depth"))
		fail_msg("cuco doctor --runner ssh said:\n%s", said);
	free(said);
	/* A [runner] the config file gets wrong: refused before any run folder. */
	config_home(dir, "[runner]\nkind = slurm\nslots = 0\n");
	snprintf(cmd, sizeof cmd, "XDG_CONFIG_HOME='%s' '%s' run %s --run %s/r2 2>&1 >/dev/null", dir, bin,
		fixture("sleepy"), dir);
	int status;
	char *out = capture_output(cmd, &status);
	char r2[300];
	snprintf(r2, sizeof r2, "%s/r2", dir);
	if (status != 2 || !strstr(out, "cuco/config:3: slots: 0: not 1 to 64 slots") || access(r2, F_OK) == 0)
		fail_msg("status %d, said:\n%s", status, out);
	free(out);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_runner_config),
		cmocka_unit_test(test_hostlist),
		cmocka_unit_test(test_hostfile_format),
		cmocka_unit_test(test_ssh_hosts),
		cmocka_unit_test(test_slots_per_host),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_gpu_lock),
		cmocka_unit_test(test_cli_flags),
		cmocka_unit_test(test_device_cpus),
		cmocka_unit_test(test_hostfile_for_real),
		cmocka_unit_test_setup_teardown(test_two_hosts_for_real, ssh_setup, ssh_teardown),
		cmocka_unit_test_setup_teardown(test_two_host_search, ssh_setup, ssh_teardown),
		cmocka_unit_test_setup_teardown(test_ssh_for_real, ssh_setup, ssh_teardown),
		cmocka_unit_test_setup_teardown(test_ssh_refereed, ssh_setup, ssh_teardown),
		cmocka_unit_test_setup_teardown(test_ssh_referee_attacks, ssh_setup, ssh_teardown),
		cmocka_unit_test_setup_teardown(test_ssh_referee_outlive, ssh_setup, ssh_teardown),
		cmocka_unit_test_setup_teardown(test_ssh_slots_apart, ssh_setup, ssh_teardown),
	};
	if (getenv("CUCO_TEST_FILTER"))  /* one test by name (cmocka's pattern: * and ?) */
		cmocka_set_test_filter(getenv("CUCO_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
