// cuco_gpu.h — the harness every cuco GPU workload shares (docs/workloads.md).
//
// It gives a workload program: error checks that name the failing call,
// command-line parsing (--warmup N --reps N --check 0|1), deterministic
// random inputs, CUDA-event timing with warm-up and per-sample statistics,
// per-phase timing, and the native `CUCO_RESULT {json}` line.
//
// Multi-GPU workloads define CUCO_WITH_NCCL before including it and get one
// process per GPU under mpirun, the NCCL unique id broadcast over MPI, the
// NCCL version check (headers and library must be the same release: 2.28.9
// headers run against a 2.28.3 library died with an illegal memory access),
// symmetric windows and device-communicator creation.
//
// Exit codes: 0 ran (correct or not: the result line says), 1 a bug or a
// failed call, CUCO_EXIT_ENVIRONMENT (69, sysexits' EX_UNAVAILABLE) when
// the machine lacks something the program needs: no GIN here, a mismatched
// NCCL library, too few GPUs. Such a program first prints
// `CUCO_RESULT {"environment": "<reason>"}`, which the evaluator classifies
// as an environment failure, never as the candidate's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <vector>

#ifdef CUCO_WITH_NCCL
#define OMPI_SKIP_MPICXX 1  // the C API is all we use; the C++ bindings warn
#include <mpi.h>
#include <nccl.h>
#include <nccl_device.h>
#endif

enum { CUCO_EXIT_ENVIRONMENT = 69 };

// ---- errors -------------------------------------------------------------

[[noreturn]] static inline void cuco_die(const char *file, int line, const char *what, const char *call)
{
	fprintf(stderr, "%s:%d: %s in %s\n", file, line, what, call);
	fflush(stderr);
#ifdef CUCO_WITH_NCCL
	int init = 0;
	MPI_Initialized(&init);
	if (init)
		MPI_Abort(MPI_COMM_WORLD, 1);  // a rank alone in exit() would leave its peers spinning
#endif
	exit(1);
}

#define CUCO_CUDA(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) cuco_die(__FILE__, __LINE__, cudaGetErrorString(e_), #call); \
} while (0)

// Call after every kernel launch: launch errors are only reported here.
#define CUCO_LAUNCHED() CUCO_CUDA(cudaGetLastError())

// Say why on the result line, as docs/workloads.md asks of a harness that
// finds the environment lacking (CUCO_RESULT {"environment": ...}), and
// leave with the environment code; all ranks go.
[[noreturn]] static inline void cuco_environment_exit(const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	for (char *q = why; *q; q++)  // keep the JSON string plain
		if (*q == '"' || *q == '\\' || (unsigned char)*q < ' ')
			*q = '\'';
	printf("CUCO_RESULT {\"environment\": \"%s\"}\n", why);
	fflush(stdout);
#ifdef CUCO_WITH_NCCL
	int init = 0;
	MPI_Initialized(&init);
	if (init)
		MPI_Abort(MPI_COMM_WORLD, CUCO_EXIT_ENVIRONMENT);
#endif
	exit(CUCO_EXIT_ENVIRONMENT);
}

// ---- command line -------------------------------------------------------

struct cuco_args {
	int warmup = 3;   // untimed runs first: module load, handles, NCCL connections
	int reps = 15;    // timed samples
	int inner = 1;    // launches per sample (amortises launch skew between ranks)
	bool check = true;
};

static inline cuco_args cuco_parse_args(int argc, char **argv)
{
	cuco_args a;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
		int *dst = !strcmp(argv[i], "--warmup") ? &a.warmup
		         : !strcmp(argv[i], "--reps") ? &a.reps
		         : !strcmp(argv[i], "--inner") ? &a.inner : nullptr;
		if (dst && v) {
			*dst = atoi(v);
			i++;
		} else if (!strcmp(argv[i], "--check") && v) {
			a.check = atoi(v) != 0;
			i++;
		} else {
			fprintf(stderr, "usage: %s [--warmup N] [--reps N] [--inner N] [--check 0|1]\n", argv[0]);
			exit(1);
		}
	}
	if (a.warmup < 0 || a.reps < 1 || a.inner < 1) {
		fprintf(stderr, "%s: --reps and --inner must be >= 1, --warmup >= 0\n", argv[0]);
		exit(1);
	}
	return a;
}

// ---- deterministic inputs -----------------------------------------------

