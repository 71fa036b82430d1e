/* test_evolve_run.h — run `cuco run` against the scripted model server
 * (test_llm_server.h) with a config file of its own, and read back what
 * the run stored. Shared by the strategies' end-to-end tests. */
#ifndef CUCO_TEST_EVOLVE_RUN_H
#define CUCO_TEST_EVOLVE_RUN_H

#include <fcntl.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "store/store.h"
#include "test_llm_server.h"

typedef struct run_env {
	char dir[64];          /* scratch: config/, run/, out */
	char run[256];
	char out[256];
	char config[256];      /* the config file cuco reads */
} run_env;

static inline void run_env_new(run_env *r)
{
	snprintf(r->dir, sizeof r->dir, "/tmp/cuco-strategy-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->run, sizeof r->run, "%s/run", r->dir);
	snprintf(r->out, sizeof r->out, "%s/out", r->dir);
	char cfg_dir[128];
	snprintf(cfg_dir, sizeof cfg_dir, "%s/xdg/cuco", r->dir);
	assert_int_equal(cuco_mkdir_p(cfg_dir, NULL), CUCO_OK);
	snprintf(r->config, sizeof r->config, "%s/config", cfg_dir);
}

static inline void run_env_free(run_env *r)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
}

/* A config naming the scripted server as model "test", then `extra`. */
static inline void run_env_config(run_env *r, const llm_server *s, const char *extra)
{
	char text[2048];
	int n = 0;
	if (s)
		n = snprintf(text, sizeof text, "retries = 0\n[model test]\nprovider = openai\n"
			"model = test\nurl = %s\napi_key_env =\n", s->url);
	snprintf(text + n, sizeof text - (size_t)n, "%s", extra);
	assert_int_equal(cuco_write_file(r->config, text, strlen(text), NULL), CUCO_OK);
}

/* Start `cuco run WORKLOAD --run DIR --headless --jobs 1 --llm-jobs 1
 * --rebench 0 ARGS…` with this config, output to r->out; its pid. One
 * model call at a time keeps a scripted server's replies in the order
 * the test wrote them; a test of concurrency asks for more in ARGS. */
static inline pid_t spawn_cuco(const run_env *r, const char *workload, const char *const *args)
{
	const char *bin = getenv("CUCO_BIN");
	char *argv[32] = { "cuco", "run", (char *)workload, "--run", (char *)r->run, "--headless",
		"--jobs", "1", "--llm-jobs", "1", "--rebench", "0" };
	int argc = 12;
	for (int i = 0; args[i] && argc < 31; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char xdg[128];
		snprintf(xdg, sizeof xdg, "%s/xdg", r->dir);
		setenv("XDG_CONFIG_HOME", xdg, 1);
		int fd = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(100);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(bin ? bin : "build/cuco", argv);
		_exit(101);
	}
	return pid;
}

/* spawn_cuco, then its exit status. */
static inline int run_cuco(const run_env *r, const char *workload, const char *const *args)
{
	pid_t pid = spawn_cuco(r, workload, args);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A file's text, which the test frees. Not inlined: GCC then takes the
 * returned buffer for the address of the local that received it. */
static __attribute__((noinline, unused)) char *slurp(const char *path)
{
	char *text = NULL;
	cuco_err err = { 0 };
	if (cuco_read_file(path, 1 << 24, &text, NULL, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return text;
}

/* The requests the server received, as cJSON bodies (count in *n). */
static inline cJSON **server_bodies(const llm_server *s, int *n)
{
	char *text = llm_server_requests(s, n);
	cJSON **out = calloc((size_t)*n + 1, sizeof *out);
	int k = 0;
	for (char *line = text, *next; line && *line && k < *n; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		cJSON *rec = cJSON_Parse(line);
		const cJSON *body = cJSON_GetObjectItemCaseSensitive(rec, "body");
		out[k++] = cJSON_IsString(body) ? cJSON_Parse(body->valuestring)
			: cJSON_Duplicate(body, true);
		cJSON_Delete(rec);
	}
	*n = k;
	free(text);
	return out;
}

static inline void free_bodies(cJSON **b, int n)
{
	for (int i = 0; i < n; i++)
		cJSON_Delete(b[i]);
	free(b);
}

/* The system and first user message of a request body ("" when absent). */
static inline const char *body_message(const cJSON *body, const char *role)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(body, "messages")) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "role");
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (cJSON_IsString(r) && strcmp(r->valuestring, role) == 0 && cJSON_IsString(c))
			return c->valuestring;
	}
	const cJSON *sys = cJSON_GetObjectItemCaseSensitive(body, "system");
	return strcmp(role, "system") == 0 && cJSON_IsString(sys) ? sys->valuestring : "";
}

/* A whole program as a model's reply: the directive, then one fenced file
 * (malloc'd). */
static inline char *program_reply(const char *directive, const char *program)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "%s```c\n%s```\n", directive, program);
	return b.data;
}

