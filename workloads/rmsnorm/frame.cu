// rmsnorm's frame: main(), on the row-wise harness (cuco_rows_frame.cuh),
// with the problem and its double-precision reference. Compiled apart and
// linked with each program's object (cuco_gpu_step.h).
#include "cuco_rows_frame.cuh"
#include "rmsnorm.cuh"

static void reference(const double *x, const double *w, double *y)
{
	double ss = 0;
	for (int j = 0; j < COLS; j++)
		ss += x[j] * x[j];
	double inv = 1.0 / sqrt(ss / COLS + rms_eps);
	for (int j = 0; j < COLS; j++)
		y[j] = x[j] * inv * w[j];
}

int main(int argc, char **argv)
{
	return rows_main(argc, argv, {"rmsnorm", COLS, true, 1.0f, reference});
}
