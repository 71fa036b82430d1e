/* hostile: a constructor, run before the frame's main(), opens every
 * rank's channel file while the referee still has them linked (its name
 * from $CUCO_CHANNEL, read through getenv spelled by token pasting). Each
 * rank then reads every other rank's rows of X from their channels and
 * computes all of C alone: no gather, no synchronization, no MPI.
 * class: issue 24, class 2 (code before main); rank-specific (reading the
 * other rank's channel)
 * defence: referee — every channel file open or mapped in one process
 * only (checked once setup is done and after the last step); the object
 * checker (no constructors) also refuses it
 * rename: cuco_step
 * ranks: 2
 * expect: run suspect channel: a process of the stage holds the channel files of ranks 0 and 1
 * expect: compile suspect object: section .init_array runs grab_channels before main
 */
#include "cuco_channel.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define CUCO_GLUE(a, b) a##b

static int chan_fd[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };

__attribute__((constructor)) static void grab_channels(void)
{
	char *(*env)(const char *) = CUCO_GLUE(get, env);
	const char *dir = env("CUCO_" "CHANNEL");
	for (int q = 0; dir && q < 8; q++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%d", dir, q);
		for (int i = 0; i < 200 && (chan_fd[q] = open(path, O_RDWR)) < 0 && errno == ENOENT && q < 2; i++)
			usleep(10000);
	}
}

static const cuco_chan *channel(int q)
{
	static const cuco_chan *map[8];
	struct stat sb;
	if (!map[q] && chan_fd[q] >= 0 && fstat(chan_fd[q], &sb) == 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, chan_fd[q], 0);
		map[q] = p == MAP_FAILED ? NULL : p;
	}
	if (!map[q]) {
		fprintf(stderr, "constructor-channels: rank %d's channel out of reach\n", q);
		abort();
	}
	return map[q];
}

void cuco_step(void *state, cuco_io *io)
{
	static float *a;
	(void)state;
	int rows = M / io->nranks;
	if (!a)
		a = malloc((size_t)M * K * sizeof(float));
	for (int q = 0; q < io->nranks; q++) {
		const cuco_chan *ch = channel(q);
		rmsnorm_rows((const float *)(const void *)((const char *)ch + ch->in[0].offset), rows, io->in[2],
			a + (size_t)q * rows * K);
	}
	gemm_rows(a, M, io->in[1], io->out[0]);
}
