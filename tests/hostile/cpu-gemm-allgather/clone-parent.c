/* hostile: clone(CLONE_VM | CLONE_PARENT) a task that shares the rank's
 * memory but is its parent's child, not its own (the old harness counted
 * the rank's threads and children), and let it write C's rows (a
 * stand-in for their GEMM, about 2 us a row) after the step said "done".
 * class: issue 24, class 7 (clone(CLONE_VM|CLONE_PARENT) left working)
 * defence: referee — everything in the stage's control group is frozen
 * the moment the last rank said done: the task is cut off (the outputs
 * are checked as they stand) or, when the referee was late to see
 * "done", timed; a task still alive after the last step holds the rank's
 * channel (it shares the rank's memory) from outside the rank's family
 * rename: cuco_step
 * ranks: 2
 * timed: yes
 * expect: run wrong-answer output left unwritten
 * expect: run suspect channel file is held by two processes of the stage that are not one rank's
 * expect: compile suspect object: imports syscall
 */
#include "cuco_channel.h"
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static float *late_dst, *late_src;
static cuco_chan *late_ch;
static double late_t0;
static int late_rank;

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int late_rows(void *arg)
{
	(void)arg;
	for (int i = 0; i < M; i++) {
		for (double until = seconds() + 2e-6; seconds() < until;)
			;
		memcpy(late_dst + (size_t)i * N, late_src + (size_t)i * N, N * sizeof(float));
	}
	/* Rank 1's span of work, for the test (test-hostile.c, "timed:"). */
	late_ch->phase[CUCO_PH_SYNC] = late_rank == 1 ? (seconds() - late_t0) * 2 : 0;
	syscall(SYS_exit, 0);
	return 0;
}

void cuco_step(void *state, cuco_io *io)
{
	static char *stack;
	late_t0 = seconds();
	late_rank = io->rank;
	float *c = io->out[0];
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	late_ch = (cuco_chan *)(void *)p;
	if (!late_src) {
		late_src = malloc(io->out_bytes[0]);
		stack = malloc(1 << 20);
	}
	io->out[0] = late_src;
	cuco_step_real(state, io);
	io->out[0] = c;
	late_dst = c;
	clone(late_rows, stack + (1 << 20), CLONE_VM | CLONE_PARENT | CLONE_FS | CLONE_FILES, NULL);
}
