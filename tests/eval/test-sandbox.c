/* test-sandbox.c — candidates are untrusted. A hostile candidate (fixtures/
 * hostile/hostile.c, on the solo workload) tries to read an API key from
 * the environment and from a file in $HOME, to read the run's store, to
 * write outside its folder, to reach a TCP listener on 127.0.0.1, to sleep
 * past its limit and to outlive the evaluating process killed by SIGKILL;
 * another source includes the key file, to have the compiler show it.
 *
 * Each check runs inside bwrap and with limits only (the fallback). What
 * only the sandbox gives is asserted the other way round for the fallback,
 * so the test shows the difference instead of assuming it: without bwrap
 * the key in /proc/PID/environ, the key file, the store and the network
 * are reachable and the writes land. The environment scrub, the time limit and the keeper (no stage
 * outlives cuco) hold in both. Without a working bwrap the fallback's
 * tests still run, then the program exits 77 (skipped) saying why. */
#include "env.h"
#include "eval/eval.h"
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/keyctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define ENV_KEY "sk-env-4f1d2c"
#define HOME_KEY "sk-home-9a7e31"
#define STORE_TEXT "store-only-7c2b"

static char run_dir[256], home[256], key_file[512], store_file[512];

/* Outside /tmp, which the sandbox replaces anyway: hiding the home and
 * the run directory must be what keeps them out. */
static void make_dir(char *out, size_t size, const char *what)
{
	snprintf(out, size, "/var/tmp/cuco-test-%s-XXXXXX", what);
	if (!mkdtemp(out))
		abort();
}

static int setup(void **state)
{
	(void)state;
	make_dir(run_dir, sizeof run_dir, "run");
	make_dir(home, sizeof home, "home");
	snprintf(key_file, sizeof key_file, "%s/api-key", home);
	snprintf(store_file, sizeof store_file, "%s/data.mdb", run_dir);
	cuco_write_file(key_file, HOME_KEY "\n", strlen(HOME_KEY) + 1, NULL);
	cuco_write_file(store_file, STORE_TEXT "\n", strlen(STORE_TEXT) + 1, NULL);
	setenv("HOME", home, 1);
	setenv("OPENAI_API_KEY", ENV_KEY, 1);
	/* What the hostile candidate is told to try; stages get only what is
	 * asked for (and never OPENAI_API_KEY, asked for or not). */
	setenv("CUCO_PASS_ENV", "HOSTILE_MODE HOSTILE_READ HOSTILE_WRITE HOSTILE_PORT HOSTILE_UNIX "
		"HOSTILE_COUNT HOSTILE_MB HOSTILE_RING HOSTILE_PLANT OPENAI_API_KEY", 1);
	unsetenv("HOSTILE_UNIX");
	unsetenv("CUCO_CGROUPS");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("CUCO_SANDBOX");
	unsetenv("CUCO_BWRAP");
	cuco_env_reread();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(count_processes(run_dir), 0);
	rm_rf(run_dir);
	rm_rf(home);
	return 0;
}

/* The limits of the hostile tests: small, so that a limit that does not
 * hold cannot hurt the shared machine either. */
