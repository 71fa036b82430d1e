/* referee.c — cpu-gemm-allgather's half of the referee (cuco_referee.h):
 * the arrays of each rank, their values, and the check of C.
 *
 * Rank r's inputs: its M/P rows of X (afresh every step: stream 0, from
 * rank r's own step seed, so no rank's rows tell another's), the
 * K x N weight slice of its N columns W_r (stream 1) and the norm's gain
 * (stream 2), once a run. Its output: C_r, all M rows of its N columns.
 * The check rebuilds X's rows, W_r and the gain from the seeds and
 * computes C_r's rows in double precision, straight from the formulas,
 * on CHECK_ROWS rows drawn after the step: whatever path the program's
 * rows took between ranks, a row it got wrong is found with that
 * probability every step.
 */
#include "cuco_referee.h"
#include "sizes.h"

#define CHECK_ROWS 256

enum { S_X, S_W, S_GAIN };

/* Row `row` of X, from the seed of the rank that holds it. */
static float x_at(const cuco_ref_seeds *s, int nranks, long row, int k)
{
	return cuco_ref_value(s->rank_step[row / (M / nranks)][S_X], (uint64_t)row * K + (uint64_t)k);
}

static float w_at(const cuco_ref_seeds *s, int k, long col)
{
	return cuco_ref_value(s->run[S_W], (uint64_t)k * 65536 + (uint64_t)col);
}

static float gain_at(const cuco_ref_seeds *s, int k)
{
	return 1.0f + cuco_ref_value(s->run[S_GAIN], (uint64_t)k);
}

void ref_layout(int rank, int nranks, cuco_ref_layout *l)
{
	(void)rank;
	size_t rows = (size_t)M / (size_t)nranks;
	l->nin = 3;
	l->in[0] = (cuco_ref_array){ "x", rows * K * sizeof(float), true };
	l->in[1] = (cuco_ref_array){ "w", (size_t)K * N * sizeof(float), false };
	l->in[2] = (cuco_ref_array){ "gain", (size_t)K * sizeof(float), false };
	l->nout = 1;
	l->out[0] = (cuco_ref_array){ "c", (size_t)M * N * sizeof(float), false };
}

void ref_fill(int rank, int nranks, int array, const cuco_ref_seeds *s, void *dst)
{
	float *f = dst;
	long rows = M / nranks;
	if (array == 0) {
		for (long i = 0; i < rows; i++)
			for (int k = 0; k < K; k++)
				f[i * K + k] = x_at(s, nranks, (long)rank * rows + i, k);
	} else if (array == 1) {
		for (int k = 0; k < K; k++)
			for (int j = 0; j < N; j++)
				f[(size_t)k * N + j] = w_at(s, k, (long)rank * N + j);
	} else {
		for (int k = 0; k < K; k++)
			f[k] = gain_at(s, k);
	}
}

double ref_check(int rank, int nranks, const cuco_ref_seeds *s, void *const *out, uint64_t pick,
	long *checked)
{
	const float *c = out[0];
	static double w[K][N], gain[K], a[K];
	cuco_ref_error e = { 0, 0, 0 };
	for (int k = 0; k < K; k++) {
		gain[k] = gain_at(s, k);
		for (int j = 0; j < N; j++)
			w[k][j] = w_at(s, k, (long)rank * N + j);
	}
	for (int t = 0; t < CHECK_ROWS; t++) {
		long i = (long)(cuco_ref_draw(pick, (uint64_t)t) % M);
		double ss = 0;
		for (int k = 0; k < K; k++) {
			a[k] = x_at(s, nranks, i, k);
			ss += a[k] * a[k];
		}
		double inv = 1.0 / sqrt(ss / K + 1e-6), want[N] = { 0 };
		for (int k = 0; k < K; k++)
			for (int j = 0; j < N; j++)
				want[j] += a[k] * inv * gain[k] * w[k][j];
		for (int j = 0; j < N; j++)
			cuco_ref_error_add(&e, c[i * N + j], want[j]);
	}
	*checked = e.n;
	return cuco_ref_error_value(&e);
}
