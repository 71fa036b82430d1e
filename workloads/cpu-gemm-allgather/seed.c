/* seed.c — cpu-gemm-allgather, templated over the co-design directive.
 *
 * Same compute as baseline.c (kernels.h): RMS-norm this rank's rows, make
 * them visible to every peer, GEMM all M rows against the local weight
 * slice. What the directive changes is how and when rows move:
 *
 *   CUCO_BACKEND_{MSG,RMA,SHM}   Isend/Irecv | MPI_Put into a window |
 *                                MPI-3 shared-memory window, direct loads
 *   CUCO_ISSUER_{ONE,SEVERAL}    the compute thread moves the rows | a
 *                                helper thread does (shm: pushes them)
 *   CUCO_PLACEMENT_{AFTER,INTERLEAVE,PREFETCH}
 *                                all rows then GEMM | per chunk | chunk
 *                                c+1 published before chunk c is used
 *   CUCO_SYNC_{FENCE,FLAG,PSCW}  barrier/fence | per-peer per-chunk flag |
 *                                post-start-complete-wait (rma only)
 *   CUCO_CHUNKS                  chunks per rank's rows (granularity)
 *   CUCO_TILE                    GEMM K-block (kernels.h)
 *
 * Every point is correct; the referee checks the output against its own
 * double-precision reference on fresh inputs every step. The frame
 * (cuco_frame.c) calls cuco_setup once and cuco_step per step.
 */
#include "kernels.h"
#include "cuco_cpu_directive.h"
#include "cuco_handoff.h"

#include <sched.h>
#include <stdatomic.h>


/* Where a rank's own rows live and how peers see them:
 * msg: a private buffer of all M rows; peers' rows arrive in it.
 * rma: the same buffer is an MPI window; peers put their rows in it.
 * shm: every rank's buffer is a segment of one shared window; with one
 *      issuer the GEMM loads peers' rows from their segments (zero copy),
 *      with several a helper thread stores this rank's rows into theirs. */
typedef struct layer {
	gemm_io io;
	int crows;                       /* rows per chunk */
	float *a;                        /* this rank's M x K buffer */
	float **seg;                     /* shm: every rank's buffer */
	_Atomic long **flags;            /* shm: every rank's [nranks][CUCO_CHUNKS] flags */
	long *rma_flags;                 /* rma: this rank's flags, inside the window */
	MPI_Win win;
	MPI_Group peers;
	MPI_Request *sends, *recvs;      /* msg: [nranks][CUCO_CHUNKS] */
	long epoch;                      /* step + 1: flags from older steps are stale */
	int open;                        /* publishes not yet made visible by a sync */
	int published;                   /* chunks published in this step */
	cuco_handoff helper;             /* issuer=several */
} layer;

static size_t rows_at(const layer *l, int q, int chunk)
{
	return ((size_t)q * l->io.rows + (size_t)chunk * l->crows) * K;
}

/* Rows of rank q, chunk `chunk`, as this rank's GEMM reads them. */
static const float *peer_rows(const layer *l, int q, int chunk)
{
#if defined(CUCO_BACKEND_SHM) && defined(CUCO_ISSUER_ONE)
	return l->seg[q] + rows_at(l, q, chunk);
#else
	return l->a + rows_at(l, q, chunk);
#endif
}

