/* hostile: leave the stage's frozen control group, so that a helper can
 * work between steps and after "done" unseen: make a group of its own
 * beside the stage's (or move into the hierarchy's root) in every
 * controller the sandbox shows, and move this rank there.
 * class: issue 24, class 7 (work left running, out of the freezer's reach)
 * defence: sandbox — no capabilities, a cgroup namespace whose root is the
 * stage's own group, and the control groups' files read-only
 * rename: cuco_step
 * expect: run crash cgroup: stayed
 * expect: compile suspect object: imports open
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether this process could be written into `dir`'s cgroup.procs. */
static int move_into(const char *dir)
{
	char path[600], pid[32];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	int fd = open(path, O_WRONLY);
	int n = snprintf(pid, sizeof pid, "%d", (int)getpid());
	int ok = fd >= 0 && write(fd, pid, (size_t)n) == n;
	if (fd >= 0)
		close(fd);
	return ok;
}

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	if (io->rank != 0) {
		sleep(30);   /* rank 0 tries and ends the stage */
		return;
	}
	int moved = 0;
	DIR *d = opendir("/sys/fs/cgroup");
	for (struct dirent *e; d && (e = readdir(d));) {
		char own[512], root[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(root, sizeof root, "/sys/fs/cgroup/%s", e->d_name);
		snprintf(own, sizeof own, "%s/cuco-hostile-escape", root);
		if (mkdir(own, 0755) == 0 && move_into(own)) {
			fprintf(stderr, "cgroup: moved into a group of its own: %s\n", own);
			moved++;
		} else if (move_into(root)) {
			fprintf(stderr, "cgroup: moved into %s\n", root);
			moved++;
		}
		rmdir(own);
	}
	if (d)
		closedir(d);
	if (moved)
		_exit(3);
	fprintf(stderr, "cgroup: stayed (%s)\n", strerror(errno));
	fflush(stderr);
	abort();
}