// A value in [-1, 1) from (seed, index): every rank can rebuild any rank's
// input for its reference without communication.
__host__ __device__ static inline float cuco_rand(uint64_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
	x ^= x >> 31; x *= 0x94D049BB133111EBull; x ^= x >> 29;
	return (float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__host__ __device__ static inline float cuco_to_float(float v) { return v; }
__host__ __device__ static inline float cuco_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __host__ __device__ static inline T cuco_from_float(float v);
template <> __host__ __device__ inline float cuco_from_float<float>(float v) { return v; }
template <> __host__ __device__ inline __nv_bfloat16 cuco_from_float<__nv_bfloat16>(float v)
{
	return __float2bfloat16(v);
}

// p[i] = scale * rand(seed, first + i) for i < n.
template <typename T>
__global__ void cuco_fill_kernel(T *p, size_t n, uint64_t seed, uint64_t first, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = cuco_from_float<T>(scale * cuco_rand(seed, first + i));
}

template <typename T>
static inline void cuco_fill(T *p, size_t n, uint64_t seed, uint64_t first = 0, float scale = 1.0f,
	cudaStream_t s = 0)
{
	cuco_fill_kernel<T><<<1024, 256, 0, s>>>(p, n, seed, first, scale);
	CUCO_LAUNCHED();
}

// Poison an output before a checked run, so an element nobody wrote shows
// up as NaN (0xFF bytes are NaN in fp32 and bf16).
static inline void cuco_poison(void *p, size_t bytes, cudaStream_t s = 0)
{
	CUCO_CUDA(cudaMemsetAsync(p, 0xFF, bytes, s));
}

// Relative error of one value, robust near zero; NaN stays NaN so that
// `err <= tol` fails for it.
static inline double cuco_rel_err(double got, double want)
{
	return fabs(got - want) / (fabs(want) + 1.0);
}

// ---- multi-rank context ---------------------------------------------------

struct cuco_ctx {
	int rank = 0, nranks = 1;
	cudaStream_t stream = nullptr;  // the main stream every schedule starts and ends on
#ifdef CUCO_WITH_NCCL
	ncclComm_t comm = nullptr;
#endif
};

#ifdef CUCO_WITH_NCCL
#define CUCO_NCCL(call) do { \
	ncclResult_t r_ = (call); \
	if (r_ != ncclSuccess) cuco_die(__FILE__, __LINE__, ncclGetErrorString(r_), #call); \
} while (0)

// The 2.28 device structs are not ABI-stable even across patch releases in
// practice: refuse any library that is not the headers' exact release.
static inline void cuco_nccl_version_check(void)
{
	int v = 0;
	if (ncclGetVersion(&v) != ncclSuccess)
		cuco_environment_exit("ncclGetVersion failed: libnccl.so.2 not loadable?");
	if (v != NCCL_VERSION_CODE)
		cuco_environment_exit("NCCL library %d.%d.%d does not match the headers %d.%d.%d this "
			"program was built with; put the matching lib/ first in LD_LIBRARY_PATH",
			v / 10000, v / 100 % 100, v % 100, NCCL_VERSION_CODE / 10000,
			NCCL_VERSION_CODE / 100 % 100, NCCL_VERSION_CODE % 100);
}

static inline cuco_ctx cuco_init(int *argc, char ***argv)
{
	cuco_ctx c;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
	cuco_nccl_version_check();
	const char *nvls = getenv("NCCL_NVLS_ENABLE");
	if (!nvls || strcmp(nvls, "0") != 0)
		cuco_environment_exit("NCCL_NVLS_ENABLE must be 0 (NVLink multicast is never used here)");
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1)
		cuco_environment_exit("rank %d: no CUDA device", c.rank);
	// One process per GPU: Open MPI's local rank picks the device.
	const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
	int local = lr ? atoi(lr) : c.rank;
	if (local >= ndev)
		cuco_environment_exit("rank %d needs GPU %d, but only %d GPU(s) are visible", c.rank, local, ndev);
	CUCO_CUDA(cudaSetDevice(local));
	ncclUniqueId id;
	if (c.rank == 0)
		CUCO_NCCL(ncclGetUniqueId(&id));
	MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
	CUCO_NCCL(ncclCommInitRank(&c.comm, c.nranks, id, c.rank));
	CUCO_CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
	return c;
}

static inline void cuco_finish(cuco_ctx *c)
{
	CUCO_CUDA(cudaStreamSynchronize(c->stream));
	CUCO_CUDA(cudaStreamDestroy(c->stream));
	CUCO_NCCL(ncclCommFinalize(c->comm));
	CUCO_NCCL(ncclCommDestroy(c->comm));
	MPI_Finalize();
}

// A symmetric window: cuMem memory from ncclMemAlloc (cudaMalloc memory
// cannot be registered), registered collectively on every rank.
struct cuco_sym {
	void *ptr = nullptr;
	size_t bytes = 0;
	ncclWindow_t win{};
};

static inline cuco_sym cuco_sym_alloc(const cuco_ctx *c, size_t bytes)
{
	cuco_sym s;
	s.bytes = bytes;
	CUCO_NCCL(ncclMemAlloc(&s.ptr, bytes));
	CUCO_NCCL(ncclCommWindowRegister(c->comm, s.ptr, bytes, &s.win, NCCL_WIN_COLL_SYMMETRIC));
	return s;
}

static inline void cuco_sym_free(const cuco_ctx *c, cuco_sym *s)
{
	CUCO_NCCL(ncclCommWindowDeregister(c->comm, s->win));
	CUCO_NCCL(ncclMemFree(s->ptr));
	s->ptr = nullptr;
}

// Create the device communicator. Every rank of the LSA kernels here must be
// an LSA peer (one node with P2P); a GIN request that the machine cannot
// serve (no IB/RoCE NIC) is an environment condition, not a bug.
static inline ncclDevComm cuco_devcomm_create(const cuco_ctx *c, ncclDevCommRequirements *reqs, bool gin)
{
	ncclTeam lsa = ncclTeamLsa(c->comm);
	if (!gin && lsa.nRanks != c->nranks)
		cuco_environment_exit("LSA team has %d of %d ranks: these kernels need all ranks on one "
			"NVLink/P2P node", lsa.nRanks, c->nranks);
	ncclDevComm dc;
	ncclResult_t r = ncclDevCommCreate(c->comm, reqs, &dc);
	if (r != ncclSuccess && gin)
		cuco_environment_exit("no GIN here: ncclDevCommCreate: %s (%s); GIN needs an InfiniBand/RoCE NIC",
			ncclGetErrorString(r), ncclGetLastError(c->comm));
	if (r != ncclSuccess)
		cuco_die(__FILE__, __LINE__, ncclGetLastError(c->comm), "ncclDevCommCreate");
	return dc;
}
#else
static inline cuco_ctx cuco_init(int *, char ***)
{
	cuco_ctx c;
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1)
		cuco_environment_exit("no CUDA device");
	CUCO_CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
	return c;
}

