/* seccomp.c — the stages' system-call filter: no Unix domain sockets.
 *
 * A Unix socket is reached by its path, and a read-only view does not stop
 * connect() (issue 18: a candidate reached a listener at /var/tmp/….sock).
 * The sandbox hides /run, /var, /tmp and the homes, where host services
 * keep theirs; this filter closes the rest. A classic seccomp filter sees a
 * call's arguments but not the memory they point to, so it cannot read the
 * path given to connect() or bind(): it refuses the socket itself.
 * socket(AF_UNIX, …) fails with EACCES, which programs meet already where a
 * socket's permissions refuse them (glibc then skips nscd; hwloc its X11
 * probe). What the stages need:
 *
 *  - compilers, and Open MPI's ranks (4.1, PMIx 4: strace shows the ranks
 *    and mpirun talk over TCP on loopback, which the sandbox keeps, and
 *    only probe for nscd and X11 over Unix sockets): no Unix socket at all;
 *  - NCCL's processes hand CUDA memory handles to each other over datagram
 *    Unix sockets in the abstract namespace, which belongs to the
 *    sandbox's own network namespace: the run stages of GPU workloads may
 *    make SOCK_DGRAM ones. Streams (a container daemon's, D-Bus) stay
 *    refused there too; a datagram socket of the host's in a folder the
 *    sandbox shows read-only is the one thing left (docs/architecture.md).
 *
 * socketpair() is not filtered: its sockets are connected to each other and
 * reach nothing. x86-64's x32 calls and 32-bit socketcall() could say the
 * same in a form the filter cannot check; they are refused.
 *
 * Installed by bwrap (--seccomp) inside the sandbox, after it set itself
 * up; with limits only, by the stage's child before exec. */
#include "eval/eval_int.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NATIVE_SOCKET 41
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_SOCKET 359
#define COMPAT_SOCKETCALL 102
#define X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NATIVE_SOCKET 198
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT_SOCKET 281
#endif

#define ARCH_AT offsetof(struct seccomp_data, arch)
#define NR_AT offsetof(struct seccomp_data, nr)
#define ARG_AT(i) offsetof(struct seccomp_data, args[i])  /* the low word, little-endian */

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))

bool eval_filter_available(void)
{
#ifdef NATIVE_ARCH
	return true;
#else
	return false;
#endif
}

#ifdef NATIVE_ARCH
static void add(eval_filter *f, struct sock_filter insn)
{
	f->prog[f->len++] = insn;
}

/* At the socket's call: its family in the accumulator's source, args[0]. */
static void check_socket(eval_filter *f, bool unix_dgram)
{
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_AT(0)));
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0));
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	if (unix_dgram) {
		add(f, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_AT(1)));
		add(f, STMT(BPF_ALU | BPF_AND | BPF_K, 0xf));  /* SOCK_CLOEXEC and SOCK_NONBLOCK aside */
		add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_DGRAM, 0, 1));
		add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	}
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES));
}
#endif

void eval_filter_build(eval_filter *f, bool unix_dgram)
{
	memset(f, 0, sizeof *f);
#ifdef NATIVE_ARCH
	size_t at;
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_AT));
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 0));  /* jf patched below */
	at = f->len - 1;
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, NR_AT));
#ifdef X32_BIT
	add(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1));
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
#endif
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_SOCKET, 1, 0));
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	check_socket(f, unix_dgram);
	/* Not native: the 32-bit calls, or (another arch still) refused. */
	f->prog[at].jf = (unsigned char)(f->len - at - 1);
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 1, 0));
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, NR_AT));
#ifdef COMPAT_SOCKETCALL
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKETCALL, 0, 1));
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));  /* libc then calls socket() */
#endif
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKET, 1, 0));
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	check_socket(f, unix_dgram);
#else
	(void)unix_dgram;
#endif
}

/* After fork(), before exec: async-signal-safe system calls only. */
int eval_filter_install(const eval_filter *f)
{
	if (f->len == 0)
		return 0;
	struct sock_fprog prog = { .len = f->len, .filter = (struct sock_filter *)f->prog };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}
