// attention's frame: main(), on the harness (cuco_gpu_frame.cuh), with
// the problem's inputs, check and report. Compiled apart and linked with
// each program's object (cuco_gpu_step.h: the program defines cuco_prepare
// and cuco_launch on attention.cuh's buffers).
//
// The harness (cuco_bench) runs it verified on inputs of two of the
// evaluator's seeds, spot-checks timed launches and checks once more on
// fresh inputs after them (a candidate must compute the function, not
// remember an answer); each check scans the whole output for unwritten
// (non-finite) elements, poisoned with NaN before, and compares sampled
// rows (shifted by the harness's salt) with a double-precision reference
// on the host from the inputs' seeds (never from the device's inputs, which
// the program could have changed); the error is the worst sampled row's
// ||got - want|| / ||want||.
#include "cuco_gpu_frame.cuh"
#include "attention.cuh"
#define CUCO_TENSOR_MAP_DEFINE 1  // the frame's, for the programs' tensor maps
#include "cuco_tensor_map.h"

#include <thread>

enum { AT_CHECKED_ROWS = 96, AT_SEED = 71 };
static const double at_tolerance = 2e-2;  // bf16 output and P: ~4e-3 expected
static const float at_q_scale = 2.0f;     // logits of std ~0.7: a softmax with some shape to it

// The frame's own buffers (the program is handed a copy of the pointers).
struct at_buffers {
	__nv_bfloat16 *q, *k, *v, *out;
};

// Inputs from the harness's input seed (cuco_rand follows it); at_check
// rebuilds them the same way.
static inline void at_fill(const at_buffers &b)
{
	cuco_fill(b.q, at_q_elems, AT_SEED, 0, at_q_scale);
	cuco_fill(b.k, at_kv_elems, AT_SEED + 1, 0, 1.0f);
	cuco_fill(b.v, at_kv_elems, AT_SEED + 2, 0, 1.0f);
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

// An input as at_fill made it, rebuilt on the host from its seed (cuco_rand
// follows the harness's input seed on the host as on the device), never
// read back from the device, where the program could have changed it.
// Spread over the host's cores: it is the check's largest part.
static inline std::vector<float> at_input(uint64_t seed, size_t n, float scale)
{
	std::vector<float> f(n);
	const unsigned parts = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < parts; t++)
		pool.emplace_back([&, t] {
			for (size_t i = n * t / parts; i < n * (t + 1) / parts; i++)
				f[i] = __bfloat162float(__float2bfloat16(scale * cuco_rand(seed, i)));
		});
	for (std::thread &t : pool)
		t.join();
	return f;
}

// Worst relative error of the sampled rows, against the reference from the
// inputs' seeds; infinity when any element of the output is not finite.
static inline double at_check(const at_buffers &p)
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
	const std::vector<float> q = at_input(AT_SEED, at_q_elems, at_q_scale), k = at_input(AT_SEED + 1, at_kv_elems, 1.0f),
		v = at_input(AT_SEED + 2, at_kv_elems, 1.0f), out = at_host(p.out, at_q_elems);
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

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_frame_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	at_buffers b;
	CUCO_CUDA(cudaMalloc(&b.q, at_q_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&b.k, at_kv_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&b.v, at_kv_elems * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&b.out, at_q_elems * sizeof(__nv_bfloat16)));
	const cuco_problem p = {b.q, b.k, b.v, b.out};
	void *state = cuco_prepare(&p);
	at_fill(b);  // timed on random data, never on zeros, also by hand (--check 0)
	cuco_data d = {
		[&] { at_fill(b); },
		[&] { cuco_poison(b.out, at_q_elems * sizeof(__nv_bfloat16), c.stream); },
		[&] { return at_check(b); },
		at_tolerance,
	};
	cuco_run r = cuco_bench(&c, a, d, [&] { cuco_launch(state, &p, c.stream); });
	const double med = cuco_median(r.us);
	printf("attention SEQ %d x KEYS %d, %d heads of %d: %.1f us, %.1f TFLOP/s, %.1f %% of 989 TFLOP/s\n", SEQ,
		KEYS, HEADS, HDIM, med, at_flops() / med / 1e6, 100.0 * at_flops() / med / 1e6 / 989.0);
	cuco_report(&c, r, {{"kernel", med}}, at_bytes(), at_flops());
	for (void *q : {(void *)b.q, (void *)b.k, (void *)b.v, (void *)b.out})
		CUCO_CUDA(cudaFree(q));
	cuco_finish(&c);
	return 0;
}
