// cuco_rows_referee.cuh — the referee's half of the single-GPU row-wise
// workloads (../common/cuco_referee.h): their arrays in device memory,
// inputs drawn there from fresh seeds, the capture of the rows to check
// and the check against a double-precision reference. A workload's
// referee.cu includes it after its problem's header and defines
// rows_ref_problem(): what a row's inputs are, and the answer.
//
// Inputs: x[ROWS][in_cols] from stream 0, w[COLS] (where the workload has
// a weight) from stream 1, both drawn afresh for every step, in_scale *
// [-1, 1) rounded to elem_t; the reference reads the same rounded values,
// rebuilt from the seeds, never the device's (which the rank may change).
// Output y[ROWS][COLS], poisoned before every step. At "done" the runtime
// calls ref_capture: ROWS_REF_CHECKED rows, drawn from a fresh pick, are
// copied on the referee's stream into a buffer of its own; ref_check reads
// those. Error: the worst over the rows of max |got - want| / max |want|,
// allowed up to the workload's tolerance and no more than its element
// size's (ref_tolerance).
#pragma once
#include "cuco_referee.h"

#include <vector>

enum { ROWS_REF_CHECKED = 64 };

struct rows_ref_kernel {
	int in_cols;         // input columns per row; outputs are COLS
	bool weight;         // a weight vector of COLS
	float in_scale;      // inputs are in_scale * [-1, 1)
	void (*reference)(const double *in, const double *w, double *out);  // one row
};

// Defined by the workload's referee.cu.
static rows_ref_kernel rows_ref_problem(void);

struct rows_ref_pick {
	unsigned row[ROWS_REF_CHECKED];
};

__host__ __device__ static inline elem_t rows_ref_input(uint64_t seed, uint64_t i, float scale)
{
	return cuco_from_float<elem_t>(2.0f * scale * cuco_ref_value(seed, i));
}

__global__ static void rows_ref_fill(elem_t *dst, size_t n, uint64_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = rows_ref_input(seed, i, scale);
}

__global__ static void rows_ref_gather(const elem_t *out, rows_ref_pick pick, elem_t *kept)
{
	const elem_t *row = out + (size_t)pick.row[blockIdx.x] * COLS;
	for (int j = threadIdx.x; j < COLS; j += blockDim.x)
		kept[(size_t)blockIdx.x * COLS + j] = row[j];
}

static elem_t *rows_ref_kept;  // the captured rows, on the referee's device memory only

static rows_ref_pick rows_ref_rows(uint64_t pick)
{
	rows_ref_pick p;
	for (int k = 0; k < ROWS_REF_CHECKED; k++)
		p.row[k] = (unsigned)(cuco_ref_draw(pick, (uint64_t)k) % ROWS);
	return p;
}

static void rows_ref_check_cuda(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "referee: %s: %s\n", what, cudaGetErrorString(e));
		exit(2);
	}
}

// What an element size allows (the native frame's bounds): bf16's output
// rounding is 2^-8 of the value; fp32's is far below 1e-5.
extern "C" double ref_tolerance(double given)
{
	return std::min(given, ELEM == 2 ? 1.6e-2 : 1e-5);
}

extern "C" void ref_layout(int, int, cuco_ref_layout *l)
{
	const rows_ref_kernel k = rows_ref_problem();
	l->device = true;
	l->nin = k.weight ? 2 : 1;
	l->nout = 1;
	l->in[0] = (cuco_ref_array){ "x", (size_t)ROWS * k.in_cols * sizeof(elem_t), true };
	if (k.weight)
		l->in[1] = (cuco_ref_array){ "w", (size_t)COLS * sizeof(elem_t), true };
	l->out[0] = (cuco_ref_array){ "y", (size_t)ROWS * COLS * sizeof(elem_t), false };
}

extern "C" void ref_fill(int, int, int array, const cuco_ref_seeds *s, void *dst)
{
	const rows_ref_kernel k = rows_ref_problem();
	size_t n = array == 0 ? (size_t)ROWS * k.in_cols : (size_t)COLS;
	float scale = array == 0 ? k.in_scale : 1.0f;
	rows_ref_fill<<<1024, 256, 0, cuco_ref_gpu_stream()>>>((elem_t *)dst, n, s->step[array], scale);
	rows_ref_check_cuda(cudaGetLastError(), "the inputs' fill");
}

extern "C" void ref_capture(int, int, void *const *out, uint64_t pick)
{
	cudaStream_t s = cuco_ref_gpu_stream();
	if (!rows_ref_kept)
		rows_ref_check_cuda(cudaMalloc(&rows_ref_kept, (size_t)ROWS_REF_CHECKED * COLS * sizeof(elem_t)),
			"cudaMalloc");
	rows_ref_gather<<<ROWS_REF_CHECKED, 256, 0, s>>>((const elem_t *)out[0], rows_ref_rows(pick), rows_ref_kept);
	rows_ref_check_cuda(cudaStreamSynchronize(s), "the capture");
}

extern "C" double ref_check(int, int, const cuco_ref_seeds *s, void *const *, uint64_t pick, long *checked)
{
	const rows_ref_kernel k = rows_ref_problem();
	std::vector<elem_t> kept((size_t)ROWS_REF_CHECKED * COLS);
	rows_ref_check_cuda(cudaMemcpyAsync(kept.data(), rows_ref_kept, kept.size() * sizeof(elem_t),
		cudaMemcpyDeviceToHost, cuco_ref_gpu_stream()), "the captured rows");
	cuco_ref_gpu_sync();
	std::vector<double> in(k.in_cols), w(COLS), want(COLS);
	for (int j = 0; j < COLS; j++)
		w[j] = k.weight ? cuco_to_float(rows_ref_input(s->step[1], j, 1.0f)) : 0.0;
	const rows_ref_pick p = rows_ref_rows(pick);
	double worst = 0;
	for (int r = 0; r < ROWS_REF_CHECKED; r++) {
		for (int j = 0; j < k.in_cols; j++)
			in[j] = cuco_to_float(rows_ref_input(s->step[0], (uint64_t)p.row[r] * k.in_cols + j, k.in_scale));
		k.reference(in.data(), w.data(), want.data());
		cuco_ref_error e = { 0, 0, 0 };
		for (int j = 0; j < COLS; j++)
			cuco_ref_error_add(&e, cuco_to_float(kept[(size_t)r * COLS + j]), want[j]);
		worst = std::max(worst, cuco_ref_error_value(&e));
	}
	*checked = (long)ROWS_REF_CHECKED * COLS;
	return worst;
}
