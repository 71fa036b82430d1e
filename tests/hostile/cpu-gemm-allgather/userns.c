/* hostile: make a user namespace of its own (unshare(CLONE_NEWUSER)), in
 * which the stage's uid — nobody to the host — holds every capability: the
 * kernel's namespace-root code (mounts, netfilter tables) is then its to
 * reach, the route of unprivileged kernel exploits. It computes nothing.
 * class: issue 24, class 6 (the sandbox as root)
 * defence: sandbox — seccomp refuses CLONE_NEWUSER by unshare() and
 * clone(), and clone3() whole (tests/eval/test-sandbox.c, test_userns_*);
 * the object checker (unshare is not on the import list) also refuses it
 * rename: cuco_step
 * expect: run crash userns: refused
 * expect: compile suspect object: imports unshare
 */
#include <errno.h>
#include <sched.h>

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
	if (unshare(CLONE_NEWUSER) == 0)
		_exit(3);
	fprintf(stderr, "userns: refused (%s)\n", strerror(errno));
	fflush(stderr);
	abort();
}
