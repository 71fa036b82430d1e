/* kernels.h — the compute of cpu-gemm-allgather, shared by baseline and
 * seed so that only the communication design differs between them.
 *
 * Megatron-style sequence parallelism on P ranks: rank r holds rows
 * [r*M/P, (r+1)*M/P) of the layer input X (M tokens x K hidden), RMS-norms
 * them (the producer), and every rank needs all M normalized rows A for
 * its column slice of the next linear layer: C (M x N) = A (M x K) * W_r
 * (K x N), N output columns per rank.
 *
 * Inputs are closed-form functions of their global indices, so the
 * reference (double precision, straight from the formulas) shares no code
 * path with the data that was communicated.
 */
#ifndef CPU_GEMM_ALLGATHER_KERNELS_H
#define CPU_GEMM_ALLGATHER_KERNELS_H

#include "cuco_harness.h"

#include <math.h>
#include <stddef.h>
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

static inline float input_x(long row, long k)
{
	return (float)((row * 131 + k * 71) % 1009) / 1009.0f - 0.5f;
}

static inline float input_w(long k, long col)
{
	return (float)((k * 37 + col * 113) % 997) / 997.0f - 0.5f;
}

static inline float input_gain(long k)
{
	return 1.0f + (float)(k % 13) / 26.0f;
}

/* Repetition-dependent output scale: a step that reads a peer's rows from
 * the previous repetition is off by >= 10% and fails verification. */
static inline float rep_scale(int rep)
{
	return 1.0f + (float)(rep % 7) * 0.125f;
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
	static double a[K];
	for (long i = 0; i < M; i++) {
		double ss = 0;
		for (int k = 0; k < K; k++)
			ss += (double)input_x(i, k) * input_x(i, k);
		double inv = rep_scale(rep) / sqrt(ss / K + 1e-6);
		for (int k = 0; k < K; k++)
			a[k] = input_x(i, k) * inv * input_gain(k);
		for (int j = 0; j < N; j++) {
			double want = 0;
			for (int k = 0; k < K; k++)
				want += a[k] * input_w(k, first_col + j);
			cuco_error_add(&e, c[i * N + j], want);
		}
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

static double gemm_io_verify(void *arg, int rep)
{
	gemm_io *io = arg;
	return check_output(io->c, (long)io->rank * N, rep);
}

/* Allocate and fill the inputs, and hook the callbacks and the figures
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
	init_inputs(io->x, (long)io->rank * io->rows, io->rows, io->w, (long)io->rank * N,
		io->gain);
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
