/* hostile: each rank's constructor, run before main() while the referee
 * still has every rank's channel file linked, opens the other rank's file
 * (its rank from Open MPI's environment, read through getenv spelled by
 * token pasting) and forks a courier that alone keeps it: no process
 * holds two ranks' files. Every step, the courier copies the other rank's
 * fresh rows of X into memory it shares with its rank, and the rank
 * computes all of C from them: no gather, no synchronization, no MPI.
 * class: issue 24, class 2 (code before main); rank-specific (reading the
 * other rank's channel); class 7 (a child working beside the rank)
 * defence: referee — the processes that hold one rank's channel file are
 * that rank's family only; the object checker (no constructors) also
 * refuses it
 * rename: cuco_step
 * ranks: 2
 * expect: run suspect channel: rank 0's channel file is held by two processes of the stage that are not one rank's
 * expect: compile suspect object: section .init_array runs hire_courier before main
 */
#include "cuco_channel.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define CUCO_GLUE(a, b) a##b

/* What the courier hands its rank: the other rank's rows of X, for step
 * `step` (the peer's release word when they were copied). */
typedef struct parcel {
	volatile uint32_t step;
	float x[(size_t)M / 2 * K];
} parcel;

static parcel *box;

static void courier(const cuco_chan *peer)
{
	const float *x = (const float *)(const void *)((const char *)peer + peer->in[0].offset);
	for (uint32_t seen = 0;;) {
		uint32_t r = __atomic_load_n(&peer->release.v, __ATOMIC_ACQUIRE);
		if (r == CUCO_CHAN_STOP)
			_exit(0);
		if (r != seen) {
			memcpy(box->x, x, sizeof box->x);
			__atomic_store_n(&box->step, r, __ATOMIC_RELEASE);
			seen = r;
		}
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
}

__attribute__((constructor)) static void hire_courier(void)
{
	char *(*env)(const char *) = CUCO_GLUE(get, env);
	const char *dir = env("CUCO_" "CHANNEL"), *rank = env("OMPI_COMM_WORLD_RANK");
	if (!dir || !rank)
		return;
	char path[4200];
	snprintf(path, sizeof path, "%s/%d", dir, 1 - atoi(rank));
	int fd = -1;
	for (int i = 0; i < 200 && (fd = open(path, O_RDONLY)) < 0 && errno == ENOENT; i++)
		usleep(10000);
	box = mmap(NULL, sizeof *box, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct stat sb;
	if (fd < 0 || box == MAP_FAILED || fstat(fd, &sb) != 0)
		return;
	if (fork() == 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p != MAP_FAILED)
			courier(p);
		_exit(1);
	}
	close(fd);
}

void cuco_step(void *state, cuco_io *io)
{
	static float *a;
	(void)state;
	int rows = M / io->nranks, peer = 1 - io->rank;
	if (!box || box == MAP_FAILED) {
		fprintf(stderr, "forked-courier: no courier\n");
		abort();
	}
	if (!a)
		a = malloc((size_t)M * K * sizeof(float));
	rmsnorm_rows(io->in[0], rows, io->in[2], a + (size_t)io->rank * rows * K);
	while (__atomic_load_n(&box->step, __ATOMIC_ACQUIRE) != (uint32_t)io->step + 1)
		;
	rmsnorm_rows(box->x, rows, io->in[2], a + (size_t)peer * rows * K);
	gemm_rows(a, M, io->in[1], io->out[0]);
}
