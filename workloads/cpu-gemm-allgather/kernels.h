/* kernels.h — the compute of cpu-gemm-allgather, shared by baseline and
 * seed so that only the communication design differs between them.
 *
 * Megatron-style sequence parallelism on P ranks: rank r holds rows
 * [r*M/P, (r+1)*M/P) of the layer input X (M tokens x K hidden), RMS-norms
 * them (the producer), and every rank needs all M normalized rows A for
 * its column slice of the next linear layer: C (M x N) = A (M x K) * W_r
 * (K x N), N output columns per rank.
 *
 * Inputs are functions of their global indices and the harness's input
 * seed (cuco_input), so the reference (double precision, straight from the
 * formulas) shares no code path with the data that was communicated, and
 * the evaluator, not the program, decides what they are.
 */
#ifndef CPU_GEMM_ALLGATHER_KERNELS_H
#define CPU_GEMM_ALLGATHER_KERNELS_H

#include "cuco_harness.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef M
#define M 4096
#endif
#ifndef K
#define K 1024
#endif
#ifndef N
#define N 4
#endif
#ifndef CUCO_TILE
#define CUCO_TILE 256
#endif

enum { IN_X = 1, IN_W = 2, IN_GAIN = 3 };

static inline float input_x(long row, long k)
{
	return cuco_input(IN_X, (uint64_t)row * K + (uint64_t)k);
}

static inline float input_w(long k, long col)
{
	return cuco_input(IN_W, (uint64_t)k * 65536 + (uint64_t)col);
}

static inline float input_gain(long k)
{
	return 1.0f + cuco_input(IN_GAIN, (uint64_t)k);
}

/* Repetition-dependent output scale, drawn by the harness just before the
 * repetition: a step that reads a peer's rows from another repetition is
 * off by a random factor and fails verification. */
static inline float rep_scale(int rep)
{
	return cuco_rep_scale(rep);
}

/* out[i][:] = x[i][:] / rms(x[i][:]) * gain[:] * scale, for rows rows. */
static inline void rmsnorm_rows(const float *restrict x, int rows, const float *restrict gain,
	float scale, float *restrict out)
{
	for (int i = 0; i < rows; i++) {
		const float *xi = x + (size_t)i * K;
		float *oi = out + (size_t)i * K;
		float ss = 0;
		for (int k = 0; k < K; k++)
			ss += xi[k] * xi[k];
		float inv = scale / sqrtf(ss / K + 1e-6f);
		for (int k = 0; k < K; k++)
			oi[k] = xi[k] * inv * gain[k];
	}
}

/* c[0..r) += a[0..r) * w over k in [k0, k1), for r <= 4 rows at once: the
 * r x N accumulators stay in registers and each w load feeds r rows. */
static inline void gemm_rows_panel(const float *restrict a, int r, const float *restrict w,
	float *restrict c, int k0, int k1)
{
	float acc[4][N];
	for (int i = 0; i < r; i++)
		for (int j = 0; j < N; j++)
			acc[i][j] = c[(size_t)i * N + j];
	for (int k = k0; k < k1; k++) {
		const float *wk = w + (size_t)k * N;
		for (int i = 0; i < r; i++) {
			float aik = a[(size_t)i * K + k];
			for (int j = 0; j < N; j++)
				acc[i][j] += aik * wk[j];
		}
	}
	for (int i = 0; i < r; i++)
		for (int j = 0; j < N; j++)
			c[(size_t)i * N + j] = acc[i][j];
}

/* c (rows x N) = a (rows x K) * w (K x N), blocked over K by CUCO_TILE so a
 * CUCO_TILE x N panel of w stays in L1 while the rows stream past it. */
static inline void gemm_rows(const float *restrict a, int rows, const float *restrict w,
	float *restrict c)
{
	for (int i = 0; i < rows * N; i++)
		c[i] = 0;
	for (int k0 = 0; k0 < K; k0 += CUCO_TILE) {
		int k1 = k0 + CUCO_TILE < K ? k0 + CUCO_TILE : K, i = 0;
		for (; i + 4 <= rows; i += 4)
			gemm_rows_panel(a + (size_t)i * K, 4, w, c + (size_t)i * N, k0, k1);
		for (; i < rows; i++)
			gemm_rows_panel(a + (size_t)i * K, 1, w, c + (size_t)i * N, k0, k1);
	}
}

