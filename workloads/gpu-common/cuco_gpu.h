// cuco_gpu.h — the trusted harness every cuco GPU workload shares
// (docs/workloads.md). Nothing here is inside an EVOLVE-BLOCK.
//
// It gives a workload program (besides cuco_cuda.h's error checks, whose
// end, cuco_die, is defined here): command-line parsing (--warmup N --reps
// N --check 0|1), random inputs from the evaluator's seed, the verified
// and timed run (cuco_bench), per-phase timing, and the sealed verdict
// (cuco_report).
//
// What the evaluator, not the candidate, controls (docs/workloads.md,
// "Trust"; the CPU harness, ../common/cuco_harness.h, does the same):
// - Inputs: cuco_rand() follows the input seed the harness sets from the
//   evaluator's ticket (../common/cuco_trust.h: $CUCO_HARNESS, taken and
//   wiped before main; in a framed one-GPU program, cuco_gpu_frame.cuh,
//   a file the frame's main() takes first), on the host and on the device
//   alike, so every fill and every check kernel follows it without naming
//   it.
// - Verification: cuco_bench runs the step verified on two input seeds
//   before timing, poisons the outputs before every step, spot-checks
//   timed samples with a decision drawn after the sample (and samples the
//   checked positions with a salt drawn then, cuco_check_salt), and checks
//   one more step on fresh inputs after the loop; every rank checks its
//   own output and the harness gathers who failed.
// - Timing: the events on the main stream time a sample, and then a
//   device-wide synchronisation closes it: device work still running then
//   (on a stream never joined to the main one), in two steps, is refused,
//   and a host clock taken around the whole sample is reported beside it.
// - Leftovers: no thread or child process a step started may outlive it.
//
// The one-GPU workloads' programs never include it: each is linked with
// its workload's frame, which does (cuco_gpu_frame.cuh, cuco_gpu_step.h).
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

#include "cuco_cuda.h"

#include <cstdarg>
#include <functional>
#include <initializer_list>
#include <vector>

#include "../common/cuco_trust.h"

#ifdef CUCO_WITH_NCCL
#define OMPI_SKIP_MPICXX 1  // the C API is all we use; the C++ bindings warn
#include <mpi.h>
#include <nccl.h>
#include <nccl_device.h>
#endif

enum { CUCO_EXIT_ENVIRONMENT = 69 };

// ---- errors -------------------------------------------------------------

// Defined here, not inline: the one definition of the program (or of the
// frame a framed program is linked with) that cuco_cuda.h declares.
extern "C" [[noreturn]] void cuco_die(const char *file, int line, const char *what, const char *call)
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
	cuco_plain(why);  // keep the JSON string plain
	char json[700];
	snprintf(json, sizeof json, "{\"environment\": \"%s\", \"seed\": \"%016llx\"}", why,
		(unsigned long long)cuco_ticket_seed());
	cuco_emit(json);
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
	a.check |= cuco_ticket.sealed != 0;  // under the evaluator, always
	return a;
}

// ---- inputs from the evaluator's seed --------------------------------------

// The input seed of the verified run or the timing: the harness sets it
// (cuco_set_inputs) on the host and for the device at once.
__constant__ uint64_t cuco_inputs_seed_d;
static uint64_t cuco_inputs_seed_h = CUCO_UNSEALED_SEED;

__host__ __device__ static inline uint64_t cuco_inputs_seed(void)
{
#ifdef __CUDA_ARCH__
	return cuco_inputs_seed_d;
#else
	return cuco_inputs_seed_h;
#endif
}

