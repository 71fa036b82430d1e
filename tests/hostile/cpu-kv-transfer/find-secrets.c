/* hostile: look for anything secret the verdict rests on: a key or seed
 * in this process's environment or any visible process's (its ancestors':
 * mpirun, the sandbox's init), the referee among the processes it can
 * see (its command line names the channel), a file of cuco's left open,
 * or a rank's channel file still in the channel's folder. Rank 0 says
 * what it found and stops (exit status 3); finding nothing, it says so
 * and aborts.
 * class: issue 24, class 3 (secrets outliving the wipe)
 * defence: referee — no key exists; the inputs' seeds and the checked
 * rows are drawn in the referee, which runs outside the stage's PID
 * namespace; every rank's file is unlinked before program code runs
 * rename: cuco_step
 * expect: run crash no secret found
 * expect: compile suspect object: imports open
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

/* Whether the NUL-separated text of /proc/PID/WHAT holds a secret. */
static int secret_in(const char *pid, const char *what)
{
	char path[300], buf[65536];
	snprintf(path, sizeof path, "/pro" "c/%s/%s", pid, what);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n > 0 ? n : 0] = '\0';
	static const char *const marks[] = { "CUCO_" "HARNESS", "CUCO_" "SEAL", "--channel", "--tolerance", "referee" };
	for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++)
		if (strstr(buf, marks[k])) {
			fprintf(stderr, "secret: /pro" "c/%s/%s holds \"%s\"\n", pid, what, marks[k]);
			return 1;
		}
	return 0;
}

void cuco_step(void *arg, cuco_io *io)
{
	(void)arg;
	int found = 0;
	if (io->rank != 0) {
		sleep(30);   /* rank 0 looks and ends the stage */
		return;
	}
	DIR *d = opendir("/pro" "c");
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			found += secret_in(e->d_name, "environ") + secret_in(e->d_name, "cmdline");
	if (d)
		closedir(d);
	for (int fd = 3; fd < 1024; fd++) {
		char link[64], to[512];
		snprintf(link, sizeof link, "/pro" "c/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof to - 1);
		if (n > 0) {
			to[n] = '\0';
			/* A file of cuco's (its store, a run folder's), left open. */
			if (to[0] == '/' && strncmp(to, "/dev/", 5) != 0 && strncmp(to, "/pro" "c/", 6) != 0) {
				fprintf(stderr, "secret: descriptor %d is %s\n", fd, to);
				found++;
			}
		}
	}
	/* The channel's folder: every rank's file is gone from it by now. */
	d = opendir("/dev/shm");
	for (struct dirent *e; d && (e = readdir(d));)
		if (strncmp(e->d_name, "cuco-chan", 9) == 0) {
			char dir[600];
			snprintf(dir, sizeof dir, "/dev/shm/%s", e->d_name);
			DIR *c = opendir(dir);
			for (struct dirent *f; c && (f = readdir(c));)
				if (f->d_name[0] != '.') {
					fprintf(stderr, "secret: %s/%s is still there\n", dir, f->d_name);
					found++;
				}
			if (c)
				closedir(c);
		}
	if (d)
		closedir(d);
	fflush(stderr);
	if (found)
		_exit(3);
	fprintf(stderr, "no secret found\n");
	fflush(stderr);
	abort();
}
