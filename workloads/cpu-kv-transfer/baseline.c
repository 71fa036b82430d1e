/* baseline.c — cpu-kv-transfer as serving stacks do it first: prefill the
 * whole request into the pool, then one MPI_Send per KV block (each to its
 * slot on the decode rank, one MPI_Recv per block there), then decode.
 * The frame (cuco_frame.c) calls cuco_setup once, cuco_step per step.
 */
#include "kv.h"

typedef struct state { kv_io io; } state;

int cuco_setup(cuco_io *io, void **out)
{
	state *s = calloc(1, sizeof *s);
	if (!s || !kv_io_fits(io))
		return -1;
	*out = s;
	s->io.pool = malloc(POOL * BLOCK_FLOATS * sizeof(float));
	return s->io.pool ? 0 : -1;
}

void cuco_step(void *arg, cuco_io *io)
{
	state *s = arg;
	kv_io_view(&s->io, io);
	if (s->io.rank == 0) {
		cuco_phase_begin(CUCO_PH_COMPUTE);
		for (int blk = 0; blk < NB; blk++)
			prefill_block(s->io.hidden, s->io.w, blk, s->io.pool + src_slot(blk) * BLOCK_FLOATS);
		cuco_phase_end(CUCO_PH_COMPUTE);
		cuco_phase_begin(CUCO_PH_COMM);
		for (int blk = 0; blk < NB; blk++)
			MPI_Send(s->io.pool + src_slot(blk) * BLOCK_FLOATS, (int)BLOCK_FLOATS,
				MPI_FLOAT, 1, blk, MPI_COMM_WORLD);
		cuco_phase_end(CUCO_PH_COMM);
	} else if (s->io.rank == 1) {
		cuco_phase_begin(CUCO_PH_COMM);
		for (int blk = 0; blk < NB; blk++)
			MPI_Recv(s->io.pool + dst_slot(blk) * BLOCK_FLOATS, (int)BLOCK_FLOATS,
				MPI_FLOAT, 0, blk, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		cuco_phase_end(CUCO_PH_COMM);
		cuco_phase_begin(CUCO_PH_COMPUTE);
		attn_init(&s->io.att);
		for (int blk = 0; blk < NB; blk++)
			attn_block(&s->io.att, s->io.query, s->io.pool + dst_slot(blk) * BLOCK_FLOATS);
		attn_store(&s->io.att, s->io.out);
		cuco_phase_end(CUCO_PH_COMPUTE);
	}
}

void cuco_teardown(void *arg, cuco_io *io)
{
	state *s = arg;
	(void)io;
	free(s->io.pool);
	free(s);
}
