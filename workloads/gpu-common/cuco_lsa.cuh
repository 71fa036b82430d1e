// cuco_lsa.cuh — device helpers the LSA candidates share: the issuer (which
// NCCL coop moves data and takes part in a barrier), a vectorised copy of a
// coop's share of a range, and flag signals between GPUs.
//
// The issuer directive reaches the source as CUCO_ISSUER_CTA / _WARP /
// _THREAD. One LSA barrier slot serves one coop, so a kernel needs as many
// slots as it has coops (cuco_coops()).
#pragma once
#include "cuco_gpu.h"

#include <cuda/atomic>

// The communication kernel's shape (knobs comm_ctas and threads).
#ifndef CUCO_COMM_CTAS
#define CUCO_COMM_CTAS 16
#endif
#ifndef CUCO_THREADS
#define CUCO_THREADS 512
#endif

#if defined(CUCO_ISSUER_THREAD)
typedef ncclCoopThread cuco_coop;
__device__ static inline uint32_t cuco_coop_index(void) { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ static inline uint32_t cuco_coop_lane(void) { return 0; }
__device__ static inline uint32_t cuco_coop_width(void) { return 1; }
static inline int cuco_coops(int ctas, int threads) { return ctas * threads; }
#elif defined(CUCO_ISSUER_WARP)
typedef ncclCoopWarp cuco_coop;
__device__ static inline uint32_t cuco_coop_index(void) { return blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; }
__device__ static inline uint32_t cuco_coop_lane(void) { return threadIdx.x % 32; }
__device__ static inline uint32_t cuco_coop_width(void) { return 32; }
static inline int cuco_coops(int ctas, int threads) { return ctas * (threads / 32); }
#else
typedef ncclCoopCta cuco_coop;
__device__ static inline uint32_t cuco_coop_index(void) { return blockIdx.x; }
__device__ static inline uint32_t cuco_coop_lane(void) { return threadIdx.x; }
__device__ static inline uint32_t cuco_coop_width(void) { return blockDim.x; }
static inline int cuco_coops(int ctas, int threads) { (void)threads; return ctas; }
#endif

// Number of coops in this launch.
__device__ static inline uint32_t cuco_coop_count(void)
{
	return gridDim.x * blockDim.x / cuco_coop_width();
}

// This coop's share of copying `bytes` (a multiple of 16) from src to dst,
// 16 bytes per store; all coops of the grid together copy the whole range.
__device__ static inline void cuco_coop_copy(void *dst, const void *src, size_t bytes)
{
	const uint4 *s = (const uint4 *)src;
	uint4 *d = (uint4 *)dst;
	size_t n = bytes / sizeof(uint4);
	size_t stride = (size_t)cuco_coop_count() * cuco_coop_width();
	for (size_t i = (size_t)cuco_coop_index() * cuco_coop_width() + cuco_coop_lane(); i < n; i += stride)
		d[i] = s[i];
}

// After the coop's stores: make them visible system-wide, then one thread
// raises the flag (which may live on a peer GPU) to `value`.
__device__ static inline void cuco_flag_signal(cuco_coop coop, uint32_t *flag, uint32_t value)
{
	coop.sync();
	if (coop.thread_rank() == 0) {
		__threadfence_system();
		cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*flag).store(value, cuda::memory_order_release);
	}
}

// Spin until a local flag reads `value` (acquire: the stores released
// before it are visible afterwards).
__device__ static inline void cuco_flag_wait(uint32_t *flag, uint32_t value)
{
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> f(*flag);
	while (f.load(cuda::memory_order_acquire) != value)
		;
}

// The device communicator the candidates here need: an LSA barrier slot
// per coop of the communication kernel; with GIN, one hybrid world barrier
// and `gin_signals` signals (asking for them brings GIN up, or reports
// "no GIN here").
static inline ncclDevComm cuco_devcomm_for(const cuco_ctx *c, int coops, bool gin, int gin_signals)
{
	ncclDevCommRequirements reqs;
	memset(&reqs, 0, sizeof reqs);  // 2.28 has no initializer macro
	reqs.lsaBarrierCount = coops;
	if (gin) {
		reqs.barrierCount = 1;
		reqs.ginSignalCount = gin_signals;
	}
	return cuco_devcomm_create(c, &reqs, gin);
}

#if CUCO_BACKEND_GIN
static const bool cuco_gin = true;
#else
static const bool cuco_gin = false;
#endif

// A second stream for communication, forked from and joined back to the
// main stream so that events on the main stream bracket a whole schedule.
struct cuco_side {
	cudaStream_t stream;
	cudaEvent_t fork, joined;
};

static inline cudaEvent_t cuco_event(void)
{
	cudaEvent_t e;
	CUCO_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	return e;
}

static inline cuco_side cuco_side_new(void)
{
	cuco_side s;
	CUCO_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
	s.fork = cuco_event();
	s.joined = cuco_event();
	return s;
}

static inline void cuco_side_fork(const cuco_ctx *c, const cuco_side &s)
{
	CUCO_CUDA(cudaEventRecord(s.fork, c->stream));
	CUCO_CUDA(cudaStreamWaitEvent(s.stream, s.fork, 0));
}

static inline void cuco_side_join(const cuco_ctx *c, const cuco_side &s)
{
	CUCO_CUDA(cudaEventRecord(s.joined, s.stream));
	CUCO_CUDA(cudaStreamWaitEvent(c->stream, s.joined, 0));
}

// Stream `to` waits for what `from` has enqueued so far.
static inline void cuco_after(cudaStream_t to, cudaStream_t from, cudaEvent_t e)
{
	CUCO_CUDA(cudaEventRecord(e, from));
	CUCO_CUDA(cudaStreamWaitEvent(to, e, 0));
}
