// softmax's half of the referee (../gpu-common/cuco_rows_referee.cuh):
// the problem and its double-precision reference. Built apart from every
// program, into the referee beside each run and benchmark stage.
#include "softmax.cuh"
#include "cuco_rows_referee.cuh"

static void reference(const double *x, const double *, double *y)
{
	double mx = -INFINITY, sum = 0;
	for (int j = 0; j < COLS; j++)
		mx = std::max(mx, x[j]);
	for (int j = 0; j < COLS; j++)
		sum += y[j] = exp(x[j] - mx);
	for (int j = 0; j < COLS; j++)
		y[j] /= sum;
}

static rows_ref_kernel rows_ref_problem(void)
{
	return { COLS, false, 8.0f, 128.0f, reference };
}
