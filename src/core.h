/* core.h — the small core every part of cuco may use: error values, the
 * run log, time, files and a growable text buffer.
 *
 * Errors are returned, never printed deep inside: a function that can fail
 * returns one of the CUCO_E* codes and fills a cuco_err with one line that
 * names the file, field or value at fault. Only main() prints it, as
 * "cuco: <where>: <what>".
 */
#ifndef CUCO_CORE_H
#define CUCO_CORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes of the cuco program; also the error classes of cuco_err. */
enum {
	CUCO_OK = 0,
	CUCO_EUSAGE = 1, /* bad command line */
	CUCO_EDATA = 2,  /* bad input or stored data */
	CUCO_EENV = 3,   /* something the environment lacks (mpirun, GPU, disk) */
	CUCO_ENOTFOUND = 4, /* a lookup missed; never an exit code */
	CUCO_EAGAIN = 5, /* a passing failure (a model call gave up); never an exit code */
};

typedef struct cuco_err {
	int code;       /* one of CUCO_E* */
	char msg[512];  /* "<where>: <what>", one line, no trailing newline */
} cuco_err;

/* Set *e (when not NULL) and return code, so callers can write
 * `return cuco_errf(err, CUCO_EDATA, "%s: bad field", path);`. */
int cuco_errf(cuco_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- log ------------------------------------------------------------ */
/* One log file per process (normally RUN/cuco.log). Writes are serialised
 * by a lock, so any thread may log. While a curses screen owns the
 * terminal, cuco_log_quiet(true) keeps everything off stderr. */
enum { CUCO_LOG_ERROR, CUCO_LOG_WARN, CUCO_LOG_INFO, CUCO_LOG_DEBUG };
int cuco_log_open(const char *path, cuco_err *err);
void cuco_log_close(void);
void cuco_log_quiet(bool quiet);
void cuco_log_level(int level);
void cuco_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- time ----------------------------------------------------------- */
double cuco_now(void);   /* wall clock, seconds since the epoch */
double cuco_mono(void);  /* monotonic seconds, for intervals */
/* Wait on cond, holding lock, for at most `seconds` (woken or not). */
void cuco_cond_wait_s(pthread_cond_t *cond, pthread_mutex_t *lock, double seconds);

/* ---- text buffer ---------------------------------------------------- */
typedef struct cuco_buf {
	char *data;  /* NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
} cuco_buf;
void cuco_buf_append(cuco_buf *b, const char *s, size_t n);
void cuco_buf_puts(cuco_buf *b, const char *s);
void cuco_buf_printf(cuco_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cuco_buf_free(cuco_buf *b);

/* ---- memory and files ------------------------------------------------ */
void *cuco_xmalloc(size_t n);        /* aborts on exhaustion: nothing sane remains */
void *cuco_xcalloc(size_t n, size_t size);
void *cuco_xrealloc(void *p, size_t n);
char *cuco_xstrdup(const char *s);
/* Read a whole file (at most max bytes); *out is NUL-terminated, free it. */
int cuco_read_file(const char *path, size_t max, char **out, size_t *len, cuco_err *err);
/* Write through a temporary file and rename(2), so readers never see half. */
int cuco_write_file(const char *path, const char *data, size_t len, cuco_err *err);
int cuco_mkdir_p(const char *path, cuco_err *err);
/* Strip leading and trailing whitespace in place; returns the new start.
 * The `key = value` readers (config, search knobs, themes) share it. */
char *cuco_trim(char *s);
/* Copy src to dst with strlen(dst) < size always; returns false if cut. */
bool cuco_strlcpy(char *dst, const char *src, size_t size);

/* ---- line diff (diff.c) ---------------------------------------------- */
/* Myers' O(ND) greedy line diff shaped as a unified diff with context; the
 * screen's diff pane and `cuco diff` both show it. */
typedef enum cuco_diff_kind {
	CUCO_DIFF_HUNK,     /* "@@ -a,b +c,d @@" */
	CUCO_DIFF_CONTEXT,  /* ' ' */
	CUCO_DIFF_DEL,      /* '-' */
	CUCO_DIFF_ADD,      /* '+' */
} cuco_diff_kind;

typedef struct cuco_diff_line {
	cuco_diff_kind kind;
	const char *text;  /* points into the compared texts (or the hunk header) */
	int len;           /* bytes, without the newline */
} cuco_diff_line;

typedef struct cuco_diff {
	cuco_diff_line *lines;
	size_t n;
	int added, deleted;
	char *headers;       /* storage for the hunk header texts */
} cuco_diff;

/* Diff old against new (both texts must outlive d). context: lines kept
 * around each change. Edit scripts longer than max_d fall back to a
 * whole-text replacement, so a wholly rewritten file stays cheap. */
void cuco_diff_compute(cuco_diff *d, const char *old, size_t old_len,
	const char *new, size_t new_len, int context, int max_d);
void cuco_diff_free(cuco_diff *d);

#endif
