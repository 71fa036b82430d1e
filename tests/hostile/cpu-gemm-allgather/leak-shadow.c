/* hostile: read a file only root may read (/etc/shadow) and fail, so that
 * its text would land in the error excerpt that later prompts and the
 * store carry. (It prints only that the file was readable and how long
 * it is, never its text.)
 * class: issue 24, class 6 (the sandbox as root)
 * defence: sandbox — stages run as an unprivileged uid
 * rename: cuco_step
 * expect: run crash shadow: Permission denied
 * expect: compile suspect object: imports open
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
	char buf[4096];
	int fd = open("/etc/shadow", O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "shadow: %s\n", strerror(errno));
	} else {
		ssize_t n = read(fd, buf, sizeof buf);
		fprintf(stderr, "shadow: readable, %zd bytes would be in the excerpt\n", n);
	}
	fflush(stderr);
	abort();
}
