/* test-referee.c — a refereed workload through the evaluator (the refd
 * fixture: y = the sum of every rank's x, x drawn afresh every step):
 * an honest program measured by the referee's clock, and each way a
 * program can end without an honest verdict classified with the reason
 * the referee gives — wrong from the first step, right first and wrong
 * after (results kept), work left running after "done", a setup that
 * fails, a program that leaves before the last step, a step that never
 * returns — with nothing left running. Without a cgroup freezer an
 * honest program still passes. And a GPU step's time from the referee's
 * capture (cuco_ref_gpu_step, the GPU referee's arithmetic), and the GPU
 * runtime's part in the referee on a fake GPU (the refgpu fixture): the
 * verdict, and a launch's time when a step runs several sets (the GPU
 * referee itself runs in the gpu and hostile suites). */
#include "env.h"
#include "eval/eval.h"
#include "eval/eval_int.h"
#include "util.h"
#include "../../workloads/common/cuco_referee.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static char run_dir[256];

static int setup(void **state)
{
	(void)state;
	make_tmpdir(run_dir, sizeof run_dir);
	unsetenv("CUCO_MPIRUN");
	unsetenv("CUCO_CGROUPS");
	cuco_env_reread();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(count_processes(run_dir), 0);
	rm_rf(run_dir);
	return 0;
}

/* The fixture's program with its step's body replaced by `body` (and
 * `top` put before it). */
static char *program(const char *top, const char *body)
{
	static const char head[] = "#include \"cuco_step.h\"\n#include <mpi.h>\n#include <pthread.h>\n"
		"#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n#include <unistd.h>\n";
	static const char rest[] = "int cuco_setup(cuco_io *io, void **state) { (void)io; *state = NULL; "
		"return 0; }\nvoid cuco_teardown(void *state, cuco_io *io) { (void)state; (void)io; }\n";
	size_t n = strlen(head) + strlen(top) + strlen(body) + strlen(rest) + 128;
	char *src = malloc(n);
	snprintf(src, n, "%s%s\n%svoid cuco_step(void *state, cuco_io *io)\n{\n\t(void)state;\n%s\n}\n", head,
		top, rest, body);
	return src;
}

