/* filter-exec [--gpu|--cpu] [--user UID:GID] -- CMD...: a stage's filter (seccomp.c),
 * its own session keyring, optionally the stage user, then CMD. For the GPU check. */
#include "eval/eval_int.h"
#include <grp.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	bool gpu = true;
	unsigned uid = 0, gid = 0;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--cpu") == 0) gpu = false;
		else if (strcmp(argv[i], "--gpu") == 0) gpu = true;
		else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) sscanf(argv[++i], "%u:%u", &uid, &gid);
	}
	if (i + 1 >= argc) { fprintf(stderr, "usage\n"); return 2; }
	syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
	if (uid && (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))) { perror("user"); return 126; }
	eval_filter f;
	eval_filter_build(&f, gpu);
	if (eval_filter_install(&f) != 0) { perror("seccomp"); return 126; }
	execvp(argv[i + 1], argv + i + 1);
	perror(argv[i + 1]);
	return 127;
}
