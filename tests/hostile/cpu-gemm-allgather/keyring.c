/* hostile: put a key in the user keyring, which every stage shares with
 * the host's user (uid 0 here): a place to leave what a later stage or
 * another candidate can read. (It removes the key again.)
 * class: issue 24, class 6 (the sandbox as root: the keyring)
 * defence: sandbox — seccomp denies add_key, request_key and keyctl
 * rename: cuco_step
 * expect: run crash keyring refused
 * expect: compile suspect object: imports syscall
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#define USER_KEYRING (-4)      /* KEY_SPEC_USER_KEYRING */
#define KEYCTL_UNLINK_OP 9     /* KEYCTL_UNLINK */

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
	long key = syscall(SYS_add_key, "user", "cuco-hostile-keyring", "left behind", 11, USER_KEYRING);
	if (key < 0) {
		fprintf(stderr, "keyring refused: %s\n", strerror(errno));
	} else {
		syscall(SYS_keyctl, KEYCTL_UNLINK_OP, key, USER_KEYRING);
		fprintf(stderr, "keyring: key %ld added to the user keyring the host shares\n", key);
	}
	fflush(stderr);
	abort();
}