static inline void cuco_finish(cuco_ctx *c)
{
	CUCO_CUDA(cudaStreamSynchronize(c->stream));
	CUCO_CUDA(cudaStreamDestroy(c->stream));
}
#endif

// True when every rank says true (or when running alone).
static inline bool cuco_all(const cuco_ctx *c, bool ok)
{
#ifdef CUCO_WITH_NCCL
	int mine = ok ? 1 : 0, all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	(void)c;
	return all == 1;
#else
	(void)c;
	return ok;
#endif
}

// Largest value over the ranks.
static inline double cuco_max(const cuco_ctx *c, double v)
{
#ifdef CUCO_WITH_NCCL
	double m = 0;
	MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	(void)c;
	return m;
#else
	(void)c;
	return v;
#endif
}

// A device cell for a check kernel's largest error: zeroed on the stream;
// kernels raise it with cuco_err_raise(). cuco_err_take() reads and frees
// it and returns the largest error over the ranks.
static inline float *cuco_err_new(const cuco_ctx *c)
{
	float *err = nullptr;
	CUCO_CUDA(cudaMalloc(&err, sizeof(float)));
	CUCO_CUDA(cudaMemsetAsync(err, 0, sizeof(float), c->stream));
	return err;
}

// NaN (an unwritten output) counts as infinitely wrong.
__device__ static inline void cuco_err_raise(float *err, float e)
{
	atomicMax((unsigned int *)err, __float_as_uint(e == e ? e : INFINITY));  // non-negative floats order as integers
}

static inline double cuco_err_take(const cuco_ctx *c, float *err)
{
	float h = 0;
	CUCO_CUDA(cudaMemcpyAsync(&h, err, sizeof h, cudaMemcpyDeviceToHost, c->stream));
	CUCO_CUDA(cudaStreamSynchronize(c->stream));
	CUCO_CUDA(cudaFree(err));
	return cuco_max(c, h);
}

// ---- timing -------------------------------------------------------------

