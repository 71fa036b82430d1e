/* cuco_referee.h — a workload's half of the referee: its arrays, how their
 * values are drawn, and how a rank's outputs are checked. The runtime
 * (cuco_referee.c) does the rest: the channel, the clock, the freezing of
 * the stage between steps, the verdict.
 *
 * A workload's referee.c defines the ref_* functions below (ref_tolerance
 * if it wants, ref_capture if its arrays are on a GPU) and is
 * compiled with cuco_referee.c into the referee, a program of its own
 * that cuco starts beside every run and benchmark stage. No candidate
 * code is ever linked into it, and nothing here reaches a candidate: the
 * seeds are drawn inside the referee and never leave it. Sizes come from
 * the size's defines (-DM=4096 ...), as for the program.
 *
 * A GPU workload's arrays are device memory (the layout's `device`): the
 * referee allocates them on its own CUDA context and shares them with the
 * rank by IPC handles, fills and poisons them there, and at every "done"
 * captures (ref_capture) the rows it will check, timing that capture: the
 * GPU runtime (../gpu-common/cuco_referee_gpu.cu) gives the device calls.
 *
 * Plain C11; a GPU workload's half is CUDA C++ that includes it. */
#ifndef CUCO_REFEREE_H
#define CUCO_REFEREE_H

#include "cuco_channel.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CUCO_REF_HD __host__ __device__
#else
#define CUCO_REF_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuco_ref_array {
	const char *name;
	size_t bytes;
	bool per_step;           /* inputs: drawn afresh for every step, else once a run */
} cuco_ref_array;

typedef struct cuco_ref_layout {
	int nin, nout;
	bool device;             /* every array is device memory (a GPU workload) */
	int sets;                /* launches a step (each on its own inputs and outputs in
	                          * the arrays): a step's time is theirs; 0 is 1 */
	cuco_ref_array in[CUCO_CHAN_ARRAYS], out[CUCO_CHAN_ARRAYS];
} cuco_ref_layout;

/* The seeds a step's inputs follow: run[] drawn once a run (for the
 * arrays that are not per_step), rank_step[q][] afresh before every step
 * for rank q's inputs, apart for every rank; step[] is the rank's own
 * that ref_fill fills or ref_check checks (rank_step[rank]). A workload
 * gives each of its inputs a stream (an index into them) of its own, the
 * same on every rank, so any rank's inputs can be rebuilt: a check that
 * reads another rank's inputs takes them from rank_step[that rank].
 *
 * Why apart: cuco_ref_value is a cheap mix, not a one-way function, and a
 * rank recovers the seed of its own values from them (a few hundred us,
 * tests/hostile/cpu-gemm-allgather/seed-recovery.c); a seed two ranks
 * shared would tell each the other's inputs, which it then need not be
 * sent. With seeds of its own a rank learns only what it holds. */
#define CUCO_REF_STREAMS 8
#define CUCO_REF_RANKS 64
typedef struct cuco_ref_seeds {
	uint64_t run[CUCO_REF_STREAMS], step[CUCO_REF_STREAMS];
	uint64_t rank_step[CUCO_REF_RANKS][CUCO_REF_STREAMS];
} cuco_ref_seeds;

/* ---- defined by the workload -------------------------------------------------- */

/* The arrays of one rank, inputs and outputs, in the order the program
 * finds them in cuco_io. */
void ref_layout(int rank, int nranks, cuco_ref_layout *l);
/* Fill input `array` of `rank`: from s->step[] (rank's own) when the
 * layout says the array is per_step, else from s->run[]. */
void ref_fill(int rank, int nranks, int array, const cuco_ref_seeds *s, void *dst);
/* The error of rank's outputs for the step whose inputs followed s: the
 * norm-wise relative error over what was checked, INFINITY for poison or
 * NaN. `pick` is a fresh draw: which rows (or elements) to check, when
 * not all. *checked says how many values were. */
double ref_check(int rank, int nranks, const cuco_ref_seeds *s, void *const *out, uint64_t pick,
	long *checked);
/* Optional: the error allowed at this size, given the workload's
 * (--tolerance); never looser than that. Without it, the workload's. */
double ref_tolerance(double given);

/* A GPU workload's only (layout.device): at the moment the rank says a
 * step is done, copy what ref_check will read (the rows `pick` chooses)
 * out of the rank's reach, on the referee's own context, and wait for the
 * copy. The GPU runs one context at a time, so the copy waits for any
 * work the rank left running: its wait is the probe (cuco_ref_gpu_step). */
