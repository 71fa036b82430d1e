/* cuco_harness.h — the trusted harness of the CPU (Open MPI) workloads:
 * inputs, timing, verification and the verdict. Header-only: a workload
 * program is one C file that includes this and hands cuco_bench_run() a
 * step function. Nothing here is inside an EVOLVE-BLOCK; a search changes
 * only the step.
 *
 * What the evaluator, not the candidate, controls (docs/workloads.md,
 * "Trust"):
 * - Inputs. $CUCO_HARNESS carries the evaluator's seed for this run; the
 *   workload's fill() builds its inputs from cuco_input(), which follows
 *   it. The variable is read and wiped (also from /proc/self/environ)
 *   before main() and before any constructor of default priority.
 * - Verification. The step runs verified twice before timing, on inputs
 *   of two different seeds; every timed repetition is spot-checked with a
 *   probability drawn after the step has returned, so the step cannot
 *   know which one counts; and one more repetition after the timed loop
 *   runs on fresh inputs and is checked. Outputs are poisoned (prepare())
 *   before every step, and every rank checks its own output.
 * - Per-repetition data. rep_scale-style factors come from
 *   cuco_rep_scale(rep), drawn by rank 0 just before repetition rep, so no
 *   repetition's answer can be computed ahead (in a warm-up, say).
 * - Timing. A repetition's time is the host clock around the step on
 *   every rank, the slowest rank's counted: a CPU step has no device
 *   working on behind its back, so the clock around it sees all its work
 *   but what it leaves running, which the next point refuses.
 * - Leftovers. After every step, no thread and no child process the step
 *   started may still be alive: work left running past the timed region
 *   would be work nobody timed.
 * - The verdict. Rank 0 prints one line, CUCO_SEALED <tag> <json>, sealed
 *   with the run's key (cuco_seal.h); unsealed lines are not believed.
 *   Run by hand (no $CUCO_HARNESS), it prints `CUCO_RESULT <json>` with a
 *   fixed seed instead, for people and scripts/check-cpu-workloads.
 *
 * One repetition = prepare(), the inputs' scale drawn and shared (an
 * MPI_Allreduce, not timed, which is also a barrier) then step(rep)
 * (timed). The barrier stands for "the rest of the model" between two
 * layers, so a step may reuse its buffers in the next repetition without
 * more sync. A rep's latency is the slowest rank's.
 * Phases are averaged over timed reps and ranks; exposed_comm is the rep
 * time not spent in compute. rep counts up from 0 over verified, warm-up,
 * timed and post-loop steps alike.
 *
 * The harness's own MPI calls are MPI_Allreduce only, so that the
 * evaluator can tell the program's other MPI calls apart (the host-call
 * check, docs/workloads.md).
 *
 * Build needs -D_GNU_SOURCE (clock_gettime, pthreads, dlsym) and mpicc.
 */
#ifndef CUCO_HARNESS_H
#define CUCO_HARNESS_H

#include "cuco_handoff.h"
#include "cuco_trust.h"

#include <mpi.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUCO_MAX_REPS 1000

typedef enum cuco_phase_id {
	CUCO_PH_COMPUTE, CUCO_PH_COMM, CUCO_PH_SYNC, CUCO_PH_COUNT
} cuco_phase_id;

static const char *const cuco_phase_names[CUCO_PH_COUNT] = {"compute", "comm", "sync"};

typedef struct cuco_bench {
	int warmup, reps;
	int rank, nranks;
	/* The workload's step: one full iteration; rep counts from 0 over all
	 * steps (inputs may depend on it through cuco_rep_scale). */
	void (*step)(void *arg, int rep);
	/* Build this rank's inputs from cuco_input() (the harness has just set
	 * the seed); called outside timing, before each verified input set. */
	void (*fill)(void *arg);
	/* Called outside timing before each step: poison the output. */
	void (*prepare)(void *arg, int rep);
	/* This rank's max error of step rep's output against an independent
	 * reference built from the same inputs. */
	double (*verify)(void *arg, int rep);
	void *arg;
	double bytes, flops;  /* per repetition, all ranks together */
	double tolerance;
	/* filled while running */
	double phase[CUCO_PH_COUNT];
	double phase_start[CUCO_PH_COUNT];
	int timing;           /* 1 during timed reps */
} cuco_bench;

