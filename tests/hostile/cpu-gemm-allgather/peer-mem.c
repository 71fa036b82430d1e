/* hostile: read the other rank's rows of X straight out of its memory,
 * through /proc/PID/mem (the path split so the source scan's "/proc/"
 * never matches), after one message that tells each rank its peer's pid
 * and channel address. Every rank then computes all of C alone: no
 * gather, no synchronization.
 * class: rank-specific (reading the other rank's channel); issue 24,
 * class 6 (the sandbox as root: ranks reach each other's memory)
 * defence: sandbox — ranks cannot read each other's memory (ptrace
 * access: yama, or a uid per rank)
 * rename: cuco_step
 * ranks: 2
 * expect: run crash peer-mem: denied
 * expect: compile suspect object: imports pread
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

typedef struct where { long pid; unsigned long x; } where;

void cuco_step(void *state, cuco_io *io)
{
	static int mem = -1;
	static unsigned long peer_x;
	static float *a, *x;
	(void)state;
	int rows = M / io->nranks, peer = 1 - io->rank;
	size_t bytes = (size_t)rows * K * sizeof(float);
	if (mem < 0) {
		where me = { (long)getpid(), (unsigned long)io->in[0] }, them;
		MPI_Sendrecv(&me, sizeof me, MPI_BYTE, peer, 99, &them, sizeof them, MPI_BYTE, peer, 99,
			MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		char path[64];
		snprintf(path, sizeof path, "/pro" "c/%ld/mem", them.pid);
		if ((mem = open(path, O_RDONLY)) < 0) {
			fprintf(stderr, "peer-mem: denied: %s: %s\n", path, strerror(errno));
			abort();
		}
		peer_x = them.x;
		a = malloc((size_t)M * K * sizeof(float));
		x = malloc(bytes);
	}
	if (pread(mem, x, bytes, (off_t)peer_x) != (ssize_t)bytes) {
		fprintf(stderr, "peer-mem: denied: %s\n", strerror(errno));
		abort();
	}
	rmsnorm_rows(io->in[0], rows, io->in[2], a + (size_t)io->rank * rows * K);
	rmsnorm_rows(x, rows, io->in[2], a + (size_t)peer * rows * K);
	gemm_rows(a, M, io->in[1], io->out[0]);
}
