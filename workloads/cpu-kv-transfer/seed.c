/* seed.c — cpu-kv-transfer, templated over the co-design directive.
 *
 * Same compute as baseline.c (kv.h): rank 0 prefills NB KV blocks into its
 * pool, rank 1 runs a decode step of attention over them. The directive
 * decides how blocks reach rank 1 and when:
 *
 *   CUCO_BACKEND_{MSG,RMA,SHM}   one Isend per chunk with indexed datatypes |
 *                                one MPI_Put per chunk straight into the
 *                                decode slots | shared-memory window: decode
 *                                reads prefill's slots in place
 *   CUCO_ISSUER_{ONE,SEVERAL}    prefill's compute thread moves blocks | a
 *                                helper thread on rank 0 does (shm: copies
 *                                them into the decode pool)
 *   CUCO_PLACEMENT_{AFTER,INTERLEAVE,PREFETCH}
 *                                prefill all, send, decode | per chunk:
 *                                prefill, send, decode it | per chunk, with
 *                                one chunk's send kept in flight
 *   CUCO_SYNC_{FENCE,FLAG,PSCW}  barrier/fence per group | per-chunk flag |
 *                                post-start-complete-wait (rma only)
 *   CUCO_CHUNKS                  chunks the NB blocks are sent in
 */
#include "kv.h"
#include "cuco_cpu_directive.h"
#include "cuco_handoff.h"

#include <sched.h>
#include <stdatomic.h>

#if NB % CUCO_CHUNKS != 0
#error "NB must be divisible by CUCO_CHUNKS"
#endif
#define PER_CHUNK (NB / CUCO_CHUNKS)

/* Fence and PSCW synchronize groups of chunks: all of them at once after
 * placement=after, every chunk otherwise. Both ranks agree on the groups. */
#if defined(CUCO_PLACEMENT_AFTER)
#define GROUP_END(c) ((c) == CUCO_CHUNKS - 1)
#else
#define GROUP_END(c) 1
#endif

typedef struct state {
	kv_io io;
	float *peer_pool;            /* shm: the other rank's pool */
	_Atomic long *flags;         /* shm: [CUCO_CHUNKS] in the decode rank's segment */
	MPI_Win win;
	MPI_Group peer;
	MPI_Datatype src_type[CUCO_CHUNKS], dst_type[CUCO_CHUNKS];
	MPI_Request req[CUCO_CHUNKS];
	long epoch;                  /* step + 1 */
	cuco_handoff helper;         /* issuer=several */
} state;

static size_t flags_offset(void) { return POOL * BLOCK_FLOATS * sizeof(float); }

/* EVOLVE-BLOCK-START */
/* Rank 0: move chunk c's blocks to the decode rank (issuing thread). */
static void transfer(state *s, int c)
{
	(void)s;   /* shm with one issuer and a fence moves nothing */
	(void)c;
#if defined(CUCO_BACKEND_MSG)
	MPI_Isend(s->io.pool, 1, s->src_type[c], 1, c, MPI_COMM_WORLD, &s->req[c]);
#if defined(CUCO_ISSUER_SEVERAL)
	MPI_Wait(&s->req[c], MPI_STATUS_IGNORE);   /* the helper drives progress */
#endif
#elif defined(CUCO_BACKEND_RMA)
	MPI_Put(s->io.pool, 1, s->src_type[c], 1, 0, 1, s->dst_type[c], s->win);
#if defined(CUCO_SYNC_FLAG)
	MPI_Win_flush(1, s->win);
	MPI_Accumulate(&s->epoch, 1, MPI_LONG, 1,
		(MPI_Aint)(flags_offset() + (size_t)c * sizeof(long)), 1, MPI_LONG, MPI_REPLACE,
		s->win);
	MPI_Win_flush(1, s->win);
#endif
#else
#if defined(CUCO_ISSUER_SEVERAL)
	for (int blk = c * PER_CHUNK; blk < (c + 1) * PER_CHUNK; blk++)
		memcpy(s->peer_pool + dst_slot(blk) * BLOCK_FLOATS,
			s->io.pool + src_slot(blk) * BLOCK_FLOATS, BLOCK_FLOATS * sizeof(float));
#endif
#if defined(CUCO_SYNC_FLAG)
	atomic_store_explicit(&s->flags[c], s->epoch, memory_order_release);
#endif
#endif
}

#if defined(CUCO_ISSUER_SEVERAL)
static void helper_transfer(void *arg, int c) { transfer(arg, c); }
#endif

/* Rank 0: wait until the transfers of chunks < upto were issued and, for
 * messages, completed. */
static void complete_sends(state *s, int upto)
{
#if defined(CUCO_ISSUER_SEVERAL)
	cuco_handoff_wait(&s->helper, upto);
#elif defined(CUCO_BACKEND_MSG)
	MPI_Waitall(upto, s->req, MPI_STATUSES_IGNORE);
#else
	(void)s;
	(void)upto;
#endif
}

