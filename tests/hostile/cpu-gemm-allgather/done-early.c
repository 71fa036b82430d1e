/* hostile: in its first step, set the channel's state word (found from
 * io->in[0] by pointer arithmetic) past every step's "done", so the
 * referee reads each step as done the moment it releases it, and the
 * work runs on after it.
 * class: issue 24, class 2 (signalling done early)
 * defence: referee — the stage frozen the moment its last rank said
 * done: the work is cut off (the outputs are checked as they stand) or,
 * when the referee was late to see "done", timed
 * rename: cuco_step
 * timed: yes
 * expect: run wrong-answer output left unwritten
 * expect: compile suspect object: imports syscall
 */
#include "cuco_channel.h"
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

static cuco_chan *channel_of(const cuco_io *io)
{
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	return (cuco_chan *)(void *)p;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cuco_step(void *state, cuco_io *io)
{
	double t0 = seconds();
	cuco_chan *ch = channel_of(io);
	__atomic_store_n(&ch->state.v, 0xfffffff0u, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ch->state.v, FUTEX_WAKE, 1, NULL, NULL, 0);   /* the referee waits on it */
	cuco_step_real(state, io);
	/* Rank 1's span of work, for the test (test-hostile.c, "timed:"). */
	ch->phase[CUCO_PH_SYNC] = io->rank == 1 ? (seconds() - t0) * io->nranks : 0;
}