// A schedule enqueues its work on ctx.stream; it may fork to other streams
// but must join back (an event recorded on them and waited on by the main
// stream), so events on the main stream bracket all of it.
typedef std::function<void()> cuco_launch;

// Time `warmup` untimed then `reps` timed samples of `inner` launches each,
// in µs per launch. All ranks start each sample together (MPI barrier) and a
// sample's value is the slowest rank's, as a collective's latency is.
static inline std::vector<double> cuco_time(const cuco_ctx *c, const cuco_args &a, const cuco_launch &run)
{
	cudaEvent_t t0, t1;
	CUCO_CUDA(cudaEventCreate(&t0));
	CUCO_CUDA(cudaEventCreate(&t1));
	for (int i = 0; i < a.warmup; i++)
		run();
	CUCO_CUDA(cudaStreamSynchronize(c->stream));
	std::vector<double> us(a.reps);
	for (int r = 0; r < a.reps; r++) {
#ifdef CUCO_WITH_NCCL
		MPI_Barrier(MPI_COMM_WORLD);
#endif
		CUCO_CUDA(cudaEventRecord(t0, c->stream));
		for (int i = 0; i < a.inner; i++)
			run();
		CUCO_CUDA(cudaEventRecord(t1, c->stream));
		CUCO_CUDA(cudaEventSynchronize(t1));
		float ms = 0;
		CUCO_CUDA(cudaEventElapsedTime(&ms, t0, t1));
		us[r] = cuco_max(c, ms * 1e3 / a.inner);
	}
	CUCO_CUDA(cudaEventDestroy(t0));
	CUCO_CUDA(cudaEventDestroy(t1));
	return us;
}

// Median of a set of samples (a copy is sorted).
static inline double cuco_median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? NAN : v[v.size() / 2];
}

// One phase's time alone: the median of timed samples of just that part.
static inline double cuco_time_phase(const cuco_ctx *c, const cuco_args &a, const cuco_launch &run)
{
	cuco_args p = a;
	p.warmup = std::max(1, a.warmup);
	p.reps = std::max(5, a.reps / 2);
	return cuco_median(cuco_time(c, p, run));
}

// ---- result ---------------------------------------------------------------

struct cuco_phase {
	const char *name;
	double us;
};

// Rank 0 prints the native result line (docs/workloads.md).
static inline void cuco_report(const cuco_ctx *c, bool correct, double max_error,
	std::vector<double> us, std::initializer_list<cuco_phase> phases, double bytes, double flops)
{
	if (c->rank != 0)
		return;
	std::sort(us.begin(), us.end());
	size_t n = us.size();
	size_t p90 = std::min(n - 1, (size_t)ceil(0.9 * n) - 1);
	// JSON has no NaN: an unverifiable error is reported as a huge number.
	double err = std::isfinite(max_error) ? max_error : 1e30;
	printf("CUCO_RESULT {\"correct\": %s, \"max_error\": %.6g, \"latency_us\": {\"min\": %.3f, "
		"\"median\": %.3f, \"p90\": %.3f, \"max\": %.3f, \"samples\": %zu}, \"phases_us\": {",
		correct ? "true" : "false", err, us[0], us[n / 2], us[p90], us[n - 1], n);
	bool first = true;
	for (const cuco_phase &p : phases) {
		if (!std::isfinite(p.us))
			continue;
		printf("%s\"%s\": %.3f", first ? "" : ", ", p.name, p.us);
		first = false;
	}
	printf("}, \"bytes\": %.0f, \"flops\": %.0f}\n", bytes, flops);
	fflush(stdout);
}

// The report of an overlap workload: phases compute and comm (each timed
// alone), exposed_comm (latency beyond compute alone), plus a log line with
// the overlap bound, latency / max(compute alone, comm alone): 1.0 is a
// perfect overlap.
static inline void cuco_report_overlap(const cuco_ctx *c, bool correct, double max_error,
	const std::vector<double> &us, double t_comp, double t_comm, double bytes, double flops)
{
	double med = cuco_median(us);
	if (c->rank == 0)
		printf("latency %.1f us, compute alone %.1f us, comm alone %.1f us, overlap bound %.3f\n",
			med, t_comp, t_comm, med / std::max(t_comp, t_comm));
	cuco_report(c, correct, max_error, us,
		{{"compute", t_comp}, {"comm", t_comm}, {"exposed_comm", std::max(0.0, med - t_comp)}},
		bytes, flops);
}
