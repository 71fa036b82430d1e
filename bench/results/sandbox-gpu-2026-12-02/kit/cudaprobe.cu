// A CUDA program's usual calls: init, allocation, a kernel, cuBLAS, events, copies.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>
__global__ void fill(float *x, int n, float v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }
#define CK(e) do { cudaError_t r = (e); if (r != cudaSuccess) { printf("FAIL %s: %s\n", #e, cudaGetErrorString(r)); return 1; } } while (0)
int main() {
	int n = 0; CK(cudaGetDeviceCount(&n)); printf("devices %d\n", n);
	const int N = 512; float *a, *b, *c;
	CK(cudaMalloc(&a, N * N * 4)); CK(cudaMalloc(&b, N * N * 4)); CK(cudaMalloc(&c, N * N * 4));
	fill<<<N * N / 256, 256>>>(a, N * N, 1.0f); fill<<<N * N / 256, 256>>>(b, N * N, 2.0f);
	cublasHandle_t h; if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { printf("FAIL cublasCreate\n"); return 1; }
	float one = 1, zero = 0; cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
	CK(cudaEventRecord(e0));
	if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N) != CUBLAS_STATUS_SUCCESS) { printf("FAIL sgemm\n"); return 1; }
	CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
	float v; CK(cudaMemcpy(&v, c, 4, cudaMemcpyDeviceToHost));
	printf("sgemm %s (%.0f, want %d), %.3f ms\n", v == 2.0f * N ? "ok" : "WRONG", v, 2 * N, ms);
	return v == 2.0f * N ? 0 : 1;
}