/* Wall time in seconds; MPI_Wtime is a monotonic clock in Open MPI. */
static inline double cuco_now(void) { return MPI_Wtime(); }

/* ---- inputs ---------------------------------------------------------------------- */

static uint64_t cuco_inputs_seed = CUCO_UNSEALED_SEED;
static float cuco_scales[2 * CUCO_MAX_REPS + 8];

/* A value in [-0.5, 0.5) from the current inputs' seed, a stream (one per
 * input array) and an index: any rank can rebuild any rank's input. */
static inline float cuco_input(uint64_t stream, uint64_t i)
{
	uint64_t x = cuco_mix(cuco_inputs_seed ^ cuco_mix(stream * 0x2545F4914F6CDD1Dull + i));
	return (float)(x >> 40) * (1.0f / 16777216.0f) - 0.5f;
}

/* Repetition rep's scale of the inputs, in [1, 1.75): a step that reads a
 * buffer left from another repetition is off by a random factor. */
static inline float cuco_rep_scale(int rep)
{
	return cuco_scales[rep];
}

/* rank 0's draw, the same on every rank (the harness's only collective is
 * MPI_Allreduce). */
static inline double cuco_shared_draw(const cuco_bench *b)
{
	double mine = b->rank == 0 ? cuco_draw() : -1, all;
	MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

/* ---- phases and arguments --------------------------------------------------- */

/* Phase accounting. Begin/end pairs of one phase must not nest; different
 * phases may (a flag wait inside a comm section counts in both). Only the
 * calling thread's timings count, so helper threads do not add phases. */
static inline void cuco_phase_begin(cuco_bench *b, cuco_phase_id p)
{
	b->phase_start[p] = cuco_now();
}

static inline void cuco_phase_end(cuco_bench *b, cuco_phase_id p)
{
	if (b->timing)
		b->phase[p] += cuco_now() - b->phase_start[p];
}

/* Parse "--warmup N --reps N"; unknown arguments are an error because a
 * typo would silently change what is measured. */
static inline int cuco_parse_args(cuco_bench *b, int argc, char **argv)
{
	b->warmup = 3;
	b->reps = 15;
	for (int i = 1; i < argc; i++) {
		int *dst = NULL;
		if (strcmp(argv[i], "--warmup") == 0)
			dst = &b->warmup;
		else if (strcmp(argv[i], "--reps") == 0)
			dst = &b->reps;
		if (!dst || i + 1 >= argc) {
			fprintf(stderr, "usage: %s [--warmup N] [--reps N] (bad argument '%s')\n",
				argv[0], argv[i]);
			return -1;
		}
		char *end;
		long v = strtol(argv[++i], &end, 10);
		if (*end || v < 0 || v > CUCO_MAX_REPS) {
			fprintf(stderr, "%s: %s must be 0..%d, not '%s'\n",
				argv[0], argv[i - 1], CUCO_MAX_REPS, argv[i]);
			return -1;
		}
		*dst = (int)v;
	}
	if (b->reps < 1)
		b->reps = 1;
	return 0;
}

static int cuco_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Value at quantile q of sorted v[0..n) (nearest rank). */
static inline double cuco_quantile(const double *v, int n, double q)
{
	int i = (int)ceil(q * n) - 1;
	return v[i < 0 ? 0 : (i >= n ? n - 1 : i)];
}

/* Norm-wise relative error max|got - want| / max|want|, accumulated one
 * value at a time, so sums of many terms near zero do not blow it up. */
typedef struct cuco_error { double diff, scale; } cuco_error;

static inline void cuco_error_add(cuco_error *e, double got, double want)
{
	double d = fabs(got - want);
	if (!(d <= e->diff))   /* NaN counts as infinitely wrong */
		e->diff = isnan(d) ? INFINITY : d;
	if (fabs(want) > e->scale)
		e->scale = fabs(want);
}

static inline double cuco_error_value(const cuco_error *e)
{
	return e->scale > 0 ? e->diff / e->scale : e->diff;
}

/* ---- the run ---------------------------------------------------------------------- */

typedef struct cuco_run {
	cuco_watch w;
	double row[CUCO_ROW];      /* this rank's findings (cuco_trust.h) */
	int checks;                /* verified steps: both runs, spot checks, post-loop */
	double lat[CUCO_MAX_REPS];
	double exposed;
	char calls[256];           /* host calls by name, "name=N ...", all ranks */
} cuco_run;

/* One step: poison, the scale of repetition rep (its MPI_Allreduce is
 * the barrier before the step: no rank leaves it before every rank is
 * there), the timed call (counted by the interposer), then what it left
 * running. Returns this rank's time in the step. */
static inline double cuco_one_step(cuco_bench *b, cuco_run *r, int rep, int timed)
{
	if (b->prepare)
		b->prepare(b->arg, rep);
	b->timing = timed;
	cuco_scales[rep] = (float)(1.0 + 0.75 * cuco_shared_draw(b));
	double compute0 = b->phase[CUCO_PH_COMPUTE];
	cuco_watch_window(&r->w, 1);
	double t0 = cuco_now();
	b->step(b->arg, rep);
	double t = cuco_now() - t0;
	cuco_watch_window(&r->w, 0);
	if (timed)
		r->exposed += t - (b->phase[CUCO_PH_COMPUTE] - compute0);
	b->timing = 0;
	long thread, child;
	cuco_watch_step(&r->w, &thread, &child);
	if (thread)
		cuco_row_first(r->row, CUCO_THREAD_REP, rep);
	if (child)
		cuco_row_first(r->row, CUCO_CHILD_REP, rep);
	return t;
}

/* Check step rep's output into row[slot] (the worst so far). */
static inline double cuco_check(cuco_bench *b, cuco_run *r, int rep, int slot)
{
	r->checks++;
	return cuco_row_error(r->row, slot, b->verify(b->arg, rep));
}

/* A verified step on fresh inputs of seed. */
static inline void cuco_verified(cuco_bench *b, cuco_run *r, uint64_t seed, int rep, int slot)
{
	cuco_inputs_seed = seed;
	if (b->fill)
		b->fill(b->arg);
	cuco_one_step(b, r, rep, 0);
	cuco_check(b, r, rep, slot);
}

/* Rank 0's verdict from every rank's rows. */
static inline void cuco_report(const cuco_bench *b, cuco_run *r, const double *rows,
	const double *phase, double exposed, long host_calls)
{
	char why[320], suspect[400], json[6144];
	cuco_judge(rows, b->nranks, b->tolerance, cuco_ticket_seed(), why, sizeof why, suspect,
		sizeof suspect);
	double worst = cuco_rows_error(rows, b->nranks);
	int correct = !*why && !*suspect && worst <= b->tolerance;
	double *lat = r->lat;
	qsort(lat, (size_t)b->reps, sizeof lat[0], cuco_cmp_double);
	int n = snprintf(json, sizeof json, "{\"correct\": %s, \"max_error\": %.6g, "
		"\"latency_us\": {\"min\": %.3f, \"median\": %.3f, \"p90\": %.3f, \"max\": %.3f, "
		"\"samples\": %d}, \"phases_us\": {",
		correct ? "true" : "false", isfinite(worst) ? worst : 1e300,
		lat[0] * 1e6, cuco_quantile(lat, b->reps, 0.5) * 1e6,
		cuco_quantile(lat, b->reps, 0.9) * 1e6, lat[b->reps - 1] * 1e6, b->reps);
	for (int p = 0; p < CUCO_PH_COUNT; p++)
		n += snprintf(json + n, sizeof json - (size_t)n, "\"%s\": %.3f, ", cuco_phase_names[p],
			phase[p] * 1e6);
	n += snprintf(json + n, sizeof json - (size_t)n, "\"exposed_comm\": %.3f}, \"bytes\": %.0f, "
		"\"flops\": %.0f", exposed * 1e6, b->bytes, b->flops);
	cuco_verdict_tail(json, sizeof json, n, b->nranks, r->checks, host_calls, r->calls, why, suspect);
	cuco_emit(json);
	if (*why || *suspect)
		fprintf(stderr, "harness: %s\n", *why ? why : suspect);
}

/* Host calls the interposer counted in all steps, summed over the ranks
 * (-1: not counted), and "name=N ..." of those made. */
static inline long cuco_host_calls(const cuco_watch *w, char *by, size_t size)
{
	const char *const *names;
	int n = w->count_window ? w->count_names(&names) : 0;
	if (n <= 0)
		return -1;
	long *mine = calloc((size_t)n, sizeof *mine), *all = calloc((size_t)n, sizeof *all), total = 0;
	if (!mine || !all) {
		fprintf(stderr, "harness: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int i = 0; i < n; i++)
		mine[i] = w->count_of(i);
	MPI_Allreduce(mine, all, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	size_t used = 0;
	by[0] = '\0';
	for (int i = 0; i < n; i++) {
		total += all[i];
		if (all[i] && used < size) {
			int k = snprintf(by + used, size - used, "%s%s=%ld", used ? " " : "", names[i], all[i]);
			used += k > 0 ? (size_t)k : 0;
		}
	}
	free(mine);
	free(all);
	return total;
}

/* Run both verified steps, the warm-ups and timed reps (each spot-checked
 * at random), the post-loop step on fresh inputs, and print the verdict
 * on rank 0. Returns 0 when every check passed on every rank. */
static inline int cuco_bench_run(cuco_bench *b)
{
	static cuco_run r;
	uint64_t seed = cuco_ticket_seed();
	memset(&r, 0, sizeof r);
	cuco_row_init(r.row);
	memset(b->phase, 0, sizeof b->phase);
	cuco_watch_start(&r.w);

	int rep = 0;
	cuco_verified(b, &r, cuco_mix(seed ^ 1), rep++, CUCO_V1);
	cuco_verified(b, &r, cuco_mix(seed ^ 2), rep++, CUCO_V2);
	double p = CUCO_SPOT_CHECKS / b->reps;
	for (int i = 0; i < b->warmup + b->reps; i++, rep++) {
		int timed = i >= b->warmup;
		double mine[2] = { cuco_one_step(b, &r, rep, timed), b->rank == 0 ? cuco_draw() : -1 }, all[2];
		/* The slowest rank's time, and whether to check: drawn only now. */
		MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (!timed)
			continue;
		r.lat[i - b->warmup] = all[0];
		if (all[1] < p && cuco_check(b, &r, rep, CUCO_SPOT) > b->tolerance)
			cuco_row_first(r.row, CUCO_SPOT_REP, rep);
	}
	cuco_verified(b, &r, cuco_mix(seed ^ (uint64_t)(cuco_shared_draw(b) * 9007199254740992.0)),
		rep, CUCO_POST);

	double *mine = malloc(sizeof(double) * CUCO_ROW * (size_t)b->nranks),
		*rows = malloc(sizeof(double) * CUCO_ROW * (size_t)b->nranks);
	if (!mine || !rows) {
		fprintf(stderr, "harness: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int i = 0; i < CUCO_ROW * b->nranks; i++)
		mine[i] = -1;
	memcpy(mine + CUCO_ROW * b->rank, r.row, sizeof r.row);
	MPI_Allreduce(mine, rows, CUCO_ROW * b->nranks, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	double ph[CUCO_PH_COUNT + 1], sum[CUCO_PH_COUNT + 1];
	memcpy(ph, b->phase, sizeof b->phase);
	ph[CUCO_PH_COUNT] = r.exposed;
	MPI_Allreduce(ph, sum, CUCO_PH_COUNT + 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	double per = 1.0 / ((double)b->reps * b->nranks);
	for (int i = 0; i <= CUCO_PH_COUNT; i++)
		sum[i] *= per;
	long calls = cuco_host_calls(&r.w, r.calls, sizeof r.calls);
	int ok = cuco_rows_error(rows, b->nranks) <= b->tolerance;
	if (b->rank == 0)
		cuco_report(b, &r, rows, sum, sum[CUCO_PH_COUNT], calls);
	free(mine);
	free(rows);
	return ok ? 0 : 1;
}

#endif
