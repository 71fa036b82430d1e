/* kernels.h — the compute of cpu-gemm-allgather, shared by baseline and
 * seed so that only the communication design differs between them.
 *
 * Megatron-style sequence parallelism on P ranks: rank r holds rows
 * [r*M/P, (r+1)*M/P) of the layer input X (M tokens x K hidden), RMS-norms
 * them (the producer), and every rank needs all M normalized rows A for
 * its column slice of the next linear layer: C (M x N) = A (M x K) * W_r
 * (K x N), N output columns per rank.
 *
 * The inputs are the referee's (referee.c): X afresh for every step, W and
 * the norm's gain once a run; the referee checks C against its own
 * double-precision reference. This header is the program's side only.
 */
#ifndef CPU_GEMM_ALLGATHER_KERNELS_H
#define CPU_GEMM_ALLGATHER_KERNELS_H

#include "cuco_step.h"

#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sizes.h"

#ifndef CUCO_TILE
#define CUCO_TILE 256
#endif

/* out[i][:] = x[i][:] / rms(x[i][:]) * gain[:], for rows rows. */
static inline void rmsnorm_rows(const float *restrict x, int rows, const float *restrict gain,
	float *restrict out)
{
	for (int i = 0; i < rows; i++) {
		const float *xi = x + (size_t)i * K;
		float *oi = out + (size_t)i * K;
		float ss = 0;
		for (int k = 0; k < K; k++)
			ss += xi[k] * xi[k];
		float inv = 1.0f / sqrtf(ss / K + 1e-6f);
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

/* This rank's arrays, as the referee lays them out (referee.c): its rows
 * of X, its columns of W, the gain, and its M x N columns of C. */
typedef struct gemm_io {
	int rank, nranks, rows;      /* rows = M / nranks held by this rank */
	const float *x, *w, *gain;
	float *c;
} gemm_io;

static inline void gemm_io_view(gemm_io *g, const cuco_io *io)
{
	g->rank = io->rank;
	g->nranks = io->nranks;
	g->rows = M / io->nranks;
	g->x = io->in[0];
	g->w = io->in[1];
	g->gain = io->in[2];
	g->c = io->out[0];
}

/* Whether the rows split over the ranks (and chunks); says why not. */
static inline int gemm_io_fits(const cuco_io *io, int chunks)
{
	if (M % (io->nranks * chunks) == 0)
		return 1;
	if (io->rank == 0)
		fprintf(stderr, "M=%d is not divisible by %d ranks x %d chunks\n", M, io->nranks, chunks);
	return 0;
}

#endif
