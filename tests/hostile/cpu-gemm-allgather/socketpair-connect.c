/* hostile: get a Unix datagram socket from socketpair(), which the
 * stage's filter lets through, bind one and connect the other to a path:
 * the route to any host service listening on a path the sandbox shows.
 * class: issue 24, class 6 (the sandbox as root: AF_UNIX by another route)
 * defence: sandbox — seccomp denies AF_UNIX by any route
 * rename: cuco_step
 * expect: run crash socketpair refused
 * expect: compile suspect object: imports unlink
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	int sv[2];
	struct sockaddr_un at = { .sun_family = AF_UNIX };
	snprintf(at.sun_path, sizeof at.sun_path, "/tmp/cuco-hostile-%d.sock", io->rank);
	unlink(at.sun_path);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) {
		fprintf(stderr, "socketpair refused: %s\n", strerror(errno));
	} else if (bind(sv[1], (struct sockaddr *)&at, sizeof at) != 0
		|| connect(sv[0], (struct sockaddr *)&at, sizeof at) != 0) {
		fprintf(stderr, "socketpair refused at bind or connect: %s\n", strerror(errno));
	} else {
		fprintf(stderr, "socketpair: a datagram socket connected to %s\n", at.sun_path);
	}
	unlink(at.sun_path);
	fflush(stderr);
	abort();
}
