/* seccomp.c — the stages' system-call filter: the kernel's doors that no
 * compiler, MPI rank or CUDA program of ours needs, and that reach past the
 * sandbox's view.
 *
 * Denied, each a row of the table below (DENIED):
 *  - io_uring (setup, enter, register): its operations are system calls the
 *    filter never sees (IORING_OP_SOCKET makes a Unix socket without
 *    socket(); reads and writes of any file). ENOSYS, as on a kernel built
 *    without it: libraries fall back to plain calls.
 *  - the kernel keyrings (add_key, request_key, keyctl): the user keyring
 *    is one per uid, shared by every stage of that uid and, as root, with
 *    the host's root. ENOSYS, as without CONFIG_KEYS. (Each stage also gets
 *    a session keyring of its own: stage.c.)
 *  - another process's memory or files: ptrace, process_vm_readv/writev,
 *    pidfd_getfd, process_madvise. EPERM, as where Yama forbids them. Open
 *    MPI's shared-memory transport copies large messages with
 *    process_vm_readv (CMA) and aborts when it fails, so stages are told
 *    to copy through shared memory instead (env.c).
 *  - a user namespace of the stage's own: unshare() or clone() asking
 *    CLONE_NEWUSER (EPERM, as where unprivileged user namespaces are off),
 *    and clone3(), whose flags are in memory the filter cannot read
 *    (ENOSYS: glibc then makes its threads and children with clone()). In
 *    one a stage's uid, nobody to the host, holds every capability: the
 *    kernel's namespace-root code (mounts, netfilter) is then its to reach,
 *    as unprivileged kernel exploits have (tests/eval/test-sandbox.c,
 *    test_userns_*). No compiler, rank or CUDA program makes one; bwrap
 *    makes the sandbox's before the filter is loaded.
 *  - Unix domain sockets, by socket() and by socketpair(): a socket reaches
 *    a listener by its path, and a read-only view does not stop connect()
 *    (issue 18: a listener at /var/tmp/….sock). A datagram socketpair can
 *    be connected to a path afterwards (issue 24). A classic filter sees a
 *    call's arguments but not the memory they point to: it cannot read
 *    connect()'s path, so it refuses the socket itself, with EACCES, which
 *    programs meet already where a socket's permissions refuse them (glibc
 *    then skips nscd; hwloc its X11 probe).
 * x86-64's x32 calls and 32-bit socketcall() could say the same in a form
 * the filter cannot check; they are refused (ENOSYS).
 *
 * What each stage kind gets (evaluator.c, stage_filter):
 *  - compiles and CPU run stages: all of it. Compilers, and Open MPI's
 *    ranks (4.1, PMIx 4: strace shows the ranks and mpirun talk over TCP on
 *    loopback, which the sandbox keeps; they only probe for nscd and X11
 *    over Unix sockets), need none of it.
 *  - GPU run stages: all but the Unix sockets. CUDA's driver (580, CUDA 13)
 *    makes socket(AF_UNIX, SOCK_STREAM) inside cuInit, and with it refused
 *    — EACCES, EPERM, ENOENT, EAFNOSUPPORT or ECONNREFUSED alike, measured
 *    on an H200 on 2026-12-01 — finds no device; NCCL hands CUDA memory
 *    handles between ranks over abstract Unix sockets. The other rows they
 *    take: CUDA, cuBLAS, NCCL and the one-GPU workloads ran with them on
 *    an H200 on 2026-12-02 (bench/results/sandbox-gpu.md). There the sandbox's
 *    view is the defence: the host's /run, /var, /tmp and homes are empty
 *    tmpfs, and the abstract namespace belongs to the sandbox's own
 *    network namespace.
 *  - the run stages of remote runners (ssh, srun): none; their launchers
 *    reach their agents through Unix sockets.
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

/* The native architecture and the 32-bit one its kernel also runs, with
 * the compat numbers of the calls the table names (the native ones are
 * <sys/syscall.h>'s). */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_SOCKETCALL 102
