// swiglu.cuh — the gated activation of LLaMA-style MLPs:
//   out[i][j] = silu(gate[i][j]) * up[i][j],  silu(g) = g / (1 + e^-g)
// where each input row holds gate (COLS values) then up (COLS values), as
// a fused gate/up projection writes them. What the programs compute with;
// the referee (referee.cu) holds the reference.
#pragma once
#include "cuco_rows.cuh"

__device__ static inline float swiglu_one(float g, float u)
{
	return g / (1.0f + __expf(-g)) * u;
}
