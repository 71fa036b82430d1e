/* test_llm_server.h — start tests/agents/llm_server.py on loopback with a
 * script of replies, and read back what it was sent. For the LLM tests
 * only; header-only so each test binary stays one file. */
#ifndef CUCO_TEST_LLM_SERVER_H
#define CUCO_TEST_LLM_SERVER_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

typedef struct llm_server {
	pid_t pid;
	int port;
	char dir[64];
	char log[128];
	char url[64];   /* http://127.0.0.1:PORT/v1 */
} llm_server;

/* The interpreter and llm_server.py, from the test's command line. */
static const char *llm_python, *llm_server_py;

/* Start a server answering with `script` (the JSON of llm_server.py). */
static inline int llm_server_start(llm_server *s, const char *script)
{
	const char *py = llm_python, *srv = llm_server_py;
	if (!py || !srv)
		return -1;
	snprintf(s->dir, sizeof s->dir, "/tmp/cuco-llm-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	char script_path[128], port_path[128];
	snprintf(script_path, sizeof script_path, "%s/script.json", s->dir);
	snprintf(port_path, sizeof port_path, "%s/port", s->dir);
	snprintf(s->log, sizeof s->log, "%s/requests.jsonl", s->dir);
	if (cuco_write_file(script_path, script, strlen(script), NULL) != CUCO_OK)
		return -1;
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		execl(py, py, srv, script_path, s->log, port_path, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {  /* 10 s at most */
		char *text;
		if (cuco_read_file(port_path, 64, &text, NULL, NULL) == CUCO_OK) {
			s->port = atoi(text);
			free(text);
			snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", s->port);
			return 0;
		}
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* Give a running server a new script and an empty request log. */
static inline int llm_server_script(llm_server *s, const char *script)
{
	char script_path[128];
	snprintf(script_path, sizeof script_path, "%s/script.json", s->dir);
	if (cuco_write_file(s->log, "", 0, NULL) != CUCO_OK)
		return -1;
	return cuco_write_file(script_path, script, strlen(script), NULL) == CUCO_OK ? 0 : -1;
}

static inline void llm_server_stop(llm_server *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", s->dir);
}

/* The request log: one JSON object per line; NULL when none arrived. */
static inline char *llm_server_requests(const llm_server *s, int *count)
{
	char *text = NULL;
	*count = 0;
	if (cuco_read_file(s->log, 1 << 24, &text, NULL, NULL) != CUCO_OK)
		return NULL;
	for (char *p = text; *p; p++)
		*count += *p == '\n';
	return text;
}

#endif