/* A script of replies for llm_server.py; texts[n]. */
static inline char *script_of(const char *const *texts, int n)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "replies");
	for (int i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "text", texts[i]);
		cJSON_AddNumberToObject(e, "tokens_in", 1000);
		cJSON_AddNumberToObject(e, "tokens_out", 100);
		cJSON_AddItemToArray(a, e);
	}
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Every candidate of a run, in id order (malloc'd). */
typedef struct run_rows {
	cuco_candidate *c;
	size_t n;
} run_rows;

static inline int rows_one(const cuco_candidate *c, void *arg)
{
	run_rows *r = arg;
	r->c = realloc(r->c, (r->n + 1) * sizeof *r->c);
	r->c[r->n++] = *c;
	return 0;
}

static inline int rows_txn(cuco_txn *txn, void *arg)
{
	run_rows *r = arg;
	free(r->c);
	r->c = NULL;
	r->n = 0;
	return cuco_cand_each(txn, 1, rows_one, r);
}

static inline cuco_store *open_run(const run_env *r, run_rows *rows)
{
	cuco_store *st = NULL;
	cuco_err err = { 0 };
	if (cuco_store_open(r->run, CUCO_STORE_RDONLY, &st, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	memset(rows, 0, sizeof *rows);
	if (cuco_store_read(st, rows_txn, rows, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	return st;
}

/* The LLM children (llm-full, llm-diff, llm-cross) of a run, in id order. */
static inline int llm_children(const run_rows *r, const cuco_candidate **out, int max)
{
	int n = 0;
	for (size_t i = 0; i < r->n; i++) {
		cuco_origin o = r->c[i].origin;
		if (o == CUCO_ORIGIN_LLM_FULL || o == CUCO_ORIGIN_LLM_DIFF || o == CUCO_ORIGIN_LLM_CROSS) {
			if (n < max)
				out[n] = &r->c[i];
			n++;
		}
	}
	return n;
}

/* A reply editing the toy fixture's modelled latency constant from one
 * value to another (its base directive stated). */
static inline char *toy_scale(const char *from, const char *to)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "DIRECTIVE:\nbackend: msg\nissuer: one\nplacement: after\n"
		"sync: fence\ngranularity: 1\n\n<NAME>scale_%s</NAME>\n<DESCRIPTION>Latency base %s."
		"</DESCRIPTION>\n<DIFF>\n<<<<<<< SEARCH\n\tdouble us = %s * backend[TOY_BACKEND - 1];\n"
		"=======\n\tdouble us = %s * backend[TOY_BACKEND - 1];\n>>>>>>> REPLACE\n</DIFF>\n",
		to, to, from, to);
	return b.data;
}

/* A test program's arguments, PYTHON LLM_SERVER_PY; false (said) when
 * they are missing. toy (size bytes) gets the toy fixture's folder. */
static inline bool e2e_args(int argc, char **argv, char *toy, size_t size)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PYTHON LLM_SERVER_PY\n", argv[0]);
		return false;
	}
	llm_python = argv[1];
	llm_server_py = argv[2];
	const char *src = getenv("CUCO_SOURCE_ROOT");
	snprintf(toy, size, "%s/tests/agents/fixtures/toy", src ? src : ".");
	return true;
}

/* One end-to-end case: a scripted server (when it has replies), a scratch
 * run directory with its config, and what the last run left. */
typedef struct e2e {
	llm_server s;
	bool served;
	run_env r;
	char **texts;           /* the replies, freed at the end */
	int ntexts;
	char *script;
	char *out;              /* the last run's output */
	run_rows rows;          /* and its candidates */
	cuco_store *st;
} e2e;

/* Serve texts[n] (taken over; n == 0: no server, no model in the config)
 * and write the config: the model, then `config`. */
static inline void e2e_begin(e2e *t, char **texts, int n, const char *config)
{
	memset(t, 0, sizeof *t);
	t->texts = texts;
	t->ntexts = n;
	if (n > 0) {
		t->script = script_of((const char *const *)texts, n);
		assert_int_equal(llm_server_start(&t->s, t->script), 0);
		t->served = true;
	}
	run_env_new(&t->r);
	run_env_config(&t->r, t->served ? &t->s : NULL, config);
}

/* `cuco run` (see run_cuco); a failed run fails the test with its output.
 * Then the store is open and its candidates read. */
static inline void e2e_run(e2e *t, const char *workload, const char *const *args)
{
	if (t->st) {
		cuco_store_close(t->st);
		t->st = NULL;
	}
	free(t->rows.c);
	free(t->out);
	int rc = run_cuco(&t->r, workload, args);
	t->out = slurp(t->r.out);
	if (rc != 0)
		fail_msg("cuco run exited %d:\n%s", rc, t->out);
	t->st = open_run(&t->r, &t->rows);
}

/* The run's log file, which the test frees. */
static inline char *e2e_log(const e2e *t)
{
	char path[300];
	snprintf(path, sizeof path, "%s/cuco.log", t->r.run);
	return slurp(path);
}

/* What `cuco ARGS --run RUN` prints for the last run (malloc'd); a
 * command that fails fails the test. */
static inline char *cuco_output(const e2e *t, const char *args)
{
	char cmd[1200], out[300];
	snprintf(out, sizeof out, "%s/cmd.txt", t->r.dir);
	snprintf(cmd, sizeof cmd, "'%s' %s --run '%s' > '%s'", getenv("CUCO_BIN"), args, t->r.run,
		out);
	assert_int_equal(system(cmd), 0);
	return slurp(out);
}

static inline void e2e_end(e2e *t)
{
	if (t->st)
		cuco_store_close(t->st);
	if (t->served)
		llm_server_stop(&t->s);
	run_env_free(&t->r);
	for (int i = 0; i < t->ntexts; i++)
		free(t->texts[i]);
	free(t->script);
	free(t->out);
	free(t->rows.c);
}

#endif