static cuco_eval_config small_limits(cuco_sandbox_mode mode, double limit_scale)
{
	cuco_eval_config cfg = { .jobs = 1, .max_procs = 64, .sandbox = mode, .limit_scale = limit_scale,
		.mem_limit_mb = 192, .disk_limit_mb = 16 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	return cfg;
}

/* The solo workload's evaluator; with seed (a fixture), that program is
 * the workload's own seed, whose lines the source scan (trust.c, a
 * defence other than the sandbox) takes as they are. */
static cuco_evaluator *evaluator(cuco_sandbox_mode mode, double limit_scale, const char *seed,
	cuco_workload **wl)
{
	cuco_err err = { 0 };
	if (cuco_workload_load(fixture("solo"), wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	if (seed)
		snprintf((*wl)->seed_file, sizeof (*wl)->seed_file, "../%s", seed);
	cuco_eval_config cfg = small_limits(mode, limit_scale);
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(*wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return ev;
}

/* A hostile program (a fixture under hostile/) as the solo workload's
 * candidate, and its seed: the probes are the test's frame. */
static void evaluate_program(cuco_sandbox_mode mode, const char *program, double limit_scale,
	cuco_eval_result *res)
{
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(mode, limit_scale, program, &wl);
	size_t len;
	char *src = read_fixture(program, &len);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_err err = { 0 };
	if (cuco_eval_candidate(ev, src, len, &d, false, res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	free(src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void evaluate_hostile(cuco_sandbox_mode mode, double limit_scale, cuco_eval_result *res)
{
	evaluate_program(mode, "hostile/hostile.c", limit_scale, res);
}

/* A listener on 127.0.0.1 that never accepts: a connection would wait in
 * its backlog, where accept() finds it afterwards. */
static int listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof a;
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static bool has(const char *excerpt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool has(const char *excerpt, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return strstr(excerpt, line) != NULL;
}

/* Run the escape attempts; returns how many of the five escapes (the key
 * in another process's environment, the key file, the store, writes,
 * network) got through, checking each both from the candidate's output and,
 * where it can be, from the host's side. */
static int escapes(cuco_sandbox_mode mode)
{
	int port, lfd = listener(&port);
	char host_tmp[64], in_home[512], in_run[512], in_cache[512], writes[2048], reads[1100], p[16];
	snprintf(host_tmp, sizeof host_tmp, "/tmp/cuco-hostile-%d", (int)getpid());
	snprintf(in_home, sizeof in_home, "%s/.bashrc", home);
	snprintf(in_run, sizeof in_run, "%s/planted", run_dir);
	snprintf(in_cache, sizeof in_cache, "%s/cache/planted", run_dir);
	snprintf(writes, sizeof writes, "%s:%s:%s:%s", host_tmp, in_home, in_run, in_cache);
	snprintf(reads, sizeof reads, "%s:%s", key_file, store_file);
	snprintf(p, sizeof p, "%d", port);
	unlink(host_tmp);  /* a failed test before may have left it */
	setenv("HOSTILE_MODE", "escape", 1);
	setenv("HOSTILE_READ", reads, 1);
	setenv("HOSTILE_WRITE", writes, 1);
	setenv("HOSTILE_PORT", p, 1);
	cuco_eval_result res;
	evaluate_hostile(mode, 1, &res);
	/* It ran to its end and failed on purpose: its output is the excerpt. */
	if (strcmp(res.failure.error_class, "crash") != 0 || !has(res.failure.excerpt, "connect %d: ", port))
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	/* The stage's own environment is scrubbed with or without the sandbox. */
	assert_true(has(res.failure.excerpt, "env OPENAI_API_KEY: refused"));

	int got = 0;
	bool environ_key = has(res.failure.excerpt, "proc OPENAI_API_KEY: %s", ENV_KEY);
	assert_true(environ_key || has(res.failure.excerpt, "proc OPENAI_API_KEY: refused"));
	got += environ_key;
	bool key = has(res.failure.excerpt, "read %s: %s", key_file, HOME_KEY);
	assert_true(key || has(res.failure.excerpt, "read %s: refused", key_file));
	bool store = has(res.failure.excerpt, "read %s: %s", store_file, STORE_TEXT);
	assert_true(store || has(res.failure.excerpt, "read %s: refused", store_file));
	got += key + store;
	/* A write inside the sandbox may succeed on its private /tmp: what
	 * counts is whether the file reached the host. */
	int landed = 0;
	const char *targets[] = { host_tmp, in_home, in_run, in_cache };
	for (size_t i = 0; i < 4; i++)
		landed += access(targets[i], F_OK) == 0;
	assert_true(landed == 0 || landed == 4);
	got += landed == 4;
	unlink(host_tmp);
	bool connected = has(res.failure.excerpt, "connect %d: connected", port);
	int peer = accept(lfd, NULL, NULL);
	assert_int_equal(connected, peer >= 0);
	got += connected;
	if (peer >= 0)
		close(peer);
	close(lfd);
	return got;
}

static void test_escapes_sandboxed(void **state)
{
	(void)state;
	assert_int_equal(escapes(CUCO_SANDBOX_BWRAP), 0);
}

static void test_escapes_fallback(void **state)
{
	(void)state;
	/* Limits only: cuco's own environment in /proc, the key file, the
	 * store, the writes and the network are all within reach. This is
	 * what the sandbox is for. */
	assert_int_equal(escapes(CUCO_SANDBOX_OFF), 5);
}

static void put(const char *dir, const char *name, const char *text, size_t len)
{
	char path[800];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(cuco_mkdir_p(dir, NULL), CUCO_OK);
	assert_int_equal(cuco_write_file(path, text, len, NULL), CUCO_OK);
}

/* The compile stage is the candidate's too: a source that includes the
 * key file would show it in the compiler's complaint. Returns whether the
 * key reached the result. The source is the solo workload's own seed, in
 * a copy of it: the source scan (trust.c, a defence other than the
 * sandbox) refuses a candidate's #include of a file the workload's own
 * code does not include. */
static bool key_in_compile_error(cuco_sandbox_mode mode)
{
	char dir[300], src[700];
	snprintf(dir, sizeof dir, "%s/keyed/solo", run_dir);
	size_t solo_len;
	char *solo = read_fixture("solo/workload.json", &solo_len);
	cuco_buf manifest = { 0 };
	const char *seed_at = strstr(solo, "\"seed\": \"solo.c\"");
	assert_non_null(seed_at);
	cuco_buf_append(&manifest, solo, (size_t)(seed_at - solo));
	cuco_buf_printf(&manifest, "\"seed\": \"keyed.c\"%s", seed_at + strlen("\"seed\": \"solo.c\""));
	put(dir, "workload.json", manifest.data, manifest.len);
	cuco_buf_free(&manifest);
	free(solo);
	solo = read_fixture("solo/solo.c", &solo_len);
	put(dir, "solo.c", solo, solo_len);
	free(solo);
	int len = snprintf(src, sizeof src, "#include \"%s\"\nint main(void) { return 0; }\n", key_file);
	put(dir, "keyed.c", src, (size_t)len);
	cuco_workload *wl;
	cuco_err load_err = { 0 };
	if (cuco_workload_load(dir, &wl, &load_err) != CUCO_OK)
		fail_msg("%s", load_err.msg);
	cuco_eval_config cfg = small_limits(mode, 1);
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(wl, &cfg, &ev, &load_err) != CUCO_OK)
		fail_msg("%s", load_err.msg);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_eval_result res;
	cuco_err err = { 0 };
	assert_int_equal(cuco_eval_candidate(ev, src, (size_t)len, &d, false, &res, &err), CUCO_OK);
	if (strcmp(res.failure.error_class, "compile-error") != 0)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	return strstr(res.failure.excerpt, HOME_KEY) != NULL;
}

static void test_compile_sandboxed(void **state)
{
	(void)state;
	assert_false(key_in_compile_error(CUCO_SANDBOX_BWRAP));
}

static void test_compile_fallback(void **state)
{
	(void)state;
	assert_true(key_in_compile_error(CUCO_SANDBOX_OFF));
}

/* A workload kept under $HOME, with a header in a sibling folder as the
 * shipped ones have (../common): it still builds in the sandbox, and the
 * rest of the home stays out of reach. */
static const char homed_manifest[] =
	"{\"name\": \"homed\", \"title\": \"solo, kept in the home\", \"description\": \"-\",\n"
	" \"family\": \"cpu-mpi\", \"ranks\": 1, \"sizes\": {\"default\": \"one\", \"one\": {\"N\": 1}},\n"
	" \"files\": {\"baseline\": \"solo.c\", \"seed\": \"hostile.c\"}, \"compiler\": \"cc\",\n"
	" \"build\": \"{compiler} -I{workload}/../common -o {output} {source} {defines}\",\n"
	" \"run\": \"{output} {reps}\",\n"
	" \"design_space\": {\"backend\": {\"values\": [\"none\"]}, \"issuer\": {\"values\": [\"one\"]},\n"
	"   \"placement\": {\"values\": [\"after\"]}, \"sync\": {\"values\": [\"none\"]},\n"
	"   \"granularity\": {\"values\": [1]}},\n"
	" \"tolerance\": 0, \"limits\": {\"compile_s\": 30, \"run_s\": 3, \"bench_s\": 3},\n"
	" \"bench\": {\"warmup\": 0, \"reps\": 1, \"max_spread\": 1000}}\n";

static void test_workload_in_home_sandboxed(void **state)
{
	(void)state;
	char shelf[600], dir[700];
	snprintf(shelf, sizeof shelf, "%s/workloads", home);
	snprintf(dir, sizeof dir, "%s/common", shelf);
	put(dir, "extra.h", "#include <stdio.h>\n", 19);
	snprintf(dir, sizeof dir, "%s/homed", shelf);
	put(dir, "workload.json", homed_manifest, strlen(homed_manifest));
	size_t len;
	char *solo = read_fixture("solo/solo.c", &len);
	put(dir, "solo.c", solo, len);
	free(solo);
	/* The seed is the candidate, its frame whole (the source scan trusts
	 * nothing less): the sandbox is what this test is about. */
	char *hostile = read_fixture("hostile/hostile.c", &len);
	cuco_buf src = { 0 };
	cuco_buf_puts(&src, "#include \"extra.h\"\n");
	cuco_buf_append(&src, hostile, len);
	free(hostile);
	put(dir, "hostile.c", src.data, src.len);

	cuco_workload *wl;
	cuco_err err = { 0 };
	if (cuco_workload_load(dir, &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_eval_config cfg = { .jobs = 1, .sandbox = CUCO_SANDBOX_BWRAP };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_OK);
	setenv("HOSTILE_MODE", "escape", 1);
	setenv("HOSTILE_READ", key_file, 1);
	unsetenv("HOSTILE_WRITE");
	unsetenv("HOSTILE_PORT");
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_eval_result res;
	assert_int_equal(cuco_eval_candidate(ev, src.data, src.len, &d, false, &res, &err), CUCO_OK);
	if (strcmp(res.failure.error_class, "crash") != 0
		|| !has(res.failure.excerpt, "read %s: refused", key_file))
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	cuco_buf_free(&src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* Sleeps past the limit: a timeout, with nothing left running. */
static void sleeps_past_limit(cuco_sandbox_mode mode, const char *how)
{
	setenv("HOSTILE_MODE", how, 1);
	cuco_eval_result res;
	double t0 = cuco_mono();
	evaluate_hostile(mode, 1, &res);
	if (strcmp(res.failure.error_class, "timeout") != 0 || strcmp(res.failure.stage, "run") != 0)
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	assert_true(cuco_mono() - t0 < 10);
	assert_int_equal(count_processes(run_dir), 0);
}

static void test_timeout_sandboxed(void **state)
{
	(void)state;
	sleeps_past_limit(CUCO_SANDBOX_BWRAP, "sleep");
	/* A child that leaves the stage's session dies with the sandbox's
	 * PID namespace; with limits only it would escape (stage.c). */
	sleeps_past_limit(CUCO_SANDBOX_BWRAP, "setsid");
}

static void test_timeout_fallback(void **state)
{
	(void)state;
	sleeps_past_limit(CUCO_SANDBOX_OFF, "sleep");
}

static int work_entries(void)
{
	char path[512];
	snprintf(path, sizeof path, "%s/work", run_dir);
	DIR *d = opendir(path);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

/* SIGKILL the evaluating process while the stage sleeps: the stage's
 * keeper kills it within moments (the limit is 30 s away), and resuming
 * on the run directory removes the dead evaluation's folder. */
static void evaluator_killed(cuco_sandbox_mode mode)
{
	setenv("HOSTILE_MODE", "sleep", 1);
	char cache[512];
	snprintf(cache, sizeof cache, "%s/cache/", run_dir);
	pid_t child = fork();
	if (child == 0) {
		cuco_eval_result res;
		evaluate_hostile(mode, 10, &res);
		_exit(0);
	}
	assert_true(child > 0);
	double t0 = cuco_mono();
	while (count_processes(cache) == 0 && cuco_mono() - t0 < 30)
		usleep(20000);
	assert_true(count_processes(cache) > 0);
	usleep(200000);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	double killed = cuco_mono();
	while (count_processes(run_dir) > 0 && cuco_mono() - killed < 5)
		usleep(20000);
	assert_int_equal(count_processes(run_dir), 0);
	print_message("the stage was gone %.2f s after the evaluator's SIGKILL\n", cuco_mono() - killed);
	assert_true(cuco_mono() - killed < 3);
	assert_int_equal(work_entries(), 1);
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(mode, 1, NULL, &wl);
	assert_int_equal(work_entries(), 0);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

static void test_evaluator_killed_sandboxed(void **state)
{
	(void)state;
	evaluator_killed(CUCO_SANDBOX_BWRAP);
}

static void test_evaluator_killed_fallback(void **state)
{
	(void)state;
	evaluator_killed(CUCO_SANDBOX_OFF);
}

/* ---- Unix sockets of the host ------------------------------------------------ */

#define NSOCKETS 3

/* A listener at path of the given type that never accepts or reads: a
 * connection would wait in its backlog, a datagram in its queue, where the
 * host's side finds them afterwards. */
static int unix_listener(const char *path, int type)
{
	int fd = socket(AF_UNIX, type | SOCK_NONBLOCK, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	assert_true(strlen(path) < sizeof a.sun_path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	assert_true(fd >= 0);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || (type == SOCK_STREAM && listen(fd, 8) != 0))
		fail_msg("listen on %s: %s", path, strerror(errno));
	return fd;
}

/* Whether anything reached the listener, from the host's side. */
static bool reached(int fd, int type)
{
	char byte;
	if (type == SOCK_DGRAM)
		return recv(fd, &byte, 1, MSG_DONTWAIT) >= 0;
	int peer = accept(fd, NULL, NULL);
	if (peer >= 0)
		close(peer);
	return peer >= 0;
}

/* One way of reaching a Unix socket: the program, its HOSTILE_MODE, the
 * listeners' type, and the word its lines start with. */
typedef struct unix_route {
	const char *program, *how;
	int type;
	const char *word;
} unix_route;

/* Listeners where host services keep theirs (/run, /var/tmp) and in a
 * folder the sandbox shows read-only (CUCO_CUDA_HOME): the candidate
 * reaches none, in either mode (the filter refuses its Unix socket by
 * every route; in the sandbox the first two are not even there). */
static void unix_sockets(cuco_sandbox_mode mode, const unix_route *r)
{
	char dirs[NSOCKETS][300], paths[NSOCKETS][1000], list[3100] = "";
	snprintf(dirs[0], sizeof dirs[0], access("/run", W_OK) == 0 ? "/run/cuco-test-XXXXXX"
		: "/var/tmp/cuco-test-run-XXXXXX");
	snprintf(dirs[1], sizeof dirs[1], "/var/tmp/cuco-test-sock-XXXXXX");
	snprintf(dirs[2], sizeof dirs[2], "/var/tmp/cuco-test-cuda-XXXXXX");  /* not under the hidden run */
	int fds[NSOCKETS];
	for (int i = 0; i < NSOCKETS; i++) {
		assert_non_null(mkdtemp(dirs[i]));
		chmod(dirs[i], 0755);  /* not what keeps it out: the uid may pass */
		snprintf(paths[i], sizeof paths[i], "%s/s", dirs[i]);
		fds[i] = unix_listener(paths[i], r->type);
		chmod(paths[i], 0777);
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ":" : "", paths[i]);
	}
	setenv("CUCO_CUDA_HOME", dirs[2], 1);  /* a folder the sandbox shows */
	setenv("HOSTILE_MODE", r->how, 1);
	setenv("HOSTILE_UNIX", list, 1);
	unsetenv("HOSTILE_READ");
	unsetenv("HOSTILE_WRITE");
	unsetenv("HOSTILE_PORT");
	cuco_env_reread();
	cuco_eval_result res;
	evaluate_program(mode, r->program, 1, &res);
	unsetenv("HOSTILE_UNIX");
	unsetenv("CUCO_CUDA_HOME");
	cuco_env_reread();
	int got = 0;
	for (int i = 0; i < NSOCKETS; i++) {
		bool came = reached(fds[i], r->type);
		print_message("%s %s: %s\n", r->word, paths[i], came ? "REACHED" : "refused");
		if (!came && !has(res.failure.excerpt, "%s %s: refused", r->word, paths[i]))
			fail_msg("%s: %s", paths[i], res.failure.excerpt);
		got += came;
		close(fds[i]);
		unlink(paths[i]);
		rmdir(dirs[i]);
	}
	assert_int_equal(got, 0);
}

static const unix_route by_socket = { "hostile/hostile.c", "escape", SOCK_STREAM, "unix" };
/* io_uring's IORING_OP_SOCKET makes the socket without socket(). */
static const unix_route by_uring = { "hostile/kernel.c", "uring", SOCK_STREAM, "uring" };
/* A datagram socketpair, connected to a path after it was made. */
static const unix_route by_socketpair = { "hostile/kernel.c", "dgram", SOCK_DGRAM, "dgram" };

static void test_unix_sockets_sandboxed(void **state)
{
	(void)state;
	unix_sockets(CUCO_SANDBOX_BWRAP, &by_socket);
	unix_sockets(CUCO_SANDBOX_BWRAP, &by_uring);
	unix_sockets(CUCO_SANDBOX_BWRAP, &by_socketpair);
}

static void test_unix_sockets_fallback(void **state)
{
	(void)state;
	unix_sockets(CUCO_SANDBOX_OFF, &by_socket);
	unix_sockets(CUCO_SANDBOX_OFF, &by_uring);
	unix_sockets(CUCO_SANDBOX_OFF, &by_socketpair);
}

/* ---- the kernel's other doors: keyrings, ptrace, process_vm ------------------------ */

#define RING_TEXT "ring-secret-81c2"

/* A key of the test's own in its session and user keyrings, as a host
 * user's login would hold one: no stage reads it, and what a stage plants
 * reaches neither the host's keyrings nor the next stage. */
static void keyrings(cuco_sandbox_mode mode)
{
	char ring[64], plant[64];
	snprintf(ring, sizeof ring, "cuco-test-ring-%d", (int)getpid());
	snprintf(plant, sizeof plant, "cuco-test-plant-%d", (int)getpid());
	long ids[2] = {
		syscall(SYS_add_key, "user", ring, RING_TEXT, strlen(RING_TEXT), KEY_SPEC_SESSION_KEYRING),
		syscall(SYS_add_key, "user", ring, RING_TEXT, strlen(RING_TEXT), KEY_SPEC_USER_KEYRING),
	};
	if (ids[0] < 0 || ids[1] < 0) {
		print_message("no keyrings here (%s): not tested\n", strerror(errno));
		return;
	}
	setenv("HOSTILE_MODE", "keys", 1);
	setenv("HOSTILE_RING", ring, 1);
	setenv("HOSTILE_PLANT", plant, 1);
	cuco_eval_result res;
	evaluate_program(mode, "hostile/kernel.c", 1, &res);
	print_message("%s\n", res.failure.excerpt);
	/* The next stage looks for what this one planted. */
	setenv("HOSTILE_RING", plant, 1);
	unsetenv("HOSTILE_PLANT");
	cuco_eval_result next;
	evaluate_program(mode, "hostile/kernel.c", 1, &next);
	print_message("%s\n", next.failure.excerpt);
	unsetenv("HOSTILE_RING");
	long planted = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", plant, 0);
	if (planted < 0)
		planted = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", plant, 0);
	for (int i = 0; i < 2; i++)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, ids[i]);
	if (planted >= 0)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, planted);
	assert_lacks(res.failure.excerpt, RING_TEXT);
	assert_has(res.failure.excerpt, "key @s cuco-test-ring-");
	assert_has(res.failure.excerpt, "key @u cuco-test-ring-");
	assert_lacks(res.failure.excerpt, ": done");
	assert_lacks(next.failure.excerpt, "planted-by-a-stage");
	assert_has(next.failure.excerpt, "key @s cuco-test-plant-");
	assert_true(planted < 0);
}

static void test_keyrings_sandboxed(void **state)
{
	(void)state;
	keyrings(CUCO_SANDBOX_BWRAP);
}

static void test_keyrings_fallback(void **state)
{
	(void)state;
	keyrings(CUCO_SANDBOX_OFF);
}

/* ptrace and process_vm_readv/writev on a child of its own: refused. */
static void tracing(cuco_sandbox_mode mode)
{
	setenv("HOSTILE_MODE", "trace", 1);
	cuco_eval_result res;
	evaluate_program(mode, "hostile/kernel.c", 1, &res);
	print_message("%s\n", res.failure.excerpt);
	assert_has(res.failure.excerpt, "ptrace: ");
	assert_lacks(res.failure.excerpt, "process_vm_readv: marker-5e1f0c");
	assert_lacks(res.failure.excerpt, "process_vm_writev: written");
	assert_lacks(res.failure.excerpt, "ptrace: attached");
}

/* A user namespace of the stage's own, by any of the three calls: refused
 * (every capability in it would be the kernel's namespace-root code to
 * reach: mounts, netfilter, as unprivileged exploits have). */
static void user_namespaces(cuco_sandbox_mode mode)
{
	setenv("HOSTILE_MODE", "userns", 1);
	cuco_eval_result res;
	evaluate_program(mode, "hostile/kernel.c", 1, &res);
	print_message("%s\n", res.failure.excerpt);
	assert_has(res.failure.excerpt, "userns unshare: ");
	assert_lacks(res.failure.excerpt, ": made");
}

static void test_userns_sandboxed(void **state)
{
	(void)state;
	user_namespaces(CUCO_SANDBOX_BWRAP);
}

static void test_userns_fallback(void **state)
{
	(void)state;
	user_namespaces(CUCO_SANDBOX_OFF);
}

static void test_tracing_sandboxed(void **state)
{
	(void)state;
	tracing(CUCO_SANDBOX_BWRAP);
}

static void test_tracing_fallback(void **state)
{
	(void)state;
	tracing(CUCO_SANDBOX_OFF);
}

static bool cgroups_here(void)
{
	cuco_workload *wl;
	cuco_evaluator *ev = evaluator(CUCO_SANDBOX_OFF, 1, NULL, &wl);
	char status[512];
	bool on = cuco_evaluator_limits(ev, status, sizeof status);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	return on;
}

/* ---- as root: the stage's own uid --------------------------------------------------- */

#define ROOT_TEXT "root-only-3d9a"

/* Files only root may read: the host's password hashes and SSH host key,
 * and one of the test's in a folder the sandbox shows (RUN/cache). A
 * stage of cuco run as root reads none of them: their text would land in
 * the excerpt, and from there in later prompts. The run directory is one
 * others may enter, as a checkout's runs/ is. */
static void root_files(cuco_sandbox_mode mode)
{
	if (geteuid() != 0) {
		print_message("not root: nothing here is root's alone\n");
		return;
	}
	chmod(run_dir, 0755);
	char cache[600], secret[700], reads[2000];
	snprintf(cache, sizeof cache, "%s/cache", run_dir);
	snprintf(secret, sizeof secret, "%s/root-only", cache);
	assert_int_equal(cuco_mkdir_p(cache, NULL), CUCO_OK);
	assert_int_equal(cuco_write_file(secret, ROOT_TEXT "\n", strlen(ROOT_TEXT) + 1, NULL), CUCO_OK);
	assert_int_equal(chmod(secret, 0600), 0);
	bool host_key = access("/etc/ssh/ssh_host_ed25519_key", F_OK) == 0;
	snprintf(reads, sizeof reads, "/etc/shadow:%s%s", secret, host_key ? ":/etc/ssh/ssh_host_ed25519_key" : "");
	setenv("HOSTILE_MODE", "escape", 1);
	setenv("HOSTILE_READ", reads, 1);
	unsetenv("HOSTILE_WRITE");
	unsetenv("HOSTILE_PORT");
	cuco_eval_result res;
	evaluate_hostile(mode, 1, &res);
	print_message("%s\n", res.failure.excerpt);
	assert_has(res.failure.excerpt, "read /etc/shadow: refused");
	if (!has(res.failure.excerpt, "read %s: refused", secret))
		fail_msg("%s", res.failure.excerpt);
	if (host_key)
		assert_has(res.failure.excerpt, "read /etc/ssh/ssh_host_ed25519_key: refused");
	assert_lacks(res.failure.excerpt, ROOT_TEXT);
}

static void test_root_files_sandboxed(void **state)
{
	(void)state;
	root_files(CUCO_SANDBOX_BWRAP);
}

static void test_root_files_fallback(void **state)
{
	(void)state;
	root_files(CUCO_SANDBOX_OFF);
}

/* An honest program as the stage user, with limits only: it builds and
 * runs where the run directory is open to others; where a folder above it
 * is closed (0700), the stages stay root's, and the line says which folder
 * and why, rather than refuse every program. */
static void test_root_unreachable_fallback(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("not root: stages are cuco's user's anyway\n");
		return;
	}
	for (int open = 0; open < 2; open++) {
		chmod(run_dir, open ? 0755 : 0700);
		cuco_workload *wl;
		cuco_evaluator *ev = evaluator(CUCO_SANDBOX_OFF, 1, NULL, &wl);
		char status[512];
		bool dropped = cuco_evaluator_stage_user(ev, status, sizeof status);
		print_message("%s\n", status);
		size_t len;
		char *src = read_fixture("solo/solo.c", &len);
		cuco_directive d;
		cuco_directive_default(wl, &d);
		cuco_eval_result res;
		cuco_err err = { 0 };
		assert_int_equal(cuco_eval_candidate(ev, src, len, &d, true, &res, &err), CUCO_OK);
		if (!res.ok)
			fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
		free(src);
		cuco_evaluator_free(ev);
		cuco_workload_free(wl);
		assert_int_equal(dropped, open);
		if (open) {
			assert_has(status, "not root");
		} else {
			char want[600];
			snprintf(want, sizeof want, "stages run as root: nobody cannot enter %s (mode 0700); with limits only", run_dir);
			assert_has(status, want);
		}
	}
}

/* Root in a user namespace that maps only root (unshare -r, some rootless
 * containers) cannot become the stage user: stages stay its root's, and
 * say so, instead of every one of them failing (cuco doctor's probe is
 * such a stage). */
static void test_root_mapped_alone(void **state)
{
	(void)state;
	char cmd[1200];
	int status;
	snprintf(cmd, sizeof cmd, "unshare --user --map-root-user '%s' doctor 2>&1", getenv("CUCO_BIN"));
	char *out = capture_output(cmd, &status);
	if (!strstr(out, "stage user")) {
		print_message("no user namespace here (%.100s): not tested\n", out);
		free(out);
		return;
	}
	assert_has(out, "warn     stage user        stages run as root: it cannot become nobody (uid 65534)");
	assert_has(out, "ok       seccomp           refused: io_uring");
	free(out);
}

/* ---- work left running: counted by the stage's namespace or cgroup ---------------------- */

/* A process the candidate leaves sleeping when it ends, four ways: a
 * child, a grandchild in a session of its own, a clone(CLONE_VM |
 * CLONE_PARENT) sibling, a grandchild after the child subreaper was turned
 * off. Each is counted (suspect: leftovers) and killed. */
static void left_running(cuco_sandbox_mode mode)
{
	static const char *const how[] = { "left-fork", "left-setsid", "left-clone", "left-unreaper" };
	int missed = 0;
	for (size_t i = 0; i < sizeof how / sizeof how[0]; i++) {
		setenv("HOSTILE_MODE", how[i], 1);
		cuco_eval_result res;
		evaluate_program(mode, "hostile/kernel.c", 1, &res);
		bool seen = strcmp(res.failure.error_class, "suspect") == 0
			&& strstr(res.failure.excerpt, "leftovers: 1 process");
		print_message("%s: %s %s/%s: %.200s\n", how[i], seen ? "counted" : "MISSED", res.failure.stage,
			res.failure.error_class, res.failure.excerpt);
		missed += !seen;
		assert_int_equal(count_processes(run_dir), 0);
	}
	assert_int_equal(missed, 0);
}

static void test_left_running_sandboxed(void **state)
{
	(void)state;
	left_running(CUCO_SANDBOX_BWRAP);
}

static void test_left_running_fallback(void **state)
{
	(void)state;
	if (!cgroups_here()) {
		print_message("no cgroup here: a process in a session of its own is not counted\n");
		return;
	}
	left_running(CUCO_SANDBOX_OFF);
}

/* ---- the build cache on the host's disk ------------------------------------------------ */

/* The solo workload's program with block as its EVOLVE-BLOCK. */
static void solo_with(const char *block, cuco_buf *out)
{
	size_t len;
	char *solo = read_fixture("solo/solo.c", &len);
	const char *start = strstr(solo, "/* EVOLVE-BLOCK-START */"), *end = strstr(solo, "\t/* EVOLVE-BLOCK-END */");
	assert_true(start && end);
	start += strlen("/* EVOLVE-BLOCK-START */\n");
	cuco_buf_append(out, solo, (size_t)(start - solo));
	cuco_buf_puts(out, block);
	cuco_buf_puts(out, end);
	free(solo);
}

/* The programs in RUN/cache (hash-named), their number and their bytes. */
static int cached(long long *bytes)
{
	char path[600];
	snprintf(path, sizeof path, "%s/cache", run_dir);
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;
	*bytes = 0;
	while (d && (e = readdir(d))) {
		if (strlen(e->d_name) != 32 || strspn(e->d_name, "0123456789abcdef") != 32)
			continue;
		char file[900];
		struct stat st;
		snprintf(file, sizeof file, "%s/%s", path, e->d_name);
		if (stat(file, &st) == 0) {
			n++;
			*bytes += st.st_size;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static void evaluate_block(cuco_evaluator *ev, const cuco_workload *wl, const char *block,
	cuco_eval_result *res)
{
	cuco_buf src = { 0 };
	solo_with(block, &src);
	cuco_directive d;
	cuco_directive_default(wl, &d);
	cuco_err err = { 0 };
	assert_int_equal(cuco_eval_candidate(ev, src.data, src.len, &d, false, res, &err), CUCO_OK);
	cuco_buf_free(&src);
}

/* An honest program of 700 KiB, the k-th of its kind. */
static void evaluate_padded(cuco_evaluator *ev, const cuco_workload *wl, int k, cuco_eval_result *res)
{
	char block[200];
	snprintf(block, sizeof block, "static volatile char pad[700 << 10] = { %d };\n"
		"printf(\"ranks=1 N=%%d %%d\\n\", N, pad[N]);\n", k);
	evaluate_block(ev, wl, block, res);
}

/* Every built program stayed in RUN/cache, whatever its size and whatever
 * its candidate's fate (issue 24). Now: a program past the size per
 * program is refused at the build, a failed candidate's program is
 * evicted, and past the size per run the least recently used go. */
/* Without the sandbox a stage's $TMPDIR is the stage user's folder on
 * the host, and cuco (root) removes it after the evaluation, while
 * another candidate's stage, as the same user, may still run. That stage
 * swaps a folder of it for a link to a folder of root's, over and over
 * (renameat2 RENAME_EXCHANGE): the removal must never go through the
 * link, nor remove a file of root's. */
static void test_tmpdir_removal_swapped_fallback(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* no stage user to race */
	char victim[300], tree[300], d[320], l[320], f[400];
	uid_t uid;
	gid_t gid;
	stage_user_ids(&uid, &gid);
	assert_int_equal(chmod(run_dir, 0755), 0);
	snprintf(victim, sizeof victim, "%s/roots", run_dir);
	assert_int_equal(mkdir(victim, 0755), 0);
	int lost = 0;
	for (int round = 0; round < 20 && !lost; round++) {
		for (int k = 0; k < 50; k++) {
			snprintf(f, sizeof f, "%s/f%d", victim, k);
			close(open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		}
		snprintf(tree, sizeof tree, "%s/tmp%d", run_dir, round);
		assert_int_equal(mkdir(tree, 0700), 0);
		assert_int_equal(chown(tree, uid, gid), 0);
		int ready[2];
		assert_int_equal(pipe(ready), 0);
		pid_t pid = fork();
		if (pid == 0) {
			become_stage_user();
			snprintf(d, sizeof d, "%s/d", tree);
			snprintf(l, sizeof l, "%s/l", tree);
			mkdir(d, 0755);
			for (int k = 0; k < 50; k++) {
				snprintf(f, sizeof f, "%s/f%d", d, k);
				close(open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
			}
			if (symlink(victim, l) != 0 || write(ready[1], "", 1) != 1)
				_exit(2);
			for (;;)
				syscall(SYS_renameat2, AT_FDCWD, d, AT_FDCWD, l, 2 /* RENAME_EXCHANGE */);
		}
		char c;
		assert_int_equal(read(ready[0], &c, 1), 1);
		close(ready[0]);
		close(ready[1]);
		cuco_remove_tree(tree);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		rm_rf(tree);
		for (int k = 0; k < 50; k++) {
			snprintf(f, sizeof f, "%s/f%d", victim, k);
			lost += access(f, F_OK) != 0;
		}
	}
	if (lost)
		fail_msg("removing the stage user's folder removed %d files of root's", lost);
}

static void test_build_cache_bounded(void **state)
{
	(void)state;
	cuco_workload *wl;
	cuco_err err = { 0 };
	if (cuco_workload_load(fixture("solo"), &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_eval_config cfg = small_limits(CUCO_SANDBOX_DEFAULT, 1);
	cfg.cache_program_mb = 4;
	cfg.cache_run_mb = 2;
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_OK);
	long long bytes;
	cuco_eval_result res;
	/* 8 MiB of initialised data: the program is larger than 4 MiB. */
	evaluate_block(ev, wl, "static volatile char big[8 << 20] = { 1 };\nprintf(\"%d\\n\", big[N]);\n", &res);
	print_message("big: %s/%s: %.200s\n", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	assert_string_equal(res.failure.error_class, "compile-error");
	assert_has(res.failure.excerpt,
		"compile: the program is 8 MiB, above the build cache's 4 MiB a program");
	assert_int_equal(cached(&bytes), 0);
	/* A candidate that crashes: nothing will run its program again. */
	evaluate_block(ev, wl, "abort();\n", &res);
	assert_string_equal(res.failure.error_class, "crash");
	assert_int_equal(cached(&bytes), 0);
	/* Honest programs of 700 KiB each: two fit in 2 MiB, and each one
	 * after evicts the least recently used. */
	for (int i = 0; i < 5; i++) {
		evaluate_padded(ev, wl, i + 1, &res);
		if (!res.ok)
			fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
		int n = cached(&bytes);
		print_message("after %d: %d program(s), %lld bytes\n", i + 1, n, bytes);
		assert_true(bytes <= 2ll << 20);
		assert_int_equal(n, i < 2 ? i + 1 : 2);
	}
	/* The last is still there, the first was evicted: built again. */
	for (int i = 5; i >= 1; i -= 4) {
		evaluate_padded(ev, wl, i, &res);
		assert_true(res.ok);
		assert_int_equal(res.cached_build, i == 5);
	}
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* ---- limits per candidate ------------------------------------------------------- */

/* The hostile candidate in a mode; the result, with nothing left alive. */
static void hostile(cuco_sandbox_mode mode, const char *how, const char *count, const char *mb,
	cuco_eval_result *res)
{
	setenv("HOSTILE_MODE", how, 1);
	setenv("HOSTILE_COUNT", count, 1);
	setenv("HOSTILE_MB", mb, 1);
	double t0 = cuco_mono();
	evaluate_hostile(mode, 1, res);
	print_message("%s: %s/%s in %.1f s: %.300s\n", how, res->failure.stage, res->failure.error_class,
		cuco_mono() - t0, res->failure.excerpt);
	assert_int_equal(count_processes(run_dir), 0);
}

/* A fork loop, plain or each child in a session of its own: killed at the
 * stage's process limit, nothing left. */
static void fork_loops(cuco_sandbox_mode mode)
{
	static const char *const how[] = { "forkloop", "setsidloop" };
	for (size_t i = 0; i < 2; i++) {
		cuco_eval_result res;
		hostile(mode, how[i], "0", "0", &res);
		if (strcmp(res.failure.error_class, "crash") != 0
			|| !strstr(res.failure.excerpt, "more than 64 processes"))
			fail_msg("%s: %s/%s: %s", how[i], res.failure.stage, res.failure.error_class,
				res.failure.excerpt);
	}
}

/* Four children of 64 MiB, each under the 192 MiB per-process limit, 256
 * MiB together: killed at the candidate's memory limit. */
static void many_children(cuco_sandbox_mode mode)
{
	cuco_eval_result res;
	hostile(mode, "memory", "4", "64", &res);
	if (strcmp(res.failure.error_class, "crash") != 0
		|| !strstr(res.failure.excerpt, "passed the memory limit (192 MiB)"))
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
}

static void test_limits_per_candidate_sandboxed(void **state)
{
	(void)state;
	if (!cgroups_here()) {
		print_message("no cgroup here: per-candidate limits not tested\n");
		return;
	}
	fork_loops(CUCO_SANDBOX_BWRAP);
	many_children(CUCO_SANDBOX_BWRAP);
}

static void test_limits_per_candidate_fallback(void **state)
{
	(void)state;
	if (!cgroups_here()) {
		print_message("no cgroup here: per-candidate limits not tested\n");
		return;
	}
	fork_loops(CUCO_SANDBOX_OFF);
	many_children(CUCO_SANDBOX_OFF);
}

/* Without a cgroup the limits are per process: the children's 256 MiB
 * pass the 192 MiB limit unseen, until the wall clock ends them. (No
 * setsid loop here: without a group or a PID namespace it would escape.) */
static void test_limits_per_process_without_cgroup(void **state)
{
	(void)state;
	setenv("CUCO_CGROUPS", "off", 1);
	cuco_env_reread();
	assert_false(cgroups_here());
	cuco_eval_result res;
	hostile(CUCO_SANDBOX_OFF, "forkloop", "0", "0", &res);
	if (!strstr(res.failure.excerpt, "more than 64 processes"))  /* the session's count still holds */
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	hostile(CUCO_SANDBOX_OFF, "memory", "4", "64", &res);
	assert_string_equal(res.failure.error_class, "timeout");
	unsetenv("CUCO_CGROUPS");
	cuco_env_reread();
}

/* Files each under the per-file limit, 32 MiB in each of the work folder,
 * $TMPDIR and /tmp, with 16 MiB to each: each is full at 16 MiB, and
 * nothing reached the host. */
static void test_disk_per_candidate_sandboxed(void **state)
{
	(void)state;
	cuco_eval_result res;
	hostile(CUCO_SANDBOX_BWRAP, "files", "4", "8", &res);
	const char *tmpdir = strstr(res.failure.excerpt, "write /tmp/cuco-tmp-");  /* its $TMPDIR */
	if (strcmp(res.failure.error_class, "crash") != 0 || !has(res.failure.excerpt, "write ./fill-2: "
			"No space left on device after 16 MiB there") || !tmpdir || !strstr(tmpdir, "No space "
			"left on device after 16 MiB there") || !has(res.failure.excerpt, "write /tmp/fill-2: "
			"No space left on device after 16 MiB"))
		fail_msg("%s/%s: %s", res.failure.stage, res.failure.error_class, res.failure.excerpt);
	int status;
	char *found = capture_output("find /tmp /var/tmp -maxdepth 3 -name 'fill-[0-9]*' 2>/dev/null", &status);
	assert_string_equal(found, "");
	free(found);
}

/* Without bwrap, or with one that cannot work here: auto falls back and
 * says why; bwrap refuses. */
static void test_missing_bwrap(void **state)
{
	(void)state;
	setenv("CUCO_BWRAP", "/nonexistent/bwrap", 1);
	cuco_env_reread();
	bool on = true;
	char status[640];
	cuco_err err = { 0 };
	assert_int_equal(cuco_sandbox_check(CUCO_SANDBOX_AUTO, &on, status, sizeof status, &err), CUCO_OK);
	assert_false(on);
	assert_string_equal(status, "sandbox off: /nonexistent/bwrap not found (Debian and Ubuntu: "
		"apt-get install bubblewrap); stages run with resource limits only");
	assert_int_equal(cuco_sandbox_check(CUCO_SANDBOX_BWRAP, &on, status, sizeof status, &err), CUCO_EENV);
	assert_string_equal(err.msg, "sandbox = bwrap: /nonexistent/bwrap not found (Debian and Ubuntu: "
		"apt-get install bubblewrap)");
	/* The evaluator refuses to start rather than run unconfined. */
	cuco_workload *wl;
	assert_int_equal(cuco_workload_load(fixture("solo"), &wl, &err), CUCO_OK);
	cuco_eval_config cfg = { .sandbox = CUCO_SANDBOX_BWRAP };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_EENV);
	assert_null(ev);
	cuco_workload_free(wl);
	/* Present but refused namespaces, as in some containers: bwrap's own
	 * complaint is the reason given. */
	char fake[600];
	snprintf(fake, sizeof fake, "%s/bwrap", home);
	const char *script = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n";
	cuco_write_file(fake, script, strlen(script), NULL);
	chmod(fake, 0755);
	setenv("CUCO_BWRAP", fake, 1);
	cuco_env_reread();
	assert_int_equal(cuco_sandbox_check(CUCO_SANDBOX_AUTO, &on, status, sizeof status, &err), CUCO_OK);
	assert_false(on);
	char want[1024];
	snprintf(want, sizeof want, "sandbox off: %s cannot run here: bwrap: No permissions to create new "
		"namespace; stages run with resource limits only", fake);
	assert_string_equal(status, want);
	unsetenv("CUCO_BWRAP");
	cuco_env_reread();
}

/* `cuco doctor`'s line on the stage user: as root, a stage user that owns
 * other running processes (nobody is often a daemon's) is a warning that
 * says how many and names CUCO_STAGE_USER. */
static void stage_user_line(const char *what, bool ok, const char *detail, void *arg)
{
	if (strcmp(what, "stage user's own") == 0)
		snprintf(arg, 700, "%s: %s", ok ? "ok" : "warning", detail);
}

static void test_stage_user_shared(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* stages are cuco's own user: nothing to share */
	pid_t pid = fork();
	if (pid == 0) {
		become_stage_user();
		execl("/bin/sleep", "sleep", "37.801", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && count_processes("sleep 37.801") == 0; i++)
		usleep(10000);
	char line[700] = "";
	cuco_err err = { 0 };
	int rc = cuco_stage_check(CUCO_SANDBOX_DEFAULT, stage_user_line, line, &err);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(rc, CUCO_OK);
	printf("doctor: %s\n", line);
	assert_has(line, "warning: ");
	assert_has(line, "running process");
	assert_has(line, "set CUCO_STAGE_USER to a user of their own");
}

static void test_mode_from_environment(void **state)
{
	(void)state;
	bool on = true;
	char status[640];
	cuco_err err = { 0 };
	setenv("CUCO_SANDBOX", "off", 1);
	cuco_env_reread();
	assert_int_equal(cuco_sandbox_check(CUCO_SANDBOX_DEFAULT, &on, status, sizeof status, &err), CUCO_OK);
	assert_false(on);
	assert_string_equal(status, "sandbox off (sandbox = off): stages run with resource limits only");
	setenv("CUCO_SANDBOX", "maybe", 1);
	cuco_env_reread();
	assert_int_equal(cuco_sandbox_check(CUCO_SANDBOX_DEFAULT, &on, status, sizeof status, &err), CUCO_EUSAGE);
	assert_string_equal(err.msg, "CUCO_SANDBOX=maybe: not auto, bwrap or off");
	/* A mode given in the configuration wins over the variable. */
	assert_int_equal(cuco_sandbox_check(CUCO_SANDBOX_OFF, &on, status, sizeof status, &err), CUCO_OK);
	unsetenv("CUCO_SANDBOX");
	cuco_env_reread();
	cuco_sandbox_mode m;
	assert_true(cuco_sandbox_mode_parse("bwrap", &m) && m == CUCO_SANDBOX_BWRAP);
	assert_false(cuco_sandbox_mode_parse("", &m));
}

int main(int argc, char **argv)
{
	(void)argc;
	/* The key in the initial environment, where a user's shell puts it:
	 * /proc/PID/environ shows only that one, not what setenv() adds. */
	const char *key = getenv("OPENAI_API_KEY");
	if (!key || strcmp(key, ENV_KEY) != 0) {
		setenv("OPENAI_API_KEY", ENV_KEY, 1);
		execv("/proc/self/exe", argv);
		perror("test-eval-sandbox: /proc/self/exe");
		return 1;
	}
	const struct CMUnitTest fallback[] = {
		cmocka_unit_test_setup_teardown(test_escapes_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compile_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evaluator_killed_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_sockets_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keyrings_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracing_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_userns_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_files_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_unreachable_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_mapped_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_left_running_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_per_candidate_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_per_process_without_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tmpdir_removal_swapped_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_cache_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_bwrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode_from_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stage_user_shared, setup, teardown),
	};
	const struct CMUnitTest sandboxed[] = {
		cmocka_unit_test_setup_teardown(test_escapes_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compile_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_in_home_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evaluator_killed_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_sockets_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keyrings_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracing_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_userns_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_files_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_left_running_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_per_candidate_sandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_per_candidate_sandboxed, setup, teardown),
	};
	int failed = cmocka_run_group_tests(fallback, NULL, NULL);
	bool on;
	char status[640];
	cuco_err err = { 0 };
	unsetenv("CUCO_SANDBOX");
	unsetenv("CUCO_BWRAP");
	cuco_env_reread();
	if (cuco_sandbox_check(CUCO_SANDBOX_BWRAP, &on, status, sizeof status, &err) != CUCO_OK) {
		fprintf(stderr, "SKIP: the sandbox's tests: %s\n", err.msg);
		return failed ? failed : 77;
	}
	return failed + cmocka_run_group_tests(sandboxed, NULL, NULL);
}
