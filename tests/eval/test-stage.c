/* test-stage.c — the stage runner alone: exit codes, wall-clock kills of
 * the whole session, leftovers, a TERM-ignoring child, the allowlisted
 * environment, the output cap, the process guard and rlimits. The
 * commands are argument vectors; these tests give theirs to /bin/sh. */
#include "eval/eval_int.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/keyctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[256], log_path[512];

static int setup(void **state)
{
	(void)state;
	make_tmpdir(dir, sizeof dir);
	snprintf(log_path, sizeof log_path, "%s/stage.log", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(dir);
	return 0;
}

static eval_limits limits(double wall_s)
{
	return (eval_limits){ .wall_s = wall_s, .grace_s = 0.5, .mem_mb = 1024, .fsize_mb = 16,
		.max_procs = 64, .log_cap = 1 << 20 };
}

static void collect(const char *line, size_t len, void *arg)
{
	cuco_buf_append(arg, line, len);
	cuco_buf_puts(arg, "\n");
}

static void run(const char *script, const eval_limits *lim, eval_stage *st, cuco_buf *lines)
{
	cuco_err err = { 0 };
	char *const cmd[] = { "/bin/sh", "-c", (char *)script, NULL };
	assert_int_equal(eval_stage_run(cmd, dir, log_path, lim, collect, lines, st, &err), CUCO_OK);
}

static void test_exit_and_output(void **state)
{
	(void)state;
	eval_limits lim = limits(10);
	eval_stage st;
	cuco_buf lines = { 0 };
	run("echo hello; pwd; echo oops >&2; exit 3", &lim, &st, &lines);
	assert_int_equal(st.exit_code, 3);
	assert_false(st.timed_out);
	char want[512];
	snprintf(want, sizeof want, "hello\n%s\noops\n", dir);
	assert_string_equal(lines.data, want);
	assert_string_equal(st.tail, want);
	cuco_buf_free(&lines);
	run("kill -SEGV $$", &lim, &st, &lines);
	assert_int_equal(st.exit_code, -1);
	assert_int_equal(st.signal, 11);
	cuco_buf_free(&lines);
}

static void test_timeout_kills_session(void **state)
{
	(void)state;
	eval_limits lim = limits(0.5);
	eval_stage st;
	cuco_buf lines = { 0 };
	double t0 = cuco_mono();
	run("sleep 37.101 & sleep 37.102; echo never", &lim, &st, &lines);
	assert_true(st.timed_out);
	assert_true(cuco_mono() - t0 < 3);
	assert_int_equal(eval_session_count(st.session), 0);
	assert_int_equal(count_processes("sleep 37.10"), 0);
	assert_null(lines.data);
}

static void test_term_ignored(void **state)
{
	(void)state;
	eval_limits lim = limits(0.3);
	eval_stage st;
	cuco_buf lines = { 0 };
	run("trap '' TERM; sleep 37.201 & trap '' TERM; wait", &lim, &st, &lines);
	assert_true(st.timed_out);
	assert_int_equal(count_processes("sleep 37.201"), 0);
	cuco_buf_free(&lines);
}

static void test_leftovers_killed(void **state)
{
	(void)state;
	eval_limits lim = limits(10);
	eval_stage st;
	cuco_buf lines = { 0 };
	run("sleep 37.301 & echo started", &lim, &st, &lines);
	assert_int_equal(st.exit_code, 0);
	assert_false(st.timed_out);
	assert_true(st.wall_s < 3);
	assert_int_equal(count_processes("sleep 37.301"), 0);
	assert_int_equal(st.leftovers, 1);  /* counted before it was killed (trust.c refuses it) */
	cuco_buf_free(&lines);
	run("sleep 0.01; echo clean", &lim, &st, &lines);
	assert_int_equal(st.leftovers, 0);
	cuco_buf_free(&lines);
}

/* Without a sandbox or a cgroup: a process that leaves the stage's session
 * (setsid) and its parent (a double fork) is still the stage's — counted
 * when the command ends, and killed — as cuco's user and as the stage
 * user. */
static void test_setsid_double_fork(void **state)
{
	(void)state;
	eval_user u = { .drop = true };
	stage_user_ids(&u.uid, &u.gid);
	for (int as_stage_user = 0; as_stage_user <= (geteuid() == 0); as_stage_user++) {
		eval_limits lim = limits(10);
		lim.user = as_stage_user ? &u : NULL;
		eval_stage st;
		cuco_buf lines = { 0 };
		run("setsid sh -c 'sleep 5.401 & echo left' </dev/null; echo ended", &lim, &st, &lines);
		assert_int_equal(st.exit_code, 0);
		int alive = count_processes("sleep 5.401");
		if (alive)
			fail_msg("%d process(es) in a session of their own outlived the stage%s (leftovers counted: %d)",
				alive, as_stage_user ? " of the stage user" : "", st.leftovers);
		assert_true(st.leftovers >= 1);
		cuco_buf_free(&lines);
		/* The same, deaf to SIGTERM, from a command killed at its deadline. */
		lim.wall_s = 0.5;
		run("setsid sh -c \"trap '' TERM; sleep 5.402 & echo left\" </dev/null; sleep 30", &lim, &st, &lines);
		assert_true(st.timed_out);
		alive = count_processes("sleep 5.402");
		if (alive)
			fail_msg("%d process(es) in a session of their own outlived the stage killed at its deadline",
				alive);
		cuco_buf_free(&lines);
	}
}

static void test_env_scrubbed(void **state)
{
	(void)state;
	assert_true(eval_env_secret("OPENAI_API_KEY"));
	assert_true(eval_env_secret("ANTHROPIC_API_KEY"));
	assert_true(eval_env_secret("GH_TOKEN"));
	assert_true(eval_env_secret("db_password"));
	assert_true(eval_env_secret("GOOGLE_APPLICATION_CREDENTIALS"));
	assert_false(eval_env_secret("PATH"));
	assert_false(eval_env_secret("SSH_AUTH_SOCK"));
	setenv("MY_SERVICE_KEY", "k1", 1);
	setenv("OPENAI_API_KEY", "k2", 1);
	/* Secrets under names no denylist would catch (issue 18: GH_PAT). */
	setenv("GH_PAT", "ghp_planted1", 1);
	setenv("DEPLOY_NOTE", "planted2", 1);
	setenv("OMPI_MCA_btl", "self,vader", 1);
	setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
	setenv("NCCL_DEBUG_TOKEN", "planted3", 1);  /* allowed by prefix, dropped by name */
	setenv("CUCO_HARMLESS", "not passed", 1);
	setenv("TOY_PASSED", "asked for", 1);
	setenv("CUCO_PASS_ENV", "TOY_PASSED,OPENAI_API_KEY", 1);
	setenv("NCCL_NVLS_ENABLE", "1", 1);
	setenv("TMPDIR", "/the/parents/tmp", 1);
	setenv("CUCO_HARNESS", "stale", 1);
	eval_limits lim = limits(10);
	lim.tmpdir = "/the/stages/tmp";
	lim.pass_env = "TOY_PASSED,OPENAI_API_KEY";  /* as the evaluator hands $CUCO_PASS_ENV down */
	const char *extra[] = { "CUCO_HARNESS=1:fresh", NULL };
	lim.env = extra;
	eval_stage st;
	cuco_buf lines = { 0 };
	run("env", &lim, &st, &lines);
	static const char *const dropped[] = { "MY_SERVICE_KEY", "OPENAI_API_KEY", "GH_PAT", "DEPLOY_NOTE",
		"NCCL_DEBUG_TOKEN", "CUCO_HARMLESS", "CUCO_PASS_ENV", "SSH_AUTH_SOCK", "planted" };
	for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++)
		if (strstr(lines.data, dropped[i]))
			fail_msg("%s reached the stage:\n%s", dropped[i], lines.data);
	assert_non_null(strstr(lines.data, "OMPI_MCA_btl=self,vader\n"));
	assert_non_null(strstr(lines.data, "CUDA_VISIBLE_DEVICES=0,1\n"));
	assert_non_null(strstr(lines.data, "TOY_PASSED=asked for\n"));
	assert_non_null(strstr(lines.data, "TMPDIR=/the/stages/tmp\n"));
	assert_null(strstr(lines.data, "/the/parents/tmp"));
	char path[4200];
	snprintf(path, sizeof path, "PATH=%s\n", getenv("PATH"));
	assert_non_null(strstr(lines.data, path));
	/* NVLink multicast stays off for every stage, whatever was set. */
	assert_non_null(strstr(lines.data, "NCCL_NVLS_ENABLE=0\n"));
	assert_null(strstr(lines.data, "NCCL_NVLS_ENABLE=1"));
	/* The stage's own entries replace inherited ones of the same name. */
	assert_non_null(strstr(lines.data, "CUCO_HARNESS=1:fresh\n"));
	assert_null(strstr(lines.data, "stale"));
	cuco_buf_free(&lines);
	/* The ssh runner's stage, and only it, gets the agent's socket. */
	setenv("SSH_AUTH_SOCK", "/tmp/agent.sock", 1);
	run("env", &lim, &st, &lines);
	assert_null(strstr(lines.data, "SSH_AUTH_SOCK"));
	cuco_buf_free(&lines);
	lim.ssh_agent = true;
	run("env", &lim, &st, &lines);
	assert_non_null(strstr(lines.data, "SSH_AUTH_SOCK=/tmp/agent.sock\n"));
	assert_null(strstr(lines.data, "single_copy"));
	cuco_buf_free(&lines);
	/* Under the filter (no process_vm_readv) Open MPI copies large
	 * messages through shared memory, whatever the user set. */
	setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "cma", 1);
	eval_filter none = { .len = 0 };
	lim.filter = &none;
	run("env", &lim, &st, &lines);
	assert_non_null(strstr(lines.data, "OMPI_MCA_btl_vader_single_copy_mechanism=none\n"));
	assert_non_null(strstr(lines.data, "OMPI_MCA_smsc=^cma\n"));
	assert_null(strstr(lines.data, "=cma\n"));
	cuco_buf_free(&lines);
	unsetenv("OMPI_MCA_btl_vader_single_copy_mechanism");
	static const char *const planted[] = { "MY_SERVICE_KEY", "OPENAI_API_KEY", "GH_PAT",
		"DEPLOY_NOTE", "OMPI_MCA_btl", "CUDA_VISIBLE_DEVICES", "NCCL_DEBUG_TOKEN", "CUCO_HARMLESS",
		"TOY_PASSED", "CUCO_PASS_ENV", "NCCL_NVLS_ENABLE", "TMPDIR", "SSH_AUTH_SOCK",
		"CUCO_HARNESS" };
	for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++)
		unsetenv(planted[i]);
}