#if !defined(CUCO_SYNC_FLAG)
/* Both ranks: the global synchronization closing a group (fence, pscw). */
static void close_group(state *s)
{
#if defined(CUCO_SYNC_FENCE) && defined(CUCO_BACKEND_RMA)
	MPI_Win_fence(0, s->win);
#elif defined(CUCO_SYNC_FENCE) && defined(CUCO_BACKEND_SHM)
	MPI_Win_sync(s->win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(s->win);
#elif defined(CUCO_SYNC_FENCE)
	(void)s;
	MPI_Barrier(MPI_COMM_WORLD);
#else
	if (s->io.rank == 0)
		MPI_Win_complete(s->win);
	else
		MPI_Win_wait(s->win);
#endif
}
#endif

static void publish(state *s, int c)
{
	cuco_phase_begin(CUCO_PH_COMM);
#if defined(CUCO_SYNC_PSCW)
	if (c == 0 || GROUP_END(c - 1))
		MPI_Win_start(s->peer, 0, s->win);
#endif
#if defined(CUCO_ISSUER_SEVERAL)
	cuco_handoff_give(&s->helper, c);
#else
	transfer(s, c);
#endif
	cuco_phase_end(CUCO_PH_COMM);

	cuco_phase_begin(CUCO_PH_SYNC);
#if defined(CUCO_PLACEMENT_INTERLEAVE)
	complete_sends(s, c + 1);
#elif defined(CUCO_PLACEMENT_PREFETCH)
	complete_sends(s, c);        /* keep chunk c in flight */
#endif
	if (GROUP_END(c)) {
		complete_sends(s, c + 1);
#if !defined(CUCO_SYNC_FLAG)
		close_group(s);
#endif
	}
	cuco_phase_end(CUCO_PH_SYNC);
}

/* Rank 1: block until chunk c is readable (and, for groups, the group). */
static void await_chunk(state *s, int c)
{
	(void)c;   /* fence after placement=after syncs only the last chunk */
	cuco_phase_begin(CUCO_PH_SYNC);
#if defined(CUCO_SYNC_FLAG) && defined(CUCO_BACKEND_MSG)
	MPI_Wait(&s->req[c], MPI_STATUS_IGNORE);
#elif defined(CUCO_SYNC_FLAG) && defined(CUCO_BACKEND_RMA)
	long seen = 0;
	for (;;) {
		MPI_Fetch_and_op(NULL, &seen, MPI_LONG, 1,
			(MPI_Aint)(flags_offset() + (size_t)c * sizeof(long)), MPI_NO_OP, s->win);
		MPI_Win_flush(1, s->win);
		if (seen >= s->epoch)
			break;
	}
	MPI_Win_sync(s->win);
#elif defined(CUCO_SYNC_FLAG)
	while (atomic_load_explicit(&s->flags[c], memory_order_acquire) < s->epoch)
		sched_yield();   /* two cores: leave the prefill rank its core */
#else
	if (GROUP_END(c)) {
#if defined(CUCO_BACKEND_MSG)
		MPI_Waitall(c + 1, s->req, MPI_STATUSES_IGNORE);
#endif
		close_group(s);
#if defined(CUCO_SYNC_PSCW)
		if (c + 1 < CUCO_CHUNKS)
			MPI_Win_post(s->peer, 0, s->win);
#endif
	}
#endif
	cuco_phase_end(CUCO_PH_SYNC);
}

/* Rank 1: fold chunk c's blocks into the decode step. */
static void decode_chunk(state *s, int c)
{
#if defined(CUCO_BACKEND_SHM) && defined(CUCO_ISSUER_ONE)
	const float *pool = s->peer_pool;   /* zero copy: prefill's own slots */
	int (*slot)(int) = src_slot;
#else
	const float *pool = s->io.pool;
	int (*slot)(int) = dst_slot;
#endif
	cuco_phase_begin(CUCO_PH_COMPUTE);
	for (int blk = c * PER_CHUNK; blk < (c + 1) * PER_CHUNK; blk++)
		attn_block(&s->io.att, s->io.query, pool + slot(blk) * BLOCK_FLOATS);
	cuco_phase_end(CUCO_PH_COMPUTE);
}

void cuco_step(void *arg, cuco_io *io)
{
	state *s = arg;
	kv_io_view(&s->io, io);
	s->epoch = io->step + 1;
	if (s->io.rank == 0) {
#if defined(CUCO_ISSUER_SEVERAL)
		cuco_handoff_start(&s->helper, CUCO_CHUNKS, helper_transfer, s);
#endif
		for (int c = 0; c < CUCO_CHUNKS; c++) {
			cuco_phase_begin(CUCO_PH_COMPUTE);
			for (int blk = c * PER_CHUNK; blk < (c + 1) * PER_CHUNK; blk++)
				prefill_block(s->io.hidden, s->io.w, blk, s->io.pool + src_slot(blk) * BLOCK_FLOATS);
			cuco_phase_end(CUCO_PH_COMPUTE);
#if !defined(CUCO_PLACEMENT_AFTER)
			publish(s, c);
#endif
		}
#if defined(CUCO_PLACEMENT_AFTER)
		for (int c = 0; c < CUCO_CHUNKS; c++)
			publish(s, c);
#endif
#if defined(CUCO_ISSUER_SEVERAL)
		cuco_handoff_join(&s->helper);
#endif
	} else {
		attn_init(&s->io.att);
#if defined(CUCO_BACKEND_MSG)
		for (int c = 0; c < CUCO_CHUNKS; c++)
			MPI_Irecv(s->io.pool, 1, s->dst_type[c], 0, c, MPI_COMM_WORLD, &s->req[c]);
#endif
#if defined(CUCO_SYNC_PSCW)
		MPI_Win_post(s->peer, 0, s->win);
#endif
		for (int c = 0; c < CUCO_CHUNKS; c++) {
			await_chunk(s, c);
#if !defined(CUCO_PLACEMENT_AFTER)
			decode_chunk(s, c);
#endif
		}
#if defined(CUCO_PLACEMENT_AFTER)
		for (int c = 0; c < CUCO_CHUNKS; c++)
			decode_chunk(s, c);
#endif
		attn_store(&s->io.att, s->io.out);
	}
}
/* EVOLVE-BLOCK-END */

/* Pools, windows and the per-chunk indexed datatypes (slot lists). */
static void setup(state *s)
{
	MPI_Aint bytes = (MPI_Aint)(flags_offset() + CUCO_CHUNKS * sizeof(long));
#if defined(CUCO_BACKEND_MSG)
	s->io.pool = malloc((size_t)bytes);
#elif defined(CUCO_BACKEND_RMA)
	MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &s->io.pool, &s->win);
	memset((char *)s->io.pool + flags_offset(), 0, CUCO_CHUNKS * sizeof(long));
#if defined(CUCO_SYNC_FLAG)
	MPI_Win_lock_all(0, s->win);
#elif defined(CUCO_SYNC_FENCE)
	MPI_Win_fence(0, s->win);
#endif
#else
	MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &s->io.pool, &s->win);
	MPI_Aint size;
	int unit;
	float *decode_seg;
	MPI_Win_shared_query(s->win, 1 - s->io.rank, &size, &unit, &s->peer_pool);
	MPI_Win_shared_query(s->win, 1, &size, &unit, &decode_seg);
	s->flags = (_Atomic long *)((char *)decode_seg + flags_offset());
	if (s->io.rank == 1)
		for (int c = 0; c < CUCO_CHUNKS; c++)
			atomic_init(&s->flags[c], 0);
	MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);   /* MPI_Win_sync needs an epoch */
	MPI_Barrier(MPI_COMM_WORLD);
