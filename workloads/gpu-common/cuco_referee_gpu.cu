// cuco_referee_gpu.cu — the GPU runtime of the referee (../common/
// cuco_referee.h): its CUDA context, the device arrays it shares with a
// rank by legacy IPC handles, their poisoning. Trusted, built into the
// referee of a GPU workload (its referee_build names it) with the
// workload's referee.cu and ../common/cuco_referee.c; no candidate code is
// ever linked with it.
//
// Every call runs on the referee's one stream and its own context. IPC
// handles, unlike a descriptor, need nothing passed but their 64 bytes,
// which go into the rank's channel header; a rank that opens them maps
// the memory into its own context (bench/gpu-timeslice/ipc.cu: this works
// from cuco's sandbox, its PID namespace and the stage user).
#include "cuco_referee.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define IPC_PAGE (2u << 20)

static cudaStream_t stream;

// 0 on success, leaving why alone; else -1, with why.
static int failed(cudaError_t e, const char *call, char *why, size_t size)
{
	if (e == cudaSuccess)
		return 0;
	snprintf(why, size, "%s: %s", call, cudaGetErrorString(e));
	return -1;
}

extern "C" int cuco_ref_gpu_init(char *why, size_t size)
{
	cudaError_t e = cudaSetDevice(0);
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
	return failed(e, "the referee's CUDA context", why, size);
}

extern "C" int cuco_ref_gpu_alloc(size_t bytes, void **dev, unsigned char handle[CUCO_CHAN_HANDLE], char *why,
	size_t size)
{
	static_assert(sizeof(cudaIpcMemHandle_t) == CUCO_CHAN_HANDLE, "a legacy IPC handle is 64 bytes");
	cudaIpcMemHandle_t h;
	// Whole 2 MiB pages: a smaller allocation may share its page with
	// another, which the rank's mapping of the handle would then reach.
	cudaError_t e = cudaMalloc(dev, (bytes + IPC_PAGE - 1) / IPC_PAGE * IPC_PAGE);
	if (e != cudaSuccess)
		return failed(e, "cudaMalloc", why, size);
	if ((e = cudaIpcGetMemHandle(&h, *dev)) != cudaSuccess)
		return failed(e, "cudaIpcGetMemHandle", why, size);
	memcpy(handle, &h, sizeof h);
	return 0;
}

extern "C" void cuco_ref_gpu_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "referee: %s: %s\n", what, cudaGetErrorString(e));
		exit(2);
	}
}

extern "C" void cuco_ref_gpu_poison(void *dev, size_t bytes)
{
	cuco_ref_gpu_check(cudaMemsetAsync(dev, 0xff, bytes, stream), "cudaMemsetAsync");
}

extern "C" void cuco_ref_gpu_sync(void)
{
	cuco_ref_gpu_check(cudaStreamSynchronize(stream), "the referee's stream");
}

extern "C" int cuco_ref_gpu_sets(size_t want, size_t set_bytes, int max)
{
	size_t k = want, free_b = 0, total_b = 0;
	if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
		k = std::min(k, free_b / 4 / set_bytes);
	return (int)std::max<size_t>(1, std::min<size_t>(k, (size_t)max));
}

extern "C" cudaStream_t cuco_ref_gpu_stream(void)
{
	return stream;
}

__global__ static void probe_kernel(void) {}

/* The probe is a kernel, a copy within the device and a copy to the host:
 * the compute engine and the copy engines each run one context's work at a
 * time, so work of the stage's left on any of them holds one of these up. */
extern "C" double cuco_ref_gpu_probe(void)
{
	static unsigned *words;
	static unsigned host_word;
	struct timespec a, b;
	if (!words)
		cuco_ref_gpu_check(cudaMalloc(&words, 2 * sizeof *words), "the probe's words");
	clock_gettime(CLOCK_MONOTONIC, &a);
	probe_kernel<<<1, 1, 0, stream>>>();
	cuco_ref_gpu_check(cudaGetLastError(), "the probe");
	cuco_ref_gpu_check(cudaMemcpyAsync(words + 1, words, sizeof *words, cudaMemcpyDeviceToDevice, stream),
		"the probe's copy");
	cuco_ref_gpu_check(cudaMemcpyAsync(&host_word, words, sizeof *words, cudaMemcpyDeviceToHost, stream),
		"the probe's copy to the host");
	cuco_ref_gpu_sync();
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}