/* Fill this rank's slices: x (rows from first_row), w (K x N for global
 * columns from first_col) and the gain. */
static inline void init_inputs(float *x, long first_row, int rows, float *w, long first_col,
	float *gain)
{
	for (int i = 0; i < rows; i++)
		for (int k = 0; k < K; k++)
			x[(size_t)i * K + k] = input_x(first_row + i, k);
	for (int k = 0; k < K; k++) {
		gain[k] = input_gain(k);
		for (int j = 0; j < N; j++)
			w[(size_t)k * N + j] = input_w(k, first_col + j);
	}
}

/* Error of c (M x N, this rank's columns from first_col) against a
 * double-precision recomputation from the formulas. */
static inline double check_output(const float *c, long first_col, int rep)
{
	cuco_error e = {0, 0};
	static double a[K], w[K][N], gain[K];
	for (int k = 0; k < K; k++) {
		gain[k] = input_gain(k);
		for (int j = 0; j < N; j++)
			w[k][j] = input_w(k, first_col + j);
	}
	for (long i = 0; i < M; i++) {
		double ss = 0;
		for (int k = 0; k < K; k++) {
			a[k] = input_x(i, k);
			ss += a[k] * a[k];
		}
		double inv = rep_scale(rep) / sqrt(ss / K + 1e-6);
		double want[N] = {0};
		for (int k = 0; k < K; k++)
			for (int j = 0; j < N; j++)
				want[j] += a[k] * inv * gain[k] * w[k][j];
		for (int j = 0; j < N; j++)
			cuco_error_add(&e, c[i * N + j], want[j]);
	}
	return cuco_error_value(&e);
}

/* What baseline and seed share around the communication: this rank's
 * inputs and output, the poisoning before a step and the check after.
 * A workload's state struct starts with it, so the harness callbacks can
 * take either. */
typedef struct gemm_io {
	cuco_bench *bench;
	int rank, nranks, rows;      /* rows = M / nranks held by this rank */
	float *x, *w, *gain;         /* local inputs */
	float *c;                    /* M x N output, this rank's columns */
} gemm_io;

static void gemm_io_prepare(void *arg, int rep)
{
	gemm_io *io = arg;
	(void)rep;
	for (size_t i = 0; i < (size_t)M * N; i++)
		io->c[i] = NAN;
}

static void gemm_io_fill(void *arg)
{
	gemm_io *io = arg;
	init_inputs(io->x, (long)io->rank * io->rows, io->rows, io->w, (long)io->rank * N, io->gain);
}

static double gemm_io_verify(void *arg, int rep)
{
	gemm_io *io = arg;
	return check_output(io->c, (long)io->rank * N, rep);
}

/* Allocate the inputs (the harness fills them), and hook the callbacks and the figures
 * into the bench; state is the struct that starts with io. */
static int gemm_io_init(gemm_io *io, cuco_bench *b, void *state)
{
	io->bench = b;
	io->rank = b->rank;
	io->nranks = b->nranks;
	io->rows = M / b->nranks;
	io->x = malloc((size_t)io->rows * K * sizeof(float));
	io->w = malloc((size_t)K * N * sizeof(float));
	io->gain = malloc(K * sizeof(float));
	io->c = malloc((size_t)M * N * sizeof(float));
	if (!io->x || !io->w || !io->gain || !io->c)
		return -1;
	b->fill = gemm_io_fill;
	b->prepare = gemm_io_prepare;
	b->verify = gemm_io_verify;
	b->arg = state;
	b->bytes = (double)M * K * sizeof(float) * (b->nranks - 1);
	b->flops = 2.0 * M * N * K * b->nranks;
	b->tolerance = 1e-3;
	return 0;
}

static void gemm_io_free(gemm_io *io)
{
	free(io->x);
	free(io->w);
	free(io->gain);
	free(io->c);
}

#endif
