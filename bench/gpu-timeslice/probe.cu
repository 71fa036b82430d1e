// bench/gpu-timeslice/probe.cu — how long one process's tiny kernel waits
// on a GPU another process keeps busy (issue 24: the window a referee in
// its own process, with its own CUDA context, would leave a candidate's
// kernels between the candidate's "done" and the referee's own look).
//
//   probe hog MS SECONDS     fill every SM with kernels of MS ms each,
//                            back to back, for SECONDS
//   probe ping N             N times: launch a one-thread kernel that
//                            reads the GPU's clock, wait for it; print the
//                            host's launch-to-done latency (p50 p90 p99 max,
//                            in us), one line
//
// Contexts of two processes share a GPU by time slices (no MPS here), so
// ping's latency beside a hog is the slice the hog's context holds before
// the ping's context runs: the bound on what a referee's look lags behind.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "probe: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static __device__ unsigned long long now_ns()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __global__ void spin(unsigned long long ns, int *sink)
{
	unsigned long long end = now_ns() + ns;
	int x = 0;
	while (now_ns() < end)
		x++;
	if (x == -1)
		*sink = x;
}

static __global__ void stamp(unsigned long long *out)
{
	*out = now_ns();
}

static double host_us()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int hog(double ms, double seconds)
{
	int sms, *sink;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CHECK(cudaMalloc(&sink, sizeof *sink));
	double t0 = host_us();
	long n = 0;
	while (host_us() - t0 < seconds * 1e6) {
		spin<<<sms * 4, 256>>>((unsigned long long)(ms * 1e6), sink);
		CHECK(cudaDeviceSynchronize());
		n++;
	}
	printf("hog: %ld kernels of %.1f ms on %d SMs x 4 blocks\n", n, ms, sms);
	return 0;
}

static int ping(int n)
{
	unsigned long long *out;
	CHECK(cudaMalloc(&out, sizeof *out));
	stamp<<<1, 1>>>(out);  // the context's start, not measured
	CHECK(cudaDeviceSynchronize());
	std::vector<double> lat;
	for (int i = 0; i < n; i++) {
		double t = host_us();
		stamp<<<1, 1>>>(out);
		CHECK(cudaStreamSynchronize(0));
		lat.push_back(host_us() - t);
		struct timespec gap = { 0, 500000 };  // 0.5 ms between pings
		nanosleep(&gap, NULL);
	}
	std::sort(lat.begin(), lat.end());
	printf("ping: n %d  p50 %.0f  p90 %.0f  p99 %.0f  max %.0f us\n", n, lat[n / 2],
		lat[n * 9 / 10], lat[n * 99 / 100], lat[n - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "hog") == 0)
		return hog(atof(argv[2]), atof(argv[3]));
	if (argc == 3 && strcmp(argv[1], "ping") == 0 && atoi(argv[2]) > 0)
		return ping(atoi(argv[2]));
	fprintf(stderr, "usage: probe hog MS SECONDS | probe ping N\n");
	return 2;
}
