// attention baseline: the unfused step flash-attention-cp used before the
// fused kernel. Per head, cuBLAS computes the scores S = Q·K^T in fp32
// (through memory), a softmax kernel writes P = 2^(S·scale - max) in bf16
// and each row's sum, cuBLAS computes O = P·V in fp32, and a last kernel
// divides by the sums into the bf16 output.
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_prepare once and cuco_launch once per step
// (../gpu-common/cuco_gpu_step.h).
#include "attention.cuh"
#include "cuco_blas.h"

// One warp per (head, query) row of KEYS scores.
__global__ void at_softmax(const float *S, __nv_bfloat16 *P, float *rowsum)
{
	const size_t row = blockIdx.x * (size_t)(blockDim.x / 32) + threadIdx.x / 32;  // h*SEQ + q
	const int lane = threadIdx.x % 32;
	if (row >= (size_t)HEADS * SEQ)
		return;
	const float scale = rsqrtf((float)HDIM) * 1.44269504f;  // exp2 domain
	const float *s = S + row * KEYS;
	float mx = -INFINITY;
	for (int k = lane; k < KEYS; k += 32)
		mx = fmaxf(mx, s[k] * scale);
	for (int o = 16; o; o /= 2)
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	float sum = 0;
	for (int k = lane; k < KEYS; k += 32) {
		__nv_bfloat16 pv = __float2bfloat16(exp2f(s[k] * scale - mx));
		P[row * KEYS + k] = pv;
		sum += __bfloat162float(pv);
	}
	for (int o = 16; o; o /= 2)
		sum += __shfl_xor_sync(0xffffffffu, sum, o);
	if (lane == 0)
		rowsum[row % SEQ * HEADS + row / SEQ] = sum;  // (query, head) order, as the output's rows
}

__global__ void at_normalise(const float *O, const float *rowsum, __nv_bfloat16 *out)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < at_q_elems; i += (size_t)gridDim.x * blockDim.x)
		out[i] = __float2bfloat16(O[i] / rowsum[i / HDIM]);
}

struct unfused {
	cublasHandle_t blas;
	float *S, *O, *rowsum;
	__nv_bfloat16 *P;
};

extern "C" void *cuco_prepare(const cuco_problem *)
{
	unfused *u = new unfused;  // lives as long as the program
	const size_t ss = (size_t)HEADS * SEQ * KEYS;
	CUCO_CUDA(cudaMalloc(&u->S, ss * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&u->P, ss * sizeof(__nv_bfloat16)));
	CUCO_CUDA(cudaMalloc(&u->O, at_q_elems * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&u->rowsum, (size_t)HEADS * SEQ * sizeof(float)));
	CUCO_CUBLAS(cublasCreate(&u->blas));
	return u;
}

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	unfused *u = (unfused *)state;
	const float one = 1.0f, zero = 0.0f;
	const int ld = HEADS * HDIM;  // token stride; heads are HDIM apart
	const long long sk = (long long)SEQ * KEYS;
	CUCO_CUBLAS(cublasSetStream(u->blas, s));
	// S_h (keys x queries, column-major = [query][key]) = K_h^T Q_h.
	CUCO_CUBLAS(cublasGemmStridedBatchedEx(u->blas, CUBLAS_OP_T, CUBLAS_OP_N, KEYS, SEQ, HDIM, &one, p->k,
		CUDA_R_16BF, ld, HDIM, p->q, CUDA_R_16BF, ld, HDIM, &zero, u->S, CUDA_R_32F, KEYS, sk, HEADS,
		CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	const int rows = HEADS * SEQ, warps = 8;
	at_softmax<<<(rows + warps - 1) / warps, warps * 32, 0, s>>>(u->S, u->P, u->rowsum);
	CUCO_LAUNCHED();
	// O_h (dims x queries) = V_h P_h.
	CUCO_CUBLAS(cublasGemmStridedBatchedEx(u->blas, CUBLAS_OP_N, CUBLAS_OP_N, HDIM, SEQ, KEYS, &one, p->v,
		CUDA_R_16BF, ld, HDIM, u->P, CUDA_R_16BF, KEYS, sk, &zero, u->O, CUDA_R_32F, ld, HDIM, HEADS,
		CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	at_normalise<<<1024, 256, 0, s>>>(u->O, u->rowsum, p->out);
	CUCO_LAUNCHED();
}
