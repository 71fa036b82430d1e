// cuco_cuda.h — what every GPU program computes with and no harness
// decides: the CUDA headers, the error checks that name the failing call,
// and the bf16/fp32 conversions. The harness (cuco_gpu.h) includes it too;
// nothing here takes part in a verdict.
//
// cuco_die, the checks' end, is the harness's: a framed program (the
// one-GPU family, cuco_gpu_step.h) gets it from its frame at link time, an
// unframed one from cuco_gpu.h in its own translation unit.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Print "file:line: what in call" and exit 1 (under MPI, abort every rank).
extern "C" [[noreturn]] void cuco_die(const char *file, int line, const char *what, const char *call);

#define CUCO_CUDA(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) cuco_die(__FILE__, __LINE__, cudaGetErrorString(e_), #call); \
} while (0)

// Call after every kernel launch: launch errors are only reported here.
#define CUCO_LAUNCHED() CUCO_CUDA(cudaGetLastError())

// ---- bf16 and fp32 -----------------------------------------------------------

__host__ __device__ static inline float cuco_to_float(float v) { return v; }
__host__ __device__ static inline float cuco_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __host__ __device__ static inline T cuco_from_float(float v);
template <> __host__ __device__ inline float cuco_from_float<float>(float v) { return v; }
template <> __host__ __device__ inline __nv_bfloat16 cuco_from_float<__nv_bfloat16>(float v)
{
	return __float2bfloat16(v);
}
