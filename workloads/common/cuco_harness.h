/* cuco_harness.h — timing, verification and the result line for the CPU
 * (Open MPI) workloads. Header-only: a workload program is one C file that
 * includes this and hands cuco_bench() a step function.
 *
 * Protocol (docs/workloads.md, "native"): rank 0 prints exactly one line
 *   CUCO_RESULT {"correct":…, "max_error":…, "latency_us":{…}, "phases_us":{…},
 *                "bytes":…, "flops":…}
 * Everything else a program prints is a log.
 *
 * One repetition = MPI_Barrier (not timed) then step(rep) (timed). The
 * barrier stands for "the rest of the model" between two layers, so a step
 * may reuse its buffers in the next repetition without more sync. A rep's
 * latency is the slowest rank's. Phases are averaged over timed reps and
 * ranks; exposed_comm is the rep time not spent in compute.
 *
 * Build needs -D_GNU_SOURCE (clock_gettime, pthreads) and mpicc.
 */
#ifndef CUCO_HARNESS_H
#define CUCO_HARNESS_H

#include <mpi.h>
#include <math.h>
#include <pthread.h>
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
	/* The workload's step: one full iteration, rep counts from 0 over
	 * warm-ups and timed reps alike (inputs may depend on it). */
	void (*step)(void *arg, int rep);
	/* Called outside timing before each step (e.g. poison the output). */
	void (*prepare)(void *arg, int rep);
	/* Called once after the last step; returns this rank's max error
	 * against the independent reference. */
	double (*verify)(void *arg, int last_rep);
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

static inline void cuco_print_result(const cuco_bench *b, int correct, double err,
	const double *lat, double exposed)
{
	double phase[CUCO_PH_COUNT];
	for (int p = 0; p < CUCO_PH_COUNT; p++)
		phase[p] = b->phase[p];
	printf("CUCO_RESULT {\"correct\": %s, \"max_error\": %.6g, "
		"\"latency_us\": {\"min\": %.3f, \"median\": %.3f, \"p90\": %.3f, "
		"\"max\": %.3f, \"samples\": %d}, \"phases_us\": {",
		correct ? "true" : "false", isfinite(err) ? err : 1e300,
		lat[0] * 1e6, cuco_quantile(lat, b->reps, 0.5) * 1e6,
		cuco_quantile(lat, b->reps, 0.9) * 1e6, lat[b->reps - 1] * 1e6, b->reps);
	for (int p = 0; p < CUCO_PH_COUNT; p++)
		printf("\"%s\": %.3f, ", cuco_phase_names[p], phase[p] * 1e6);
	printf("\"exposed_comm\": %.3f}, \"bytes\": %.0f, \"flops\": %.0f}\n",
		exposed * 1e6, b->bytes, b->flops);
	fflush(stdout);
}

/* Run warm-ups and timed reps, verify, and print the result line on rank 0.
 * Returns 0 when the answer was correct on every rank. */
static inline int cuco_bench_run(cuco_bench *b)
{
	static double lat[CUCO_MAX_REPS];
	double exposed = 0;
	int total = b->warmup + b->reps;

	memset(b->phase, 0, sizeof b->phase);
	for (int rep = 0; rep < total; rep++) {
		if (b->prepare)
			b->prepare(b->arg, rep);
		b->timing = rep >= b->warmup;
		MPI_Barrier(MPI_COMM_WORLD);
		double compute0 = b->phase[CUCO_PH_COMPUTE];
		double t0 = cuco_now();
		b->step(b->arg, rep);
		double t = cuco_now() - t0, slowest;
		if (b->timing)
			exposed += t - (b->phase[CUCO_PH_COMPUTE] - compute0);
		MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (b->timing)
			lat[rep - b->warmup] = slowest;
	}
	b->timing = 0;
	double err = b->verify(b->arg, total - 1), worst;
	if (isnan(err))
		err = INFINITY;
	MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

	double mine[CUCO_PH_COUNT + 1], sum[CUCO_PH_COUNT + 1];
	memcpy(mine, b->phase, sizeof b->phase);
	mine[CUCO_PH_COUNT] = exposed;
	MPI_Reduce(mine, sum, CUCO_PH_COUNT + 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	int correct = worst <= b->tolerance;
	if (b->rank == 0) {
		double per = 1.0 / ((double)b->reps * b->nranks);
		for (int p = 0; p < CUCO_PH_COUNT; p++)
			b->phase[p] = sum[p] * per;
		qsort(lat, (size_t)b->reps, sizeof lat[0], cuco_cmp_double);
		cuco_print_result(b, correct, worst, lat, sum[CUCO_PH_COUNT] * per);
		if (!correct)
			fprintf(stderr, "verification failed: max error %.3g > tolerance %.3g\n",
				worst, b->tolerance);
	}
	return correct ? 0 : 1;
}

/* Hand-over of numbered items (chunks), in order, from the compute thread
 * to one helper thread that runs work(arg, item) on each: the "several
 * issuers" designs. Start it per step; give() never blocks. */
typedef struct cuco_handoff {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int count, given, done;
	void (*work)(void *arg, int item);
	void *arg;
} cuco_handoff;

static inline void *cuco_handoff_main(void *arg)
{
	cuco_handoff *h = arg;
	for (int item = 0; item < h->count; item++) {
		pthread_mutex_lock(&h->mu);
		while (h->given <= item)
			pthread_cond_wait(&h->cv, &h->mu);
		pthread_mutex_unlock(&h->mu);
		h->work(h->arg, item);
		pthread_mutex_lock(&h->mu);
		h->done = item + 1;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
	}
	return NULL;
}

static inline void cuco_handoff_start(cuco_handoff *h, int count,
	void (*work)(void *arg, int item), void *arg)
{
	h->count = count;
	h->given = h->done = 0;
	h->work = work;
	h->arg = arg;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	pthread_create(&h->thread, NULL, cuco_handoff_main, h);
}

/* Items [0, item] may be worked on. */
static inline void cuco_handoff_give(cuco_handoff *h, int item)
{
	pthread_mutex_lock(&h->mu);
	h->given = item + 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* Block until items [0, upto) are done. */
static inline void cuco_handoff_wait(cuco_handoff *h, int upto)
{
	pthread_mutex_lock(&h->mu);
	while (h->done < upto)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

/* Give everything, wait for the helper to finish and release it. */
static inline void cuco_handoff_join(cuco_handoff *h)
{
	cuco_handoff_give(h, h->count - 1);
	pthread_join(h->thread, NULL);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
}

#endif
