// cuco_rows.cuh — the harness of the single-GPU row-wise kernels (family
// cuda): RMSNorm, SwiGLU, softmax. Each maps ROWS rows of IN_COLS inputs
// (and an optional weight vector) to ROWS rows of OUT_COLS outputs.
//
// The element type is a size variable, not a knob: ELEM=2 is bf16, ELEM=4
// fp32 (a tuner must not win by changing the problem). The check compares
// sampled rows (where the harness's salt says) with a double-precision
// reference on the host built from the seeds, per dtype:
// error = max |got - want| / max |want| over the row.
// The score is memory-bound: bytes moved (each input read once, each
// output written once) over time, as a fraction of the HBM peak.
#pragma once
#include "cuco_gpu.h"

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
static const double rows_tolerance = 1.6e-2;  // bf16 output rounding is 2^-8 of the value
#elif ELEM == 4
typedef float elem_t;
static const double rows_tolerance = 1e-5;
#else
#error "ELEM must be 2 (bf16) or 4 (fp32)"
#endif

enum { ROWS_SEED_IN = 61, ROWS_SEED_W = 67, ROWS_CHECKED = 64 };

struct rows_io {
	const elem_t *in;    // [ROWS][in_cols]
	const elem_t *w;     // [out_cols] or nullptr
	elem_t *out;         // [ROWS][out_cols]
};

struct rows_kernel {
	const char *name;
	int in_cols, out_cols;
	bool weight;
	float in_scale;      // inputs are in_scale * [-1, 1)
	void (*launch)(const rows_io &io, cudaStream_t s);
	void (*reference)(const double *in, const double *w, double *out);  // one row
};

static inline double rows_hbm_gbs(void) { return 4800.0; }  // H200 datasheet; see bench/results/gpu.md

// Error of ROWS_CHECKED rows, spread over all rows from where the harness's
// salt says, against the reference computed from the seeds (not from the
// device's inputs, which the kernel could have changed).
static inline double rows_check(const rows_kernel &k, const rows_io &io)
{
	std::vector<elem_t> out(k.out_cols);
	std::vector<double> din(k.in_cols), dw(k.out_cols), want(k.out_cols);
	auto input = [](uint64_t seed, uint64_t i, float scale) {
		return (double)cuco_to_float(cuco_from_float<elem_t>(scale * cuco_rand(seed, i)));
	};
	for (int j = 0; j < k.out_cols; j++)
		dw[j] = k.weight ? input(ROWS_SEED_W, j, 1.0f) : 0.0;
	double worst = 0;
	for (int i = 0; i < ROWS_CHECKED; i++) {
		size_t row = ((size_t)i * ROWS / ROWS_CHECKED + cuco_check_salt()) % ROWS;
		CUCO_CUDA(cudaMemcpy(out.data(), io.out + row * k.out_cols, k.out_cols * sizeof(elem_t),
			cudaMemcpyDeviceToHost));
		for (int j = 0; j < k.in_cols; j++)
			din[j] = input(ROWS_SEED_IN, row * k.in_cols + j, k.in_scale);
		k.reference(din.data(), dw.data(), want.data());
		double diff = 0, scale = 0;
		for (int j = 0; j < k.out_cols; j++) {
			double got = cuco_to_float(out[j]);
			diff = std::isnan(got) ? INFINITY : std::max(diff, fabs(got - want[j]));
			scale = std::max(scale, fabs(want[j]));
		}
		worst = std::max(worst, diff / std::max(scale, 1e-30));
	}
	return worst;
}

static inline int rows_main(int argc, char **argv, const rows_kernel &k)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	elem_t *in = nullptr, *out = nullptr, *w = nullptr;
	const size_t in_n = (size_t)ROWS * k.in_cols, out_n = (size_t)ROWS * k.out_cols;
	CUCO_CUDA(cudaMalloc(&in, in_n * sizeof(elem_t)));
	CUCO_CUDA(cudaMalloc(&out, out_n * sizeof(elem_t)));
	if (k.weight)
		CUCO_CUDA(cudaMalloc(&w, k.out_cols * sizeof(elem_t)));
	rows_io io = {in, w, out};
	cuco_data d = {
		[&] {
			cuco_fill(in, in_n, ROWS_SEED_IN, 0, k.in_scale);
			if (k.weight)
				cuco_fill(w, k.out_cols, ROWS_SEED_W);
		},
		[&] { cuco_poison(out, out_n * sizeof(elem_t), c.stream); },
		[&] { return rows_check(k, io); },
		rows_tolerance,
	};
	d.fill();  // the inputs of the phases-free timing by hand (--check 0)
	cuco_run r = cuco_bench(&c, a, d, [&] { k.launch(io, c.stream); });
	const double bytes = (double)(in_n + out_n + (k.weight ? k.out_cols : 0)) * sizeof(elem_t);
	const double med = cuco_median(r.us);
	printf("%s %dx%d %s: %.1f us, %.0f GB/s, %.1f %% of %.0f GB/s HBM\n", k.name, ROWS, k.out_cols,
		ELEM == 2 ? "bf16" : "fp32", med, bytes / med / 1e3, 100.0 * bytes / med / 1e3 / rows_hbm_gbs(),
		rows_hbm_gbs());
	cuco_report(&c, r, {{"kernel", med}}, bytes, (double)ROWS * k.in_cols * 4);
	CUCO_CUDA(cudaFree(in));
	CUCO_CUDA(cudaFree(out));
	if (w)
		CUCO_CUDA(cudaFree(w));
	cuco_finish(&c);
	return 0;
}

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