static cuco_eval_result evaluate(const char *top, const char *body)
{
	cuco_err err = { 0 };
	cuco_workload *wl;
	if (cuco_workload_load(fixture("refd"), &wl, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_eval_config cfg = { .jobs = 2, .max_procs = 64, .limit_scale = 0.5 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	if (cuco_evaluator_new(wl, &cfg, &ev, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_directive dir;
	cuco_directive_default(wl, &dir);
	char *src = program(top, body);
	cuco_eval_result res;
	if (cuco_eval_candidate(ev, src, strlen(src), &dir, true, &res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	free(src);
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
	return res;
}

static void expect(const cuco_eval_result *res, const char *cls, const char *text)
{
	if (strcmp(res->failure.error_class, cls) != 0 || !strstr(res->failure.excerpt, text))
		fail_msg("want %s \"%s\", got %s: %s", cls, text,
			*res->failure.error_class ? res->failure.error_class : "ok", res->failure.excerpt);
}

static const char honest[] = "\tMPI_Allreduce(io->in[0], io->out[0], N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);";

static void test_honest(void **state)
{
	(void)state;
	cuco_eval_result res = evaluate("", honest);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	assert_int_equal(res.timing.samples, 5);
	assert_true(res.timing.min_us > 0 && res.timing.min_us <= res.timing.median_us);
	assert_true(res.timing.max_error <= 1e-5);
}

/* Without a cgroup the gaps are not frozen, but an honest program passes. */
static void test_honest_unfrozen(void **state)
{
	(void)state;
	setenv("CUCO_CGROUPS", "off", 1);
	cuco_env_reread();
	cuco_eval_result res = evaluate("", honest);
	unsetenv("CUCO_CGROUPS");
	cuco_env_reread();
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
}

/* With the sandbox off (no bwrap, or no cuco-stage-init installed), as
 * root, the stages still run as the stage user: the trusted frame's
 * build must be able to write its object, and an honest program passes. */
static void test_honest_unsandboxed(void **state)
{
	(void)state;
	/* A run folder others may enter, so that the stages drop to the stage
	 * user (a closed one keeps them root, and says so). */
	assert_int_equal(chmod(run_dir, 0755), 0);
	setenv("CUCO_SANDBOX", "off", 1);
	cuco_env_reread();
	cuco_eval_result res = evaluate("", honest);
	unsetenv("CUCO_SANDBOX");
	cuco_env_reread();
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	/* The trusted builds are cuco's user's, not the candidates' to change. */
	char cache[300];
	snprintf(cache, sizeof cache, "%s/cache", run_dir);
	DIR *d = opendir(cache);
	assert_non_null(d);
	int trusted = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "frame-", 6) != 0 && strncmp(e->d_name, "referee-", 8) != 0)
			continue;
		char path[600];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
		assert_int_equal(stat(path, &sb), 0);
		if (sb.st_uid != geteuid())
			fail_msg("%s is uid %u's", path, (unsigned)sb.st_uid);
		trusted++;
	}
	closedir(d);
	assert_int_equal(trusted, 2);
}

/* What a program of the stage user's may do to the trusted builds of a
 * run: as that user, replace every referee in the cache with a script
 * that runs the true one (copied to `real`) and then says a verdict of its
 * own, correct and fast. True when it replaced one. */
static bool stage_user_forges(const char *cache, const char *real)
{
	char script[1200];
	snprintf(script, sizeof script, "#!/bin/sh\n%s \"$@\" >/dev/null\n"
		"for a; do [ \"$p\" = --reps ] && r=$a; p=$a; done\n"
		"echo \"CUCO_REFEREE {\\\"correct\\\": true, \\\"max_error\\\": 0, \\\"latency_us\\\": {\\\"min\\\": 1, "
		"\\\"median\\\": 1, \\\"p90\\\": 1, \\\"max\\\": 1, \\\"samples\\\": $r}, \\\"seed\\\": \\\"0000000000000001\\\", "
		"\\\"ranks\\\": 2, \\\"checks\\\": 9, \\\"referee\\\": true, \\\"frozen\\\": true}\"\n", real);
	pid_t pid = fork();
	if (pid == 0) {
		become_stage_user();
		int forged = 0;
		DIR *d = opendir(cache);
		for (struct dirent *e; d && (e = readdir(d));) {
			char path[600];
			snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
			int fd = strncmp(e->d_name, "referee-", 8) == 0 ? open(path, O_WRONLY | O_TRUNC) : -1;
			if (fd >= 0 && write(fd, script, strlen(script)) == (ssize_t)strlen(script))
				forged++;
			if (fd >= 0)
				close(fd);
		}
		_exit(forged ? 1 : 0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
	return WEXITSTATUS(status) == 1;
}

/* Copy the run's referee to `real` (the forger's script calls it). */
static void copy_referee(const char *cache, const char *real)
{
	char cmd[1400];
	snprintf(cmd, sizeof cmd, "cp %s/referee-* %s", cache, real);
	assert_int_equal(system(cmd), 0);
}

/* A run made in the sandbox and resumed without it (bwrap gone, sandbox
 * = off): the stage user must not have been able to change the referee
 * the first session built, nor may one that is the stage user's (a cache
 * an older cuco left) be run as cuco's user. Else a wrong program passes
 * on a forged verdict, and the candidate's code runs as cuco's user. */
static void test_trusted_builds_across_sessions(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* no stage user to become */
	assert_int_equal(chmod(run_dir, 0755), 0);
	cuco_eval_result res = evaluate("", honest);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	char cache[300], real[300];
	snprintf(cache, sizeof cache, "%s/cache", run_dir);
	snprintf(real, sizeof real, "%s/real-referee", run_dir);
	copy_referee(cache, real);
	if (stage_user_forges(cache, real))
		fail_msg("the stage user could rewrite the referee in %s", cache);
	/* One left the stage user's by an older cuco: the stage user rewrites it. */
	char cmd[700];
	uid_t uid;
	gid_t gid;
	stage_user_ids(&uid, &gid);
	snprintf(cmd, sizeof cmd, "chown %u %s/referee-*", (unsigned)uid, cache);
	assert_int_equal(system(cmd), 0);
	assert_true(stage_user_forges(cache, real));
	setenv("CUCO_SANDBOX", "off", 1);
	res = evaluate("", "\tmemcpy(io->out[0], io->in[0], N * sizeof(float));");
	unsetenv("CUCO_SANDBOX");
	expect(&res, "wrong-answer", "verification: max error");
}

/* The referee's channel files, as the evaluator starts it for a stage of
 * the stage user's: no other user's to open (another run's stage, a
 * local user), and nothing of them given by the world's mode bits. */
static void test_channel_private(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* as a plain user, stages are cuco's user: no other uid to try */
	cuco_eval_result res = evaluate("", honest);
	if (!res.ok)
		fail_msg("%s: %s", res.failure.error_class, res.failure.excerpt);
	char cmd[400], log[300];
	snprintf(cmd, sizeof cmd, "ls %s/cache/referee-*", run_dir);
	int status;
	char *bin = capture_output(cmd, &status);
	bin[strcspn(bin, "\n")] = '\0';
	snprintf(log, sizeof log, "%s/referee.log", run_dir);
	eval_user owner = { .drop = true };
	stage_user_ids(&owner.uid, &owner.gid);
	eval_referee_args a = { .ranks = 2, .warmup = 0, .reps = 1, .tolerance = 0, .log_path = log,
		.owner = &owner };
	eval_referee r;
	cuco_err err = { 0 };
	if (eval_referee_start(bin, &a, &r, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	char path[PATH_MAX + 8];
	snprintf(path, sizeof path, "%s/1", r.dir);
	struct stat file, dir;
	for (int i = 0; i < 500 && stat(path, &file) != 0; i++)
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	assert_int_equal(stat(path, &file), 0);
	assert_int_equal(stat(r.dir, &dir), 0);
	/* Another uid than the stage's, as another run's stage user would be. */
	pid_t pid = fork();
	if (pid == 0) {
		if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, 4242, 4242, 4242) != 0
				|| syscall(SYS_setresuid, 4242, 4242, 4242) != 0)
			_exit(2);
		_exit(open(path, O_RDONLY) >= 0 ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	eval_referee_free(&r);
	free(bin);
	if (WEXITSTATUS(status) == 1)
		fail_msg("uid 4242 opened a stage's channel %s (mode %04o, folder %04o)", path,
			(unsigned)(file.st_mode & 07777), (unsigned)(dir.st_mode & 07777));
	assert_int_equal(WEXITSTATUS(status), 0);
	if (file.st_mode & 077 || file.st_uid != owner.uid)
		fail_msg("%s: mode %04o, uid %u: want 0600 and the stage user's", path,
			(unsigned)(file.st_mode & 07777), (unsigned)file.st_uid);
	if (dir.st_mode & 07 || dir.st_uid != 0)
		fail_msg("%s: mode %04o, uid %u: want nothing for others, and root's", r.dir,
			(unsigned)(dir.st_mode & 07777), (unsigned)dir.st_uid);
}

/* objdump reads the candidate's object as a compile would, never as root:
 * a fake first on PATH says who it runs as (and fails: a refusal that
 * names the tool), in the sandbox and without it. */
static void test_tools_as_stage_user(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* as a plain user, stages are cuco's user */
	assert_int_equal(chmod(run_dir, 0755), 0);  /* without the sandbox the stage user must reach it */
	char bin[256], tool[300], path[8192], want[64];
	make_tmpdir(bin, sizeof bin);
	assert_int_equal(chmod(bin, 0755), 0);
	snprintf(tool, sizeof tool, "%s/objdump", bin);
	static const char says[] = "#!/bin/sh\necho \"uid=$(id -u)\"\nexit 1\n";
	cuco_err err = { 0 };
	assert_int_equal(cuco_write_file(tool, says, sizeof says - 1, &err), CUCO_OK);
	assert_int_equal(chmod(tool, 0755), 0);
	char *saved = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	snprintf(path, sizeof path, "%s:%s", bin, saved);
	uid_t uid;
	gid_t gid;
	stage_user_ids(&uid, &gid);
	snprintf(want, sizeof want, "object: objdump cannot read it (exit status 1): uid=%u", (unsigned)uid);
	static const char *const modes[] = { "auto", "off" };
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		setenv("PATH", path, 1);
		setenv("CUCO_SANDBOX", modes[i], 1);
		cuco_env_reread();
		cuco_eval_result res = evaluate("", honest);
		setenv("PATH", saved, 1);
		unsetenv("CUCO_SANDBOX");
		cuco_env_reread();
		expect(&res, "suspect", want);
	}
	free(saved);
	rm_rf(bin);
}

static void test_wrong_first_step(void **state)
{
	(void)state;
	cuco_eval_result res = evaluate("", "\tmemcpy(io->out[0], io->in[0], N * sizeof(float));");
	expect(&res, "wrong-answer", "verification: max error");
	expect(&res, "wrong-answer", "step 1 of 1 (timed)");
}

/* Right on step 1, then the first answer again: fresh inputs find it. */
static void test_kept_results(void **state)
{
	(void)state;
	cuco_eval_result res = evaluate("static float kept[N]; static int have;",
		"\tif (!have) {\n\t\tMPI_Allreduce(io->in[0], kept, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);\n"
		"\t\thave = 1;\n\t}\n\tmemcpy(io->out[0], kept, sizeof kept);");
	expect(&res, "suspect", "verification: step 2 of 6 (timed), on fresh inputs");
	expect(&res, "suspect", "though step 1 was right");
}

/* From the second step on, the step returns at once and a thread does the
 * work later. The referee freezes the stage the moment the last rank says
 * "done", so the thread cannot finish before the check: its output is
 * poison when checked. */
static void test_work_after_done(void **state)
{
	(void)state;
	cuco_eval_result res = evaluate(
		"static void *late(void *io_) { cuco_io *io = io_; struct timespec t; "
		"clock_gettime(CLOCK_MONOTONIC, &t); double t0 = t.tv_sec + 1e-9 * t.tv_nsec, now; "
		"do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec + 1e-9 * t.tv_nsec; } "
		"while (now - t0 < 0.03); memset(io->out[0], 0, N * sizeof(float)); return NULL; }",
		"\tif (io->step == 0) {\n" "\t" "\tMPI_Allreduce(io->in[0], io->out[0], N, MPI_FLOAT, MPI_SUM, "
		"MPI_COMM_WORLD);\n\t\treturn;\n\t}\n\tpthread_t t;\n\tpthread_create(&t, NULL, late, io);\n"
		"\tpthread_detach(t);");
	expect(&res, "suspect", "verification: step 2 of 6 (timed), on fresh inputs: output left unwritten");
}

static void test_setup_fails(void **state)
{
	(void)state;
	cuco_err err = { 0 };
	cuco_workload *wl;
	assert_int_equal(cuco_workload_load(fixture("refd"), &wl, &err), CUCO_OK);
	cuco_eval_config cfg = { .jobs = 2, .max_procs = 64, .limit_scale = 0.5 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	cuco_evaluator *ev = NULL;
	assert_int_equal(cuco_evaluator_new(wl, &cfg, &ev, &err), CUCO_OK);
	static const char src[] = "#include \"cuco_step.h\"\n"
		"int cuco_setup(cuco_io *io, void **s) { (void)io; (void)s; return -1; }\n"
		"void cuco_step(void *s, cuco_io *io) { (void)s; (void)io; }\n"
		"void cuco_teardown(void *s, cuco_io *io) { (void)s; (void)io; }\n";
	cuco_directive dir;
	cuco_directive_default(wl, &dir);
	cuco_eval_result res;
	assert_int_equal(cuco_eval_candidate(ev, src, sizeof src - 1, &dir, true, &res, &err), CUCO_OK);
	expect(&res, "crash", "run: exit status");
	expect(&res, "crash", "frame: the program's setup failed");
	cuco_evaluator_free(ev);
	cuco_workload_free(wl);
}

/* A program that leaves (status 0) in the middle: no verdict, and the
 * referee says which step was never done. */
static void test_leaves_early(void **state)
{
	(void)state;
	cuco_eval_result res = evaluate("", "\tif (io->step == 3) {\n\t\tMPI_Finalize();\n\t\t_exit(0);\n\t}\n"
		"\tMPI_Allreduce(io->in[0], io->out[0], N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);");
	expect(&res, "protocol", "referee: rank 0 never said step 4 of 6 (timed) was done (the stage ended)");
}

/* A capture no slower than an idle one's adds nothing; work left running
 * past "done" is the step's, all of it, and past the bound refuses it;
 * work that ends within the bound is still timed. */
static void test_gpu_step_time(void **state)
{
	(void)state;
	double left;
	assert_true(fabs(cuco_ref_gpu_step(1.0, 1.0001, 1.000120, 20e-6, &left) - 100e-6) < 1e-9);
	assert_true(left == 0);
	assert_true(fabs(cuco_ref_gpu_step(1.0, 1.0001, 1.000115, 20e-6, &left) - 100e-6) < 1e-9);
	assert_true(left == 0);
	/* done said after 10 us, a time slice (2 ms) of work still running */
	double t = cuco_ref_gpu_step(1.0, 1.00001, 1.00203, 20e-6, &left);
	assert_true(fabs(left - 2e-3) < 1e-9 && left > CUCO_REF_LEFT_BOUND_S);
	assert_true(fabs(t - 2.01e-3) < 1e-9);
	/* 80 us hidden: under the bound, but timed */
	t = cuco_ref_gpu_step(1.0, 1.00001, 1.0001, 10e-6, &left);
	assert_true(fabs(left - 80e-6) < 1e-9 && left < CUCO_REF_LEFT_BOUND_S);
	assert_true(fabs(t - 90e-6) < 1e-9);
}

/* The referee on a fake GPU runtime that writes its call into `why` on
 * success too (the first GPU runtime did): a verdict, not "environment";
 * and with 4 sets a step, each sample a launch's: a 4 ms step is 1 ms. */
static void test_gpu_runtime(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_SOURCE_ROOT");
	char cmd[4096];
	int status;
	assert_non_null(root);
	snprintf(cmd, sizeof cmd, "cc -O1 -std=c11 -D_GNU_SOURCE -I%s/workloads/common -o %s/referee "
		"%s/tests/eval/fixtures/refgpu/referee.c %s/workloads/common/cuco_referee.c -lm && cc -O1 -std=c11 "
		"-D_GNU_SOURCE -I%s/workloads/common -o %s/rank %s/tests/eval/fixtures/refgpu/rank.c", root, run_dir,
		root, root, root, run_dir, root);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/referee --ranks 1 --warmup 1 --reps 5 --tolerance 1 --run %s/rank", run_dir,
		run_dir);
	char *out = capture_output(cmd, &status);
	printf("%s", out);
	assert_int_equal(status, 0);
	assert_null(strstr(out, "environment"));
	assert_non_null(strstr(out, "\"correct\": true"));
	assert_non_null(strstr(out, "\"launches_a_step\": 4"));
	const char *m = strstr(out, "\"median\": ");
	assert_non_null(m);
	double median_us = strtod(m + strlen("\"median\": "), NULL);
	assert_true(median_us >= 950 && median_us < 3900);  /* one set a step: 4000 or more */
	free(out);

	/* Work of the stage's on the GPU once the poison is written, before
	 * the release (queued behind a wait on it): the probe then waits.
	 * Three such steps refuse the stage; two do not (another process's
	 * moment on the GPU can make one honest probe wait). */
	for (int gap = 2; gap <= 3; gap++) {
		snprintf(cmd, sizeof cmd, "REFGPU_GAP=%d %s/referee --ranks 1 --warmup 1 --reps 5 --tolerance 1 "
			"--run %s/rank", gap, run_dir, run_dir);
		out = capture_output(cmd, &status);
		printf("%s", out);
		assert_true(strstr(out, "\"probes_past_bound\": ") != NULL);
		if (gap == 2)
			assert_non_null(strstr(out, "\"correct\": true"));
		else
			assert_non_null(strstr(out, "\"suspect\": \"probe: before the release of step 1 of 6 "
				"(a warm-up), with the stage frozen, the referee's probe kernel waited 2000 us (bound 500 "
				"us): work of the stage's on the GPU between steps (and again past the bound since)"));
		free(out);
	}
}

/* A GPU referee owns memory on the stage's GPU, where its probes see the
 * stage's work: it is started with the stage's slot's GPUs, not all of
 * cuco's (on a machine of several, a referee on GPU 0 and a stage on GPU
 * 3 would share memory over the link, and no probe would see the stage). */
static void test_referee_on_the_slots_gpus(void **state)
{
	(void)state;
	char script[400], log[400], *json = NULL, why[256] = "";
	cuco_err err = { 0 };
	snprintf(script, sizeof script, "%s/referee.sh", run_dir);
	snprintf(log, sizeof log, "%s/referee.log", run_dir);
	const char *text = "#!/bin/sh\necho \"CUCO_REFEREE {\\\"gpus\\\": \\\"$CUDA_VISIBLE_DEVICES\\\"}\"\n";
	assert_int_equal(cuco_write_file(script, text, strlen(text), &err), CUCO_OK);
	assert_int_equal(chmod(script, 0755), 0);
	setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3", 1);
	const char *gpus[] = { "3", "" }, *want[] = { "{\"gpus\": \"3\"}", "{\"gpus\": \"0,1,2,3\"}" };
	for (int i = 0; i < 2; i++) {
		eval_referee_args a = { .ranks = 1, .warmup = 0, .reps = 1, .tolerance = 1, .log_path = log,
			.gpus = gpus[i] };
		eval_referee r;
		assert_int_equal(eval_referee_start(script, &a, &r, &err), CUCO_OK);
		assert_int_equal(eval_referee_finish(&r, &json, why, sizeof why), CUCO_OK);
		assert_string_equal(json, want[i]);
		free(json);
		eval_referee_free(&r);
	}
	unsetenv("CUDA_VISIBLE_DEVICES");
}

static void test_never_returns(void **state)
{
	(void)state;
	cuco_eval_result res = evaluate("", "\tfor (;;)\n\t\tsleep(1);");
	expect(&res, "timeout", "run: killed after");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_honest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_honest_unfrozen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_honest_unsandboxed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trusted_builds_across_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_channel_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tools_as_stage_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_first_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_results, setup, teardown),
		cmocka_unit_test_setup_teardown(test_work_after_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leaves_early, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_returns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_referee_on_the_slots_gpus, setup, teardown),
		cmocka_unit_test(test_gpu_step_time),
		cmocka_unit_test_setup_teardown(test_gpu_runtime, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
