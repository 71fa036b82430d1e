// softmax baseline: the first kernel one writes. One CTA of 256 threads per
// row, one element per load, shared-memory trees for the max and the sum,
// three passes over the row.
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_launch once per step (../gpu-common/cuco_gpu_step.h).
#include "softmax.cuh"

__device__ static float block_reduce(float *part, float v, bool max)
{
	__syncthreads();
	part[threadIdx.x] = v;
	__syncthreads();
	for (int n = blockDim.x / 2; n; n /= 2) {
		if (threadIdx.x < n)
			part[threadIdx.x] = max ? fmaxf(part[threadIdx.x], part[threadIdx.x + n])
			                        : part[threadIdx.x] + part[threadIdx.x + n];
		__syncthreads();
	}
	return part[0];
}

__global__ void softmax_naive(const elem_t *x, elem_t *y)
{
	__shared__ float part[256];
	const elem_t *row = x + (size_t)blockIdx.x * COLS;
	float mx = -INFINITY, sum = 0;
	for (int j = threadIdx.x; j < COLS; j += blockDim.x)
		mx = fmaxf(mx, cuco_to_float(row[j]));
	mx = block_reduce(part, mx, true);
	for (int j = threadIdx.x; j < COLS; j += blockDim.x)
		sum += __expf(cuco_to_float(row[j]) - mx);
	const float inv = 1.0f / block_reduce(part, sum, false);
	for (int j = threadIdx.x; j < COLS; j += blockDim.x)
		y[(size_t)blockIdx.x * COLS + j] = cuco_from_float<elem_t>(__expf(cuco_to_float(row[j]) - mx) * inv);
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	softmax_naive<<<ROWS, 256, 0, s>>>(p->in, p->out);
}
