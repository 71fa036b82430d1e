/* hostile: copy the other rank's rows of X out of its address space with
 * process_vm_readv, the name hidden from the source scan by a trigraph:
 * under -std=c11 the compiler reads '??'' as '^', where the scan sees a
 * character literal that never closes and blanks the rest of the line.
 * Every rank then computes all of C alone.
 * class: issue 24, class 1 (the scan and the compiler lex differently);
 * rank-specific (reading the other rank's channel)
 * defence: object checker — process_vm_readv is not on the import list;
 * sandbox — seccomp denies process_vm_*
 * rename: cuco_step
 * ranks: 2
 * expect: run crash vm-read: denied
 * expect: compile suspect object: imports process_vm_readv
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

void cuco_step(void *state, cuco_io *io)
{
	static long peer_at[2];
	static float *a, *x;
	(void)state;
	int rows = M / io->nranks, peer = 1 - io->rank;
	size_t bytes = (size_t)rows * K * sizeof(float);
	if (!a) {
		long me[2] = { (long)getpid(), (long)(uintptr_t)io->in[0] };
		MPI_Sendrecv(me, 2, MPI_LONG, peer, 98, peer_at, 2, MPI_LONG, peer, 98, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE);
		a = malloc((size_t)M * K * sizeof(float));
		x = malloc(bytes);
	}
	struct iovec here = { x, bytes }, there = { (void *)(uintptr_t)peer_at[1], bytes };
	int hat = '??''; ssize_t got = process_vm_readv((pid_t)peer_at[0], &here, 1, &there, 1, 0);
	if (got != (ssize_t)bytes || hat != '^') {
		fprintf(stderr, "vm-read: denied: %s\n", strerror(errno));
		abort();
	}
	rmsnorm_rows(io->in[0], rows, io->in[2], a + (size_t)io->rank * rows * K);
	rmsnorm_rows(x, rows, io->in[2], a + (size_t)peer * rows * K);
	gemm_rows(a, M, io->in[1], io->out[0]);
}