/* No shell between cuco and the command: a word with shell syntax in it
 * reaches the program as it is. */
static void test_no_shell(void **state)
{
	(void)state;
	eval_limits lim = limits(10);
	eval_stage st;
	cuco_buf lines = { 0 };
	cuco_err err = { 0 };
	char *const cmd[] = { "printf", "[%s]\\n", "s;exit 7;", "$(id)", "a b", "`x`|>y", NULL };
	assert_int_equal(eval_stage_run(cmd, dir, log_path, &lim, collect, &lines, &st, &err), CUCO_OK);
	assert_int_equal(st.exit_code, 0);
	assert_string_equal(lines.data, "[s;exit 7;]\n[$(id)]\n[a b]\n[`x`|>y]\n");
	cuco_buf_free(&lines);
	char path[600];
	snprintf(path, sizeof path, "%s/y", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	/* A program that does not exist: exit status 127, as a shell says. */
	char *const missing[] = { "cuco-no-such-program", NULL };
	assert_int_equal(eval_stage_run(missing, dir, log_path, &lim, collect, &lines, &st, &err), CUCO_OK);
	assert_int_equal(st.exit_code, 127);
	cuco_buf_free(&lines);
}

static void test_output_capped(void **state)
{
	(void)state;
	eval_limits lim = limits(20);
	lim.log_cap = 1000;
	eval_stage st;
	cuco_buf lines = { 0 };
	run("head -c 3000000 /dev/zero | tr '\\0' x; echo; echo last line", &lim, &st, &lines);
	assert_int_equal(st.exit_code, 0);
	assert_true(st.out_bytes > 3000000);
	struct stat sb;
	assert_int_equal(stat(log_path, &sb), 0);
	assert_true(sb.st_size >= 1000 && sb.st_size < 1200);
	size_t n = strlen(st.tail);
	assert_int_equal(n, sizeof st.tail - 1);
	assert_string_equal(st.tail + n - 10, "last line\n");
	assert_non_null(strstr(lines.data, "\nlast line\n"));
	cuco_buf_free(&lines);
}

/* Past out_cap bytes of output the stage is ended, not waited for: a
 * binutils that writes without end about a hostile object. */
static void test_output_ended(void **state)
{
	(void)state;
	eval_limits lim = limits(20);
	lim.out_cap = 1 << 20;
	eval_stage st;
	cuco_buf lines = { 0 };
	double t0 = cuco_mono();
	run("yes flood", &lim, &st, &lines);
	assert_true(st.too_much_output);
	assert_false(st.timed_out);
	assert_true(st.out_bytes > (size_t)1 << 20);
	assert_true(cuco_mono() - t0 < 10);
	cuco_buf_free(&lines);
	lim.out_cap = 1000;
	run("echo short", &lim, &st, &lines);
	assert_false(st.too_much_output);
	assert_int_equal(st.exit_code, 0);
	cuco_buf_free(&lines);
}

static void test_fork_loop(void **state)
{
	(void)state;
	eval_limits lim = limits(20);
	lim.max_procs = 20;
	eval_stage st;
	cuco_buf lines = { 0 };
	double t0 = cuco_mono();
	run("while :; do sleep 37.401 & done", &lim, &st, &lines);
	assert_true(st.too_many_procs);
	assert_false(st.timed_out);
	assert_true(cuco_mono() - t0 < 5);
	assert_int_equal(count_processes("sleep 37.401"), 0);
	cuco_buf_free(&lines);
}

static void test_rlimits(void **state)
{
	(void)state;
	eval_limits lim = limits(10);
	lim.fsize_mb = 5;
	eval_stage st;
	cuco_buf lines = { 0 };
	run("ulimit -c; ulimit -f; ulimit -v", &lim, &st, &lines);
	/* dash reports -f in 512-byte blocks and -v in KiB. */
	assert_string_equal(lines.data, "0\n10240\n1048576\n");
	cuco_buf_free(&lines);
	run("head -c 6000000 /dev/zero > big", &lim, &st, &lines);
	assert_int_not_equal(st.exit_code, 0);
	cuco_buf_free(&lines);
}

/* The system-call filter: no Unix socket; and without it the same program
 * reaches a listener of the host's. */
static void test_unix_filter(void **state)
{
	(void)state;
	if (!eval_filter_available()) {
		print_message("no seccomp filter for this architecture\n");
		return;
	}
	char sock[600], script[1600];
	snprintf(sock, sizeof sock, "%s/host.sock", dir);
	snprintf(script, sizeof script,
		"import socket\n"
		"for kind, name in ((socket.SOCK_STREAM, 'stream'), (socket.SOCK_DGRAM, 'dgram')):\n"
		"    try:\n"
		"        s = socket.socket(socket.AF_UNIX, kind)\n"
		"        print(name, 'made')\n"
		"        if kind == socket.SOCK_STREAM:\n"
		"            s.connect('%s'); print('connected')\n"
		"    except OSError as e:\n"
		"        print(name, 'refused', e.errno)\n"
		"print('tcp', socket.socket(socket.AF_INET, socket.SOCK_STREAM) is not None)\n", sock);
	/* A listener that never accepts: the connection waits in its backlog. */
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	assert_true(strlen(sock) < sizeof a.sun_path);
	memcpy(a.sun_path, sock, strlen(sock) + 1);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(lfd, 8), 0);
	char *const cmd[] = { "python3", "-c", script, NULL };
	eval_filter plain;
	eval_filter_build(&plain, false);
	const struct { const eval_filter *f; const char *want; } cases[] = {
		{ &plain, "stream refused 13\ndgram refused 13\ntcp True\n" },
		{ NULL, "stream made\nconnected\ndgram made\ntcp True\n" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		eval_limits lim = limits(20);
		lim.filter = cases[i].f;
		eval_stage st;
		cuco_buf lines = { 0 };
		cuco_err err = { 0 };
		assert_int_equal(eval_stage_run(cmd, dir, log_path, &lim, collect, &lines, &st, &err), CUCO_OK);
		assert_string_equal(lines.data, cases[i].want);
		cuco_buf_free(&lines);
	}
	close(lfd);
}

/* A stage under the filter has a session keyring of its own, even where
 * the filter itself is empty (an architecture it does not know): nothing
 * the host's session keeps there. Without, the stage has cuco's. */
static void test_session_keyring(void **state)
{
	(void)state;
	long own = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1);
	if (own < 0) {
		print_message("no keyrings here: not tested\n");
		return;
	}
	char *const cmd[] = { "python3", "-c", "import ctypes\n"
		"print(ctypes.CDLL(None).syscall(250, 0, -3, 1))\n", NULL };  /* KEYCTL_GET_KEYRING_ID, @s */
	eval_filter empty = { .len = 0 };
	const eval_filter *filters[] = { &empty, NULL };
	long ids[2];
	for (int i = 0; i < 2; i++) {
		eval_limits lim = limits(20);
		lim.filter = filters[i];
		eval_stage st;
		cuco_buf lines = { 0 };
		cuco_err err = { 0 };
		assert_int_equal(eval_stage_run(cmd, dir, log_path, &lim, collect, &lines, &st, &err), CUCO_OK);
		ids[i] = lines.data ? atol(lines.data) : -1;
		cuco_buf_free(&lines);
	}
	assert_true(ids[0] > 0);
	assert_true(ids[0] != own);
	assert_int_equal(ids[1], own);
}

