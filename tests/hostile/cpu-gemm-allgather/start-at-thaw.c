/* hostile: start each step at the thaw, before the release. The referee
 * draws a step's inputs with the stage frozen, thaws it, and only then
 * releases the ranks. A thread of the rank's own polls the first values
 * of its rows of X: once they change, the next step's inputs are in place
 * (they are written only while the stage is frozen), so the thaw has
 * come, and it RMS-norms its own rows and multiplies them into their rows
 * of C at once. When the frame releases the step, the rank only swaps
 * normalized rows with its peer (MPI_Sendrecv) and multiplies the peer's:
 * the thaw-to-release part of its work is outside a clock that starts at
 * the release. The referee's clock starts before the thaw, so all of it
 * is timed: its fastest step is no shorter than its shortest span of work,
 * from the thaw it saw to its last write (timed: yes; rank 1 reports that
 * span, the test's convention): on the loaded 2-core machine 1.18-1.30 ms
 * fastest steps against 0.97-1.11 ms spans, the thread having started
 * before the frame's release. The rank and its thread claim a step's own
 * rows by compare-and-swap, so that a thread late to a thaw never leaves
 * them half written at "done"; a thread that started on a step's stale
 * inputs would be refused by that step's check.
 * class: timing (work before the release), the CPU counterpart of
 * rmsnorm/start-at-thaw
 * defence: referee — the step's clock starts before the thaw
 * rename: cuco_step
 * bench: yes
 * timed: yes
 * expect: bench suspect verification:
 */
#include "cuco_channel.h"
#include <stdatomic.h>
#include <time.h>

static struct {
	const float *x, *w, *gain;
	float *c, *a;                    /* a: all M normalized rows */
	int rank, nranks, rows;
	float seen[8];                   /* the first values of X the last step had */
	_Atomic int done;                /* steps the rank finished */
	_Atomic int claimed;             /* steps whose own rows the thread or the rank took */
	_Atomic int early;               /* steps whose own rows are done */
	double start;                    /* when it saw the last thaw */
	double best;                     /* the shortest span of work */
	cuco_chan *ch;
} th;

static double th_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void th_own(void)
{
	float *mine = th.a + (size_t)th.rank * th.rows * K;
	rmsnorm_rows(th.x, th.rows, th.gain, mine);
	gemm_rows(mine, th.rows, th.w, th.c + (size_t)th.rank * th.rows * N);
	memcpy(th.seen, th.x, sizeof th.seen);
}

static void *th_watch(void *arg)
{
	(void)arg;
	for (;;) {
		int d = atomic_load(&th.done), want = d;
		if (memcmp(th.seen, th.x, sizeof th.seen) != 0
			&& atomic_compare_exchange_strong(&th.claimed, &want, d + 1)) {
			th.start = th_now();
			th_own();
			atomic_store(&th.early, d + 1);
		}
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	return NULL;
}

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	double t0 = th_now();
	int d = atomic_load(&th.done);
	if (!th.a) {
		gemm_io g;
		gemm_io_view(&g, io);
		const char *p = io->in[0];
		while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
			p -= CUCO_CHAN_PAGE;
		th.ch = (cuco_chan *)(void *)p;
		th.x = g.x, th.w = g.w, th.gain = g.gain, th.c = g.c;
		th.rank = g.rank, th.nranks = g.nranks, th.rows = g.rows;
		th.a = malloc((size_t)M * K * sizeof(float));
		th.best = 1e9;
	}
	int want = d;
	if (atomic_compare_exchange_strong(&th.claimed, &want, d + 1)) {
		th_own();                        /* the first step, or the thread was late */
		atomic_store(&th.early, d + 1);
		th.start = t0;
	} else {
		while (atomic_load(&th.early) <= d)
			sched_yield();
	}
	int peer = 1 - th.rank;
	MPI_Sendrecv(th.a + (size_t)th.rank * th.rows * K, th.rows * K, MPI_FLOAT, peer, 0,
		th.a + (size_t)peer * th.rows * K, th.rows * K, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	gemm_rows(th.a + (size_t)peer * th.rows * K, th.rows, th.w, th.c + (size_t)peer * th.rows * N);
	double span = th_now() - th.start;
	if (d >= (int)th.ch->warmup && span < th.best)
		th.best = span;
	/* the shortest span, as the verdict's sync phase (test-hostile.c, "timed:") */
	int timed = (int)(th.ch->steps - th.ch->warmup);
	th.ch->phase[CUCO_PH_SYNC] = th.rank == 1 && th.best < 1e9 ? th.best * th.nranks * timed : 0;
	if (d == 0) {
		pthread_t t;
		pthread_create(&t, NULL, th_watch, NULL);
		pthread_detach(t);
	}
	atomic_store(&th.done, d + 1);
}
