// swiglu's frame: main(), on the row-wise harness (cuco_rows_frame.cuh),
// with the problem and its double-precision reference. Compiled apart and
// linked with each program's object (cuco_gpu_step.h).
#include "cuco_rows_frame.cuh"
#include "swiglu.cuh"

static void reference(const double *x, const double *, double *y)
{
	for (int j = 0; j < COLS; j++)
		y[j] = x[j] / (1.0 + exp(-x[j])) * x[COLS + j];
}

int main(int argc, char **argv)
{
	return rows_main(argc, argv, {"swiglu", 2 * COLS, false, 4.0f, reference});
}
