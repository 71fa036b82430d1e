// cuco_rows.cuh — what the programs of the single-GPU row-wise kernels
// (family cuda: RMSNorm, SwiGLU, softmax) compute with: the problem's
// sizes and element type, its buffers (struct cuco_problem, the frame's)
// and the device helpers the kernels share. Each maps ROWS rows of the
// inputs (and an optional weight vector) to ROWS rows of COLS outputs.
// They are refereed: the frame the program is linked with
// (cuco_rows_ref_frame.cu) runs it on the referee's device buffers, and
// the referee (cuco_rows_referee.cuh) times and checks it.
//
// The element type is a size variable, not a knob: ELEM=2 is bf16, ELEM=4
// fp32 (a tuner must not win by changing the problem).
#pragma once
#include "cuco_gpu_step.h"

#ifndef ROWS
#define ROWS 16384
#endif
#ifndef COLS
#define COLS 4096
#endif
#ifndef ELEM
#define ELEM 2
#endif

#if ELEM == 2
typedef __nv_bfloat16 elem_t;
#elif ELEM == 4
typedef float elem_t;
#else
#error "ELEM must be 2 (bf16) or 4 (fp32)"
#endif

// The frame's buffers, on the device.
struct cuco_problem {
	const elem_t *in;    // [ROWS][the workload's input columns]
	const elem_t *w;     // [COLS], or nullptr where the workload has no weight
	elem_t *out;         // [ROWS][COLS]
};

// ---- device helpers ------------------------------------------------------

// VEC consecutive elements as one aligned load/store (16 bytes at most).
template <int VEC>
struct alignas(VEC * sizeof(elem_t)) rows_vec {
	elem_t v[VEC];
};


struct rows_add {
	__device__ float operator()(float a, float b) const { return a + b; }
};
struct rows_max {
	__device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Reduce v over a group of GROUP threads (a warp, or the whole CTA of
// THREADS), every thread getting the result: warp shuffles (then across
// warps through shared memory), or, with TREE, a shared-memory tree.
template <int GROUP, int THREADS, bool TREE, typename Op>
__device__ static inline float rows_group_reduce(float v, Op op)
{
	if constexpr (GROUP == 32) {
		for (int o = 16; o; o /= 2)
			v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
		return v;
	} else if constexpr (TREE) {
		__shared__ float part[THREADS];
		__syncthreads();  // readers of the previous reduction are done
		part[threadIdx.x] = v;
		__syncthreads();
		for (int n = THREADS / 2; n; n /= 2) {
			if (threadIdx.x < n)
				part[threadIdx.x] = op(part[threadIdx.x], part[threadIdx.x + n]);
			__syncthreads();
		}
		return part[0];
	} else {
		__shared__ float part[THREADS / 32];
		for (int o = 16; o; o /= 2)
			v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
		__syncthreads();
		if (threadIdx.x % 32 == 0)
			part[threadIdx.x / 32] = v;
		__syncthreads();
		float r = part[0];
		for (int i = 1; i < THREADS / 32; i++)
			r = op(r, part[i]);
		return r;
	}
}

// ---- the tunable kernels' shape, from the directive and knobs ------------
// A group of ROWS_GROUP threads (the CTA, or a warp with the warp issuer)
// owns CUCO_ROWS_PER_GROUP rows in turn and moves CUCO_VEC elements per
// load. The defaults are the seeds' own directive.
#ifndef CUCO_THREADS
#define CUCO_THREADS 256
#endif
#ifndef CUCO_VEC_BYTES
#define CUCO_VEC_BYTES 16
#endif
#ifndef CUCO_ROWS_PER_GROUP
#define CUCO_ROWS_PER_GROUP 1
#endif
#define CUCO_VEC (CUCO_VEC_BYTES / ELEM)
#if defined(CUCO_ISSUER_WARP)
#define ROWS_GROUP 32
#else
#define ROWS_GROUP CUCO_THREADS
#endif
#if defined(CUCO_SYNC_SMEM)
#define ROWS_TREE true
#else
#define ROWS_TREE false
#endif
#define ROWS_GROUPS_PER_CTA (CUCO_THREADS / ROWS_GROUP)
#define ROWS_NVEC (COLS / CUCO_VEC)                                  // vectors per row
#define ROWS_PER_THREAD ((ROWS_NVEC + ROWS_GROUP - 1) / ROWS_GROUP)  // vectors each thread holds
#define ROWS_CTAS (ROWS / (ROWS_GROUPS_PER_CTA * CUCO_ROWS_PER_GROUP))

static_assert(CUCO_VEC >= 1 && COLS % CUCO_VEC == 0, "a row must split into vectors of CUCO_VEC_BYTES");
static_assert(ROWS % (ROWS_GROUPS_PER_CTA * CUCO_ROWS_PER_GROUP) == 0, "ROWS must split over the CTAs");

typedef rows_vec<CUCO_VEC> rows_vec_t;
