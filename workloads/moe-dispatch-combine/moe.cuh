// moe.cuh — the part of moe-dispatch-combine that baseline and candidates
// share: routing, layouts, the expert GEMMs (cuBLAS, bf16, fp32 accumulate)
// and the check.
//
// Expert parallelism, DeepSeek-V3 style: each rank holds TOKENS tokens and
// EXPERTS/ranks experts. Every token goes to TOPK experts chosen from a
// skewed (Zipf) popularity, so some experts, and the ranks holding them,
// get far more rows than others. Dispatch sends each token's row to the
// rank of each of its experts; each expert multiplies its rows by its
// weight (HIDDEN x HIDDEN); combine brings every result back to the
// token's rank and sums them with the router's weights (fp32 output).
//
// Routing is a fixed function of the seed, so every rank knows every
// layout up front (a real system first exchanges counts; both baseline and
// candidates skip that step alike). A rank's receive buffer is
// expert-major: rows for local expert 0 from rank 0, from rank 1, …, then
// local expert 1, …, so each expert's rows are contiguous.
#pragma once
#define CUCO_WITH_NCCL 1
#include "cuco_gpu.h"
#include "cuco_blas.h"

#ifndef TOKENS
#define TOKENS 4096
#endif
#ifndef HIDDEN
#define HIDDEN 4096
#endif
#ifndef EXPERTS
#define EXPERTS 8
#endif
#ifndef TOPK
#define TOPK 2
#endif

enum { MOE_SEED_X = 31, MOE_SEED_W = 37, MOE_SEED_ROUTE = 41, MOE_CHECK_TOKENS = 128 };
static const size_t moe_row_bytes = HIDDEN * sizeof(__nv_bfloat16);

struct moe_problem {
	int el;                     // experts per rank
	int sms;
	long max_rows;              // largest receive buffer over ranks (windows are symmetric)
	// Per pair (t, k) of my tokens: destination rank, row there, weight, and
	// row in the baseline's packed send buffer (ordered by rank, expert, token).
	std::vector<int> dest, drow, srow, expert;
	std::vector<float> w;
	int *dest_d, *drow_d, *srow_d, *expert_d;
	float *w_d;
	// Per row of my receive buffer: the rank and pair (t*TOPK + k) it came
	// from, for candidates that push results back instead of pulling them.
	std::vector<int> origin_rank, origin_pair;
	int *origin_rank_d, *origin_pair_d;
	std::vector<long> exp_start, exp_rows;   // my local experts' rows in my receive buffer
	std::vector<long> send_cnt, send_off;    // [d*el + le]: rows I send to d's expert le
	std::vector<long> recv_cnt, recv_off;    // [le*R + s]: rows I get from s for expert le
	__nv_bfloat16 *X;           // [TOKENS][HIDDEN] my tokens
	__nv_bfloat16 *W;           // [el][HIDDEN out][HIDDEN in]
	float *out;                 // [TOKENS][HIDDEN] combined output
	cublasHandle_t blas;
};

