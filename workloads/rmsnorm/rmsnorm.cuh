// rmsnorm.cuh — RMSNorm as LLMs apply it before attention and MLP:
//   y[i][j] = x[i][j] / sqrt(mean_j(x[i][j]^2) + eps) * w[j]
// in the input's dtype, accumulating in fp32. What the programs compute
// with (and the referee's reference, referee.cu, uses the same eps).
#pragma once
#include "cuco_rows.cuh"

static const float rms_eps = 1e-6f;
