// swiglu baseline: the first kernel one writes. One thread per output
// element, one element per load.
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_launch once per step (../gpu-common/cuco_gpu_step.h).
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

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	swiglu_naive<<<(unsigned)(((size_t)ROWS * COLS + 255) / 256), 256, 0, s>>>(p->in, p->out);
}
