// attention.cuh — the part of the attention workload that baseline and
// candidates share: the problem, fresh inputs, the check and the report.
//
//   out[q][h] = softmax(Q[q][h] · K[·][h]^T / sqrt(HDIM)) · V[·][h]
//
// SEQ queries against KEYS keys (flash-attention-cp's compute: one rank's
// queries against the keys of both ranks), HEADS heads of HDIM, non-causal,
// bf16 in and out, layouts [token][head][dim]. Compute-bound: the score is
// 4·HEADS·SEQ·KEYS·HDIM flops over time as a fraction of the bf16
// tensor-core peak.
//
// The harness (cuco_bench) runs it verified on inputs of two of the
// evaluator's seeds, spot-checks timed launches and checks once more on
// fresh inputs after them (a candidate must compute the function, not
// remember an answer); each check scans the whole output for unwritten
// (non-finite) elements, poisoned with NaN before, and compares sampled
// rows (shifted by the harness's salt) with a double-precision reference
// on the host; the error is the worst sampled row's ||got - want|| / ||want||.
#pragma once
#include "cuco_gpu.h"


#ifndef SEQ
#define SEQ 1024
#endif
#ifndef HEADS
#define HEADS 32
#endif
#ifndef HDIM
#define HDIM 128
#endif
#ifndef KEYS
#define KEYS (2 * SEQ)
#endif

enum { AT_CHECKED_ROWS = 96, AT_SEED = 71 };
static const double at_tolerance = 2e-2;  // bf16 output and P: ~4e-3 expected
static const float at_q_scale = 2.0f;     // logits of std ~0.7: a softmax with some shape to it

static const size_t at_q_elems = (size_t)SEQ * HEADS * HDIM, at_kv_elems = (size_t)KEYS * HEADS * HDIM;

struct at_problem {
	__nv_bfloat16 *q, *k, *v, *out;  // [SEQ|KEYS][HEADS][HDIM]
};

// What a candidate provides: prepare once for a problem (plans, handles),
// then launch as often as asked, on the given stream.
typedef std::function<void(cudaStream_t)> at_launch;
typedef std::function<at_launch(const at_problem &)> at_prepare;

// Inputs from the harness's input seed (cuco_rand follows it).
static inline void at_fill(const at_problem &p)
{
	cuco_fill(p.q, at_q_elems, AT_SEED, 0, at_q_scale);
	cuco_fill(p.k, at_kv_elems, AT_SEED + 1);
	cuco_fill(p.v, at_kv_elems, AT_SEED + 2);
}

// Counts non-finite elements (poison left standing, or a NaN computed).
__global__ void at_count_bad(const __nv_bfloat16 *out, size_t n, unsigned long long *bad)
{
	unsigned long long mine = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		mine += !isfinite(__bfloat162float(out[i]));
	if (mine)
		atomicAdd(bad, mine);
}

static inline std::vector<float> at_host(const __nv_bfloat16 *d, size_t n)
{
	std::vector<__nv_bfloat16> b(n);
	CUCO_CUDA(cudaMemcpy(b.data(), d, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
	std::vector<float> f(n);
	for (size_t i = 0; i < n; i++)
		f[i] = __bfloat162float(b[i]);
	return f;
}

// Worst relative error of the sampled rows; infinity when any element of
// the output is not finite.
static inline double at_check(const at_problem &p)
{
	unsigned long long *bad = nullptr, nbad = 0;
	CUCO_CUDA(cudaMalloc(&bad, sizeof *bad));
	CUCO_CUDA(cudaMemset(bad, 0, sizeof *bad));
	at_count_bad<<<1024, 256>>>(p.out, at_q_elems, bad);
	CUCO_LAUNCHED();
	CUCO_CUDA(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
	CUCO_CUDA(cudaFree(bad));
	if (nbad) {
		printf("check: %llu of %zu output elements are not finite\n", nbad, at_q_elems);
		return INFINITY;
	}
	const std::vector<float> q = at_host(p.q, at_q_elems), k = at_host(p.k, at_kv_elems), v = at_host(p.v, at_kv_elems),
		out = at_host(p.out, at_q_elems);
	const double scale = 1.0 / sqrt((double)HDIM);
	std::vector<double> sc(KEYS), want(HDIM);
	double worst = 0;
	for (int i = 0; i < AT_CHECKED_ROWS; i++) {
		// Rows spread over queries and heads; the last row of the last head too.
		const int qi = i == AT_CHECKED_ROWS - 1 ? SEQ - 1 : (int)((i * 7919L + cuco_check_salt()) % SEQ);
		const int h = i == AT_CHECKED_ROWS - 1 ? HEADS - 1 : (i * 5) % HEADS;
		const float *qr = &q[((size_t)qi * HEADS + h) * HDIM];
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < KEYS; j++) {
			const float *kr = &k[((size_t)j * HEADS + h) * HDIM];
			double dot = 0;
			for (int d = 0; d < HDIM; d++)
				dot += (double)qr[d] * kr[d];
			sc[j] = dot * scale;
			mx = std::max(mx, sc[j]);
		}
		std::fill(want.begin(), want.end(), 0.0);
		for (int j = 0; j < KEYS; j++) {
			const double w = exp(sc[j] - mx);
			sum += w;
			const float *vr = &v[((size_t)j * HEADS + h) * HDIM];
			for (int d = 0; d < HDIM; d++)
				want[d] += w * vr[d];
		}
		double diff = 0, norm = 0;
		for (int d = 0; d < HDIM; d++) {
			const double w = want[d] / sum, g = out[((size_t)qi * HEADS + h) * HDIM + d];
			diff += (g - w) * (g - w);
			norm += w * w;
		}
		worst = std::max(worst, sqrt(diff / std::max(norm, 1e-300)));
	}
	return worst;
}

static inline double at_flops(void) { return 4.0 * HEADS * (double)SEQ * KEYS * HDIM; }
static inline double at_bytes(void) { return 2.0 * (2 * at_q_elems + 2 * at_kv_elems); }

static inline int at_main(int argc, char **argv, const char *name, const at_prepare &prepare)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	at_problem p;
	CUCO_CUDA(cudaMalloc(&p.q, at_q_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.k, at_kv_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.v, at_kv_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&p.out, at_q_elems * sizeof(__nv_bfloat16)));
	at_launch launch = prepare(p);
	at_fill(p);  // timed on random data, never on zeros, also by hand (--check 0)
	cuco_data d = {
		[&] { at_fill(p); },
		[&] { cuco_poison(p.out, at_q_elems * sizeof(__nv_bfloat16), c.stream); },
		[&] { return at_check(p); },
		at_tolerance,
	};
	cuco_run r = cuco_bench(&c, a, d, [&] { launch(c.stream); });
	const double med = cuco_median(r.us);
	printf("%s SEQ %d x KEYS %d, %d heads of %d: %.1f us, %.1f TFLOP/s, %.1f %% of 989 TFLOP/s\n", name, SEQ, KEYS,
		HEADS, HDIM, med, at_flops() / med / 1e6, 100.0 * at_flops() / med / 1e6 / 989.0);
	cuco_report(&c, r, {{"kernel", med}}, at_bytes(), at_flops());
	for (void *q : {(void *)p.q, (void *)p.k, (void *)p.v, (void *)p.out})
		CUCO_CUDA(cudaFree(q));
	cuco_finish(&c);
	return 0;
}
