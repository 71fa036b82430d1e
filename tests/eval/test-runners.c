/* test-runners.c — the commands each runner builds, exactly; the hostfile
 * runner for real; and the ssh runner for real against an sshd started
 * here on loopback with throwaway keys (skipped when sshd cannot start). */
#include "eval/eval_int.h"
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

/* The command each runner builds, as a line: the words quoted where they
 * need it; for ssh, /bin/sh -c and its script. */
static void expect_command(const eval_launch *l, const char *want)
{
	cuco_buf out = { 0 };
	eval_argv argv = { 0 };
	const char *extras[] = { "/w/data.bin" };
	char *const prog[] = { "./abc", "--reps", "1", NULL };
	eval_launch_argv(l, prog, "/run/cache/abc", extras, 1, &argv);
	if (l->kind == CUCO_RUNNER_SSH) {
		assert_string_equal(argv.v[0], "/bin/sh");
		assert_string_equal(argv.v[1], "-c");
		assert_null(argv.v[3]);
		cuco_buf_puts(&out, argv.v[2]);
	} else {
		eval_argv_join(argv.v, &out);
	}
	assert_string_equal(out.data, want);
	eval_argv_free(&argv);
	cuco_buf_free(&out);
}

static void test_commands(void **state)
{
	(void)state;
	eval_launch l = { .kind = CUCO_RUNNER_LOCAL, .launcher = "/usr/bin/mpirun", .ranks = 2, .mpi = true };
	expect_command(&l, "/usr/bin/mpirun --oversubscribe --bind-to none -np 2 ./abc --reps 1");
	l.as_root = true;
	l.bind = true;
	expect_command(&l, "/usr/bin/mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "
		"./abc --reps 1");
	l.mpi = false;
	expect_command(&l, "./abc --reps 1");
	/* The ticket for remote ranks, the interposer for the ranks only. */
	l = (eval_launch){ .kind = CUCO_RUNNER_LOCAL, .launcher = "mpirun", .ranks = 2, .mpi = true,
		.ticket = "CUCO_HARNESS=1:k:s", .preload = "/run/cache/cuco-count-1.so" };
	expect_command(&l, "mpirun --oversubscribe --bind-to none -x CUCO_HARNESS "
		"-x LD_PRELOAD=/run/cache/cuco-count-1.so -np 2 ./abc --reps 1");
	l.mpi = false;
	expect_command(&l, "env LD_PRELOAD=/run/cache/cuco-count-1.so ./abc --reps 1");
	l = (eval_launch){ .kind = CUCO_RUNNER_HOSTFILE, .launcher = "mpirun", .hostfile = "/etc/my hosts",
		.ranks = 4, .mpi = true };
	expect_command(&l, "mpirun --hostfile '/etc/my hosts' -np 4 ./abc --reps 1");
	l = (eval_launch){ .kind = CUCO_RUNNER_SLURM, .launcher = "/usr/bin/srun", .ranks = 8, .mpi = true };
	expect_command(&l, "/usr/bin/srun -n 8 ./abc --reps 1");
	l = (eval_launch){ .kind = CUCO_RUNNER_SSH, .launcher = "ssh", .ssh_host = "me@gpu1:2222",
		.ssh_options = "-i k", .remote_dir = "/tmp/cuco-x", .ranks = 2, .mpi = true, .remote_limit_s = 30 };
	expect_command(&l,
		"ssh -o BatchMode=yes -i k -p 2222 me@gpu1 'mkdir -p /tmp/cuco-x'"
		" || { echo 'cuco-ssh: cannot reach the host' >&2; exit 255; }; "
		"scp -q -o BatchMode=yes -i k -P 2222 /run/cache/abc /w/data.bin me@gpu1:/tmp/cuco-x/"
		" || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; "
		"ssh -o BatchMode=yes -i k -p 2222 me@gpu1 'cd /tmp/cuco-x && timeout -k 2 30 "
		"env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 "
		"./abc --reps 1'; rc=$?; ssh -o BatchMode=yes -i k -p 2222 me@gpu1 'rm -rf /tmp/cuco-x'; exit $rc");
	l.ssh_host = "gpu2";
	l.ssh_options = "";
	l.mpi = false;
	l.ticket = "CUCO_HARNESS=1:k:s";  /* ssh passes no environment: the far side sets it */
	expect_command(&l,
		"ssh -o BatchMode=yes gpu2 'mkdir -p /tmp/cuco-x'"
		" || { echo 'cuco-ssh: cannot reach the host' >&2; exit 255; }; "
		"scp -q -o BatchMode=yes /run/cache/abc /w/data.bin gpu2:/tmp/cuco-x/"
		" || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; "
		"ssh -o BatchMode=yes gpu2 'cd /tmp/cuco-x && timeout -k 2 30 env CUCO_HARNESS=1:k:s ./abc --reps 1'; rc=$?; "
		"ssh -o BatchMode=yes gpu2 'rm -rf /tmp/cuco-x'; exit $rc");
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

static void test_hostfile_for_real(void **state)
{
	(void)state;
	cuco_eval_config cfg = { .runner = CUCO_RUNNER_HOSTFILE, .jobs = 1 };
	char dir[256];
	make_tmpdir(dir, sizeof dir);
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", dir);
	snprintf(cfg.hostfile, sizeof cfg.hostfile, "%s/hosts", dir);
	cuco_write_file(cfg.hostfile, "localhost slots=2\n", 18, NULL);
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(&cfg, &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", &res);
	if (!res.ok)
		fail_msg("%s: %s", res.error_class, res.excerpt);
	assert_int_equal(res.samples, 5);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	assert_int_equal(count_processes(cfg.run_dir), 0);
	rm_rf(cfg.run_dir);
}

/* ---- a private sshd ---------------------------------------------------------- */

typedef struct sshd {
	char dir[256];
	pid_t pid;
	int port;
	bool ready;
} sshd;

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0
		|| getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return ntohs(a.sin_port);
}

static bool port_open(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static int shell(const char *fmt, const char *dir)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, fmt, dir, dir);
	return system(cmd);
}

