// fa.cuh — the part of flash-attention-cp that baseline and candidates
// share: the problem, one attention step (cuBLAS for Q·K^T and P·V on the
// tensor cores, a softmax kernel, an online-softmax merge) and the check.
//
// Ring attention with context parallelism: the sequence is split over R
// ranks, SEQ tokens each (HEADS heads of HDIM, non-causal; token-major
// layout [token][head][dim], so a range of keys is one contiguous piece). Each rank keeps
// its queries and, over R steps, attends to every rank's keys and values:
// at step j it holds the KV block of rank (rank - j) mod R while that block
// travels on to the next rank. The steps merge with the online-softmax
// rule (running max and sum), so the result equals attention over the
// whole sequence.
//
// The step is unfused (scores go through memory), not a FlashAttention
// kernel; it is the same in baseline and candidates.
#pragma once
#define CUCO_WITH_NCCL 1
#include "cuco_gpu.h"
#include "cuco_blas.h"

#ifndef SEQ
#define SEQ 1024
#endif
#ifndef HEADS
#define HEADS 32
#endif
#ifndef HDIM
#define HDIM 128
#endif

enum { FA_SEED_Q = 51, FA_SEED_K = 53, FA_SEED_V = 57, FA_CHECK_QUERIES = 32 };
static const size_t fa_elems = (size_t)HEADS * SEQ * HDIM;            // Q, K or V of one rank
static const size_t fa_kv_bytes = 2 * fa_elems * sizeof(__nv_bfloat16); // K then V

struct fa_problem {
	int sms;
	__nv_bfloat16 *Q;        // [SEQ][HEADS][HDIM]
	__nv_bfloat16 *P;        // [HEADS][SEQ q][keys] probabilities of one step
	float *S;                // [HEADS][SEQ q][keys] scores of one step
	float *O;                // [SEQ][HEADS][HDIM] this step's unnormalised output
	float *acc;              // running output, same layout
	float *m, *l;            // per (query, head): running max and sum, then the step's ([rows] each)
	__nv_bfloat16 *out;      // [SEQ][HEADS][HDIM] result
	cublasHandle_t blas;
};

// Fill a KV block as rank r's keys and values (the same function on every
// rank, so the check can rebuild any block).
static inline void fa_fill_kv(void *kv, int r)
{
	__nv_bfloat16 *k = (__nv_bfloat16 *)kv;
	cuco_fill(k, fa_elems, FA_SEED_K + r);
	cuco_fill(k + fa_elems, fa_elems, FA_SEED_V + r);
}

static inline fa_problem fa_setup(const cuco_ctx *c)
{
	if (HDIM % 32)
		cuco_die(__FILE__, __LINE__, "HDIM must be a multiple of 32", "fa_setup");
	fa_problem p;
	CUCO_CUDA(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0));
	const size_t ss = (size_t)HEADS * SEQ * SEQ, rows = (size_t)HEADS * SEQ;
	CUCO_CUDA(cudaMalloc(&p.Q, fa_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.P, ss * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.S, ss * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&p.O, fa_elems * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&p.acc, fa_elems * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&p.m, 2 * rows * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&p.l, 2 * rows * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&p.out, fa_elems * sizeof(__nv_bfloat16)));
	cuco_fill(p.Q, fa_elems, FA_SEED_Q + c->rank);
	CUCO_CUBLAS(cublasCreate(&p.blas));
	CUCO_CUDA(cudaDeviceSynchronize());
	return p;
}

static inline void fa_teardown(fa_problem *p)
{
	CUCO_CUBLAS(cublasDestroy(p->blas));
	for (void *q : {(void *)p->Q, (void *)p->P, (void *)p->S, (void *)p->O, (void *)p->acc, (void *)p->m,
	                (void *)p->l, (void *)p->out})
		CUCO_CUDA(cudaFree(q));
}

