// rmsnorm baseline: the first kernel one writes. One CTA of 256 threads per
// row, one element per load, a shared-memory tree for the sum of squares,
// then a second pass that reads the row again.
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_launch once per step (../gpu-common/cuco_gpu_step.h).
#include "rmsnorm.cuh"

__global__ void rmsnorm_naive(const elem_t *x, const elem_t *w, elem_t *y)
{
	__shared__ float part[256];
	const elem_t *row = x + (size_t)blockIdx.x * COLS;
	float ss = 0;
	for (int j = threadIdx.x; j < COLS; j += blockDim.x) {
		float v = cuco_to_float(row[j]);
		ss += v * v;
	}
	part[threadIdx.x] = ss;
	__syncthreads();
	for (int n = blockDim.x / 2; n; n /= 2) {
		if (threadIdx.x < n)
			part[threadIdx.x] += part[threadIdx.x + n];
		__syncthreads();
	}
	const float inv = rsqrtf(part[0] / COLS + rms_eps);
	for (int j = threadIdx.x; j < COLS; j += blockDim.x)
		y[(size_t)blockIdx.x * COLS + j] = cuco_from_float<elem_t>(cuco_to_float(row[j]) * inv * cuco_to_float(w[j]));
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	rmsnorm_naive<<<ROWS, 256, 0, s>>>(p->in, p->w, p->out);
}
