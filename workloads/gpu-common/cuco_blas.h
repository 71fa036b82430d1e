// cuco_blas.h — cuBLAS for the workloads' compute: the error check that
// names the failing call. The GEMMs themselves live with each workload.
#pragma once
#include "cuco_cuda.h"

#include <cublas_v2.h>

#define CUCO_CUBLAS(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) cuco_die(__FILE__, __LINE__, cublasGetStatusString(s_), #call); \
} while (0)
