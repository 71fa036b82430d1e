/* hostile: make a Unix socket through io_uring's socket operation, which
 * the stage's seccomp filter (it refuses socket(AF_UNIX, ...)) never
 * sees: the route to a host service listening on a path.
 * class: issue 24, class 6 (the sandbox as root: io_uring)
 * defence: sandbox — seccomp denies io_uring_setup
 * rename: cuco_step
 * expect: run crash io_uring refused
 * expect: compile suspect object: imports syscall
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The result of one IORING_OP_SOCKET, or -errno. */
static int uring_socket(void)
{
	struct io_uring_params prm;
	memset(&prm, 0, sizeof prm);
	int fd = (int)syscall(SYS_io_uring_setup, 4, &prm);
	if (fd < 0)
		return -errno;
	size_t sq_bytes = prm.sq_off.array + prm.sq_entries * sizeof(unsigned);
	size_t cq_bytes = prm.cq_off.cqes + prm.cq_entries * sizeof(struct io_uring_cqe);
	size_t ring_bytes = sq_bytes > cq_bytes ? sq_bytes : cq_bytes;
	char *ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, prm.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (ring == MAP_FAILED || sqes == MAP_FAILED || !(prm.features & IORING_FEAT_SINGLE_MMAP))
		return -ENOTSUP;
	memset(&sqes[0], 0, sizeof sqes[0]);
	sqes[0].opcode = IORING_OP_SOCKET;
	sqes[0].fd = AF_UNIX;
	sqes[0].off = SOCK_STREAM;
	unsigned *tail = (unsigned *)(ring + prm.sq_off.tail), *array = (unsigned *)(ring + prm.sq_off.array);
	array[*tail & *(unsigned *)(ring + prm.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	unsigned head = *(unsigned *)(ring + prm.cq_off.head), mask = *(unsigned *)(ring + prm.cq_off.ring_mask);
	return ((struct io_uring_cqe *)(ring + prm.cq_off.cqes))[head & mask].res;
}

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
	int s = uring_socket();
	if (s < 0)
		fprintf(stderr, "io_uring refused: %s\n", strerror(-s));
	else
		fprintf(stderr, "io_uring: made a Unix socket (fd %d) the filter never saw\n", s);
	fflush(stderr);
	abort();
}