// Expert e's popularity falls as 1/(e+1): expert 0 gets the most tokens.
static int moe_route(int rank, int t, int k, const std::vector<double> &cdf)
{
	double u = 0.5 * (cuco_rand(MOE_SEED_ROUTE, ((uint64_t)rank * TOKENS + t) * 64 + k) + 1.0);
	return (int)(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
}

// My tokens and my experts' weights, from the harness's input seed
// (cuco_rand); the routing stays as set up.
static inline void moe_fill(const cuco_ctx *c, moe_problem *p)
{
	const int me = c->rank;
	cuco_fill(p->X, (size_t)TOKENS * HIDDEN, MOE_SEED_X + me);
	for (int le = 0; le < p->el; le++)
		cuco_fill(p->W + (size_t)le * HIDDEN * HIDDEN, (size_t)HIDDEN * HIDDEN, MOE_SEED_W + me * p->el + le, 0, 0.05f);
}

static inline moe_problem moe_setup(const cuco_ctx *c)
{
	const int R = c->nranks;
	if (EXPERTS % R || HIDDEN % 8 || TOPK > EXPERTS)
		cuco_die(__FILE__, __LINE__, "EXPERTS must split over ranks, HIDDEN be a multiple of 8, TOPK <= EXPERTS",
			"moe_setup");
	moe_problem p;
	p.el = EXPERTS / R;
	CUCO_CUDA(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0));
	std::vector<double> cdf(EXPERTS);
	double sum = 0;
	for (int e = 0; e < EXPERTS; e++)
		cdf[e] = sum += 1.0 / (e + 1);
	for (double &v : cdf)
		v /= sum;
	cdf.back() = 1.0;
	// Every rank's routing: topk distinct experts per token, weights summing to 1.
	std::vector<int> route((size_t)R * TOKENS * TOPK);
	for (int r = 0; r < R; r++)
		for (int t = 0; t < TOKENS; t++)
			for (int k = 0, draw = 0; k < TOPK; draw++) {
				int e = moe_route(r, t, draw, cdf);
				int *mine = &route[((size_t)r * TOKENS + t) * TOPK];
				if (draw >= 64)  // pathological draws: take the next free expert
					for (e = 0; std::find(mine, mine + k, e) != mine + k; e++)
						;
				if (std::find(mine, mine + k, e) == mine + k)
					mine[k++] = e;
			}
	// cnt[(s*R + d)*el + le]: rows from rank s to local expert le of rank d.
	std::vector<long> cnt((size_t)R * R * p.el, 0);
	for (int s = 0; s < R; s++)
		for (size_t i = 0; i < (size_t)TOKENS * TOPK; i++) {
			int e = route[(size_t)s * TOKENS * TOPK + i];
			cnt[((size_t)s * R + e / p.el) * p.el + e % p.el]++;
		}
	// Receive layout of each rank d: expert-major, then source rank.
	std::vector<long> roff((size_t)R * p.el * R);  // [(d*el + le)*R + s]
	p.max_rows = 0;
	for (int d = 0; d < R; d++) {
		long row = 0;
		for (int le = 0; le < p.el; le++)
			for (int s = 0; s < R; s++) {
				roff[((size_t)d * p.el + le) * R + s] = row;
				row += cnt[((size_t)s * R + d) * p.el + le];
			}
		p.max_rows = std::max(p.max_rows, row);
	}
	const int me = c->rank;
	p.exp_start.resize(p.el);
	p.exp_rows.resize(p.el);
	p.recv_cnt.resize((size_t)p.el * R);
	p.recv_off.resize((size_t)p.el * R);
	for (int le = 0; le < p.el; le++) {
		p.exp_start[le] = roff[((size_t)me * p.el + le) * R];
		p.exp_rows[le] = 0;
		for (int s = 0; s < R; s++) {
			p.recv_cnt[(size_t)le * R + s] = cnt[((size_t)s * R + me) * p.el + le];
			p.recv_off[(size_t)le * R + s] = roff[((size_t)me * p.el + le) * R + s];
			p.exp_rows[le] += p.recv_cnt[(size_t)le * R + s];
		}
	}
	p.send_cnt.resize((size_t)R * p.el);
	p.send_off.resize((size_t)R * p.el);
	long srow = 0;
	for (int d = 0; d < R; d++)
		for (int le = 0; le < p.el; le++) {
			p.send_off[(size_t)d * p.el + le] = srow;
			srow += p.send_cnt[(size_t)d * p.el + le] = cnt[((size_t)me * R + d) * p.el + le];
		}
	// Per pair of my tokens: where its row goes (in token order within each
	// (rank, expert) segment, the order both layouts use).
	const size_t npairs = (size_t)TOKENS * TOPK;
	p.dest.resize(npairs);
	p.drow.resize(npairs);
	p.srow.resize(npairs);
	p.expert.resize(npairs);
	p.w.resize(npairs);
	p.origin_rank.resize(std::max(1L, p.max_rows));
	p.origin_pair.resize(std::max(1L, p.max_rows));
	for (int s = 0; s < R; s++) {
		std::vector<long> dnext((size_t)R * p.el, 0);
		for (int t = 0; t < TOKENS; t++) {
			float wsum = 0;
			for (int k = 0; s == me && k < TOPK; k++)
				wsum += p.w[(size_t)t * TOPK + k] = 1.5f + cuco_rand(MOE_SEED_ROUTE + 1, (uint64_t)me * npairs + t * TOPK + k);
			for (int k = 0; k < TOPK; k++) {
				size_t i = (size_t)t * TOPK + k;
				int e = route[(size_t)s * npairs + i], d = e / p.el, le = e % p.el;
				long n = dnext[(size_t)d * p.el + le]++;
				long row = roff[((size_t)d * p.el + le) * R + s] + n;
				if (d == me) {
					p.origin_rank[row] = s;
					p.origin_pair[row] = (int)i;
				}
				if (s != me)
					continue;
				p.w[i] /= wsum;
				p.expert[i] = e;
				p.dest[i] = d;
				p.drow[i] = (int)row;
				p.srow[i] = (int)(p.send_off[(size_t)d * p.el + le] + n);
			}
		}
	}
	auto upload = [](const auto &v, auto **dst) {
		CUCO_CUDA(cudaMalloc(dst, v.size() * sizeof v[0]));
		CUCO_CUDA(cudaMemcpy(*dst, v.data(), v.size() * sizeof v[0], cudaMemcpyHostToDevice));
	};
	upload(p.dest, &p.dest_d);
	upload(p.drow, &p.drow_d);
	upload(p.srow, &p.srow_d);
	upload(p.expert, &p.expert_d);
	upload(p.w, &p.w_d);
	upload(p.origin_rank, &p.origin_rank_d);
	upload(p.origin_pair, &p.origin_pair_d);
	CUCO_CUDA(cudaMalloc(&p.X, (size_t)TOKENS * moe_row_bytes));
	CUCO_CUDA(cudaMalloc(&p.W, (size_t)p.el * HIDDEN * moe_row_bytes));
	CUCO_CUDA(cudaMalloc(&p.out, (size_t)TOKENS * HIDDEN * sizeof(float)));
	moe_fill(c, &p);
	CUCO_CUBLAS(cublasCreate(&p.blas));
	CUCO_CUDA(cudaDeviceSynchronize());
	return p;
}

