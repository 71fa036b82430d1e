/* cache.c — RUN/cache: built programs kept by content hash, bounded.
 *
 * A build lands as RUN/cache/<hash> (evaluator.c says what the hash
 * covers), so a candidate evaluated again, a confirmation round or a
 * resumed run skips its compile. Every program built stayed there, of any
 * size and whatever became of its candidate (issue 24): the host's disk
 * was the candidates' to fill. Now three bounds hold:
 *  - a program larger than the size per program (256 MiB) is refused at
 *    its build, a compile error that names the bound;
 *  - a program whose candidate failed (crashed, answered wrong, timed out,
 *    was refused) is evicted: nothing will run it again. One that failed
 *    on the environment stays, for the evaluation tried again;
 *  - past the size per run (4 GiB, all programs together), those used
 *    least recently (a use sets the file's time) are evicted.
 * A program in use is never evicted: an evaluation holds a shared flock on
 * its program from the moment it finds or builds it until it is done; the
 * evictor takes an exclusive one without waiting and passes over what it
 * cannot take. A program found again after eviction is built again.
 *
 * The cache is cuco's own: a build's output (the stage user's, sandbox.c)
 * is cuco's, mode 0755, once it is in (a copy: a process of the stage
 * user's that opened the build's file keeps no way to write it), and
 * stages see the folder read-only. A file there that is not cuco's alone
 * (a cache an older cuco left, the stage user's to rewrite) is never held
 * nor run: it is built again. Other files there (the interposer,
 * cuco-count-*.so) are not programs and stay. */
#include "eval/eval_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRAM_MB 256L
#define RUN_MB 4096L

void eval_cache_open(eval_cache *c, const char *root, long program_mb, long run_mb)
{
	cuco_strlcpy(c->root, root, sizeof c->root);
	c->program_mb = program_mb > 0 ? program_mb : PROGRAM_MB;
	c->run_mb = run_mb > 0 ? run_mb : RUN_MB;
}

/* Whether name is a program's: the hash, hex. */
static bool program_name(const char *name)
{
	return strlen(name) == CUCO_HASH_LEN && strspn(name, "0123456789abcdef") == CUCO_HASH_LEN;
}

/* fd, opened and locked, is still what path names: not evicted between. */
static bool still_there(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A regular file of cuco's user that nobody else may write. */
static bool owned(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

bool eval_cache_owned(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool ok = fd >= 0 && owned(fd);
	if (fd >= 0)
		close(fd);
	return ok;
}

int eval_cache_own(const char *path)
{
	char tmp[PATH_MAX + 16], buf[1 << 16];
	if (snprintf(tmp, sizeof tmp, "%s.own.XXXXXX", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* A name of this call's own: two evaluations of one program may
	 * publish it at once (a shared ".own" made one fail with EEXIST). */
	int in = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1;
	if (in >= 0)
		out = mkostemp(tmp, O_CLOEXEC);
	ssize_t n = -1;
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		for (ssize_t done = 0, w; n > 0 && done < n; done += w)
			if ((w = write(out, buf + done, (size_t)(n - done))) <= 0)
				n = -1;  /* a short write is followed by one that says why (ENOSPC) */
	int e = errno;
	if (n != 0 || fchmod(out, 0755) != 0 || rename(tmp, path) != 0) {
		e = n != 0 ? e : errno;
		if (out >= 0) {
			close(out);
			unlink(tmp);
		}
		out = -1;
	}
	if (in >= 0)
		close(in);
	if (out >= 0) {  /* read-only: a program open for writing cannot run (ETXTBSY) */
		close(out);
		out = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
	}
	errno = e;
	return out;
}

int eval_cache_hold(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_SH) != 0 || !still_there(fd, path) || !owned(fd) || access(path, X_OK) != 0) {
		close(fd);
		return -1;
	}
	futimens(fd, NULL);  /* used now: the last to be evicted for room */
	return fd;
}

/* Evict path unless someone holds it; its size when it went, else 0. */
static long long evict(const char *path, int fd)
{
	struct stat st;
	bool own = fd >= 0;
	if (!own)
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	long long size = 0;
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && still_there(fd, path) && fstat(fd, &st) == 0
			&& unlink(path) == 0)
		size = st.st_size;
	if (fd >= 0 && !own)
		close(fd);
	return size;
}

typedef struct entry {
	char name[CUCO_HASH_LEN + 1];
	long long size;
	struct timespec used;
} entry;

static int older_first(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return x->used.tv_nsec < y->used.tv_nsec ? -1 : x->used.tv_nsec > y->used.tv_nsec;
}

/* Past the size per run: evict the least recently used that nobody holds. */
static void trim(const eval_cache *c)
{
	DIR *d = opendir(c->root);
	struct dirent *e;
	entry *list = NULL;
	size_t n = 0, cap = 0;
	long long total = 0;
	while (d && (e = readdir(d))) {
		char path[PATH_MAX + 300];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", c->root, e->d_name);
		if (!program_name(e->d_name) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap)
			list = cuco_xrealloc(list, (cap = cap ? 2 * cap : 64) * sizeof *list);
		cuco_strlcpy(list[n].name, e->d_name, sizeof list[n].name);
		list[n].size = st.st_size;
		list[n++].used = st.st_mtim;
		total += st.st_size;
	}
	if (d)
		closedir(d);
	qsort(list, n, sizeof *list, older_first);
	for (size_t i = 0; i < n && total > (long long)c->run_mb << 20; i++) {
		char path[PATH_MAX + 300];
		snprintf(path, sizeof path, "%s/%s", c->root, list[i].name);
		total -= evict(path, -1);
	}
	free(list);
}

int eval_cache_add(const eval_cache *c, const char *built, const char *path, int *fd, char *why,
	size_t size, cuco_err *err)
{
	*fd = -1;
	why[0] = '\0';
	struct stat st;
	if (lstat(built, &st) != 0 || !S_ISREG(st.st_mode))
		return cuco_errf(err, CUCO_EENV, "%s: not a file", built);
	if (st.st_size > (long long)c->program_mb << 20) {
		snprintf(why, size, "the program is %lld MiB, above the build cache's %ld MiB a program",
			(long long)(st.st_size >> 20), c->program_mb);
		return CUCO_OK;
	}
	if (rename(built, path) != 0)
		return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(errno));
	*fd = eval_cache_own(path);
	if (*fd < 0 || flock(*fd, LOCK_SH) != 0) {
		int e = errno;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		unlink(path);
		return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(e));
	}
	trim(c);
	return CUCO_OK;
}

void eval_cache_release(const char *path, int fd, bool failed)
{
	if (fd < 0)
		return;
	if (failed)
		evict(path, fd);
	close(fd);
}