#define X32_BIT 0x40000000u
#define COMPAT(i386, arm) i386
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT(i386, arm) arm
#endif

#ifdef NATIVE_ARCH
/* X(call, i386's number, arm's, errno): the calls every filter denies. */
#define DENIED(X) \
	X(io_uring_setup, 425, 425, ENOSYS) \
	X(io_uring_enter, 426, 426, ENOSYS) \
	X(io_uring_register, 427, 427, ENOSYS) \
	X(add_key, 286, 309, ENOSYS) \
	X(request_key, 287, 310, ENOSYS) \
	X(keyctl, 288, 311, ENOSYS) \
	X(ptrace, 26, 26, EPERM) \
	X(process_vm_readv, 347, 376, EPERM) \
	X(process_vm_writev, 348, 377, EPERM) \
	X(pidfd_getfd, 438, 438, EPERM) \
	X(process_madvise, 440, 440, EPERM) \
	X(clone3, 435, 435, ENOSYS)

typedef struct denied {
	unsigned native, compat;
	int err;
} denied;

static const denied denied_calls[] = {
#define ROW(call, i386, arm, err) { SYS_##call, COMPAT(i386, arm), err },
	DENIED(ROW)
#undef ROW
};

/* The two calls that make a user namespace from their flags (args[0]:
 * clone's on x86-64 and arm64, whose compat clone has them first too),
 * native and compat. */
static const unsigned userns_calls[2][2] = {
	{ SYS_unshare, SYS_clone }, { COMPAT(310, 337), COMPAT(120, 120) },
};

/* The two calls that make Unix sockets, native and compat. */
static const unsigned unix_calls[2][2] = {
	{ SYS_socket, SYS_socketpair }, { COMPAT(359, 281), COMPAT(360, 288) },
};
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

static void ret_errno(eval_filter *f, int err)
{
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err));
}

/* With the call's number in the accumulator: the table's calls refused,
 * Unix sockets too unless allowed, everything else let through. compat
 * picks the 32-bit numbers. */
static void check_calls(eval_filter *f, bool compat, bool unix_sockets)
{
	for (size_t i = 0; i < sizeof denied_calls / sizeof denied_calls[0]; i++) {
		add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, compat ? denied_calls[i].compat : denied_calls[i].native, 0, 1));
		ret_errno(f, denied_calls[i].err);
	}
	/* unshare(flags) or clone(flags, …) with CLONE_NEWUSER in flags. */
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, userns_calls[compat][0], 1, 0));
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, userns_calls[compat][1], 0, 4));
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_AT(0)));
	add(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1));
	ret_errno(f, EPERM);
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, NR_AT));  /* the number again, for the rows below */
	if (!unix_sockets) {
		/* socket(family, …) or socketpair(family, …): the family is args[0]. */
		add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, unix_calls[compat][0], 1, 0));
		add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, unix_calls[compat][1], 0, 3));
		add(f, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_AT(0)));
		add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1));
		ret_errno(f, EACCES);
	}
	add(f, STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}
#endif

void eval_filter_build(eval_filter *f, bool unix_sockets)
{
	memset(f, 0, sizeof *f);
#ifdef NATIVE_ARCH
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_AT));
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 0));  /* jf patched below */
	size_t at = f->len - 1;
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, NR_AT));
#ifdef X32_BIT
	add(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1));
	ret_errno(f, ENOSYS);
#endif
	check_calls(f, false, unix_sockets);
	/* Not native: the 32-bit calls, or (another arch still) refused. */
	f->prog[at].jf = (unsigned char)(f->len - at - 1);
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 1, 0));
	ret_errno(f, ENOSYS);
	add(f, STMT(BPF_LD | BPF_W | BPF_ABS, NR_AT));
#ifdef COMPAT_SOCKETCALL
	add(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKETCALL, 0, 1));
	ret_errno(f, ENOSYS);  /* libc then calls socket() */
#endif
	check_calls(f, true, unix_sockets);
#else
	(void)unix_sockets;
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