// One warp per (head, query) row of SEQ scores: the scaled max, the
// probabilities (bf16, the P·V operand) and their sum. Exponents are base 2
// (the scale carries log2 e), in fa_merge too.
__global__ void fa_softmax(const float *S, __nv_bfloat16 *P, float *mstep, float *lstep, int nkeys)
{
	const size_t row = blockIdx.x * (size_t)(blockDim.x / 32) + threadIdx.x / 32;  // h*SEQ + q
	const int lane = threadIdx.x % 32;
	if (row >= (size_t)HEADS * SEQ)
		return;
	const float scale = rsqrtf((float)HDIM) * 1.44269504f;  // exp2 domain
	const float *s = S + row * nkeys;
	float mx = -INFINITY;
	for (int k = lane; k < nkeys; k += 32)
		mx = fmaxf(mx, s[k] * scale);
	for (int o = 16; o; o /= 2)
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	float sum = 0;
	for (int k = lane; k < nkeys; k += 32) {
		__nv_bfloat16 pv = __float2bfloat16(exp2f(s[k] * scale - mx));
		P[row * nkeys + k] = pv;
		sum += __bfloat162float(pv);
	}
	for (int o = 16; o; o /= 2)
		sum += __shfl_xor_sync(0xffffffffu, sum, o);
	if (lane == 0) {
		size_t r = row % SEQ * HEADS + row / SEQ;  // (query, head) order, as the output's rows
		mstep[r] = mx;
		lstep[r] = sum;
	}
}

// Online-softmax merge of a step (O, m_step, l_step) into the running
// (acc, m, l); the first step initialises them. One warp per row.
__global__ void fa_merge(const float *O, const float *mstep, const float *lstep, float *acc, float *m, float *l, bool first)
{
	const size_t row = blockIdx.x * (size_t)(blockDim.x / 32) + threadIdx.x / 32;  // q*HEADS + h
	const int lane = threadIdx.x % 32;
	if (row >= (size_t)HEADS * SEQ)
		return;
	float ms = mstep[row], mr = first ? -INFINITY : m[row], mn = fmaxf(mr, ms);
	float a = first ? 0.0f : exp2f(mr - mn), b = exp2f(ms - mn);
	for (int d = lane; d < HDIM; d += 32) {
		float prev = first ? 0.0f : acc[row * HDIM + d];
		acc[row * HDIM + d] = prev * a + O[row * HDIM + d] * b;
	}
	if (lane == 0) {
		m[row] = mn;
		l[row] = (first ? 0.0f : l[row]) * a + lstep[row] * b;
	}
}

__global__ void fa_finish_kernel(const float *acc, const float *l, __nv_bfloat16 *out)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < fa_elems; i += (size_t)gridDim.x * blockDim.x)
		out[i] = __float2bfloat16(acc[i] / l[i / HDIM]);
}

