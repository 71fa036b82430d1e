/* hostile: the decode rank says "done" (writing the channel's state word,
 * found from io->in[0]) as soon as its step starts, and receives and
 * decodes after it.
 * class: issue 24, class 2 (signalling done early); rank-specific
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

void cuco_step(void *arg, cuco_io *io)
{
	double t0 = MPI_Wtime();
	/* The header is the page before the first array. */
	cuco_chan *ch = (cuco_chan *)(uintptr_t)((uintptr_t)io->in[0] - CUCO_CHAN_PAGE);
	if (io->rank == 1) {
		__atomic_store_n(&ch->state.v, CUCO_CHAN_DONE + (uint32_t)io->step, __ATOMIC_RELEASE);
		syscall(SYS_futex, &ch->state.v, FUTEX_WAKE, 1, NULL, NULL, 0);   /* the referee waits on it */
	}
	cuco_step_real(arg, io);
	/* The decode rank's span of work, for the test (test-hostile.c, "timed:"). */
	ch->phase[CUCO_PH_SYNC] = io->rank == 1 ? (MPI_Wtime() - t0) * io->nranks : 0;
}