/* Returns a reason on failure, NULL when sshd listens. */
static const char *sshd_start(sshd *s)
{
	make_tmpdir(s->dir, sizeof s->dir);
	if (access("/usr/sbin/sshd", X_OK) != 0)
		return "/usr/sbin/sshd is not installed";
	if (shell("ssh-keygen -q -t ed25519 -N '' -f %s/host_key && "
		"ssh-keygen -q -t ed25519 -N '' -f %s/user_key", s->dir) != 0)
		return "ssh-keygen failed";
	shell("cp %s/user_key.pub %s/authorized_keys", s->dir);
	mkdir("/run/sshd", 0755);  /* privilege separation needs it; harmless if it exists */
	s->port = free_port();
	char cfg[512], text[2048];
	snprintf(cfg, sizeof cfg, "%s/sshd_config", s->dir);
	int n = snprintf(text, sizeof text,
		"Port %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\n"
		"AuthorizedKeysFile %s/authorized_keys\nPidFile %s/sshd.pid\nStrictModes no\n"
		"PermitRootLogin yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
		"UsePAM no\nSubsystem sftp internal-sftp\nLogLevel ERROR\n",
		s->port, s->dir, s->dir, s->dir);
	cuco_write_file(cfg, text, (size_t)n, NULL);
	s->pid = fork();
	if (s->pid == 0) {
		char log[512];
		snprintf(log, sizeof log, "%s/sshd.log", s->dir);
		if (!freopen(log, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(126);
		execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", cfg, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300; i++) {
		if (port_open(s->port))
			return NULL;
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = 0;
			return "sshd exited at start (see its log)";
		}
		usleep(10000);
	}
	return "sshd did not listen within 3 s";
}

static void sshd_stop(sshd *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
	}
	rm_rf(s->dir);
}

static int ssh_setup(void **state)
{
	sshd *s = cuco_xcalloc(1, sizeof *s);
	const char *why = sshd_start(s);
	if (why)
		fprintf(stderr, "the ssh runner test will be skipped: %s\n", why);
	s->ready = why == NULL;
	*state = s;
	return 0;
}

/* Runs even when the test fails, so no sshd outlives the test. */
static int ssh_teardown(void **state)
{
	sshd_stop(*state);
	free(*state);
	return 0;
}

static void test_ssh_for_real(void **state)
{
	sshd *s = *state;
	if (!s->ready)
		skip();
	cuco_eval_config cfg = { .runner = CUCO_RUNNER_SSH, .jobs = 1 };
	char dir[256];
	make_tmpdir(dir, sizeof dir);
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", dir);
	struct passwd *pw = getpwuid(getuid());
	snprintf(cfg.ssh_host, sizeof cfg.ssh_host, "%s@127.0.0.1:%d", pw ? pw->pw_name : "root", s->port);
	snprintf(cfg.ssh_options, sizeof cfg.ssh_options, "-i %s/user_key -o StrictHostKeyChecking=no "
		"-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR", s->dir);
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(&cfg, &wl);
	cuco_eval_result res;
	evaluate(ev, wl, "mini/seed.c", &res);
	if (!res.ok)
		fail_msg("%s: %s", res.error_class, res.excerpt);
	assert_int_equal(res.samples, 5);
	evaluate(ev, wl, "broken/wrong.c", &res);
	if (strcmp(res.error_class, "wrong-answer") != 0)
		fail_msg("%s: %s", res.error_class, res.excerpt);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);

	/* A host that does not answer is the environment's failure. */
	snprintf(cfg.ssh_host, sizeof cfg.ssh_host, "127.0.0.1:%d", free_port());
	ev = evaluator(&cfg, &wl);
	evaluate(ev, wl, "mini/seed.c", &res);
	assert_true(res.environment);
	assert_non_null(strstr(res.excerpt, "cuco-ssh: cannot reach the host"));
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_device_cpus),
		cmocka_unit_test(test_hostfile_for_real),
		cmocka_unit_test_setup_teardown(test_ssh_for_real, ssh_setup, ssh_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