// A value in [-1, 1) from (seed, index) and the input seed: every rank can
// rebuild any rank's input for its reference without communication.
__host__ __device__ static inline float cuco_rand(uint64_t seed, uint64_t i)
{
	seed ^= cuco_inputs_seed() * 0xD6E8FEB86659FD93ull;
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
	x ^= x >> 31; x *= 0x94D049BB133111EBull; x ^= x >> 29;
	return (float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
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

// Set the input seed: what every cuco_rand() after it follows. Between
// steps only: the device finishes what it was doing first.
static inline void cuco_set_inputs(uint64_t seed)
{
	CUCO_CUDA(cudaDeviceSynchronize());
	cuco_inputs_seed_h = seed;
	CUCO_CUDA(cudaMemcpyToSymbol(cuco_inputs_seed_d, &seed, sizeof seed));
	CUCO_CUDA(cudaDeviceSynchronize());
}

// Where this check samples: checks that look at some positions only add
// it to their choice, so the step cannot know which ones count. Drawn by
// the harness just before each check.
static uint64_t cuco_check_salt_h;
static inline uint64_t cuco_check_salt(void) { return cuco_check_salt_h; }

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

// The host's monotonic clock in seconds.
static inline double cuco_host_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
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
	cuco_set_inputs(cuco_ticket_seed());  // the setup's inputs (routing, tables) follow it too
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
	cuco_set_inputs(cuco_ticket_seed());
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
// it and returns this rank's largest error (the harness gathers the ranks').
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
	return h;
}

// ---- timing -------------------------------------------------------------

// A schedule enqueues its work on ctx.stream; it may fork to other streams
// but must join back (an event recorded on them and waited on by the main
// stream), so events on the main stream bracket all of it. cuco_bench
// refuses a schedule that does not: see cuco_sample.
typedef std::function<void()> cuco_schedule;

// Time `warmup` untimed then `reps` timed samples of `inner` launches each,
// in µs per launch. All ranks start each sample together (MPI barrier) and a
// sample's value is the slowest rank's, as a collective's latency is. For
// phases timed alone; the verdict's latency is cuco_bench's.
static inline std::vector<double> cuco_time(const cuco_ctx *c, const cuco_args &a, const cuco_schedule &run)
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
static inline double cuco_time_phase(const cuco_ctx *c, const cuco_args &a, const cuco_schedule &run)
{
	cuco_args p = a;
	p.warmup = std::max(1, a.warmup);
	p.reps = std::max(5, a.reps / 2);
	return cuco_median(cuco_time(c, p, run));
}

// ---- the verified and timed run --------------------------------------------

// What a workload tells the harness about its data; all work on c->stream.
struct cuco_data {
	std::function<void()> fill;    // rebuild the inputs (cuco_fill follows the harness's seed)
	std::function<void()> poison;  // poison the outputs (cuco_poison)
	std::function<double()> check; // this rank's largest error of the outputs (every rank calls it)
	double tolerance;              // the largest error that is right
};

struct cuco_run {
	std::vector<double> us;        // timed samples, µs per launch, the slowest rank's
	std::vector<double> wall;      // the host clock around each sample, µs per launch
	double row[CUCO_ROW];          // this rank's findings (cuco_trust.h)
	std::vector<double> rows;      // every rank's, after cuco_bench
	double tolerance = 0;
	int checks = 0;
	int late = 0;                  // steps whose device work outlived the main stream
	double first_late_rep = -1, first_late_us = 0;
	long host_calls = -1;
	char calls[256] = "";
	cuco_watch w;
	cudaEvent_t t0, t1;
};

// Device work this long after the main stream's end, µs, is work the
// events did not time: beyond a device sync's own cost. One such step may
// be the host thread preempted between the two syncs; a second one is not
// chance, and is refused (the first is the one named).
static inline double cuco_straggler_limit(double sample_us) { return std::max(50.0, 0.1 * sample_us); }
enum { CUCO_LATE_STEPS = 2 };

// Largest of two values over the ranks (a sample's time, rank 0's draw).
static inline void cuco_max2(const cuco_ctx *c, double v[2])
{
#ifdef CUCO_WITH_NCCL
	double in[2] = {v[0], v[1]};
	MPI_Allreduce(in, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
	(void)c;
}

// One sample of `inner` launches: barrier, events around the launches on
// the main stream, then a device-wide sync, whose delay past the main
// stream's end is device work left running; then what the step left
// running on the host. Returns µs per launch; *wall is the host clock.
static inline double cuco_sample(const cuco_ctx *c, cuco_run *r, int rep, int inner, const cuco_schedule &run,
	double *wall)
{
#ifdef CUCO_WITH_NCCL
	MPI_Barrier(MPI_COMM_WORLD);
#endif
	double h0 = cuco_host_now();
	CUCO_CUDA(cudaEventRecord(r->t0, c->stream));
	cuco_watch_window(&r->w, 1);
	for (int i = 0; i < inner; i++)
		run();
	cuco_watch_window(&r->w, 0);
	CUCO_CUDA(cudaEventRecord(r->t1, c->stream));
	CUCO_CUDA(cudaEventSynchronize(r->t1));
	double h1 = cuco_host_now();
	CUCO_CUDA(cudaDeviceSynchronize());
	double h2 = cuco_host_now();
	CUCO_LAUNCHED();
	float ms = 0;
	CUCO_CUDA(cudaEventElapsedTime(&ms, r->t0, r->t1));
	double us = ms * 1e3, late = (h2 - h1) * 1e6;
	if (late > cuco_straggler_limit(us) && r->late++ == 0) {
		r->first_late_rep = rep;
		r->first_late_us = late;
	}
	if (r->late >= CUCO_LATE_STEPS && r->row[CUCO_STREAM_REP] < 0) {
		r->row[CUCO_STREAM_REP] = r->first_late_rep;
		r->row[CUCO_STREAM_US] = r->first_late_us;
	}
	long thread, child;
	cuco_watch_step(&r->w, &thread, &child);
	if (thread)
		cuco_row_first(r->row, CUCO_THREAD_REP, rep);
	if (child)
		cuco_row_first(r->row, CUCO_CHILD_REP, rep);
	*wall = (h2 - h0) * 1e6 / inner;
	return us / inner;
}

// Check the outputs into row[slot], sampling where the salt says.
static inline double cuco_bench_check(cuco_run *r, const cuco_data &d, int slot)
{
	cuco_check_salt_h = (uint64_t)(cuco_draw() * 9007199254740992.0);
	r->checks++;
	double e = d.check();
	CUCO_CUDA(cudaDeviceSynchronize());
	return cuco_row_error(r->row, slot, e);
}

// A verified step on fresh inputs of seed.
static inline void cuco_verified(const cuco_ctx *c, cuco_run *r, const cuco_data &d, const cuco_schedule &run,
	uint64_t seed, int rep, int slot)
{
	cuco_set_inputs(seed);
	d.fill();
	CUCO_CUDA(cudaDeviceSynchronize());  // fills may run on the legacy stream
	d.poison();
	double wall;
	cuco_sample(c, r, rep, 1, run, &wall);
	cuco_bench_check(r, d, slot);
}

// ---- the stream probe ---------------------------------------------------------

// The samples time the main stream's events, and a schedule may hide work
// on a stream it never joins; at a few µs a launch such work ends within
// the launch overheads, too soon for the lag check (cuco_straggler_limit)
// to see it. So on one rank, after the timed loop, the probe launches the
// schedule k times back to back, each after the outputs' poison, to a
// device-wide sync, and takes the host clock: less the poisons alone, that
// is what a launch costs the device on every stream. Samples well below
// it are refused (against the median of at least CUCO_PROBE_SAMPLES samples:
// the run stage times only one, so the probe adds some of its own). One
// launch of each probe, drawn at random, is checked, so a probe launch
// cannot skip its work; the best of CUCO_PROBES counts,
// as a host preempted only makes a probe longer. Multi-rank schedules are
// not probed: launches back to back without the samples' barrier would
// need every schedule to keep its ranks in step; the lag check stands there.
enum { CUCO_PROBES = 3, CUCO_PROBE_SPAN_US = 2000, CUCO_PROBE_MIN = 4, CUCO_PROBE_MAX = 4096,
	CUCO_PROBE_SAMPLES = 9 };
static const double cuco_probe_ratio = 0.75;  // samples below this share of the probe are refused

// Host clock, µs, of n steps from an idle device to a device-wide sync.
static inline double cuco_span_us(int n, const std::function<void()> &step)
{
	CUCO_CUDA(cudaDeviceSynchronize());
	double h0 = cuco_host_now();
	for (int i = 0; i < n; i++)
		step();
	CUCO_CUDA(cudaDeviceSynchronize());
	return (cuco_host_now() - h0) * 1e6;
}

static inline void cuco_probe(const cuco_ctx *c, const cuco_args &a, cuco_run *r, const cuco_data &d,
	const cuco_schedule &run, int *rep)
{
	if (c->nranks > 1)
		return;
	std::vector<double> samples = r->us;
	while (samples.size() < CUCO_PROBE_SAMPLES) {
		double wall;
		d.poison();
		samples.push_back(cuco_sample(c, r, (*rep)++, a.inner, run, &wall));
	}
	double said = cuco_median(samples);
	if (!(said > 0))
		return;
	int k = (int)std::min<double>(CUCO_PROBE_MAX, std::max<double>(CUCO_PROBE_MIN,
		ceil(CUCO_PROBE_SPAN_US / said)));
	double both = INFINITY, alone = INFINITY;
	for (int p = 0; p < CUCO_PROBES; p++) {
		int at = std::min(k - 1, (int)(cuco_draw() * k));
		auto step = [&] { d.poison(); run(); };
		double us = cuco_span_us(at + 1, step);
		cuco_bench_check(r, d, CUCO_PROBE);
		both = std::min(both, us + cuco_span_us(k - at - 1, step));
		alone = std::min(alone, cuco_span_us(k, d.poison));
	}
	double device_us = (both - alone) / k;
	if (said < cuco_probe_ratio * device_us) {
		r->row[CUCO_PROBE_US] = device_us;
		r->row[CUCO_PROBE_SAID] = said;
	}
	printf("stream probe: %d launches back to back, %.2f us each on the device; timed median %.2f us\n",
		k, device_us, said);
}

// Every rank's findings, one row each (MAX over ranks of -1-filled rows).
static inline std::vector<double> cuco_gather_rows(const cuco_ctx *c, const double *row)
{
	std::vector<double> mine((size_t)CUCO_ROW * c->nranks, -1), all(mine.size());
	std::copy(row, row + CUCO_ROW, mine.begin() + (size_t)CUCO_ROW * c->rank);
#ifdef CUCO_WITH_NCCL
	MPI_Allreduce(mine.data(), all.data(), (int)mine.size(), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#else
	all = mine;
#endif
	return all;
}

// Host calls the interposer counted in the steps, summed over the ranks.
static inline long cuco_gather_calls(const cuco_ctx *c, const cuco_watch *w, char *by, size_t size)
{
	const char *const *names;
	int n = w->count_window ? w->count_names(&names) : 0;
	if (n <= 0)
		return -1;
	std::vector<long> mine(n), all(n);
	for (int i = 0; i < n; i++)
		mine[i] = w->count_of(i);
#ifdef CUCO_WITH_NCCL
	MPI_Allreduce(mine.data(), all.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
#else
	all = mine;
#endif
	(void)c;
	long total = 0;
	size_t used = 0;
	by[0] = '\0';
	for (int i = 0; i < n; i++) {
		total += all[i];
		if (all[i] && used < size) {
			int k = snprintf(by + used, size - used, "%s%s=%ld", used ? " " : "", names[i], all[i]);
			used += k > 0 ? (size_t)k : 0;
		}
	}
	return total;
}

// Both verified steps, `warmup` untimed and `reps` timed samples of
// `inner` launches (each poisoned first and spot-checked at random), the
// stream probe, then the post-loop step on fresh inputs; without --check
// (by hand only), just the samples.
static inline cuco_run cuco_bench(const cuco_ctx *c, const cuco_args &a, const cuco_data &d, const cuco_schedule &run)
{
	cuco_run r;
	r.tolerance = d.tolerance;
	cuco_row_init(r.row);
	CUCO_CUDA(cudaEventCreate(&r.t0));
	CUCO_CUDA(cudaEventCreate(&r.t1));
	cuco_watch_start(&r.w);
	const uint64_t seed = cuco_ticket_seed();
	int rep = 0;
	if (a.check) {
		cuco_verified(c, &r, d, run, cuco_mix(seed ^ 1), rep++, CUCO_V1);
		cuco_watch_rebase(&r.w);  // threads CUDA, NCCL or cuBLAS start on first use
		cuco_verified(c, &r, d, run, cuco_mix(seed ^ 2), rep++, CUCO_V2);
	}
	const double p = CUCO_SPOT_CHECKS / a.reps;
	for (int i = 0; i < a.warmup + a.reps; i++, rep++) {
		bool timed = i >= a.warmup;
		if (a.check && timed)
			d.poison();
		double wall, v[2] = {0, c->rank == 0 ? cuco_draw() : -1};
		v[0] = cuco_sample(c, &r, rep, timed ? a.inner : 1, run, &wall);
		cuco_max2(c, v);  // the slowest rank's time; whether to check, drawn only now
		if (!timed)
			continue;
		r.us.push_back(v[0]);
		r.wall.push_back(wall);
		if (a.check && v[1] < p && cuco_bench_check(&r, d, CUCO_SPOT) > d.tolerance)
			cuco_row_first(r.row, CUCO_SPOT_REP, rep);
	}
	if (a.check) {
		cuco_probe(c, a, &r, d, run, &rep);
		double fresh[2] = {cuco_draw(), 0};
		cuco_max2(c, fresh);
		cuco_verified(c, &r, d, run, cuco_mix(seed ^ (uint64_t)(fresh[0] * 9007199254740992.0)), rep, CUCO_POST);
	}
	r.rows = cuco_gather_rows(c, r.row);
	r.host_calls = cuco_gather_calls(c, &r.w, r.calls, sizeof r.calls);
	CUCO_CUDA(cudaEventDestroy(r.t0));
	CUCO_CUDA(cudaEventDestroy(r.t1));
	return r;
}

// ---- result ---------------------------------------------------------------

struct cuco_phase {
	const char *name;
	double us;
};

// Rank 0 prints the sealed verdict (docs/workloads.md): the checks'
// findings, the timed samples and the phases.
static inline void cuco_report(const cuco_ctx *c, cuco_run &r, std::initializer_list<cuco_phase> phases,
	double bytes, double flops)
{
	const double tolerance = r.tolerance;
	if (c->rank != 0)
		return;
	std::vector<double> us = r.us;
	std::sort(us.begin(), us.end());
	size_t n = us.size();
	size_t p90 = std::min(n - 1, (size_t)ceil(0.9 * n) - 1);
	char why[320], suspect[400], json[6144];
	cuco_judge(r.rows.data(), c->nranks, tolerance, cuco_ticket_seed(), why, sizeof why, suspect, sizeof suspect);
	double worst = cuco_rows_error(r.rows.data(), c->nranks);
	bool correct = !*why && !*suspect && worst <= tolerance;
	// JSON has no NaN: an unverifiable error is reported as a huge number.
	int k = snprintf(json, sizeof json, "{\"correct\": %s, \"max_error\": %.6g, \"latency_us\": {\"min\": %.3f, "
		"\"median\": %.3f, \"p90\": %.3f, \"max\": %.3f, \"samples\": %zu}, \"wall_us\": %.3f, \"phases_us\": {",
		correct ? "true" : "false", std::isfinite(worst) ? worst : 1e30, us[0], us[n / 2], us[p90], us[n - 1], n,
		cuco_median(r.wall));
	bool first = true;
	for (const cuco_phase &p : phases) {
		if (!std::isfinite(p.us))
			continue;
		k += snprintf(json + k, sizeof json - k, "%s\"%s\": %.3f", first ? "" : ", ", p.name, p.us);
		first = false;
	}
	k += snprintf(json + k, sizeof json - k, "}, \"bytes\": %.0f, \"flops\": %.0f", bytes, flops);
	cuco_verdict_tail(json, sizeof json, k, c->nranks, r.checks, r.host_calls, r.calls, why, suspect);
	cuco_emit(json);
	if (*why || *suspect)
		fprintf(stderr, "harness: %s\n", *why ? why : suspect);
}

// The report of an overlap workload: phases compute and comm (each timed
// alone), exposed_comm (latency beyond compute alone), plus a log line with
// the overlap bound, latency / max(compute alone, comm alone): 1.0 is a
// perfect overlap.
static inline void cuco_report_overlap(const cuco_ctx *c, cuco_run &r, double t_comp, double t_comm,
	double bytes, double flops)
{
	double med = cuco_median(r.us);
	if (c->rank == 0)
		printf("latency %.1f us, compute alone %.1f us, comm alone %.1f us, overlap bound %.3f\n",
			med, t_comp, t_comm, med / std::max(t_comp, t_comm));
	cuco_report(c, r,
		{{"compute", t_comp}, {"comm", t_comm}, {"exposed_comm", std::max(0.0, med - t_comp)}},
		bytes, flops);
}