/* A build's output is the stage user's while the build writes it. A
 * process of that user that opened it then (another candidate's stage,
 * running meanwhile without the sandbox) keeps its descriptor when cuco
 * takes the file: what enters the cache, or is checked, must be a file
 * of cuco's that no such descriptor reaches. */
static void test_cache_add_cuts_descriptors(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* no stage user */
	char work[300], built[320], cache[300], path[400];
	snprintf(work, sizeof work, "%s/work", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	snprintf(built, sizeof built, "%s/prog", work);
	snprintf(path, sizeof path, "%s/0123456789abcdef0123456789abcdef", cache);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(mkdir(work, 0711), 0);
	assert_int_equal(mkdir(cache, 0755), 0);
	cuco_err err = { 0 };
	assert_int_equal(cuco_write_file(built, "#!/bin/sh\necho honest\n", 23, &err), CUCO_OK);
	assert_int_equal(chmod(built, 0755), 0);
	uid_t uid;
	gid_t gid;
	stage_user_ids(&uid, &gid);
	assert_int_equal(chown(built, uid, gid), 0);
	int opened[2], go[2];
	assert_int_equal(pipe(opened), 0);
	assert_int_equal(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		become_stage_user();
		int fd = open(built, O_WRONLY);
		char c;
		if (fd < 0 || write(opened[1], "", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(pwrite(fd, "#!/bin/sh\necho forged\n", 23, 0) == 23 ? 1 : 0);
	}
	char c;
	assert_int_equal(read(opened[0], &c, 1), 1);
	eval_cache cc;
	eval_cache_open(&cc, cache, 0, 0);
	char why[200];
	int fd = -1;
	assert_int_equal(eval_cache_add(&cc, built, path, &fd, why, sizeof why, &err), CUCO_OK);
	assert_int_equal(write(go[1], "", 1), 1);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
	char *text = NULL;
	size_t len;
	assert_int_equal(cuco_read_file(path, 4096, &text, &len, &err), CUCO_OK);
	assert_lacks(text, "forged");
	free(text);
	eval_cache_release(path, fd, false);
	for (int i = 0; i < 2; i++) {
		close(opened[i]);
		close(go[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exit_and_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_kills_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_term_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftovers_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setsid_double_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_scrubbed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_shell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_ended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rlimits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_keyring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_add_cuts_descriptors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