static inline void moe_teardown(moe_problem *p)
{
	CUCO_CUBLAS(cublasDestroy(p->blas));
	for (void *q : {(void *)p->dest_d, (void *)p->drow_d, (void *)p->srow_d, (void *)p->expert_d, (void *)p->w_d,
	                (void *)p->origin_rank_d, (void *)p->origin_pair_d,
	                (void *)p->X, (void *)p->W, (void *)p->out})
		CUCO_CUDA(cudaFree(q));
}

// Local expert le: Y rows = W_le · rows of `in` (both in receive layout),
// on at most `sms` multiprocessors (0: all).
static inline void moe_expert(moe_problem *p, int le, const __nv_bfloat16 *in, __nv_bfloat16 *y, cudaStream_t s, int sms)
{
	const float one = 1.0f, zero = 0.0f;
	long n = p->exp_rows[le], r0 = p->exp_start[le];
	if (n == 0)
		return;
	CUCO_CUBLAS(cublasSetStream(p->blas, s));
	CUCO_CUBLAS(cublasSetSmCountTarget(p->blas, sms));
	CUCO_CUBLAS(cublasGemmEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, HIDDEN, (int)n, HIDDEN, &one,
		p->W + (size_t)le * HIDDEN * HIDDEN, CUDA_R_16BF, HIDDEN, in + (size_t)r0 * HIDDEN, CUDA_R_16BF, HIDDEN,
		&zero, y + (size_t)r0 * HIDDEN, CUDA_R_16BF, HIDDEN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Whether expert e is one of the local experts [le0, le1) of its rank.
__host__ __device__ static inline bool moe_in_group(int e, int el, int le0, int le1)
{
	return e % el >= le0 && e % el < le1;
}

// out[t] += sum over this token's pairs k whose expert is one of the local
// experts [le0, le1) of its rank, of w[t,k] * rows[k]; `width` threads
// share the token, rows come from `row(t, k)`. 8 bf16 per 16-byte load.
template <typename RowOf>
__device__ static inline void moe_combine_token(float *out, const float *w, const int *expert, int el, int le0,
	int le1, int t, int lane, int width, RowOf row)
{
	float4 *o = (float4 *)(out + (size_t)t * HIDDEN);
	for (int v = lane; v < HIDDEN / 8; v += width) {
		float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
		for (int k = 0; k < TOPK; k++) {
			if (!moe_in_group(expert[t * TOPK + k], el, le0, le1))
				continue;
			uint4 raw = ((const uint4 *)row(t, k))[v];
			const __nv_bfloat16 *b = (const __nv_bfloat16 *)&raw;
			float wk = w[t * TOPK + k];
			for (int j = 0; j < 8; j++)
				acc[j] += wk * __bfloat162float(b[j]);
		}
		float4 a = o[2 * v], b = o[2 * v + 1];
		o[2 * v] = make_float4(a.x + acc[0], a.y + acc[1], a.z + acc[2], a.w + acc[3]);
		o[2 * v + 1] = make_float4(b.x + acc[4], b.y + acc[5], b.z + acc[6], b.w + acc[7]);
	}
}

// Reference for MOE_CHECK_TOKENS tokens spread over my TOKENS from where
// the harness's salt says, from the seeds: out[t][j] = sum_k w * sum_i
// W_e[j][i] X[t][i], with the expert's result rounded to bf16 as the GEMM's
// output is. One warp per (token, j).
__global__ void moe_check_kernel(const float *out, const float *w, const int *expert, int rank, uint64_t salt,
	float *err)
{
	int warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (warp >= MOE_CHECK_TOKENS * HIDDEN)
		return;
	int t = (int)(((long)(warp / HIDDEN) * TOKENS / MOE_CHECK_TOKENS + salt) % TOKENS), j = warp % HIDDEN;
	float want = 0;
	for (int k = 0; k < TOPK; k++) {
		int e = expert[t * TOPK + k];
		float acc = 0;
		for (int i = lane; i < HIDDEN; i += 32) {
			float wv = __bfloat162float(__float2bfloat16(0.05f * cuco_rand(MOE_SEED_W + e, (uint64_t)j * HIDDEN + i)));
			float xv = __bfloat162float(__float2bfloat16(cuco_rand(MOE_SEED_X + rank, (uint64_t)t * HIDDEN + i)));
			acc += wv * xv;
		}
		for (int o = 16; o; o /= 2)
			acc += __shfl_xor_sync(0xffffffffu, acc, o);
		want += w[t * TOPK + k] * __bfloat162float(__float2bfloat16(acc));
	}
	if (lane == 0) {
		float got = out[(size_t)t * HIDDEN + j];
		cuco_err_raise(err, fabsf(got - want) / (fabsf(want) + 1.0f));
	}
}

static inline double moe_check(const cuco_ctx *c, moe_problem *p)
{
	float *err = cuco_err_new(c);
	moe_check_kernel<<<MOE_CHECK_TOKENS * HIDDEN / 8, 256, 0, c->stream>>>(p->out, p->w_d, p->expert_d, c->rank,
		cuco_check_salt(), err);
	CUCO_LAUNCHED();
	return cuco_err_take(c, err);
}

static const double moe_tolerance = 2e-2;

// What the harness verifies (cuco_bench): the combined output, with the
// experts' output (ybytes at y) poisoned too; refill, when given, runs
// after the inputs are rebuilt (a copy of X into a window, say).
static inline cuco_data moe_data(const cuco_ctx *c, moe_problem *p, void *y, size_t ybytes,
	std::function<void()> refill = nullptr)
{
	return {
		[=] {
			moe_fill(c, p);
			if (refill)
				refill();
		},
		[=] {
			cuco_poison(y, ybytes, c->stream);
			cuco_poison(p->out, (size_t)TOKENS * HIDDEN * sizeof(float), c->stream);
		},
		[=] { return moe_check(c, p); },
		moe_tolerance,
	};
}

// Rows a rank sends to other ranks (dispatch) and gets back (combine).
static inline double moe_bytes(const moe_problem *p, int rank)
{
	long rows = 0;
	for (size_t i = 0; i < p->dest.size(); i++)
		rows += p->dest[i] != rank;
	return 2.0 * rows * moe_row_bytes;
}
static inline double moe_flops(const moe_problem *p)
{
	long rows = 0;
	for (long n : p->exp_rows)
		rows += n;
	return 2.0 * rows * HIDDEN * HIDDEN;
}
