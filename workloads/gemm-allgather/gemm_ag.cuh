// gemm_ag.cuh — the part of gemm-allgather that baseline and candidates
// share, so that a speedup measures orchestration only: the problem, the
// inputs, the GEMM (cuBLAS, bf16 in and out, fp32 accumulate, tensor cores)
// and the check.
//
// Tensor-parallel layer with sequence-parallel activations: each of R ranks
// holds TOKENS/R token columns of X (HIDDEN values each) and a weight shard
// W (NOUT x HIDDEN). The layer needs every token: all-gather X, then
//   C[NOUT x TOKENS] = W · X        (column-major, one column per token).
// X's column j is contiguous (HIDDEN bf16), so rank r's block is contiguous.
#pragma once
#define CUCO_WITH_NCCL 1
#include "cuco_gpu.h"
#include "cuco_blas.h"

#ifndef TOKENS
#define TOKENS 8192
#endif
#ifndef HIDDEN
#define HIDDEN 8192
#endif
#ifndef NOUT
#define NOUT 4096
#endif

enum { GA_SEED_W = 11, GA_SEED_X = 23 };

struct ga_problem {
	int cols;               // token columns per rank
	int sms;                // multiprocessors of this GPU
	__nv_bfloat16 *W;       // [NOUT][HIDDEN]: row i of W is column i of op(A) = W^T
	__nv_bfloat16 *C;       // NOUT x TOKENS, column-major
	cublasHandle_t blas;
};

static inline size_t ga_col_bytes(void) { return (size_t)HIDDEN * sizeof(__nv_bfloat16); }
static inline size_t ga_x_bytes(void) { return (size_t)TOKENS * ga_col_bytes(); }

// Weights differ per rank (each holds its own shard); X column j is the
// same function of j on every rank, so any rank can recompute any column.
// Both follow the harness's input seed (cuco_rand).
static inline void ga_fill(const cuco_ctx *c, ga_problem *p, __nv_bfloat16 *X)
{
	cuco_fill(p->W, (size_t)NOUT * HIDDEN, GA_SEED_W + c->rank);
	size_t first = (size_t)c->rank * p->cols * HIDDEN;
	CUCO_CUDA(cudaMemset(X, 0, ga_x_bytes()));
	cuco_fill(X + first, (size_t)p->cols * HIDDEN, GA_SEED_X, first);
}

static inline ga_problem ga_setup(const cuco_ctx *c, __nv_bfloat16 *X)
{
	if (TOKENS % c->nranks || (TOKENS / c->nranks) % 8 || HIDDEN % 8)
		cuco_die(__FILE__, __LINE__, "TOKENS must split into multiples of 8 per rank, HIDDEN a multiple of 8",
			"ga_setup");
	ga_problem p;
	p.cols = TOKENS / c->nranks;
	CUCO_CUDA(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0));
	CUCO_CUDA(cudaMalloc(&p.W, (size_t)NOUT * HIDDEN * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.C, (size_t)NOUT * TOKENS * sizeof(__nv_bfloat16)));
	ga_fill(c, &p, X);
	CUCO_CUBLAS(cublasCreate(&p.blas));
	CUCO_CUDA(cudaDeviceSynchronize());
	return p;
}

static inline void ga_teardown(ga_problem *p)
{
	CUCO_CUBLAS(cublasDestroy(p->blas));
	CUCO_CUDA(cudaFree(p->W));
	CUCO_CUDA(cudaFree(p->C));
}

// C[:, col0:col0+ncols] = W · X[:, col0:col0+ncols] on stream s, on at most
// `sms` multiprocessors (0: all), leaving the rest to a concurrent kernel.
static inline void ga_gemm(ga_problem *p, const __nv_bfloat16 *X, int col0, int ncols, cudaStream_t s, int sms)
{
	const float one = 1.0f, zero = 0.0f;
	CUCO_CUBLAS(cublasSetStream(p->blas, s));
	CUCO_CUBLAS(cublasSetSmCountTarget(p->blas, sms));
	CUCO_CUBLAS(cublasGemmEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, NOUT, ncols, HIDDEN, &one,
		p->W, CUDA_R_16BF, HIDDEN, X + (size_t)col0 * HIDDEN, CUDA_R_16BF, HIDDEN, &zero,
		p->C + (size_t)col0 * NOUT, CUDA_R_16BF, NOUT, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Reference for one entry per token column (row chosen by hashing the
// column and the harness's salt), computed from the seeds, not from the
// gathered buffer: a column that arrived wrong, late or not at all fails.
// One warp per column.
__global__ void ga_check_kernel(const __nv_bfloat16 *C, int wseed, uint64_t salt, float *err)
{
	int col = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (col >= TOKENS)
		return;
	int row = (int)(((uint64_t)col * 2654435761u + salt) % NOUT);
	float acc = 0;
	for (int k = lane; k < HIDDEN; k += 32) {
		float w = __bfloat162float(__float2bfloat16(cuco_rand(wseed, (uint64_t)row * HIDDEN + k)));
		float x = __bfloat162float(__float2bfloat16(cuco_rand(GA_SEED_X, (uint64_t)col * HIDDEN + k)));
		acc += w * x;
	}
	for (int o = 16; o; o /= 2)
		acc += __shfl_xor_sync(0xffffffffu, acc, o);
	if (lane == 0) {
		float got = __bfloat162float(C[(size_t)col * NOUT + row]);
		float e = fabsf(got - acc) / (fabsf(acc) + 1.0f);
		err[col] = e == e ? e : INFINITY;  // NaN (an unwritten output) fails
	}
}

// This rank's largest relative error.
static inline double ga_check(const cuco_ctx *c, ga_problem *p)
{
	float *err = nullptr;
	CUCO_CUDA(cudaMalloc(&err, TOKENS * sizeof(float)));
	ga_check_kernel<<<(TOKENS + 7) / 8, 256, 0, c->stream>>>(p->C, GA_SEED_W + c->rank, cuco_check_salt(), err);
	CUCO_LAUNCHED();
	std::vector<float> h(TOKENS);
	CUCO_CUDA(cudaMemcpyAsync(h.data(), err, TOKENS * sizeof(float), cudaMemcpyDeviceToHost, c->stream));
	CUCO_CUDA(cudaStreamSynchronize(c->stream));
	CUCO_CUDA(cudaFree(err));
	double m = 0;
	for (float e : h)
		m = std::max(m, std::isnan(e) ? INFINITY : (double)e);
	return m;
}

// bf16 GEMM with fp32 accumulation over HIDDEN up to 32768 terms, bf16 output.
static const double ga_tolerance = 2e-2;

// What the harness verifies (cuco_bench): X is the gathered buffer, C the output.
static inline cuco_data ga_data(const cuco_ctx *c, ga_problem *p, __nv_bfloat16 *X)
{
	return {
		[=] { ga_fill(c, p, X); },
		[=] { cuco_poison(p->C, (size_t)NOUT * TOKENS * sizeof(__nv_bfloat16), c->stream); },
		[=] { return ga_check(c, p); },
		ga_tolerance,
	};
}


// Per rank: every rank multiplies all tokens by its own shard.
static inline double ga_flops(void) { return 2.0 * NOUT * (double)TOKENS * HIDDEN; }
// Bytes every rank receives: the other ranks' columns.
static inline double ga_bytes(const cuco_ctx *c) { return (double)ga_x_bytes() * (c->nranks - 1) / c->nranks; }
