// swiglu.cuh — the gated activation of LLaMA-style MLPs:
//   out[i][j] = silu(gate[i][j]) * up[i][j],  silu(g) = g / (1 + e^-g)
// where each input row holds gate (COLS values) then up (COLS values), as
// a fused gate/up projection writes them. Shared by baseline and candidates.
#pragma once
#include "cuco_rows.cuh"

static void swiglu_reference(const double *x, const double *, double *y)
{
	for (int j = 0; j < COLS; j++)
		y[j] = x[j] / (1.0 + exp(-x[j])) * x[COLS + j];
}

__device__ static inline float swiglu_one(float g, float u)
{
	return g / (1.0f + __expf(-g)) * u;
}
