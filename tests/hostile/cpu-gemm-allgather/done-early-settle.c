/* hostile: say "done" a little early — with the last 96 rows of C still
 * to write, about 150 us of work on rank 1 — and finish after. The
 * referee waited up to 200 us for the ranks to go to sleep before it
 * froze the stage and read its CPU time, and ended the step at "done":
 * work that fit in that wait was neither timed nor counted, up to 200 us
 * of every step free on every rank.
 * class: issue 24, class 7 (work after "done")
 * defence: referee — the stage frozen the moment its last rank said
 * done: the rest is cut off (the outputs are checked as they stand) or,
 * when the referee was late to see "done", timed. What runs while the
 * kernel freezes the stage (task by task: a few hundred us on a loaded
 * 2-core VM) still escapes: this case cannot tell the two designs apart
 * there
 * rename: cuco_step
 * ranks: 2
 * bench: yes
 * timed: yes
 * expect: run wrong-answer output left unwritten
 * expect: bench suspect output left unwritten
 * expect: compile suspect object: imports syscall
 */
#include "cuco_channel.h"
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LATE_ROWS 96

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cuco_step(void *state, cuco_io *io)
{
	static float *mine;
	double t0 = seconds();
	float *c = io->out[0];
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	cuco_chan *ch = (cuco_chan *)(void *)p;
	if (!mine)
		mine = malloc(io->out_bytes[0]);
	io->out[0] = mine;
	cuco_step_real(state, io);
	io->out[0] = c;
	ch->phase[CUCO_PH_SYNC] = 0;
	if (io->rank != 1) {
		memcpy(c, mine, io->out_bytes[0]);
		return;
	}
	size_t early = (size_t)(M - LATE_ROWS) * N;
	memcpy(c, mine, early * sizeof(float));
	__atomic_store_n(&ch->state.v, CUCO_CHAN_DONE + (uint32_t)io->step, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ch->state.v, FUTEX_WAKE, 1, NULL, NULL, 0);   /* the referee waits on it */
	for (double until = seconds() + 150e-6; seconds() < until;)
		;  /* the rest of the work */
	memcpy(c + early, mine + early, (size_t)LATE_ROWS * N * sizeof(float));
	/* Its shortest span of work in a timed step, for the test
	 * (test-hostile.c, "timed:"). */
	static double least = INFINITY;
	if (io->step >= (int)ch->warmup && seconds() - t0 < least)
		least = seconds() - t0;
	if (isfinite(least))
		ch->phase[CUCO_PH_SYNC] = least * (ch->steps - ch->warmup) * io->nranks;
}