void ref_capture(int rank, int nranks, void *const *out, uint64_t pick);

/* ---- the GPU runtime's (../gpu-common/cuco_referee_gpu.cu), for device layouts ---- */

/* Make the referee's CUDA context on the GPU it sees first (the evaluator
 * starts it with the stage's slot's GPUs). Non-zero,
 * with why: no GPU to use. */
int cuco_ref_gpu_init(char *why, size_t size);
/* Device memory of `bytes`, and the IPC handle that names it. */
int cuco_ref_gpu_alloc(size_t bytes, void **dev, unsigned char handle[CUCO_CHAN_HANDLE], char *why,
	size_t size);
/* Fill with 0xff bytes (NaN for floats), on the referee's stream. */
void cuco_ref_gpu_poison(void *dev, size_t bytes);
/* Wait for everything on the referee's stream (fills, poisons). */
void cuco_ref_gpu_sync(void);
/* Launch an empty kernel on the referee's stream and wait for it: the
 * seconds it took. With the stage frozen, a wait past the bound is work the
 * stage left on the GPU (running, or waiting to run) into the gap. */
double cuco_ref_gpu_probe(void);
/* K, the sets a step (the layout's sets): `want`, at most `max`, and no
 * more than a quarter of the free device memory holds at set_bytes a set
 * (other stages share the GPU). Without a GPU, `want`'s: the context
 * fails next, and says so. */
int cuco_ref_gpu_sets(size_t want, size_t set_bytes, int max);
#ifdef __CUDACC__
/* The referee's stream, for the workload's kernels (fills, capture). */
cudaStream_t cuco_ref_gpu_stream(void);
/* Unless e is cudaSuccess: "referee: what: error" on stderr, exit 2. */
void cuco_ref_gpu_check(cudaError_t e, const char *what);
#endif

/* ---- a GPU step (given by the runtime) ---------------------------------------------- */

/* A GPU step's time, from the rank's release (t_release) to its "done"
 * (t_done) and the referee's capture just after it (t_captured): the
 * capture's wait beyond an idle capture's (idle_s) is work the rank left
 * running, and it is the step's. *left_s says how much there was; past a
 * bound, the step is refused as leaving work running. */
static inline double cuco_ref_gpu_step(double t_release, double t_done, double t_captured, double idle_s,
	double *left_s)
{
	double left = (t_captured - t_done) - idle_s;
	*left_s = left > 0 ? left : 0;
	return (t_done - t_release) + *left_s;
}

/* The bound on work left running past "done": a time slice of another
 * context is about 2 ms on an H200 (bench/results/trust.md); an idle
 * capture's jitter is tens of microseconds. */
#define CUCO_REF_LEFT_BOUND_S 500e-6
/* How many probes past that bound refuse a stage (every step's, where it
 * has fewer steps): one alone can be another process's moment on the GPU. */
#define CUCO_REF_OVER_STEPS 3
/* Idle captures (and probes) before any stage code runs: the fastest is
 * the capture's own cost. */
#define CUCO_REF_CALIBRATE 20

/* ---- given by the runtime, to every workload ---------------------------------------- */

/* A value in [-0.5, 0.5) from a seed and an index: the inputs' values,
 * cheap enough to draw megabytes of between two steps, and a pure
 * function, so a check rebuilds any element without the array. */
static inline CUCO_REF_HD float cuco_ref_value(uint64_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
	x ^= x >> 31;
	x *= 0xD6E8FEB86659FD93ull;
	x ^= x >> 29;
	return (float)(x >> 40) * (1.0f / 16777216.0f) - 0.5f;
}

/* The k-th of a stream of draws from pick. */
static inline CUCO_REF_HD uint64_t cuco_ref_draw(uint64_t pick, uint64_t k)
{
	uint64_t x = pick + (k + 1) * 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Norm-wise relative error max|got - want| / max|want|, one value at a
 * time; NaN counts as infinitely wrong. */
typedef struct cuco_ref_error { double diff, scale; long n; } cuco_ref_error;

static inline void cuco_ref_error_add(cuco_ref_error *e, double got, double want)
{
	double d = fabs(got - want);
	if (!(d <= e->diff))
		e->diff = isnan(d) ? INFINITY : d;
	if (fabs(want) > e->scale)
		e->scale = fabs(want);
	e->n++;
}

static inline double cuco_ref_error_value(const cuco_ref_error *e)
{
	return e->scale > 0 ? e->diff / e->scale : e->diff;
}

#ifdef __cplusplus
}
#endif

#endif
