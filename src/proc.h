/* proc.h — generic helpers for the processes cuco starts: argument
 * vectors (a command is always one: no shell between cuco and what it
 * runs), a word quoted for the one place that needs a shell, a program
 * found in $PATH, and what a short command prints, bounded in time and
 * size. Part of the small core (proc.c). A stage, with its limits and
 * sandbox, is the evaluator's (eval_stage_run). */
#ifndef CUCO_PROC_H
#define CUCO_PROC_H

#include "core.h"

#include <stdbool.h>
#include <stddef.h>

/* A NULL-terminated vector of malloc'd words: a stage's command. */
typedef struct cuco_argv {
	char **v;
	size_t n, cap;
} cuco_argv;

void cuco_argv_push(cuco_argv *a, const char *word);
/* Push each blank-separated word of text (a compiler with its flags). */
void cuco_argv_push_words(cuco_argv *a, const char *text);
void cuco_argv_append(cuco_argv *a, char *const *words);
void cuco_argv_free(cuco_argv *a);
/* The words as one line, each quoted for /bin/sh where it needs it: for
 * messages, the build's cache key, and the one runner that needs a shell
 * (ssh, whose far side runs one anyway). */
void cuco_argv_join(char *const *words, cuco_buf *out);
/* Append `word` to out, quoted for /bin/sh when needed. */
void cuco_shell_quote(cuco_buf *out, const char *word);

/* Find an executable in $PATH (or a path as is); false when missing. */
bool cuco_which(const char *prog, char *path, size_t size);

/* What argv (run as it is, execvp: no shell between) prints on its
 * standard output, with /dev/null for its stdin and stderr: at most
 * size - 1 bytes, NUL-terminated in out, whatever its end. Past size or
 * timeout_s it is killed (its process group): a tool that hangs (a
 * wedged driver) or floods. True when it exited 0 within both. */
bool cuco_proc_output(char *const *argv, double timeout_s, char *out, size_t size);

#endif
