// softmax.cuh — row softmax as attention and sampling use it:
//   y[i][j] = exp(x[i][j] - max_j x[i]) / sum_j exp(x[i][j] - max_j x[i])
// in the input's dtype, accumulating in fp32. Shared by baseline and
// candidates.
#pragma once
#include "cuco_rows.cuh"

static void softmax_reference(const double *x, const double *, double *y)
{
	double mx = -INFINITY, sum = 0;
	for (int j = 0; j < COLS; j++)
		mx = std::max(mx, x[j]);
	for (int j = 0; j < COLS; j++)
		sum += y[j] = exp(x[j] - mx);
	for (int j = 0; j < COLS; j++)
		y[j] /= sum;
}
