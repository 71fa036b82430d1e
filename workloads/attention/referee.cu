// attention's half of the referee (../common/cuco_referee.h): its arrays
// in device memory, inputs drawn there from fresh seeds, the capture of
// the output rows to check and the check against a double-precision
// reference on the host. Built apart from every program, into the referee
// beside each run and benchmark stage; ref_frame.cu is the stage's side.
//
// Sets. A launch at the default size is about 50 us of tensor-core work,
// and a step costs the referee about 250 us of its own on an H200 (the
// release and "done" across two processes, the GPU switching contexts,
// the freezer). So a step runs the program on K sets, one launch each,
// and its time over K is a launch's. Every set has Q, K, V of its own,
// drawn afresh for every step, and an output of its own, poisoned for
// every step, so nothing kept from one launch answers another; every
// set's rows are checked. K: enough sets that a step's launches are
// AT_REF_STEP_FLOPS (about 2 ms at 700 TFLOP/s, against the ~250 us), at
// most AT_REF_SETS_MAX, and no more than a quarter of the free device
// memory holds (cuco_ref_gpu_sets). At SEQ 1024 x KEYS 2048, 32 heads of
// 128 (34 GFLOP a launch, 48 MiB a set): 41 sets.
//
// Inputs: q[K][SEQ][HEADS][HDIM] from stream 0 (2 * [-1, 1): logits of
// std ~0.7, a softmax with some shape, as the native frame drew them),
// k and v [K][KEYS][HEADS][HDIM] from streams 1 and 2 ([-1, 1)), each one
// draw over the whole array, rounded to bf16; the reference reads the
// same rounded values, rebuilt from the seeds, never the device's (which
// the program may change). At "done" ref_capture copies at_ref_per_set
// output rows (a query of a head: HDIM values) of every set, drawn from
// a fresh pick, into a buffer of the referee's own; ref_check reads those
// and recomputes each row in double, over the host's cores. Error: the
// worst row's ||got - want|| / ||want|| (the native frame's), allowed up
// to the workload's tolerance and no more than 2e-2 (bf16 output and P:
// ~4e-3 expected); a row with a non-finite value is infinitely wrong.
#include "attention.cuh"
#include "cuco_ref_gpu.cuh"

#include <thread>

enum {
	AT_REF_CHECKED = 64,   // rows checked a step, over all sets ...
	AT_REF_SET_ROWS = 2,   // ... and at least this many in every set
	AT_REF_SETS_MAX = 256,
};
#define AT_REF_STEP_FLOPS 1.4e12
static const float at_ref_scale[3] = { 2.0f, 1.0f, 1.0f };  // q, k, v
static const size_t at_ref_rows = (size_t)SEQ * HEADS;      // output rows a set

static int at_ref_sets = 1;  // K, chosen by ref_layout
static int at_ref_per_set = AT_REF_CHECKED;
static __nv_bfloat16 *at_ref_kept;  // the captured rows, on the referee's device memory only

extern "C" double ref_tolerance(double given)
{
	return std::min(given, 2e-2);
}

extern "C" void ref_layout(int, int, cuco_ref_layout *l)
{
	const size_t q = at_q_elems * sizeof(__nv_bfloat16), kv = at_kv_elems * sizeof(__nv_bfloat16);
	const double flops = 4.0 * HEADS * (double)SEQ * KEYS * HDIM;
	at_ref_sets = cuco_ref_gpu_sets((size_t)ceil(AT_REF_STEP_FLOPS / flops), 2 * q + 2 * kv, AT_REF_SETS_MAX);
	at_ref_per_set = std::max<int>(AT_REF_SET_ROWS, AT_REF_CHECKED / at_ref_sets);
	l->device = true;
	l->sets = at_ref_sets;
	l->nin = 3;
	l->nout = 1;
	l->in[0] = (cuco_ref_array){ "q", at_ref_sets * q, true };
	l->in[1] = (cuco_ref_array){ "k", at_ref_sets * kv, true };
	l->in[2] = (cuco_ref_array){ "v", at_ref_sets * kv, true };
	l->out[0] = (cuco_ref_array){ "out", at_ref_sets * q, false };
}

extern "C" void ref_fill(int, int, int array, const cuco_ref_seeds *s, void *dst)
{
	const size_t n = (size_t)at_ref_sets * (array == 0 ? at_q_elems : at_kv_elems);
	cuco_ref_fill((__nv_bfloat16 *)dst, n, s->step[array], at_ref_scale[array]);
}

extern "C" void ref_capture(int, int, void *const *out, uint64_t pick)
{
	cuco_ref_capture_rows((const __nv_bfloat16 *)out[0], at_ref_rows, HDIM, pick, at_ref_sets, at_ref_per_set,
		&at_ref_kept);
}

// Input `array`'s element of the set, token, head and dim, as drawn.
static inline double at_ref_at(const cuco_ref_seeds *s, int array, size_t set, size_t token, int h, int d)
{
	const size_t per_set = array == 0 ? at_q_elems : at_kv_elems;
	const size_t i = set * per_set + (token * HEADS + h) * HDIM + d;
	return __bfloat162float(cuco_ref_input<__nv_bfloat16>(s->step[array], i, at_ref_scale[array]));
}

// The error of one captured row: row r of the whole arrays, got its HDIM values.
static double at_ref_row_error(const cuco_ref_seeds *s, size_t r, const __nv_bfloat16 *got)
{
	const size_t set = r / at_ref_rows, qi = r % at_ref_rows / HEADS;
	const int h = (int)(r % HEADS);
	std::vector<double> q(HDIM), sc(KEYS), want(HDIM, 0.0);
	for (int d = 0; d < HDIM; d++)
		q[d] = at_ref_at(s, 0, set, qi, h, d);
	double mx = -INFINITY, sum = 0;
	for (int j = 0; j < KEYS; j++) {
		double dot = 0;
		for (int d = 0; d < HDIM; d++)
			dot += q[d] * at_ref_at(s, 1, set, j, h, d);
		sc[j] = dot / sqrt((double)HDIM);
		mx = std::max(mx, sc[j]);
	}
	for (int j = 0; j < KEYS; j++) {
		const double w = exp(sc[j] - mx);
		sum += w;
		for (int d = 0; d < HDIM; d++)
			want[d] += w * at_ref_at(s, 2, set, j, h, d);
	}
	double diff = 0, norm = 0;
	for (int d = 0; d < HDIM; d++) {
		const double g = __bfloat162float(got[d]), w = want[d] / sum;
		if (!std::isfinite(g))
			return INFINITY;
		diff += (g - w) * (g - w);
		norm += w * w;
	}
	return sqrt(diff / std::max(norm, 1e-300));
}

extern "C" double ref_check(int, int, const cuco_ref_seeds *s, void *const *, uint64_t pick, long *checked)
{
	const int rows = at_ref_sets * at_ref_per_set;
	const std::vector<__nv_bfloat16> kept = cuco_ref_captured(at_ref_kept, (size_t)rows * HDIM);
	// The rows over the host's cores: the check's time is between steps, untimed, but the run's.
	const unsigned parts = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
	std::vector<double> worst(parts, 0.0);
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < parts; t++)
		pool.emplace_back([&, t] {
			for (int r = (int)t; r < rows; r += (int)parts)
				worst[t] = std::max(worst[t], at_ref_row_error(s, cuco_ref_row(pick, r, at_ref_per_set, at_ref_rows),
					&kept[(size_t)r * HDIM]));
		});
	for (std::thread &t : pool)
		t.join();
	*checked = (long)rows * HDIM;
	return *std::max_element(worst.begin(), worst.end());
}
