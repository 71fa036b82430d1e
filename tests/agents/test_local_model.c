/* test_local_model.c — cuco against a real model server: llama.cpp's
 * llama-server with Gemma 3 270M (scripts/local-model), on loopback.
 *
 * It asserts protocol facts, not model quality: the server is checked and
 * its context read; calls are answered, streamed and not; every request
 * of a `cuco run` (evolve, then beam) is answered on its first attempt;
 * the tokens cuco logs for its calls add up to what the server's own log
 * says it processed; replies the tiny model gets wrong are refused with a
 * reason and answered in the chat; the run ends with its summary, exit 0,
 * and leaves no process behind.
 *
 * Skipped (77) with a line saying why when the cache of scripts/local-model
 * is empty: `scripts/local-model fetch` fills it (CI does).
 *
 *   test_local_model SCRIPTS/local-model
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "strategies/strategies.h"
#include "test_evolve_run.h"

#define CONTEXT 8192

static const char *script;
static char dir[64];        /* the server's pid, log and URL */
static char url[128];
static char server_log[128];

static int shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shell(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

/* What the server's log says it processed, from its per-task timings:
 * "prompt eval time = … / N tokens" and "eval time = … / M tokens". With
 * the prompt cache off, N is the whole prompt of each request. */
typedef struct served {
	int64_t tasks, prompt, completion;
} served;

static served server_said(void)
{
	served s = { 0 };
	char *text = slurp(server_log);
	for (char *p = text; (p = strstr(p, "eval time =")); p++) {
		bool prompt = p >= text + 7 && strncmp(p - 7, "prompt ", 7) == 0;
		char *slash = strchr(p, '/');
		if (!slash)
			break;
		int64_t n = strtoll(slash + 1, NULL, 10);
		if (prompt) {
			s.prompt += n;
			s.tasks++;
		} else {
			s.completion += n;
		}
	}
	free(text);
	return s;
}

/* The server's log is written by a thread of its own, after the reply has
 * gone: a task counted by the caller may not be in the file yet. Wait
 * (at most 20 s) for `tasks` tasks past `before`, then read it. */
static served server_after(served before, int64_t tasks)
{
	served s = server_said();
	for (int i = 0; i < 400 && s.tasks - before.tasks < tasks; i++) {
		usleep(50 * 1000);
		s = server_said();
	}
	return s;
}

/* What cuco's log says of its calls: "llm: NAME: answered: P prompt + C
 * completion tokens in …, K attempts". */
typedef struct said {
	int64_t calls, prompt, completion, retried, refusals, fitted;
} said;

static said cuco_said(const char *log)
{
	said s = { 0 };
	for (const char *p = log; (p = strstr(p, ": answered: ")); p++) {
		long long in = 0, out = 0;
		int attempts = 0;
		if (sscanf(p, ": answered: %lld prompt + %lld completion tokens in %*f s, %d attempt",
				&in, &out, &attempts) == 3) {
			s.calls++;
			s.prompt += in;
			s.completion += out;
			s.retried += attempts > 1;
		}
	}
	for (const char *p = log; (p = strstr(p, "refused, answered in the chat: ")); p++)
		s.refusals++;
	/* A planner's refused reply has no chat to be answered in. */
	for (const char *p = log; (p = strstr(p, "beam: plan ")); p++) {
		int plan = 0, end = 0;
		unsigned long long parent = 0;
		if (sscanf(p, "beam: plan %d for #%llu: %n", &plan, &parent, &end) == 2 && end > 0)
			s.refusals++;
	}
	for (const char *p = log; (p = strstr(p, "prompt fitted to a context of")); p++)
		s.fitted++;
	return s;
}

static int setup(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s paths", script);
	FILE *f = popen(cmd, "r");
	char server[512] = "", model[512] = "";
	if (!f || !fgets(server, sizeof server, f) || !fgets(model, sizeof model, f)) {
		fprintf(stderr, "local-model: %s paths failed\n", script);
		exit(77);
	}
	pclose(f);
	server[strcspn(server, "\n")] = model[strcspn(model, "\n")] = '\0';
	if (access(server, X_OK) != 0 || access(model, R_OK) != 0) {
		printf("local-model: skipped: no llama-server or model in the cache (%s); "
			"`scripts/local-model fetch` fills it\n", server);
		exit(77);
	}
	snprintf(dir, sizeof dir, "/tmp/cuco-local-model-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(server_log, sizeof server_log, "%s/server.log", dir);
	/* One slot, no prompt cache: the server's log then counts every
	 * request's whole prompt, to compare with cuco's. One thread unless
	 * told: on shared cores two spin against each other (8x slower at a
	 * load of 25). */
	if (shell("CUCO_LOCAL_MODEL_OWNER=%d CUCO_LOCAL_MODEL_THREADS=${CUCO_LOCAL_MODEL_THREADS:-1} "
			"%s start %s %d --no-cache-prompt >%s/start.out", (int)getpid(), script, dir, CONTEXT,
			dir) != 0) {
		shell("cat %s/start.out %s", dir, server_log);
		fail_msg("the server did not start");
	}
	char path[128], *text;
	snprintf(path, sizeof path, "%s/url", dir);
	assert_int_equal(cuco_read_file(path, 256, &text, NULL, NULL), CUCO_OK);
	text[strcspn(text, "\n")] = '\0';
	cuco_strlcpy(url, text, sizeof url);
	free(text);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char pidfile[128];
	snprintf(pidfile, sizeof pidfile, "%s/server.pid", dir);
	char *pid = NULL;
	cuco_read_file(pidfile, 64, &pid, NULL, NULL);
	shell("%s stop %s", script, dir);
	/* The server is gone with its pid. */
	if (pid && shell("kill -0 %d 2>/dev/null", atoi(pid)) == 0)
		fail_msg("llama-server %d is still running", atoi(pid));
	free(pid);
	shell("rm -rf '%s'", dir);
	return 0;
}

static void model_at(cuco_model *m)
{
	memset(m, 0, sizeof *m);
	cuco_strlcpy(m->name, "gemma", sizeof m->name);
	m->provider = CUCO_PROVIDER_OPENAI;
	cuco_strlcpy(m->model, "gemma-3-270m", sizeof m->model);
	cuco_strlcpy(m->url, url, sizeof m->url);
	m->temperature = NAN;
	m->max_tokens = 48;
}

/* The check reads the context; a call is answered whole and streamed,
 * with the usage the server's log confirms. */
static void test_client(void **state)
{
	(void)state;
	cuco_llm_config cfg;
	cuco_llm_config_defaults(&cfg);
	cuco_model m;
	model_at(&m);
	cuco_llm *c;
	cuco_err err = { 0 };
	assert_int_equal(cuco_llm_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_served sv;
	if (cuco_llm_check(c, &m, &sv, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_true(sv.any_name);
	assert_int_equal(sv.context, CONTEXT);
	assert_int_equal(m.context, CONTEXT);
	for (int stream = 0; stream < 2; stream++) {
		served before = server_said();
		cuco_llm_msg msg = { "user", "Write one line of C that adds two integers." };
		cuco_llm_request req = { .model = &m, .system = "You write C.", .nmsgs = 1, .msgs = &msg,
			.temperature = 0, .stream = stream };
		cuco_llm_reply r;
		if (cuco_llm_complete(c, &req, &r, &err) != CUCO_OK)
			fail_msg("%s call: %s", stream ? "streamed" : "whole", err.msg);
		assert_non_null(r.text);
		assert_int_equal(r.attempts, 1);
		served after = server_after(before, 1);
		assert_int_equal(after.tasks - before.tasks, 1);
		assert_true(r.tokens_in > 10 && r.tokens_out > 0);
		assert_int_equal(r.tokens_in, after.prompt - before.prompt);
		assert_int_equal(r.tokens_out, after.completion - before.completion);
		cuco_llm_reply_free(&r);
	}
	cuco_llm_free(c);
}

/* No process of the run left: nothing whose command line names its folder. */
static void nothing_left(const run_env *r)
{
	DIR *d = opendir("/proc");
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));) {
		char path[300], buf[4096];
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			buf[i] = buf[i] ? buf[i] : ' ';
		buf[n] = '\0';
		if (strstr(buf, r->dir))
			fail_msg("process %s is left: %s", de->d_name, buf);
	}
	closedir(d);
}

static void run_strategy(const char *strategy, const char *knobs, const char *budget)
{
	run_env r;
	run_env_new(&r);
	char cfg[1024];
	/* 256 output tokens: the tiny model is slow on shared cores and
	 * rambles; a reply cut off there is refused like any other. */
	snprintf(cfg, sizeof cfg, "retries = 1\npatch_attempts = 2\n[model gemma]\n"
		"provider = llamacpp\nmodel = gemma-3-270m\nurl = %s\nmax_tokens = 256\n%s", url, knobs);
	run_env_config(&r, NULL, cfg);
	served before = server_said();
	double t0 = cuco_mono();
	const char *args[] = { "--strategy", strategy, "--budget", budget, NULL };
	int rc = run_cuco(&r, "cpu-gemm-allgather", args);
	double took = cuco_mono() - t0;
	char *out = slurp(r.out);
	char logpath[300];
	snprintf(logpath, sizeof logpath, "%s/cuco.log", r.run);
	char *log = slurp(logpath);
	said s = cuco_said(log);
	served after = server_after(before, s.calls);
	printf("local-model: %s: exit %d in %.0f s; %lld calls (%lld refused replies, %lld fitted), "
		"tokens cuco %lld + %lld, server %lld + %lld in %lld tasks\n", strategy, rc, took,
		(long long)s.calls, (long long)s.refusals, (long long)s.fitted, (long long)s.prompt,
		(long long)s.completion, (long long)(after.prompt - before.prompt),
		(long long)(after.completion - before.completion),
		(long long)(after.tasks - before.tasks));
	const char *summary = strstr(out, "candidates from the strategy");
	if (rc != 0 || !summary)
		fail_msg("cuco run --strategy %s exited %d:\n%s", strategy, rc, out);
	while (summary > out && summary[-1] != '\n')
		summary--;
	printf("local-model: %s: %.*s\n", strategy, (int)strcspn(summary, "\n"), summary);
	/* The check found the server and its context before the baseline. */
	assert_non_null(strstr(log, "answers any model name with the one it serves"));
	assert_non_null(strstr(log, "context 8192 tokens (/models)"));
	/* Every request answered on its first attempt, none refused as too long. */
	assert_true(s.calls > 0);
	assert_int_equal(s.retried, 0);
	assert_null(strstr(log, "attempt 1 failed"));
	assert_null(strstr(log, "exceeds the available context size"));
	/* Each call the server served is one cuco counted, token for token. */
	assert_int_equal(after.tasks - before.tasks, s.calls);
	assert_int_equal(after.prompt - before.prompt, s.prompt);
	assert_int_equal(after.completion - before.completion, s.completion);
	/* The tiny model's wrong replies were refused with a reason: answered
	 * in the chat (patch_attempts = 2: a second reply follows), or, for a
	 * planner's plan (cut off at 256 tokens), no sample made of it. */
	assert_true(s.refusals > 0);
	free(log);
	free(out);
	nothing_left(&r);
	run_env_free(&r);
}

static void test_evolve(void **state)
{
	(void)state;
	run_strategy("evolve", "[evolve]\nfastpath = false\nislands = 1\nmeta_interval = 0\n", "1");
}

static void test_beam(void **state)
{
	(void)state;
	run_strategy("beam", "[beam]\nwidth = 1\nplans = 1\nsamples = 1\niterations = 1\n", "1");
}

/* A server whose owner dies goes with it: a test killed by its runner's
 * timeout never reaches teardown, and must not leave llama-server behind. */
static void test_owner_gone(void **state)
{
	(void)state;
	char own[64] = "/tmp/cuco-local-owner-XXXXXX", path[128], *pid = NULL;
	assert_non_null(mkdtemp(own));
	pid_t owner = fork();
	if (owner == 0) {
		pause();
		_exit(0);
	}
	assert_true(owner > 0);
	if (shell("CUCO_LOCAL_MODEL_OWNER=%d CUCO_LOCAL_MODEL_THREADS=1 %s start %s 512 >%s/start.out",
			(int)owner, script, own, own) != 0) {
		shell("cat %s/start.out %s/server.log", own, own);
		fail_msg("the second server did not start");
	}
	snprintf(path, sizeof path, "%s/server.pid", own);
	assert_int_equal(cuco_read_file(path, 64, &pid, NULL, NULL), CUCO_OK);
	int server = atoi(pid);
	free(pid);
	assert_int_equal(shell("kill -0 %d 2>/dev/null", server), 0);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	int alive = 1;
	for (int i = 0; i < 100 && alive; i++) {   /* the watch looks once a second */
		usleep(100000);
		alive = shell("kill -0 %d 2>/dev/null", server) == 0;
	}
	if (alive)
		shell("%s stop %s", script, own);
	shell("rm -rf '%s'", own);
	if (alive)
		fail_msg("llama-server %d outlived its owner by 10 s", server);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_local_model SCRIPTS/local-model\n");
		return 1;
	}
	script = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client),
		cmocka_unit_test(test_evolve),
		cmocka_unit_test(test_beam),
		cmocka_unit_test(test_owner_gone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
