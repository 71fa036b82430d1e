/* baseline.c — cpu-kv-transfer as serving stacks do it first: prefill the
 * whole request into the pool, then one MPI_Send per KV block (each to its
 * slot on the decode rank, one MPI_Recv per block there), then decode.
 */
#include "kv.h"

typedef struct state { kv_io io; } state;

static void step(void *arg, int rep)
{
	state *s = arg;
	cuco_bench *b = s->io.bench;

	if (s->io.rank == 0) {
		cuco_phase_begin(b, CUCO_PH_COMPUTE);
		for (int blk = 0; blk < NB; blk++)
			prefill_block(s->io.w, blk, rep, s->io.pool + src_slot(blk) * BLOCK_FLOATS);
		cuco_phase_end(b, CUCO_PH_COMPUTE);
		cuco_phase_begin(b, CUCO_PH_COMM);
		for (int blk = 0; blk < NB; blk++)
			MPI_Send(s->io.pool + src_slot(blk) * BLOCK_FLOATS, (int)BLOCK_FLOATS,
				MPI_FLOAT, 1, blk, MPI_COMM_WORLD);
		cuco_phase_end(b, CUCO_PH_COMM);
	} else if (s->io.rank == 1) {
		cuco_phase_begin(b, CUCO_PH_COMM);
		for (int blk = 0; blk < NB; blk++)
			MPI_Recv(s->io.pool + dst_slot(blk) * BLOCK_FLOATS, (int)BLOCK_FLOATS,
				MPI_FLOAT, 0, blk, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		cuco_phase_end(b, CUCO_PH_COMM);
		cuco_phase_begin(b, CUCO_PH_COMPUTE);
		for (int blk = 0; blk < NB; blk++)
			attn_block(&s->io.out, s->io.pool + dst_slot(blk) * BLOCK_FLOATS);
		s->io.decoded = 1;
		cuco_phase_end(b, CUCO_PH_COMPUTE);
	}
}

int main(int argc, char **argv)
{
	cuco_bench b = {0};
	state s = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &b.nranks);
	if (cuco_parse_args(&b, argc, argv) != 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	if (b.nranks != 2) {
		if (b.rank == 0)
			fprintf(stderr, "cpu-kv-transfer runs on 2 ranks (prefill, decode), not %d\n",
				b.nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	s.io.pool = malloc(POOL * BLOCK_FLOATS * sizeof(float));
	if (kv_io_init(&s.io, &b, &s) != 0 || !s.io.pool) {
		fprintf(stderr, "rank %d: out of memory\n", b.rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	b.step = step;
	int rc = cuco_bench_run(&b);

	free(s.io.pool);
	free(s.io.w);
	MPI_Finalize();
	return rc;
}
