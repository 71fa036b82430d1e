// swiglu's half of the referee (../gpu-common/cuco_rows_referee.cuh):
// the problem and its double-precision reference. Built apart from every
// program, into the referee beside each run and benchmark stage.
#include "swiglu.cuh"
#include "cuco_rows_referee.cuh"

static void reference(const double *x, const double *, double *y)
{
	for (int j = 0; j < COLS; j++)
		y[j] = x[j] / (1.0 + exp(-x[j])) * x[COLS + j];
}

static rows_ref_kernel rows_ref_problem(void)
{
	return { 2 * COLS, false, 4.0f, 0.0f, reference };
}