// Attention of my queries to keys [key0, key0+nkeys) of one KV block,
// merged into the running result; cuBLAS on at most `sms` multiprocessors
// (0: all).
static inline void fa_step(fa_problem *p, const void *kv, int key0, int nkeys, bool first, cudaStream_t s, int sms)
{
	const __nv_bfloat16 *K = (const __nv_bfloat16 *)kv + (size_t)key0 * HEADS * HDIM;
	const __nv_bfloat16 *V = K + fa_elems;
	const float one = 1.0f, zero = 0.0f;
	const int ld = HEADS * HDIM;  // token stride; heads are HDIM apart
	const long long ss = (long long)SEQ * nkeys;
	CUCO_CUBLAS(cublasSetStream(p->blas, s));
	CUCO_CUBLAS(cublasSetSmCountTarget(p->blas, sms));
	// S_h (keys x queries, column-major = [query][key]) = K_h^T Q_h.
	CUCO_CUBLAS(cublasGemmStridedBatchedEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, nkeys, SEQ, HDIM, &one,
		K, CUDA_R_16BF, ld, HDIM, p->Q, CUDA_R_16BF, ld, HDIM, &zero, p->S, CUDA_R_32F, nkeys, ss, HEADS,
		CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	const int rows = HEADS * SEQ, warps = 8;
	fa_softmax<<<(rows + warps - 1) / warps, warps * 32, 0, s>>>(p->S, p->P, p->m + rows, p->l + rows, nkeys);
	CUCO_LAUNCHED();
	// O_h (dims x queries) = V_h P_h.
	CUCO_CUBLAS(cublasGemmStridedBatchedEx(p->blas, CUBLAS_OP_N, CUBLAS_OP_N, HDIM, SEQ, nkeys, &one,
		V, CUDA_R_16BF, ld, HDIM, p->P, CUDA_R_16BF, nkeys, ss, &zero, p->O, CUDA_R_32F, ld, HDIM, HEADS,
		CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	fa_merge<<<(rows + warps - 1) / warps, warps * 32, 0, s>>>(p->O, p->m + rows, p->l + rows, p->acc, p->m, p->l,
		first);
	CUCO_LAUNCHED();
}

static inline void fa_finish(fa_problem *p, cudaStream_t s)
{
	fa_finish_kernel<<<1024, 256, 0, s>>>(p->acc, p->l, p->out);
	CUCO_LAUNCHED();
}

// Reference for FA_CHECK_QUERIES queries of every head, spread over the
// sequence from where the harness's salt says, over the whole sequence
// (every rank's K and V rebuilt from the seeds), in fp32 with an online
// softmax. One warp per (head, query); lane owns HDIM/32 dims.
__global__ void fa_check_kernel(const __nv_bfloat16 *out, int rank, int nranks, uint64_t salt, float *err)
{
	const int w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (w >= HEADS * FA_CHECK_QUERIES)
		return;
	const int h = w / FA_CHECK_QUERIES;
	const int q = (int)(((long)(w % FA_CHECK_QUERIES) * SEQ / FA_CHECK_QUERIES + salt) % SEQ);
	const size_t qrow = ((size_t)q * HEADS + h) * HDIM;
	const float scale = rsqrtf((float)HDIM);
	auto bf = [](float v) { return __bfloat162float(__float2bfloat16(v)); };
	float qv[HDIM / 32], o[HDIM / 32] = {0};
	for (int j = 0; j < HDIM / 32; j++)
		qv[j] = bf(cuco_rand(FA_SEED_Q + rank, qrow + lane + 32 * j));
	float mx = -INFINITY, sum = 0;
	for (int r = 0; r < nranks; r++)
		for (int k = 0; k < SEQ; k++) {
			size_t base = ((size_t)k * HEADS + h) * HDIM;
			float dot = 0;
			for (int j = 0; j < HDIM / 32; j++)
				dot += qv[j] * bf(cuco_rand(FA_SEED_K + r, base + lane + 32 * j));
			for (int off = 16; off; off /= 2)
				dot += __shfl_xor_sync(0xffffffffu, dot, off);
			float sc = dot * scale, mn = fmaxf(mx, sc), a = expf(mx - mn), b = expf(sc - mn);
			sum = sum * a + b;
			for (int j = 0; j < HDIM / 32; j++)
				o[j] = o[j] * a + b * bf(cuco_rand(FA_SEED_V + r, base + lane + 32 * j));
			mx = mn;
		}
	for (int j = 0; j < HDIM / 32; j++) {
		float want = o[j] / sum, got = __bfloat162float(out[qrow + lane + 32 * j]);
		cuco_err_raise(err, fabsf(got - want) / (fabsf(want) + 1.0f));
	}
}

static inline double fa_check(const cuco_ctx *c, fa_problem *p)
{
	float *err = cuco_err_new(c);
	fa_check_kernel<<<HEADS * FA_CHECK_QUERIES / 8, 256, 0, c->stream>>>(p->out, c->rank, c->nranks,
		cuco_check_salt(), err);
	CUCO_LAUNCHED();
	return cuco_err_take(c, err);
}

static const double fa_tolerance = 1e-2;

// What the harness verifies (cuco_bench): kv is this rank's own KV block;
// Q and it follow the harness's input seed (cuco_rand).
static inline cuco_data fa_data(const cuco_ctx *c, fa_problem *p, void *kv)
{
	return {
		[=] {
			cuco_fill(p->Q, fa_elems, FA_SEED_Q + c->rank);
			fa_fill_kv(kv, c->rank);
		},
		[=] { cuco_poison(p->out, fa_elems * sizeof(__nv_bfloat16), c->stream); },
		[=] { return fa_check(c, p); },
		fa_tolerance,
	};
}

// KV bytes each rank receives; flops of its R attention steps.
static inline double fa_bytes(const cuco_ctx *c) { return (double)fa_kv_bytes * (c->nranks - 1); }
static inline double fa_flops(const cuco_ctx *c) { return 4.0 * HEADS * (double)SEQ * SEQ * HDIM * c->nranks; }