/* EVOLVE-BLOCK-START */
/* Move this rank's chunk to every peer (runs on the issuing thread). */
static void transfer(layer *l, int chunk)
{
#if defined(CUCO_BACKEND_SHM) && defined(CUCO_ISSUER_ONE)
	/* Zero copy: the rows already are where peers load them from. */
#if defined(CUCO_SYNC_FLAG)
	atomic_store_explicit(&l->flags[l->io.rank][l->io.rank * CUCO_CHUNKS + chunk], l->epoch,
		memory_order_release);
#else
	(void)l;
	(void)chunk;
#endif
#else
	const float *mine = l->a + rows_at(l, l->io.rank, chunk);
	for (int q = 0; q < l->io.nranks; q++) {
		if (q == l->io.rank)
			continue;
#if defined(CUCO_BACKEND_MSG)
		MPI_Isend(mine, l->crows * K, MPI_FLOAT, q, chunk, MPI_COMM_WORLD,
			&l->sends[q * CUCO_CHUNKS + chunk]);
#elif defined(CUCO_BACKEND_RMA)
		MPI_Put(mine, l->crows * K, MPI_FLOAT, q,
			(MPI_Aint)(rows_at(l, l->io.rank, chunk) * sizeof(float)),
			l->crows * K, MPI_FLOAT, l->win);
#if defined(CUCO_SYNC_FLAG)
		/* Puts are unordered: complete the rows before raising the flag. */
		MPI_Win_flush(q, l->win);
		MPI_Accumulate(&l->epoch, 1, MPI_LONG, q,
			(MPI_Aint)((size_t)M * K * sizeof(float)
				+ ((size_t)l->io.rank * CUCO_CHUNKS + chunk) * sizeof(long)),
			1, MPI_LONG, MPI_REPLACE, l->win);
		MPI_Win_flush(q, l->win);
#endif
#else
		memcpy(l->seg[q] + rows_at(l, l->io.rank, chunk), mine,
			(size_t)l->crows * K * sizeof(float));
#if defined(CUCO_SYNC_FLAG)
		atomic_store_explicit(&l->flags[q][l->io.rank * CUCO_CHUNKS + chunk], l->epoch,
			memory_order_release);
#endif
#endif
	}
#endif
}

#if defined(CUCO_ISSUER_SEVERAL)
static void helper_transfer(void *arg, int chunk) { transfer(arg, chunk); }
#endif

/* Make this rank's chunk available to peers, or hand it to the helper. */
static void publish(layer *l, int chunk)
{
	cuco_phase_begin(CUCO_PH_COMM);
#if defined(CUCO_SYNC_PSCW)
	if (!l->open) {
		MPI_Win_post(l->peers, 0, l->win);
		MPI_Win_start(l->peers, 0, l->win);
	}
#endif
	l->open = 1;
	l->published = chunk + 1;
#if defined(CUCO_ISSUER_SEVERAL)
	cuco_handoff_give(&l->helper, chunk);
#else
	transfer(l, chunk);
#endif
	cuco_phase_end(CUCO_PH_COMM);
}

#if defined(CUCO_SYNC_FLAG) && !defined(CUCO_BACKEND_MSG)
/* Wait until rank q's flag for the chunk carries this repetition. */
static void wait_flag(layer *l, int q, int chunk)
{
	size_t slot = (size_t)q * CUCO_CHUNKS + chunk;
#if defined(CUCO_BACKEND_RMA)
	long seen = 0;
	for (;;) {
		/* An atomic read through MPI, which also drives progress. */
		MPI_Fetch_and_op(NULL, &seen, MPI_LONG, l->io.rank,
			(MPI_Aint)((size_t)M * K * sizeof(float) + slot * sizeof(long)),
			MPI_NO_OP, l->win);
		MPI_Win_flush(l->io.rank, l->win);
		if (seen >= l->epoch)
			break;
	}
	MPI_Win_sync(l->win);
#else
	/* one issuer: the producer flags its own segment; several: the pusher
	 * flags ours. */
#if defined(CUCO_ISSUER_ONE)
	_Atomic long *flag = &l->flags[q][slot];
#else
	_Atomic long *flag = &l->flags[l->io.rank][slot];
#endif
	while (atomic_load_explicit(flag, memory_order_acquire) < l->epoch)
		sched_yield();   /* two cores: let the producer run */
#endif
}
#endif

