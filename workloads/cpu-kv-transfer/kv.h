/* kv.h — the compute of cpu-kv-transfer, shared by baseline and seed.
 *
 * Disaggregated serving on 2 ranks: rank 0 (prefill) computes the KV cache
 * of a request, NB blocks of BT tokens, into free slots of its paged pool
 * (block table src_slot); rank 1 (decode) needs them in its own pool
 * (block table dst_slot) and runs one decode step of attention over them.
 * A block holds BT tokens x (K, V) x HD floats; HD = H heads x D dims.
 *
 * Inputs are functions of token, channel and the harness's input seed
 * (cuco_input), so the reference (double precision, from the formulas)
 * shares no path with the transfer, and the evaluator chooses them.
 */
#ifndef CPU_KV_TRANSFER_KV_H
#define CPU_KV_TRANSFER_KV_H

#include "cuco_harness.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef NB
#define NB 128          /* blocks in the request */
#endif
#ifndef BT
#define BT 16           /* tokens per block */
#endif
#ifndef H
#define H 4             /* heads */
#endif
#ifndef D
#define D 64            /* dims per head */
#endif
#ifndef DM
#define DM 16           /* hidden width the prefill projects from */
#endif
#define HD (H * D)
#define POOL (2 * NB)   /* slots per pool; half of them hold this request */
#define BLOCK_FLOATS ((size_t)BT * 2 * HD)

/* Non-contiguous, distinct slots: odd strides over a power-of-two pool. */
static inline int src_slot(int b) { return (b * 7 + 3) % POOL; }
static inline int dst_slot(int b) { return (b * 5 + 11) % POOL; }

/* Repetition scale of the hidden states, drawn by the harness just before
 * the repetition: a decode that reads blocks of another repetition
 * computes a different softmax and fails. */
static inline float rep_scale(int rep) { return cuco_rep_scale(rep); }

enum { IN_HIDDEN = 1, IN_WK = 2, IN_WV = 3, IN_QUERY = 4 };

static inline float hidden(long tok, int i) { return cuco_input(IN_HIDDEN, (uint64_t)tok * DM + (uint64_t)i); }
static inline float weight_k(int i, int j) { return cuco_input(IN_WK, (uint64_t)i * HD + (uint64_t)j); }
static inline float weight_v(int i, int j) { return cuco_input(IN_WV, (uint64_t)i * HD + (uint64_t)j); }
static inline float query_value(int j) { return cuco_input(IN_QUERY, (uint64_t)j); }

/* The decode step's query, filled with the inputs (kv_io_fill): a table,
 * since attention reads it for every token. */
static float kv_query[HD];
static inline float query(int j) { return kv_query[j]; }

typedef struct kv_weights { float wk[DM][HD], wv[DM][HD]; } kv_weights;

static inline void kv_weights_init(kv_weights *w)
{
	for (int i = 0; i < DM; i++)
		for (int j = 0; j < HD; j++) {
			w->wk[i][j] = weight_k(i, j);
			w->wv[i][j] = weight_v(i, j);
		}
}

/* Prefill one block: K and V of its BT tokens, projected from the hidden
 * states, written to `out` (BT x {K, V} x HD). */
static inline void prefill_block(const kv_weights *w, int b, int rep, float *restrict out)
{
	for (int t = 0; t < BT; t++) {
		float h[DM], *k = out + (size_t)t * 2 * HD, *v = k + HD;
		for (int i = 0; i < DM; i++)
			h[i] = hidden((long)b * BT + t, i) * rep_scale(rep);
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
static inline void attn_block(attn *a, const float *restrict blk)
{
	const float scale = 1.0f / sqrtf((float)D);
	for (int t = 0; t < BT; t++) {
		const float *k = blk + (size_t)t * 2 * HD, *v = k + HD;
		for (int h = 0; h < H; h++) {
			float s = 0;
			for (int d = 0; d < D; d++)
				s += query(h * D + d) * k[h * D + d];
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

/* Error of the decode output against a double-precision recomputation. */
static inline double check_attention(const attn *a, int rep)
{
	cuco_error e = {0, 0};
	static double k[(size_t)NB * BT][HD], v[(size_t)NB * BT][HD], wk[DM][HD], wv[DM][HD], q[HD];
	for (int i = 0; i < DM; i++)
		for (int j = 0; j < HD; j++) {
			wk[i][j] = weight_k(i, j);
			wv[i][j] = weight_v(i, j);
		}
	for (int j = 0; j < HD; j++)
		q[j] = query_value(j);
	for (long tok = 0; tok < (long)NB * BT; tok++) {
		double h[DM];
		for (int i = 0; i < DM; i++)
			h[i] = (double)hidden(tok, i) * rep_scale(rep);
		for (int j = 0; j < HD; j++) {
			double sk = 0, sv = 0;
			for (int i = 0; i < DM; i++) {
				sk += h[i] * wk[i][j];
				sv += h[i] * wv[i][j];
			}
			k[tok][j] = sk;
			v[tok][j] = sv;
		}
	}
	for (int h = 0; h < H; h++) {
		double m = -INFINITY, l = 0, out[D] = {0};
		for (long tok = 0; tok < (long)NB * BT; tok++) {
			double s = 0;
			for (int d = 0; d < D; d++)
				s += q[h * D + d] * k[tok][h * D + d];
			s /= sqrt((double)D);
			if (s > m) {
				double f = exp(m - s);
				l *= f;
				for (int d = 0; d < D; d++)
					out[d] *= f;
				m = s;
			}
			double p = exp(s - m);
			l += p;
			for (int d = 0; d < D; d++)
				out[d] += p * v[tok][h * D + d];
		}
		for (int d = 0; d < D; d++)
			cuco_error_add(&e, a->acc[h][d] / a->l[h], out[d] / l);
	}
	return cuco_error_value(&e);
}

/* What baseline and seed share: the pool, the weights on the prefill
 * rank, the decode state on the decode rank, and the harness hooks. A
 * workload's state struct starts with it. */
typedef struct kv_io {
	cuco_bench *bench;
	int rank;
	float *pool;        /* POOL slots; may be replaced by a window's memory */
	kv_weights *w;
	attn out;
	int decoded;        /* set when the decode step ran this repetition */
} kv_io;

static void kv_io_prepare(void *arg, int rep)
{
	kv_io *io = arg;
	(void)rep;
	attn_init(&io->out);
	io->decoded = 0;
}

static void kv_io_fill(void *arg)
{
	kv_io *io = arg;
	kv_weights_init(io->w);
	for (int j = 0; j < HD; j++)
		kv_query[j] = query_value(j);
}

static double kv_io_verify(void *arg, int rep)
{
	kv_io *io = arg;
	if (io->rank != 1)
		return 0;
	return io->decoded ? check_attention(&io->out, rep) : INFINITY;
}

/* Hook the callbacks and figures into the bench; the pool is the caller's. */
static int kv_io_init(kv_io *io, cuco_bench *b, void *state)
{
	io->bench = b;
	io->rank = b->rank;
	io->w = malloc(sizeof *io->w);
	if (!io->w)
		return -1;
	b->fill = kv_io_fill;
	b->prepare = kv_io_prepare;
	b->verify = kv_io_verify;
	b->arg = state;
	b->bytes = (double)NB * BLOCK_FLOATS * sizeof(float);
	b->flops = (double)NB * BT * (2.0 * DM * 2 * HD + 4.0 * HD);
	b->tolerance = 1e-3;
	return 0;
}
#endif
