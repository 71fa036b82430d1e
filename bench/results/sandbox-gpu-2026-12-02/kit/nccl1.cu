// NCCL on one GPU in one process: init (bootstrap, proxy), an all-reduce.
#include <cstdio>
#include <cuda_runtime.h>
#include <nccl.h>
int main() {
	ncclComm_t comm; int dev = 0;
	ncclResult_t r = ncclCommInitAll(&comm, 1, &dev);
	if (r != ncclSuccess) { printf("FAIL ncclCommInitAll: %s\n", ncclGetErrorString(r)); return 1; }
	float *x; cudaMalloc(&x, 4096 * 4); cudaMemset(x, 0, 4096 * 4);
	r = ncclAllReduce(x, x, 4096, ncclFloat, ncclSum, comm, 0);
	cudaStreamSynchronize(0);
	printf("nccl allreduce %s\n", r == ncclSuccess ? "ok" : ncclGetErrorString(r));
	ncclCommDestroy(comm);
	return r == ncclSuccess ? 0 : 1;
}
