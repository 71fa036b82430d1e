// kv.cuh — the part of kv-cache-transfer that baseline and candidates share:
// the problem, the per-layer KV projection (cuBLAS, bf16, fp32 accumulate),
// the paged layout with its block table, and the check.
//
// Disaggregated serving: an even rank runs prefill, the odd rank after it
// decodes. For each of LAYERS layers, prefill computes the prompt's keys and
// values, KV_l = Wkv_l · X (2*KVDIM values per token), and the KV cache
// moves to the decode rank's paged pool: pages of BLOCK tokens, placed where
// the decode rank's block table says (scattered, as a paged allocator
// leaves them). The transfer of layer l can hide behind the compute of
// layer l+1.
#pragma once
#define CUCO_WITH_NCCL 1
#include "cuco_gpu.h"
#include "cuco_blas.h"

#ifndef LAYERS
#define LAYERS 8
#endif
#ifndef TOKENS
#define TOKENS 8192
#endif
#ifndef HIDDEN
#define HIDDEN 4096
#endif
#ifndef KVDIM
#define KVDIM 1024
#endif
#ifndef BLOCK
#define BLOCK 16
#endif

enum { KV_SEED_W = 5, KV_SEED_X = 7, KV_SEED_TABLE = 13 };
static const int kv_pages = TOKENS / BLOCK;       // pages per layer
static const int kv_n = 2 * KVDIM;                // K and V values per token
static const size_t kv_page_bytes = (size_t)BLOCK * kv_n * sizeof(__nv_bfloat16);
static const size_t kv_layer_bytes = (size_t)kv_pages * kv_page_bytes;
static const size_t kv_pool_bytes = (size_t)LAYERS * kv_layer_bytes;

struct kv_problem {
	bool prefill;         // even ranks prefill, odd ranks decode
	int peer;
	int sms;
	__nv_bfloat16 *W;     // LAYERS x [kv_n][HIDDEN]
	__nv_bfloat16 *X;     // [TOKENS][HIDDEN]
	__nv_bfloat16 *KV;    // LAYERS x [TOKENS][kv_n]: layer l's pages, in order
	std::vector<int> table;  // LAYERS*kv_pages: pool page of (layer, page)
	int *table_dev;
	cublasHandle_t blas;
};

// The inputs, from the harness's input seed (cuco_rand). Both ranks hold
// them: decode recomputes prefill's KV as its reference.
static inline void kv_fill(kv_problem *p)
{
	cuco_fill(p->W, (size_t)LAYERS * kv_n * HIDDEN, KV_SEED_W, 0, 0.05f);
	cuco_fill(p->X, (size_t)TOKENS * HIDDEN, KV_SEED_X);
}

// kv: where prefill's KV lives (kv_pool_bytes; a symmetric window when a
// GIN put reads it), owned by the caller.
static inline kv_problem kv_setup(const cuco_ctx *c, void *kv)
{
	if (c->nranks % 2)
		cuco_environment_exit("kv-cache-transfer pairs a prefill rank with a decode rank: needs an even "
			"number of ranks, got %d", c->nranks);
	if (TOKENS % BLOCK || kv_page_bytes % 16)
		cuco_die(__FILE__, __LINE__, "TOKENS must be a multiple of BLOCK", "kv_setup");
	kv_problem p;
	p.prefill = c->rank % 2 == 0;
	p.peer = c->rank ^ 1;
	CUCO_CUDA(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0));
	// Both ranks hold the inputs: decode recomputes prefill's KV as its reference.
	CUCO_CUDA(cudaMalloc(&p.W, (size_t)LAYERS * kv_n * HIDDEN * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.X, (size_t)TOKENS * HIDDEN * sizeof(__nv_bfloat16)));
	p.KV = (__nv_bfloat16 *)kv;
	kv_fill(&p);
	// The decode pool's free list after some churn: a fixed random permutation.
	p.table.resize((size_t)LAYERS * kv_pages);
	for (size_t i = 0; i < p.table.size(); i++)
		p.table[i] = (int)i;
	for (size_t i = p.table.size() - 1; i > 0; i--) {
		size_t j = (size_t)((cuco_rand(KV_SEED_TABLE, i) + 1.0f) * 0.5f * (float)(i + 1)) % (i + 1);
		std::swap(p.table[i], p.table[j]);
	}
	CUCO_CUDA(cudaMalloc(&p.table_dev, p.table.size() * sizeof(int)));
	CUCO_CUDA(cudaMemcpy(p.table_dev, p.table.data(), p.table.size() * sizeof(int), cudaMemcpyHostToDevice));
	CUCO_CUBLAS(cublasCreate(&p.blas));
	CUCO_CUDA(cudaDeviceSynchronize());
	return p;
}