/* Block until every peer's chunk is readable here. */
static void await_chunk(layer *l, int chunk)
{
	cuco_phase_begin(CUCO_PH_SYNC);
#if defined(CUCO_ISSUER_SEVERAL)
	/* An epoch may only close once the helper issued all its transfers. */
	cuco_handoff_wait(&l->helper, l->published);
#endif
#if defined(CUCO_SYNC_FLAG)
#if defined(CUCO_BACKEND_MSG)
	for (int q = 0; q < l->io.nranks; q++)
		MPI_Wait(&l->recvs[q * CUCO_CHUNKS + chunk], MPI_STATUS_IGNORE);
#else
	for (int q = 0; q < l->io.nranks; q++)
		if (q != l->io.rank)
			wait_flag(l, q, chunk);
#endif
#else
	(void)chunk;
	if (l->open) {
#if defined(CUCO_BACKEND_MSG)
		/* Only chunks published so far: peers have not sent later ones. */
		for (int q = 0; q < l->io.nranks; q++) {
			MPI_Waitall(l->published, &l->recvs[q * CUCO_CHUNKS], MPI_STATUSES_IGNORE);
			MPI_Waitall(l->published, &l->sends[q * CUCO_CHUNKS], MPI_STATUSES_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
#elif defined(CUCO_BACKEND_RMA) && defined(CUCO_SYNC_FENCE)
		MPI_Win_fence(0, l->win);
#elif defined(CUCO_BACKEND_RMA)
		MPI_Win_complete(l->win);
		MPI_Win_wait(l->win);
#else
		MPI_Win_sync(l->win);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_sync(l->win);
#endif
		l->open = 0;
	}
#endif
	cuco_phase_end(CUCO_PH_SYNC);
}

static void produce(layer *l, int chunk)
{
	cuco_phase_begin(CUCO_PH_COMPUTE);
	rmsnorm_rows(l->io.x + (size_t)chunk * l->crows * K, l->crows, l->io.gain,
		l->a + rows_at(l, l->io.rank, chunk));
	cuco_phase_end(CUCO_PH_COMPUTE);
}

/* GEMM the chunk's rows of ranks [q0, q1), skipping `skip`. */
static void consume(layer *l, int chunk, int q0, int q1, int skip)
{
	cuco_phase_begin(CUCO_PH_COMPUTE);
	for (int q = q0; q < q1; q++)
		if (q != skip)
			gemm_rows(peer_rows(l, q, chunk), l->crows, l->io.w,
				l->io.c + ((size_t)q * l->io.rows + (size_t)chunk * l->crows) * N);
	cuco_phase_end(CUCO_PH_COMPUTE);
}

void cuco_step(void *state, cuco_io *io)
{
	layer *l = state;
	gemm_io_view(&l->io, io);
	l->epoch = io->step + 1;
#if defined(CUCO_BACKEND_MSG)
	for (int q = 0; q < l->io.nranks; q++)
		for (int chunk = 0; chunk < CUCO_CHUNKS; chunk++)
			if (q != l->io.rank)
				MPI_Irecv(l->a + rows_at(l, q, chunk), l->crows * K, MPI_FLOAT, q,
					chunk, MPI_COMM_WORLD, &l->recvs[q * CUCO_CHUNKS + chunk]);
#endif
#if defined(CUCO_ISSUER_SEVERAL)
	cuco_handoff_start(&l->helper, CUCO_CHUNKS, helper_transfer, l);
#endif

#if defined(CUCO_PLACEMENT_AFTER)
	for (int chunk = 0; chunk < CUCO_CHUNKS; chunk++)
		produce(l, chunk);
	for (int chunk = 0; chunk < CUCO_CHUNKS; chunk++)
		publish(l, chunk);
	for (int chunk = 0; chunk < CUCO_CHUNKS; chunk++)
		consume(l, chunk, l->io.rank, l->io.rank + 1, -1);
	for (int chunk = 0; chunk < CUCO_CHUNKS; chunk++) {
		await_chunk(l, chunk);
		consume(l, chunk, 0, l->io.nranks, l->io.rank);
	}
#else
#if defined(CUCO_PLACEMENT_PREFETCH)
	produce(l, 0);
	publish(l, 0);
#endif
	for (int chunk = 0; chunk < CUCO_CHUNKS; chunk++) {
#if defined(CUCO_PLACEMENT_PREFETCH)
		if (chunk + 1 < CUCO_CHUNKS) {
			produce(l, chunk + 1);
			publish(l, chunk + 1);
		}
#else
		produce(l, chunk);
		publish(l, chunk);
#endif
		consume(l, chunk, l->io.rank, l->io.rank + 1, -1);
		await_chunk(l, chunk);
		consume(l, chunk, 0, l->io.nranks, l->io.rank);
	}
#endif

#if defined(CUCO_ISSUER_SEVERAL)
	cuco_handoff_join(&l->helper);
#endif
#if defined(CUCO_BACKEND_MSG)
	MPI_Waitall(l->io.nranks * CUCO_CHUNKS, l->sends, MPI_STATUSES_IGNORE);
#endif
}
/* EVOLVE-BLOCK-END */

/* Allocate the row buffer (and window) the backend needs. */
static void setup_buffers(layer *l)
{
	size_t bytes = (size_t)M * K * sizeof(float)
		+ (size_t)l->io.nranks * CUCO_CHUNKS * sizeof(long);
	l->sends = malloc((size_t)l->io.nranks * CUCO_CHUNKS * sizeof *l->sends);
	l->recvs = malloc((size_t)l->io.nranks * CUCO_CHUNKS * sizeof *l->recvs);
	for (int i = 0; i < l->io.nranks * CUCO_CHUNKS; i++)
		l->sends[i] = l->recvs[i] = MPI_REQUEST_NULL;
#if defined(CUCO_BACKEND_MSG)
	l->a = malloc(bytes);
#elif defined(CUCO_BACKEND_RMA)
	MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &l->a, &l->win);
	l->rma_flags = (long *)(l->a + (size_t)M * K);
	memset(l->rma_flags, 0, (size_t)l->io.nranks * CUCO_CHUNKS * sizeof(long));
#if defined(CUCO_SYNC_FLAG)
	MPI_Win_lock_all(0, l->win);
#else
	MPI_Win_fence(0, l->win);
#endif
#else
	MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &l->a, &l->win);
	l->seg = malloc((size_t)l->io.nranks * sizeof *l->seg);
	l->flags = malloc((size_t)l->io.nranks * sizeof *l->flags);
	for (int q = 0; q < l->io.nranks; q++) {
		MPI_Aint size;
		int unit;
		MPI_Win_shared_query(l->win, q, &size, &unit, &l->seg[q]);
		l->flags[q] = (_Atomic long *)(l->seg[q] + (size_t)M * K);
	}
	for (int i = 0; i < l->io.nranks * CUCO_CHUNKS; i++)
		atomic_init(&l->flags[l->io.rank][i], 0);
	MPI_Win_lock_all(MPI_MODE_NOCHECK, l->win);   /* MPI_Win_sync needs an epoch */
	MPI_Barrier(MPI_COMM_WORLD);
#endif
	MPI_Group world;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_excl(world, 1, &l->io.rank, &l->peers);
	MPI_Group_free(&world);
}

