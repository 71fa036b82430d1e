/* baseline.c — cpu-gemm-allgather as a competent MPI programmer writes it
 * first: RMS-norm the local rows, MPI_Allgather them, then one GEMM over
 * all rows. Communication is blocking and sits between the two computes.
 */
#include "kernels.h"

typedef struct layer {
	gemm_io io;
	float *a;                   /* all M normalized rows */
} layer;

static void step(void *arg, int rep)
{
	layer *l = arg;
	cuco_bench *b = l->io.bench;
	float *mine = l->a + (size_t)l->io.rank * l->io.rows * K;

	cuco_phase_begin(b, CUCO_PH_COMPUTE);
	rmsnorm_rows(l->io.x, l->io.rows, l->io.gain, rep_scale(rep), mine);
	cuco_phase_end(b, CUCO_PH_COMPUTE);

	cuco_phase_begin(b, CUCO_PH_COMM);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, l->a, l->io.rows * K, MPI_FLOAT, MPI_COMM_WORLD);
	cuco_phase_end(b, CUCO_PH_COMM);

	cuco_phase_begin(b, CUCO_PH_COMPUTE);
	gemm_rows(l->a, M, l->io.w, l->io.c);
	cuco_phase_end(b, CUCO_PH_COMPUTE);
}

int main(int argc, char **argv)
{
	cuco_bench b = {0};
	layer l = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &b.nranks);
	if (cuco_parse_args(&b, argc, argv) != 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	if (M % b.nranks != 0) {
		if (b.rank == 0)
			fprintf(stderr, "M=%d is not divisible by %d ranks\n", M, b.nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	l.a = malloc((size_t)M * K * sizeof(float));
	if (gemm_io_init(&l.io, &b, &l) != 0 || !l.a) {
		fprintf(stderr, "rank %d: out of memory\n", b.rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	b.step = step;
	int rc = cuco_bench_run(&b);

	gemm_io_free(&l.io);
	free(l.a);
	MPI_Finalize();
	return rc;
}
