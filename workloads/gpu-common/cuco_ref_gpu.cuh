// cuco_ref_gpu.cuh — what the GPU workloads' halves of the referee share
// (cuco_rows_referee.cuh, attention's referee.cu): inputs drawn on the
// referee's device from a seed, and the capture at "done" of the output
// rows a check reads, out of the rank's reach (../common/cuco_referee.h).
// Trusted: built into the referee only.
#pragma once
#include "cuco_cuda.h"
#include "cuco_referee.h"

#include <vector>

// Element i of an input drawn from seed: scale * [-1, 1), rounded to T.
// The same on the host, so a check rebuilds any element from the seed.
template <class T>
__host__ __device__ static inline T cuco_ref_input(uint64_t seed, uint64_t i, float scale)
{
	return cuco_from_float<T>(2.0f * scale * cuco_ref_value(seed, i));
}

template <class T>
__global__ static void cuco_ref_fill_kernel(T *dst, size_t n, uint64_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = cuco_ref_input<T>(seed, i, scale);
}

// n elements of an input, one draw from seed, on the referee's stream.
template <class T>
static void cuco_ref_fill(T *dst, size_t n, uint64_t seed, float scale)
{
	cuco_ref_fill_kernel<T><<<1024, 256, 0, cuco_ref_gpu_stream()>>>(dst, n, seed, scale);
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
