// cuco_rows_referee.cuh — the referee's half of the single-GPU row-wise
// workloads (../common/cuco_referee.h): their arrays in device memory,
// inputs drawn there from fresh seeds, the capture of the rows to check
// and the check against a double-precision reference. A workload's
// referee.cu includes it after its problem's header and defines
// rows_ref_problem(): what a row's inputs are, and the answer.
//
// Sets. One launch at these sizes is tens of microseconds, and a step
// costs the referee about 250 us of its own on an H200 (the release and
// "done" across two processes, the GPU switching between the referee's
// context and the stage's, the freezer): timed alone, a launch would be
// mostly that. So a step runs the program on K sets, one launch each
// (the frame calls cuco_launch K times in the one release), and its time
// over K is a launch's: the referee's cost a launch is ~250/K us. Every
// set has inputs of its own, drawn afresh for every step, and outputs of
// its own, poisoned for every step, so nothing kept from one launch
// answers another; every set's rows are checked. K is chosen here, not by
// the workload: enough sets that a step's launches touch ROWS_REF_STEP_BYTES
// (8 GiB: at ~4 TB/s, about 2 ms of memory traffic, against the ~250 us),
// at most ROWS_REF_SETS_MAX, and no more than a quarter of the free device
// memory holds (other stages share the GPU). rmsnorm at 16384 x 4096 bf16
// touches 256 MiB a launch: 32 sets.
//
// Inputs: x[K][ROWS][in_cols] from stream 0, w[K][COLS] (where the
// workload has a weight) from stream 1, each one draw over the whole array
// (so the sets differ), afresh for every step, in_scale * [-1, 1) rounded
// to elem_t, x's rows shifted where the workload says (row_shift: half of
// them by +-[0.75, 1) * row_shift, cuco_ref_shift); the reference reads the same rounded values, rebuilt from the
// seeds, never the device's (which the rank may change). Output
// y[K][ROWS][COLS], poisoned before every step. At "done" the runtime
// calls ref_capture: rows_ref_per_set rows of every set, drawn from a
// fresh pick, are copied on the referee's stream into a buffer of its
// own; ref_check reads those. Error: the worst over the rows of
// max |got - want| / max |want|, allowed up to the workload's tolerance
// and no more than its element size's (ref_tolerance).
#pragma once
#include "cuco_ref_gpu.cuh"

#include <vector>

enum {
	ROWS_REF_CHECKED = 64,   // rows checked a step, over all sets ...
	ROWS_REF_SET_ROWS = 4,   // ... and at least this many in every set
	ROWS_REF_SETS_MAX = 256,
};
#define ROWS_REF_STEP_BYTES (8ull << 30)

struct rows_ref_kernel {
	int in_cols;         // input columns per row; outputs are COLS
	bool weight;         // a weight vector of COLS
	float in_scale;      // inputs are in_scale * [-1, 1) ...
	float row_shift;     // ... and x's rows shifted by up to this (0: none)
	void (*reference)(const double *in, const double *w, double *out);  // one row
};

// Defined by the workload's referee.cu.
static rows_ref_kernel rows_ref_problem(void);

static int rows_ref_sets = 1;      // K, chosen by ref_layout
static int rows_ref_per_set = ROWS_REF_CHECKED;

static elem_t *rows_ref_kept;  // the captured rows, on the referee's device memory only

// What an element size allows (the native frame's bounds): bf16's output
// rounding is 2^-8 of the value; fp32's is far below 1e-5.
extern "C" double ref_tolerance(double given)
{
	return std::min(given, ELEM == 2 ? 1.6e-2 : 1e-5);
}

extern "C" void ref_layout(int, int, cuco_ref_layout *l)
{
	const rows_ref_kernel k = rows_ref_problem();
	const size_t x = (size_t)ROWS * k.in_cols * sizeof(elem_t), y = (size_t)ROWS * COLS * sizeof(elem_t),
		w = k.weight ? (size_t)COLS * sizeof(elem_t) : 0;
	rows_ref_sets = cuco_ref_gpu_sets((ROWS_REF_STEP_BYTES + x + y + w - 1) / (x + y + w), x + y + w,
		ROWS_REF_SETS_MAX);
	rows_ref_per_set = std::max<int>(ROWS_REF_SET_ROWS, ROWS_REF_CHECKED / rows_ref_sets);
	l->device = true;
	l->sets = rows_ref_sets;
	l->nin = k.weight ? 2 : 1;
	l->nout = 1;
	l->in[0] = (cuco_ref_array){ "x", rows_ref_sets * x, true };
	if (k.weight)
		l->in[1] = (cuco_ref_array){ "w", rows_ref_sets * w, true };
	l->out[0] = (cuco_ref_array){ "y", rows_ref_sets * y, false };
}

extern "C" void ref_fill(int, int, int array, const cuco_ref_seeds *s, void *dst)
{
	const rows_ref_kernel k = rows_ref_problem();
	size_t n = (size_t)rows_ref_sets * (array == 0 ? (size_t)ROWS * k.in_cols : (size_t)COLS);
	if (array == 0)
		cuco_ref_fill((elem_t *)dst, n, s->step[0], k.in_scale, (uint64_t)k.in_cols, k.row_shift);
	else
		cuco_ref_fill((elem_t *)dst, n, s->step[array], 1.0f);
}

extern "C" void ref_capture(int, int, void *const *out, uint64_t pick)
{
	cuco_ref_capture_rows((const elem_t *)out[0], ROWS, COLS, pick, rows_ref_sets, rows_ref_per_set, &rows_ref_kept);
}

extern "C" double ref_check(int, int, const cuco_ref_seeds *s, void *const *, uint64_t pick, long *checked)
{
	const rows_ref_kernel k = rows_ref_problem();
	const int rows = rows_ref_sets * rows_ref_per_set;
	const std::vector<elem_t> kept = cuco_ref_captured(rows_ref_kept, (size_t)rows * COLS);
	std::vector<double> in(k.in_cols), w(COLS), want(COLS);
	double worst = 0;
	for (int r = 0; r < rows; r++) {
		const size_t set = (size_t)(r / rows_ref_per_set), row = cuco_ref_row(pick, r, rows_ref_per_set, ROWS);
		if (r % rows_ref_per_set == 0)  // a set's first row: its weight
			for (int j = 0; j < COLS; j++)
				w[j] = k.weight ? cuco_to_float(cuco_ref_input<elem_t>(s->step[1], set * COLS + j, 1.0f)) : 0.0;
		for (int j = 0; j < k.in_cols; j++)
			in[j] = cuco_to_float(cuco_ref_input<elem_t>(s->step[0], row * k.in_cols + j, k.in_scale,
				(uint64_t)k.in_cols, k.row_shift));
		k.reference(in.data(), w.data(), want.data());
		cuco_ref_error e = { 0, 0, 0 };
		for (int j = 0; j < COLS; j++)
			cuco_ref_error_add(&e, cuco_to_float(kept[(size_t)r * COLS + j]), want[j]);
		worst = std::max(worst, cuco_ref_error_value(&e));
	}
	*checked = (long)rows * COLS;
	return worst;
}