static void free_buffers(layer *l)
{
#if defined(CUCO_BACKEND_MSG)
	free(l->a);
#else
#if defined(CUCO_BACKEND_SHM) || defined(CUCO_SYNC_FLAG)
	MPI_Win_unlock_all(l->win);
#else
	MPI_Win_fence(0, l->win);
#endif
	MPI_Win_free(&l->win);
	free(l->seg);
	free(l->flags);
#endif
	MPI_Group_free(&l->peers);
	free(l->sends);
	free(l->recvs);
}

/* A helper thread calls MPI while the compute thread waits in MPI;
 * without one, ask for no more than the baseline gets. */
#if defined(CUCO_ISSUER_SEVERAL)
const int cuco_mpi_thread = MPI_THREAD_MULTIPLE;
#endif

int cuco_setup(cuco_io *io, void **state)
{
	layer *l = calloc(1, sizeof *l);
	if (!l || !gemm_io_fits(io, CUCO_CHUNKS))
		return -1;
	*state = l;
	gemm_io_view(&l->io, io);
	l->crows = l->io.rows / CUCO_CHUNKS;
	setup_buffers(l);
	if (!l->a || !l->sends || !l->recvs) {
		fprintf(stderr, "rank %d: out of memory\n", io->rank);
		return -1;
	}
	return 0;
}

void cuco_teardown(void *state, cuco_io *io)
{
	(void)io;
	free_buffers(state);
	free(state);
}
