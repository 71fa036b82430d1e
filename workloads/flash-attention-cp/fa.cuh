// fa.cuh — the part of flash-attention-cp that baseline and candidates
// share: the problem, one attention step and the check.
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
// A step is the fused attention kernel of cuco_attn.cuh (FlashAttention
// style: scores never leave the chip), the same in baseline and
// candidates; between steps it carries the running output and (max, sum)
// per row in fp32, and the last step writes the normalised bf16 result.
#pragma once
#define CUCO_WITH_NCCL 1
#include "cuco_gpu.h"
#define CUCO_TENSOR_MAP_DEFINE 1  // the harness's: this program has no frame
#include "cuco_attn.cuh"

#ifndef SEQ
#define SEQ 1024
#endif
#ifndef HEADS
#define HEADS 32
#endif
#ifndef HDIM
#define HDIM 128
#endif

// The attention kernel's point of its design space (knobs attn_*; see
// cuco_attn.cuh). Baseline and candidates build with the same defines.
#ifndef CUCO_ATTN_WARPS
#define CUCO_ATTN_WARPS 8
#endif
#ifndef CUCO_ATTN_BLOCK_N
#define CUCO_ATTN_BLOCK_N 128
#endif
#ifndef CUCO_ATTN_STAGES
#define CUCO_ATTN_STAGES 3
#endif
#if defined(CUCO_ATTN_MMA_SYNC)
typedef fa_config<HDIM, CUCO_ATTN_WARPS, CUCO_ATTN_BLOCK_N, CUCO_ATTN_STAGES, false, FA_SERIAL> fa_cfg;
#elif defined(CUCO_ATTN_OVERLAP_SERIAL)
typedef fa_config<HDIM, CUCO_ATTN_WARPS, CUCO_ATTN_BLOCK_N, CUCO_ATTN_STAGES, true, FA_SERIAL> fa_cfg;
#else
typedef fa_config<HDIM, CUCO_ATTN_WARPS, CUCO_ATTN_BLOCK_N, CUCO_ATTN_STAGES, true, FA_PINGPONG> fa_cfg;
#endif
static_assert(SEQ % fa_cfg::BM == 0, "SEQ must be whole tiles of 16*attn_warps queries");

enum { FA_SEED_Q = 51, FA_SEED_K = 53, FA_SEED_V = 57, FA_CHECK_QUERIES = 32 };
static const size_t fa_elems = (size_t)HEADS * SEQ * HDIM;            // Q, K or V of one rank
static const size_t fa_kv_bytes = 2 * fa_elems * sizeof(__nv_bfloat16); // K then V

// A step's launch, prepared once (tensor maps encoded) for its KV block,
// key range, role in the ring and multiprocessor budget.
struct fa_step_plan {
	const void *kv;
	int key0, nkeys, flags, sms;
	fa_plan<fa_cfg> plan;
};

struct fa_problem {
	int sms;
	__nv_bfloat16 *Q;        // [SEQ][HEADS][HDIM]
	float *acc;              // [SEQ][HEADS][HDIM] running unnormalised output
	float2 *ml;              // [SEQ][HEADS] running (max, sum)
	__nv_bfloat16 *out;      // [SEQ][HEADS][HDIM] result
	std::vector<fa_step_plan> plans;
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
	fa_problem p;
	CUCO_CUDA(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0));
	const size_t rows = (size_t)HEADS * SEQ;
	CUCO_CUDA(cudaMalloc(&p.Q, fa_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.acc, fa_elems * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&p.ml, rows * sizeof(float2)));
	CUCO_CUDA(cudaMalloc(&p.out, fa_elems * sizeof(__nv_bfloat16)));
	cuco_fill(p.Q, fa_elems, FA_SEED_Q + c->rank);
	CUCO_CUDA(cudaDeviceSynchronize());
	return p;
}

static inline void fa_teardown(fa_problem *p)
{
	for (void *q : {(void *)p->Q, (void *)p->acc, (void *)p->ml, (void *)p->out})
		CUCO_CUDA(cudaFree(q));
}

// What a launch over the given KV blocks computes for this problem: the
// carried state in unless first, out unless last.
static inline fa_call fa_call_for(const fa_problem *p, bool first, bool last, int sms)
{
	fa_call c = {};
	c.q = p->Q;
	c.queries = SEQ;
	c.heads = HEADS;
	c.flags = (first ? 0 : FA_STATE_IN) | (last ? 0 : FA_STATE_OUT);
	c.out = p->out;
	c.acc = p->acc;
	c.ml = p->ml;
	c.sms = sms;
	return c;
}

// The segment of keys [key0, key0+nkeys) of a KV block (K, then V).
static inline fa_segment fa_segment_of(const void *kv, int key0, int nkeys)
{
	const __nv_bfloat16 *k = (const __nv_bfloat16 *)kv;
	return {{k, k + fa_elems, SEQ}, key0, nkeys};
}

// Attention of my queries to keys [key0, key0+nkeys) of one KV block,
// merged into the running result (first: there is none yet; last: write
// the normalised result); on at most `sms` multiprocessors (0: all).
static inline void fa_step(fa_problem *p, const void *kv, int key0, int nkeys, bool first, bool last, cudaStream_t s,
	int sms)
{
	fa_call c = fa_call_for(p, first, last, sms);
	for (const fa_step_plan &sp : p->plans)
		if (sp.kv == kv && sp.key0 == key0 && sp.nkeys == nkeys && sp.flags == c.flags && sp.sms == sms) {
			fa_launch(sp.plan, s);
			return;
		}
	c.seg[0] = fa_segment_of(kv, key0, nkeys);
	c.nseg = 1;
	p->plans.push_back({kv, key0, nkeys, c.flags, sms, fa_prepare<fa_cfg>(c)});
	fa_launch(p->plans.back().plan, s);
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
