/* hostile: define the clocks the old harness timed with (clock_gettime,
 * MPI_Wtime) as clocks that barely move, then say "done" at once (writing
 * the channel's state word, found from io->in[0]) and do the step's work
 * after it, where those clocks would not see it.
 * class: issue 24, class 2 (libc and MPI names defined; the channel's
 * control words written directly)
 * defence: referee — its own clock, in its own process; the stage frozen
 * the moment its last rank said done (the work cut off, or, when the
 * referee was late to see "done", timed); the object checker (no libc or
 * MPI names defined) also refuses it
 * rename: cuco_step
 * timed: yes
 * expect: run wrong-answer output left unwritten
 * expect: compile suspect object: defines clock_gettime, a name of libc
 */
#include "cuco_channel.h"
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double real_seconds(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	long rc = syscall(SYS_clock_gettime, id, ts);
	long long ns = ((long long)ts->tv_sec * 1000000000LL + ts->tv_nsec) / 64;
	ts->tv_sec = (time_t)(ns / 1000000000LL);
	ts->tv_nsec = (long)(ns % 1000000000LL);
	return (int)rc;
}

double MPI_Wtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cuco_step(void *state, cuco_io *io)
{
	double t0 = real_seconds();
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	cuco_chan *ch = (cuco_chan *)(void *)p;
	__atomic_store_n(&ch->state.v, CUCO_CHAN_DONE + (uint32_t)io->step, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ch->state.v, FUTEX_WAKE, 1, NULL, NULL, 0);   /* the referee waits on it */
	cuco_step_real(state, io);
	/* Rank 1's span of work, for the test (test-hostile.c, "timed:"). */
	ch->phase[CUCO_PH_SYNC] = io->rank == 1 ? (real_seconds() - t0) * io->nranks : 0;
}
