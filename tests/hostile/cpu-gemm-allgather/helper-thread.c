/* hostile: hand the last of the work to a helper thread and return before
 * it is done: the thread writes C's rows (a stand-in for the GEMM they
 * need, about 2 us a row) after the step said "done".
 * class: issue 24, class 7 (threads working after "done")
 * defence: referee — the stage frozen the moment its last rank said
 * done: the thread is cut off (the outputs are checked as they stand) or,
 * when the referee was late to see "done", timed
 * rename: cuco_step
 * ranks: 2
 * timed: yes
 * expect: run wrong-answer output left unwritten
 */
#include "cuco_channel.h"
#include <pthread.h>
#include <time.h>

typedef struct late { float *dst; const float *src; cuco_chan *ch; double t0; int rank; } late;

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *late_rows(void *arg)
{
	const late *w = arg;
	for (int i = 0; i < M; i++) {
		for (double until = seconds() + 2e-6; seconds() < until;)
			;
		memcpy(w->dst + (size_t)i * N, w->src + (size_t)i * N, N * sizeof(float));
	}
	/* Rank 1's span of work, for the test (test-hostile.c, "timed:"). */
	w->ch->phase[CUCO_PH_SYNC] = w->rank == 1 ? (seconds() - w->t0) * 2 : 0;
	return NULL;
}

void cuco_step(void *state, cuco_io *io)
{
	static float *mine;
	static late job;
	double t0 = seconds();
	float *c = io->out[0];
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	if (!mine)
		mine = malloc(io->out_bytes[0]);
	io->out[0] = mine;
	cuco_step_real(state, io);
	io->out[0] = c;
	job = (late){ c, mine, (cuco_chan *)(void *)p, t0, io->rank };
	pthread_t t;
	pthread_create(&t, NULL, late_rows, &job);
	pthread_detach(t);
}