#endif
	for (int c = 0; c < CUCO_CHUNKS; c++) {
		int src[PER_CHUNK], dst[PER_CHUNK];
		for (int i = 0; i < PER_CHUNK; i++) {
			src[i] = src_slot(c * PER_CHUNK + i) * (int)BLOCK_FLOATS;
			dst[i] = dst_slot(c * PER_CHUNK + i) * (int)BLOCK_FLOATS;
		}
		MPI_Type_create_indexed_block(PER_CHUNK, (int)BLOCK_FLOATS, src, MPI_FLOAT,
			&s->src_type[c]);
		MPI_Type_create_indexed_block(PER_CHUNK, (int)BLOCK_FLOATS, dst, MPI_FLOAT,
			&s->dst_type[c]);
		MPI_Type_commit(&s->src_type[c]);
		MPI_Type_commit(&s->dst_type[c]);
		s->req[c] = MPI_REQUEST_NULL;
	}
	MPI_Group world;
	int other = 1 - s->io.rank;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &other, &s->peer);
	MPI_Group_free(&world);
}

static void teardown(state *s)
{
#if defined(CUCO_BACKEND_MSG)
	free(s->io.pool);
#else
#if defined(CUCO_BACKEND_SHM) || defined(CUCO_SYNC_FLAG)
	MPI_Win_unlock_all(s->win);
#elif defined(CUCO_SYNC_FENCE)
	MPI_Win_fence(0, s->win);
#endif
	MPI_Win_free(&s->win);
#endif
	for (int c = 0; c < CUCO_CHUNKS; c++) {
		MPI_Type_free(&s->src_type[c]);
		MPI_Type_free(&s->dst_type[c]);
	}
	MPI_Group_free(&s->peer);
}

/* A helper thread calls MPI while the compute thread waits in MPI;
 * without one, ask for no more than the baseline gets. */
#if defined(CUCO_ISSUER_SEVERAL)
const int cuco_mpi_thread = MPI_THREAD_MULTIPLE;
#endif

int cuco_setup(cuco_io *io, void **out)
{
	state *s = calloc(1, sizeof *s);
	if (!s || !kv_io_fits(io))
		return -1;
	*out = s;
	s->io.rank = io->rank;
	setup(s);
	if (!s->io.pool) {
		fprintf(stderr, "rank %d: out of memory\n", io->rank);
		return -1;
	}
	return 0;
}

void cuco_teardown(void *arg, cuco_io *io)
{
	(void)io;
	teardown(arg);
	free(arg);
}
