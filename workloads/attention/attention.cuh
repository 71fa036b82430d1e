// attention.cuh — what the attention workload's programs compute with:
// the problem's sizes and its buffers (struct cuco_problem, the frame's).
// The check, the inputs and the report are the frame's (frame.cu).
//
//   out[q][h] = softmax(Q[q][h] · K[·][h]^T / sqrt(HDIM)) · V[·][h]
//
// SEQ queries against KEYS keys (flash-attention-cp's compute: one rank's
// queries against the keys of both ranks), HEADS heads of HDIM, non-causal,
// bf16 in and out, layouts [token][head][dim]. Compute-bound: the score is
// 4·HEADS·SEQ·KEYS·HDIM flops over time as a fraction of the bf16
// tensor-core peak.
#pragma once
#include "cuco_gpu_step.h"

#ifndef SEQ
#define SEQ 1024
#endif
#ifndef HEADS
#define HEADS 32
#endif
#ifndef HDIM
#define HDIM 128
#endif
#ifndef KEYS
#define KEYS (2 * SEQ)
#endif

static const size_t at_q_elems = (size_t)SEQ * HEADS * HDIM, at_kv_elems = (size_t)KEYS * HEADS * HDIM;

// The frame's buffers, on the device, [SEQ|KEYS][HEADS][HDIM].
struct cuco_problem {
	const __nv_bfloat16 *q, *k, *v;
	__nv_bfloat16 *out;
};
