/* kv.h — the compute of cpu-kv-transfer, shared by baseline and seed.
 *
 * Disaggregated serving on 2 ranks: rank 0 (prefill) computes the KV cache
 * of a request, NB blocks of BT tokens, into free slots of its paged pool
 * (block table src_slot); rank 1 (decode) needs them in its own pool
 * (block table dst_slot) and runs one decode step of attention over them.
 * A block holds BT tokens x (K, V) x HD floats; HD = H heads x D dims.
 *
 * The inputs are the referee's (referee.c): the request's hidden states
 * afresh every step and the K and V projections once a run, on rank 0;
 * the decode step's query on rank 1. Rank 1 writes the attention's output
 * (H x D), which the referee checks against its own double-precision
 * reference. This header is the program's side only.
 */
#ifndef CPU_KV_TRANSFER_KV_H
#define CPU_KV_TRANSFER_KV_H

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

#define POOL (2 * NB)   /* slots per pool; half of them hold this request */
#define BLOCK_FLOATS ((size_t)BT * 2 * HD)

/* Non-contiguous, distinct slots: odd strides over a power-of-two pool. */
static inline int src_slot(int b) { return (b * 7 + 3) % POOL; }
static inline int dst_slot(int b) { return (b * 5 + 11) % POOL; }

typedef struct kv_weights { float wk[DM][HD], wv[DM][HD]; } kv_weights;

/* Prefill one block: K and V of its BT tokens, projected from the hidden
 * states (BT x DM from the block's first token), written to `out`
 * (BT x {K, V} x HD). */
static inline void prefill_block(const float *restrict hidden, const kv_weights *w, int b,
	float *restrict out)
{
	for (int t = 0; t < BT; t++) {
		const float *h = hidden + ((size_t)b * BT + t) * DM;
		float *k = out + (size_t)t * 2 * HD, *v = k + HD;
		for (int j = 0; j < HD; j++)
			k[j] = v[j] = 0;
		for (int i = 0; i < DM; i++)
			for (int j = 0; j < HD; j++) {
				k[j] += h[i] * w->wk[i][j];
				v[j] += h[i] * w->wv[i][j];
			}
	}
}

/* Online-softmax state of one decode step, per head. */
typedef struct attn { float m[H], l[H], acc[H][D]; } attn;

static inline void attn_init(attn *a)
{
	for (int h = 0; h < H; h++) {
		a->m[h] = -INFINITY;
		a->l[h] = 0;
		for (int d = 0; d < D; d++)
			a->acc[h][d] = 0;
	}
}

/* Fold one block's BT tokens into the running softmax. */
static inline void attn_block(attn *a, const float *restrict query, const float *restrict blk)
{
	const float scale = 1.0f / sqrtf((float)D);
	for (int t = 0; t < BT; t++) {
		const float *k = blk + (size_t)t * 2 * HD, *v = k + HD;
		for (int h = 0; h < H; h++) {
			float s = 0;
			for (int d = 0; d < D; d++)
				s += query[h * D + d] * k[h * D + d];
			s *= scale;
			float m = s > a->m[h] ? s : a->m[h];
			float old = expf(a->m[h] - m), p = expf(s - m);
			a->l[h] = a->l[h] * old + p;
			for (int d = 0; d < D; d++)
				a->acc[h][d] = a->acc[h][d] * old + p * v[h * D + d];
			a->m[h] = m;
		}
	}
}

/* The decode step's output: the softmax-weighted V of every head. */
static inline void attn_store(const attn *a, float *out)
{
	for (int h = 0; h < H; h++)
		for (int d = 0; d < D; d++)
			out[h * D + d] = a->acc[h][d] / a->l[h];
}

/* What baseline and seed share: this rank's arrays as the referee lays
 * them out (referee.c), its pool, and the decode state. A workload's
 * state struct starts with it. */
typedef struct kv_io {
	int rank;
	float *pool;              /* POOL slots; may be replaced by a window's memory */
	const float *hidden;      /* rank 0: NB x BT x DM */
	const kv_weights *w;      /* rank 0 */
	const float *query;       /* rank 1: HD */
	float *out;               /* rank 1: H x D */
	attn att;
} kv_io;

static inline void kv_io_view(kv_io *k, const cuco_io *io)
{
	k->rank = io->rank;
	if (io->rank == 0) {
		k->hidden = io->in[0];
		k->w = io->in[1];
	} else {
		k->query = io->in[0];
		k->out = io->out[0];
	}
}

/* Whether the program runs here (2 ranks: prefill and decode). */
static inline int kv_io_fits(const cuco_io *io)
{
	if (io->nranks == 2)
		return 1;
	if (io->rank == 0)
		fprintf(stderr, "cpu-kv-transfer runs on 2 ranks (prefill, decode), not %d\n", io->nranks);
	return 0;
}
#endif
