/* proc.c — argument vectors, shell quoting, $PATH and a short command's
 * output (proc.h). */
#include "proc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cuco_argv_push(cuco_argv *a, const char *word)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? 2 * a->cap : 16;
		a->v = cuco_xrealloc(a->v, a->cap * sizeof *a->v);
	}
	a->v[a->n++] = cuco_xstrdup(word);
	a->v[a->n] = NULL;
}

void cuco_argv_push_words(cuco_argv *a, const char *text)
{
	char word[1024];
	for (const char *p = text; *p;) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, " \t\n");
		if (n == 0)
			break;
		snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), p);
		cuco_argv_push(a, word);
		p += n;
	}
}

void cuco_argv_append(cuco_argv *a, char *const *words)
{
	for (size_t i = 0; words && words[i]; i++)
		cuco_argv_push(a, words[i]);
}

void cuco_argv_free(cuco_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof *a);
}

void cuco_argv_join(char *const *words, cuco_buf *out)
{
	cuco_buf_puts(out, "");
	for (size_t i = 0; words && words[i]; i++) {
		if (i)
			cuco_buf_puts(out, " ");
		cuco_shell_quote(out, words[i]);
	}
}

void cuco_shell_quote(cuco_buf *out, const char *word)
{
	bool plain = *word != '\0';
	for (const char *p = word; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || strchr("_./-+=,:@%", *p);
	if (plain) {
		cuco_buf_puts(out, word);
		return;
	}
	cuco_buf_puts(out, "'");
	for (const char *p = word; *p; p++) {
		if (*p == '\'')
			cuco_buf_puts(out, "'\\''");
		else
			cuco_buf_append(out, p, 1);
	}
	cuco_buf_puts(out, "'");
}

bool cuco_which(const char *prog, char *path, size_t size)
{
	if (strchr(prog, '/')) {
		cuco_strlcpy(path, prog, size);
		return access(prog, X_OK) == 0;
	}
	const char *env = getenv("PATH");
	for (const char *p = env ? env : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");
		char full[PATH_MAX];
		snprintf(full, sizeof full, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", prog);
		if (access(full, X_OK) == 0) {
			cuco_strlcpy(path, full, size);
			return true;
		}
		p += len + (p[len] == ':');
	}
	return false;
}

/* In the child: stdin and stderr /dev/null, stdout the pipe, then argv. */
static _Noreturn void run_child(char *const *argv, int out_fd)
{
	setpgid(0, 0);
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0
		|| dup2(out_fd, STDOUT_FILENO) < 0)
		_exit(127);
	execvp(argv[0], argv);
	_exit(127);
}

bool cuco_proc_output(char *const *argv, double timeout_s, char *out, size_t size)
{
	int fd[2];
	out[0] = '\0';
	if (pipe2(fd, O_CLOEXEC) != 0)
		return false;
	pid_t pid = fork();
	if (pid == 0)
		run_child(argv, fd[1]);
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		return false;
	}
	setpgid(pid, pid);
	size_t len = 0;
	bool cut = false;
	double deadline = cuco_mono() + timeout_s;
	for (;;) {
		double left = deadline - cuco_mono();
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || len + 1 >= size) {
			cut = true;
			break;
		}
		ssize_t n = read(fd[0], out + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	close(fd[0]);
	if (cut)
		kill(-pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return !cut && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