static inline void kv_teardown(kv_problem *p)
{
	CUCO_CUBLAS(cublasDestroy(p->blas));
	CUCO_CUDA(cudaFree(p->W));
	CUCO_CUDA(cudaFree(p->X));
	CUCO_CUDA(cudaFree(p->table_dev));
}

static inline __nv_bfloat16 *kv_layer(kv_problem *p, int l)
{
	return (__nv_bfloat16 *)((char *)p->KV + (size_t)l * kv_layer_bytes);
}

// Layer l's KV projection on stream s, on at most `sms` multiprocessors (0: all).
static inline void kv_compute(kv_problem *p, int l, cudaStream_t s, int sms)
{
	const float one = 1.0f, zero = 0.0f;
	CUCO_CUBLAS(cublasSetStream(p->blas, s));
	CUCO_CUBLAS(cublasSetSmCountTarget(p->blas, sms));
	CUCO_CUBLAS(cublasGemmEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, kv_n, TOKENS, HIDDEN, &one,
		p->W + (size_t)l * kv_n * HIDDEN, CUDA_R_16BF, HIDDEN, p->X, CUDA_R_16BF, HIDDEN, &zero,
		kv_layer(p, l), CUDA_R_16BF, kv_n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Largest relative difference between the decode pool and the recomputed KV.
__global__ void kv_check_kernel(const __nv_bfloat16 *pool, const __nv_bfloat16 *ref, const int *table, float *err)
{
	const size_t per_page = kv_page_bytes / sizeof(__nv_bfloat16);
	float m = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)LAYERS * kv_pages * per_page;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t page = i / per_page, off = i % per_page;
		float got = __bfloat162float(pool[(size_t)table[page] * per_page + off]);
		float want = __bfloat162float(ref[i]);
		float e = fabsf(got - want) / (fabsf(want) + 1.0f);
		m = e == e ? fmaxf(m, e) : INFINITY;
	}
	cuco_err_raise(err, m);
}

// The decode rank compares its pool with KV it computes itself; the result
// is this rank's largest error (0 on a prefill rank).
static inline double kv_check(const cuco_ctx *c, kv_problem *p, const void *pool)
{
	float *err = cuco_err_new(c);
	if (!p->prefill) {
		for (int l = 0; l < LAYERS; l++)
			kv_compute(p, l, c->stream, 0);
		kv_check_kernel<<<512, 256, 0, c->stream>>>((const __nv_bfloat16 *)pool, p->KV, p->table_dev, err);
		CUCO_LAUNCHED();
	}
	return cuco_err_take(c, err);
}

static const double kv_tolerance = 1e-2;

// What the harness verifies (cuco_bench): the decode pool.
static inline cuco_data kv_data(const cuco_ctx *c, kv_problem *p, void *pool)
{
	return {
		[=] { kv_fill(p); },
		[=] { cuco_poison(pool, kv_pool_bytes, c->stream); },
		[=] { return kv_check(c, p, pool); },
		kv_tolerance,
	};
}

// Bytes each decode rank receives, flops each prefill rank computes.
static inline double kv_bytes(void) { return (double)kv_pool_bytes; }
static inline double kv_flops(void) { return 2.0 * LAYERS * (double)TOKENS * HIDDEN * kv_n; }
