// bench/gpu-timeslice/ipc.cu — can a process that is not the candidate's
// own the GPU buffers a candidate computes in (issue 24: a GPU referee)?
// Two ways to share device memory with a stage that runs in cuco's sandbox
// (bwrap, its own PID namespace, the stage user):
//
//   ipc owner FILE             cudaMalloc 1 MiB, write its legacy IPC
//                              handle to FILE, wait for FILE.done, check
//                              what the user wrote; one line
//   ipc user FILE              open the handle in FILE, fill the buffer
//                              with a pattern, write FILE.done
//   ipc owner-fd CMD…          cuMemCreate 1 MiB shareable as a POSIX
//                              descriptor, run CMD… with that descriptor
//                              inherited as fd 7, check what it wrote
//   ipc user-fd                import fd 7, map it, fill it
//
// Each owner line says "ok" or what failed; run.sh runs them plain, in a
// PID namespace, and as another user, as a stage would be.
#include <cuda.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 18)  // floats: 1 MiB

static __global__ void fill(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (float)i * 0.5f + 3.0f;
}

static int check(const float *d, const char *how)
{
	static float h[N];
	if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
		printf("%s: copy back failed\n", how);
		return 1;
	}
	for (int i = 0; i < N; i++)
		if (h[i] != (float)i * 0.5f + 3.0f) {
			printf("%s: FAILED: element %d is %g\n", how, i, h[i]);
			return 1;
		}
	printf("%s: ok, the other process's writes are in the owner's buffer\n", how);
	return 0;
}

static int owner(const char *file)
{
	float *d;
	cudaIpcMemHandle_t h;
	if (cudaMalloc(&d, N * sizeof(float)) != cudaSuccess || cudaMemset(d, 0, N * sizeof(float))
			|| cudaIpcGetMemHandle(&h, d) != cudaSuccess) {
		printf("ipc owner: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 1;
	}
	FILE *f = fopen(file, "wb");
	fwrite(&h, sizeof h, 1, f);
	fclose(f);
	char done[512];
	snprintf(done, sizeof done, "%s.done", file);
	for (int i = 0; i < 600 && access(done, F_OK) != 0; i++)
		usleep(50000);
	if (access(done, F_OK) != 0) {
		printf("legacy IPC: FAILED: the user never finished\n");
		return 1;
	}
	return check(d, "legacy IPC");
}

static int user(const char *file)
{
	cudaIpcMemHandle_t h;
	FILE *f = fopen(file, "rb");
	if (!f || fread(&h, sizeof h, 1, f) != 1) {
		printf("ipc user: cannot read %s\n", file);
		return 1;
	}
	fclose(f);
	void *p;
	cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
	if (e != cudaSuccess) {
		fprintf(stderr, "ipc user: cudaIpcOpenMemHandle: %s\n", cudaGetErrorString(e));
		return 1;
	}
	fill<<<N / 256, 256>>>((float *)p, N);
	cudaDeviceSynchronize();
	char done[512];
	snprintf(done, sizeof done, "%s.done", file);
	fclose(fopen(done, "w"));
	return 0;
}

#define DRV(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; \
	cuGetErrorString(r_, &s_); fprintf(stderr, "%s: %s\n", #x, s_); return 1; } } while (0)

static CUmemAllocationProp prop(void)
{
	CUmemAllocationProp p;
	memset(&p, 0, sizeof p);
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	return p;
}

static int map(CUmemGenericAllocationHandle h, size_t size, CUdeviceptr *ptr)
{
	DRV(cuMemAddressReserve(ptr, size, 0, 0, 0));
	DRV(cuMemMap(*ptr, size, 0, h, 0));
	CUmemAccessDesc a;
	memset(&a, 0, sizeof a);
	a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	a.location.id = 0;
	a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	DRV(cuMemSetAccess(*ptr, size, &a, 1));
	return 0;
}

static int owner_fd(char **cmd)
{
	cudaFree(0);  // the runtime's context, current for the driver calls
	CUmemAllocationProp p = prop();
	size_t gran, size;
	DRV(cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	size = ((N * sizeof(float) + gran - 1) / gran) * gran;
	CUmemGenericAllocationHandle h;
	DRV(cuMemCreate(&h, size, &p, 0));
	CUdeviceptr ptr;
	if (map(h, size, &ptr))
		return 1;
	DRV(cuMemsetD8(ptr, 0, size));
	int fd;
	DRV(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 7);  // inherited: no socket, no path, no pid to look up
		execvp(cmd[0], cmd);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("fd handle: FAILED: the user exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 1;
	}
	return check((const float *)ptr, "fd handle");
}

static int user_fd(void)
{
	DRV(cuInit(0));
	CUdevice dev;
	CUcontext ctx;
	DRV(cuDeviceGet(&dev, 0));
	DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
	DRV(cuCtxSetCurrent(ctx));
	CUmemGenericAllocationHandle h;
	DRV(cuMemImportFromShareableHandle(&h, (void *)(long)7, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	CUmemAllocationProp p = prop();
	size_t gran;
	DRV(cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	size_t size = ((N * sizeof(float) + gran - 1) / gran) * gran;
	CUdeviceptr ptr;
	if (map(h, size, &ptr))
		return 1;
	fill<<<N / 256, 256>>>((float *)ptr, N);
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "owner") == 0)
		return owner(argv[2]);
	if (argc == 3 && strcmp(argv[1], "user") == 0)
		return user(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "owner-fd") == 0)
		return owner_fd(argv + 2);
	if (argc == 2 && strcmp(argv[1], "user-fd") == 0)
		return user_fd();
	fprintf(stderr, "usage: ipc owner|user FILE | ipc owner-fd CMD... | ipc user-fd\n");
	return 2;
}
