/* util.c — helpers shared by the evaluator's tests. */
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* One buffer per thread: the parallel-evaluation test reads fixtures from
 * several at once. */
const char *fixture(const char *rel)
{
	static _Thread_local char path[4096];
	const char *root = getenv("CUCO_SOURCE_ROOT");
	snprintf(path, sizeof path, "%s/tests/eval/fixtures/%s", root ? root : ".", rel);
	return path;
}

void make_tmpdir(char *out, size_t size)
{
	snprintf(out, size, "/tmp/cuco-test-eval-XXXXXX");
	if (!mkdtemp(out))
		abort();
}

void rm_rf(const char *path)
{
	cuco_remove_tree(path);
}

static bool is_zombie(const char *pid)
{
	char path[300], buf[512];
	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	return !rp || rp[2] == 'Z' || rp[2] == 'X';
}

int count_processes(const char *needle)
{
	DIR *d = opendir("/proc");
	int count = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == getpid())
			continue;
		char path[300], buf[8192];
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, needle) && !is_zombie(e->d_name))
			count++;
	}
	if (d)
		closedir(d);
	return count;
}

char *read_fixture(const char *rel, size_t *len)
{
	char *text = NULL;
	cuco_err err = { 0 };
	if (cuco_read_file(fixture(rel), 1 << 20, &text, len, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
	return text;
}

char *capture_output(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		abort();
	cuco_buf b = { 0 };
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
		cuco_buf_append(&b, chunk, n);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return b.data ? b.data : cuco_xstrdup("");
}

void stage_user_ids(uid_t *uid, gid_t *gid)
{
	const struct passwd *pw = getpwnam("nobody");
	*uid = pw ? pw->pw_uid : 65534;
	*gid = pw ? pw->pw_gid : 65534;
}

void become_stage_user(void)
{
	uid_t uid;
	gid_t gid;
	stage_user_ids(&uid, &gid);
	if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, gid, gid, gid) != 0
			|| syscall(SYS_setresuid, uid, uid, uid) != 0)
		_exit(2);
}
