// swiglu baseline: the first kernel one writes. One thread per output
// element, one element per load.
#include "swiglu.cuh"

__global__ void swiglu_naive(const elem_t *x, elem_t *y)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i >= (size_t)ROWS * COLS)
		return;
	size_t row = i / COLS, j = i % COLS;
	const elem_t *r = x + row * 2 * COLS;
	y[i] = cuco_from_float<elem_t>(swiglu_one(cuco_to_float(r[j]), cuco_to_float(r[COLS + j])));
}

static void launch(const rows_io &io, cudaStream_t s)
{
	swiglu_naive<<<(unsigned)(((size_t)ROWS * COLS + 255) / 256), 256, 0, s>>>(io.in, io.out);
}

int main(int argc, char **argv)
{
	return rows_main(argc, argv, {"swiglu baseline", 2 * COLS, COLS, false, 4.0f, launch, swiglu_reference});
}
