/* baseline.c — cpu-gemm-allgather as a competent MPI programmer writes it
 * first: RMS-norm the local rows, MPI_Allgather them, then one GEMM over
 * all rows. Communication is blocking and sits between the two computes.
 * The frame (cuco_frame.c) calls cuco_setup once, cuco_step per step.
 */
#include "kernels.h"

typedef struct layer {
	gemm_io io;
	float *a;                   /* all M normalized rows */
} layer;

int cuco_setup(cuco_io *io, void **state)
{
	layer *l = calloc(1, sizeof *l);
	if (!l || !gemm_io_fits(io, 1))
		return -1;
	l->a = malloc((size_t)M * K * sizeof(float));
	*state = l;
	return l->a ? 0 : -1;
}

void cuco_step(void *state, cuco_io *io)
{
	layer *l = state;
	gemm_io_view(&l->io, io);
	float *mine = l->a + (size_t)l->io.rank * l->io.rows * K;

	cuco_phase_begin(CUCO_PH_COMPUTE);
	rmsnorm_rows(l->io.x, l->io.rows, l->io.gain, mine);
	cuco_phase_end(CUCO_PH_COMPUTE);

	cuco_phase_begin(CUCO_PH_COMM);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, l->a, l->io.rows * K, MPI_FLOAT, MPI_COMM_WORLD);
	cuco_phase_end(CUCO_PH_COMM);

	cuco_phase_begin(CUCO_PH_COMPUTE);
	gemm_rows(l->a, M, l->io.w, l->io.c);
	cuco_phase_end(CUCO_PH_COMPUTE);
}

void cuco_teardown(void *state, cuco_io *io)
{
	layer *l = state;
	(void)io;
	free(l->a);
	free(l);
}
