/* util.c — errors, time, buffers, files. */
#include "core.h"
#include "env.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cuco_errf(cuco_err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
		/* One line: a message may quote input that holds newlines. */
		for (char *p = e->msg; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		e->code = code;
	}
	return code;
}

double cuco_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double cuco_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cuco_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &a);
	pthread_condattr_destroy(&a);
}

void cuco_cond_wait_s(pthread_cond_t *cond, pthread_mutex_t *lock, double seconds)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long ns = ts.tv_nsec + (long)(seconds * 1e9);
	ts.tv_sec += ns / 1000000000L;
	ts.tv_nsec = ns % 1000000000L;
	pthread_cond_timedwait(cond, lock, &ts);
}

void *cuco_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fputs("cuco: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *cuco_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fputs("cuco: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *cuco_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("cuco: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *cuco_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = cuco_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

char *cuco_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

bool cuco_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);
	bool fits = n < size;
	if (!fits)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return fits;
}

static void buf_reserve(cuco_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = cuco_xrealloc(b->data, cap);
	b->cap = cap;
}

void cuco_buf_append(cuco_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void cuco_buf_puts(cuco_buf *b, const char *s)
{
	cuco_buf_append(b, s, strlen(s));
}

void cuco_buf_printf(cuco_buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0) {
		buf_reserve(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
		b->len += (size_t)n;
	}
	va_end(ap2);
}

bool cuco_buf_add_once(cuco_buf *b, const char *name)
{
	if (b->len == 0)
		cuco_buf_puts(b, "\n");
	size_t n = strlen(name);
	for (const char *at = b->data + 1; at < b->data + b->len && (at = strstr(at, name)) != NULL; at++)
		if (at[-1] == '\n' && at[n] == '\n')
			return false;
	cuco_buf_printf(b, "%s\n", name);
	return true;
}

void cuco_buf_free(cuco_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int cuco_read_file(const char *path, size_t max, char **out, size_t *len, cuco_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cuco_errf(err, errno == ENOENT ? CUCO_ENOTFOUND : CUCO_EENV,
			"%s: cannot open: %s", path, strerror(errno));
	cuco_buf b = { 0 };
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			cuco_buf_free(&b);
			return cuco_errf(err, CUCO_EENV, "%s: read failed: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			close(fd);
			cuco_buf_free(&b);
			return cuco_errf(err, CUCO_EDATA, "%s: larger than %zu bytes", path, max);
		}
		cuco_buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	if (!b.data)
		cuco_buf_append(&b, "", 0);
	*out = b.data;
	if (len)
		*len = b.len;
	return CUCO_OK;
}

int cuco_read_text(const char *path, size_t max, char **out, size_t *len, cuco_err *err)
{
	size_t n;
	int rc = cuco_read_file(path, max, out, &n, err);
	if (rc != CUCO_OK)
		return rc;
	const char *nul = memchr(*out, '\0', n);
	if (nul) {
		rc = cuco_errf(err, CUCO_EDATA, "%s: byte %zu is NUL; a text file holds none", path,
			(size_t)(nul - *out) + 1);
		free(*out);
		*out = NULL;
		return rc;
	}
	if (len)
		*len = n;
	return CUCO_OK;
}

int cuco_write_file(const char *path, const char *data, size_t len, cuco_err *err)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
		return cuco_errf(err, CUCO_EDATA, "%s: path too long", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		/* Named as the caller named it: the temporary file is ours. A
		 * folder that is not there is the path's fault, not the machine's. */
		int e = errno;
		return cuco_errf(err, e == ENOENT || e == ENOTDIR ? CUCO_EDATA : CUCO_EENV,
			"%s: cannot create: %s", path, strerror(e));
	}
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;
			close(fd);
			unlink(tmp);
			return cuco_errf(err, CUCO_EENV, "%s: write failed: %s", path, strerror(e));
		}
		off += (size_t)n;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return cuco_errf(err, CUCO_EENV, "%s: cannot write: %s", path, strerror(e));
	}
	return CUCO_OK;
}

bool cuco_run_driven(const char *run_dir)
{
	char path[4096], pid[32] = "";
	snprintf(path, sizeof path, "%s/%s", run_dir, CUCO_RUN_LOCK);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, pid, sizeof pid - 1);
	close(fd);
	pid[n > 0 ? n : 0] = '\0';
	long v = strtol(pid, NULL, 10);
	/* EPERM: alive, another user's (a shared run directory). */
	return v > 0 && (kill((pid_t)v, 0) == 0 || errno == EPERM);
}

#define REMOVE_DEPTH 64  /* folders below a removed one, at most: a folder open each */

/* Remove what the folder dfd holds (closing dfd), depth folders down at
 * most. Each folder is entered by its descriptor and its name in the one
 * above, never through a link (O_NOFOLLOW) nor by a path from the top: a
 * tree another user may change while it goes (a stage's $TMPDIR, its
 * user's to write) cannot swap a folder for a link and have cuco's user
 * remove files elsewhere. */
static void remove_below(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0
				|| unlinkat(dirfd(d), e->d_name, 0) == 0 || depth == 0)
			continue;
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_below(sub, depth - 1);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

void cuco_remove_tree(const char *path)
{
	if (unlink(path) == 0)
		return;  /* a file or a link */
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		remove_below(fd, REMOVE_DEPTH);
		rmdir(path);
	}
}

int cuco_mkdir_p(const char *path, cuco_err *err)
{
	char p[4096];
	if (!cuco_strlcpy(p, path, sizeof p))
		return cuco_errf(err, CUCO_EDATA, "%s: path too long", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return cuco_errf(err, CUCO_EENV, "%s: cannot create directory: %s", p, strerror(errno));
		*s = '/';
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return cuco_errf(err, CUCO_EENV, "%s: cannot create directory: %s", p, strerror(errno));
	return CUCO_OK;
}

/* Edit distance of a and b, both shorter than 64 bytes: insertions,
 * deletions, substitutions and swaps of two neighbours (lihgt, light)
 * each count one. */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), d[64][64];
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++)
		for (int j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

int cuco_name_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *cuco_nearest(const char *word, const char *const *names, size_t n)
{
	size_t len = strlen(word);
	if (len >= 63)
		return NULL;
	int limit = len >= 6 ? (int)len / 3 : 1, best = limit + 1;
	const char *nearest = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strlen(names[i]) >= 63)
			continue;
		int d = edit_distance(word, names[i]);
		if (d < best) {
			best = d;
			nearest = names[i];
		}
	}
	return nearest;
}

/* The length of the well-formed UTF-8 character at s (n bytes left), or 0
 * with *part the length of its longest well-formed start (at least 1). */
static size_t utf8_char(const unsigned char *s, size_t n, size_t *part)
{
	unsigned char c = s[0];
	size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
		: c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	/* The second byte's range, narrower after E0, ED, F0 and F4. */
	unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
	unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
	*part = 1;
	for (size_t k = 1; k < len; k++) {
		if (k >= n || s[k] < (k == 1 ? lo : 0x80) || s[k] > (k == 1 ? hi : 0xBF))
			return 0;
		*part = k + 1;
	}
	return len;
}

char *cuco_utf8_clean(const char *s)
{
	size_t n = strlen(s);
	cuco_buf b = { 0 };
	for (size_t i = 0; i < n;) {
		size_t part, len = utf8_char((const unsigned char *)s + i, n - i, &part);
		if (len)
			cuco_buf_append(&b, s + i, len);
		else
			cuco_buf_puts(&b, "\xEF\xBF\xBD");
		i += len ? len : part;
	}
	if (!b.data)
		return cuco_xstrdup("");
	return b.data;
}
