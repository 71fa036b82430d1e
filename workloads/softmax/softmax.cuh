// softmax.cuh — row softmax as attention and sampling use it:
//   y[i][j] = exp(x[i][j] - max_j x[i]) / sum_j exp(x[i][j] - max_j x[i])
// in the input's dtype, accumulating in fp32. What the programs compute
// with; the referee (referee.cu) holds the reference.
#pragma once
#include "cuco_rows.cuh"
