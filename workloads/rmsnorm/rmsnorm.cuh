// rmsnorm.cuh — RMSNorm as LLMs apply it before attention and MLP:
//   y[i][j] = x[i][j] / sqrt(mean_j(x[i][j]^2) + eps) * w[j]
// in the input's dtype, accumulating in fp32. Shared by baseline and
// candidates: the problem and the double-precision reference.
#pragma once
#include "cuco_rows.cuh"

static const float rms_eps = 1e-6f;

static void rms_reference(const double *x, const double *w, double *y)
{
	double ss = 0;
	for (int j = 0; j < COLS; j++)
		ss += x[j] * x[j];
	double inv = 1.0 / sqrt(ss / COLS + rms_eps);
	for (int j = 0; j < COLS; j++)
		y[j] = x[j] * inv * w[j];
}
