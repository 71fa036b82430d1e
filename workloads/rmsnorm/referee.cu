// rmsnorm's half of the referee (../gpu-common/cuco_rows_referee.cuh):
// the problem and its double-precision reference. Built apart from every
// program, into the referee beside each run and benchmark stage.
#include "rmsnorm.cuh"
#include "cuco_rows_referee.cuh"

static void reference(const double *x, const double *w, double *y)
{
	double ss = 0;
	for (int j = 0; j < COLS; j++)
		ss += x[j] * x[j];
	double inv = 1.0 / sqrt(ss / COLS + rms_eps);
	for (int j = 0; j < COLS; j++)
		y[j] = x[j] * inv * w[j];
}

static rows_ref_kernel rows_ref_problem(void)
{
	return { COLS, true, 1.0f, 0.0f, reference };
}
