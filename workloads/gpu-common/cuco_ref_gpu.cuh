// cuco_ref_gpu.cuh — what the GPU workloads' halves of the referee share
// (cuco_rows_referee.cuh, attention's referee.cu): inputs drawn on the
// referee's device from a seed, and the capture at "done" of the output
// rows a check reads, out of the rank's reach (../common/cuco_referee.h).
// Trusted: built into the referee only.
#pragma once
#include "cuco_cuda.h"
#include "cuco_referee.h"

#include <vector>

// A row's shift (rows of an input that a workload shifts): half the rows
// none, the others +-[0.75, 1) * shift, from draws of their own (the
// seed's other stream), so one step's rows lie both near zero and far
// from it wherever the contract says the answer moves with them, or not
// (softmax's exp(x - max): a softmax without its max overflows there).
__host__ __device__ static inline float cuco_ref_shift(uint64_t seed, uint64_t row, float shift)
{
	const float u = cuco_ref_value(seed ^ 0x5851F42D4C957F2Dull, row);  // [-0.5, 0.5)
	return fabsf(u) < 0.25f ? 0.0f : copysignf((0.5f + fabsf(u)) * shift, u);
}

// Element i of an input drawn from seed: scale * [-1, 1), plus its row's
// shift where rows of cols elements are shifted, rounded to T. The same
// on the host, so a check rebuilds any element from the seed.
template <class T>
__host__ __device__ static inline T cuco_ref_input(uint64_t seed, uint64_t i, float scale, uint64_t cols = 1,
	float shift = 0.0f)
{
	const float v = 2.0f * scale * cuco_ref_value(seed, i);
	return cuco_from_float<T>(shift != 0.0f ? v + cuco_ref_shift(seed, i / cols, shift) : v);
}

template <class T>
__global__ static void cuco_ref_fill_kernel(T *dst, size_t n, uint64_t seed, float scale, uint64_t cols, float shift)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = cuco_ref_input<T>(seed, i, scale, cols, shift);
}

// n elements of an input, one draw from seed, on the referee's stream
// (rows of cols elements shifted where shift is not 0).
template <class T>
static void cuco_ref_fill(T *dst, size_t n, uint64_t seed, float scale, uint64_t cols = 1, float shift = 0.0f)
{
	cuco_ref_fill_kernel<T><<<1024, 256, 0, cuco_ref_gpu_stream()>>>(dst, n, seed, scale, cols, shift);
	cuco_ref_gpu_check(cudaGetLastError(), "the inputs' fill");
}

// The k-th checked row of all the sets' (set_rows rows each): per_set of
// them in each set, in set order, drawn from pick.
__host__ __device__ static inline size_t cuco_ref_row(uint64_t pick, int k, int per_set, size_t set_rows)
{
	return (size_t)(k / per_set) * set_rows + cuco_ref_draw(pick, (uint64_t)k) % set_rows;
}

template <class T>
__global__ static void cuco_ref_gather(const T *out, size_t set_rows, int width, uint64_t pick, int per_set, T *kept)
{
	const T *row = out + cuco_ref_row(pick, blockIdx.x, per_set, set_rows) * width;
	for (int j = threadIdx.x; j < width; j += blockDim.x)
		kept[(size_t)blockIdx.x * width + j] = row[j];
}

// Copy the checked rows (per_set of every set's, `width` elements each)
// of out into *kept, device memory of the referee's (made at first need),
// and wait for the copy: the capture (ref_capture).
template <class T>
static void cuco_ref_capture_rows(const T *out, size_t set_rows, int width, uint64_t pick, int sets, int per_set,
	T **kept)
{
	cudaStream_t s = cuco_ref_gpu_stream();
	const int rows = sets * per_set;
	if (!*kept)
		cuco_ref_gpu_check(cudaMalloc(kept, (size_t)rows * width * sizeof(T)), "cudaMalloc");
	cuco_ref_gather<T><<<rows, 256, 0, s>>>(out, set_rows, width, pick, per_set, *kept);
	cuco_ref_gpu_check(cudaStreamSynchronize(s), "the capture");
}

// The captured rows, back on the host.
template <class T>
static std::vector<T> cuco_ref_captured(const T *kept, size_t n)
{
	std::vector<T> host(n);
	cuco_ref_gpu_check(cudaMemcpyAsync(host.data(), kept, n * sizeof(T), cudaMemcpyDeviceToHost,
		cuco_ref_gpu_stream()), "the captured rows");
	cuco_ref_gpu_sync();
	return host;
}
