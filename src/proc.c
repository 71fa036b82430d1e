/* proc.c — argument vectors, shell quoting and $PATH (proc.h). */
#include "proc.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
