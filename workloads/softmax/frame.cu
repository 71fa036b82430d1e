// softmax's frame: main(), on the row-wise harness (cuco_rows_frame.cuh),
// with the problem and its double-precision reference. Compiled apart and
// linked with each program's object (cuco_gpu_step.h).
#include "cuco_rows_frame.cuh"
#include "softmax.cuh"

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

int main(int argc, char **argv)
{
	return rows_main(argc, argv, {"softmax", COLS, false, 8.0f, reference});
}
