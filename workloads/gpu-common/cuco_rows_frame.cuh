// cuco_rows_frame.cuh — the harness of the single-GPU row-wise kernels'
// frames (rmsnorm, swiglu, softmax: each workload's frame.cu gives its
// problem and calls rows_main from main()). Linked with a program that
// defines cuco_launch on cuco_rows.cuh's buffers (cuco_gpu_step.h).
//
// The check compares sampled rows (where the harness's salt says) with a
// double-precision reference on the host built from the seeds, per dtype:
// error = max |got - want| / max |want| over the row. The score is
// memory-bound: bytes moved (each input read once, each output written
// once) over time, as a fraction of the HBM peak.
#pragma once
#include "cuco_gpu_frame.cuh"
#include "cuco_rows.cuh"

#if ELEM == 2
static const double rows_tolerance = 1.6e-2;  // bf16 output rounding is 2^-8 of the value
#else
static const double rows_tolerance = 1e-5;
#endif

enum { ROWS_SEED_IN = 61, ROWS_SEED_W = 67, ROWS_CHECKED = 64 };

// The problem, the frame's alone: what a row's inputs are, and the answer.
struct rows_kernel {
	const char *name;
	int in_cols;         // input columns per row; outputs are COLS
	bool weight;         // a weight vector of COLS
	float in_scale;      // inputs are in_scale * [-1, 1)
	void (*reference)(const double *in, const double *w, double *out);  // one row
};

static inline double rows_hbm_gbs(void) { return 4800.0; }  // H200 datasheet; see bench/results/gpu.md

// Error of ROWS_CHECKED rows, spread over all rows from where the harness's
// salt says, against the reference computed from the seeds (not from the
// device's inputs, which the kernel could have changed).
static inline double rows_check(const rows_kernel &k, const elem_t *dout)
{
	std::vector<elem_t> out(COLS);
	std::vector<double> din(k.in_cols), dw(COLS), want(COLS);
	auto input = [](uint64_t seed, uint64_t i, float scale) {
		return (double)cuco_to_float(cuco_from_float<elem_t>(scale * cuco_rand(seed, i)));
	};
	for (int j = 0; j < COLS; j++)
		dw[j] = k.weight ? input(ROWS_SEED_W, j, 1.0f) : 0.0;
	double worst = 0;
	for (int i = 0; i < ROWS_CHECKED; i++) {
		size_t row = ((size_t)i * ROWS / ROWS_CHECKED + cuco_check_salt()) % ROWS;
		CUCO_CUDA(cudaMemcpy(out.data(), dout + row * COLS, COLS * sizeof(elem_t), cudaMemcpyDeviceToHost));
		for (int j = 0; j < k.in_cols; j++)
			din[j] = input(ROWS_SEED_IN, row * k.in_cols + j, k.in_scale);
		k.reference(din.data(), dw.data(), want.data());
		double diff = 0, scale = 0;
		for (int j = 0; j < COLS; j++) {
			double got = cuco_to_float(out[j]);
			diff = std::isnan(got) ? INFINITY : std::max(diff, fabs(got - want[j]));
			scale = std::max(scale, fabs(want[j]));
		}
		worst = std::max(worst, diff / std::max(scale, 1e-30));
	}
	return worst;
}

// The frame's main(): the buffers, the program's set-up, the verified and
// timed run of its launches and the sealed verdict. The fills, poisons and
// checks use the frame's own pointers, never what the program was handed.
static inline int rows_main(int argc, char **argv, const rows_kernel &k)
{
	cuco_ctx c = cuco_frame_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	elem_t *in = nullptr, *out = nullptr, *w = nullptr;
	const size_t in_n = (size_t)ROWS * k.in_cols, out_n = (size_t)ROWS * COLS;
	CUCO_CUDA(cudaMalloc(&in, in_n * sizeof(elem_t)));
	CUCO_CUDA(cudaMalloc(&out, out_n * sizeof(elem_t)));
	if (k.weight)
		CUCO_CUDA(cudaMalloc(&w, COLS * sizeof(elem_t)));
	const cuco_problem p = {in, w, out};
	void *state = cuco_prepare(&p);
	cuco_data d = {
		[&] {
			cuco_fill(in, in_n, ROWS_SEED_IN, 0, k.in_scale);
			if (k.weight)
				cuco_fill(w, COLS, ROWS_SEED_W);
		},
		[&] { cuco_poison(out, out_n * sizeof(elem_t), c.stream); },
		[&] { return rows_check(k, out); },
		rows_tolerance,
	};
	d.fill();  // the inputs of the phases-free timing by hand (--check 0)
	cuco_run r = cuco_bench(&c, a, d, [&] { cuco_launch(state, &p, c.stream); });
	const double bytes = (double)(in_n + out_n + (k.weight ? COLS : 0)) * sizeof(elem_t);
	const double med = cuco_median(r.us);
	printf("%s %dx%d %s: %.1f us, %.0f GB/s, %.1f %% of %.0f GB/s HBM\n", k.name, ROWS, COLS,
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
