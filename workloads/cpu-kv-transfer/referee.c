/* referee.c — cpu-kv-transfer's half of the referee (cuco_referee.h): the
 * arrays of each rank, their values, and the check of the decode step.
 *
 * Rank 0 (prefill): the request's hidden states, NB x BT tokens x DM
 * (afresh every step: stream 0), and the K and V projections, DM x HD each
 * (once a run: streams 1 and 2), in one array. Rank 1 (decode): the query,
 * HD (once a run: stream 3); its output is the attention's, H x D. The
 * check rebuilds one head's K and V for every token from the seeds, in
 * double precision, runs its softmax and compares the head's D outputs;
 * the head is drawn after the step, so a wrong head is found a quarter of
 * the time every step, and a wrong block (it feeds every head) always.
 */
#include "cuco_referee.h"
#include "sizes.h"

enum { S_HIDDEN, S_WK, S_WV, S_QUERY };

/* Rank 0's hidden states (the decode rank's check rebuilds them). */
static float hidden_at(const cuco_ref_seeds *s, long tok, int i)
{
	return cuco_ref_value(s->rank_step[0][S_HIDDEN], (uint64_t)tok * DM + (uint64_t)i);
}

static float wk_at(const cuco_ref_seeds *s, int i, int j)
{
	return cuco_ref_value(s->run[S_WK], (uint64_t)i * HD + (uint64_t)j);
}

static float wv_at(const cuco_ref_seeds *s, int i, int j)
{
	return cuco_ref_value(s->run[S_WV], (uint64_t)i * HD + (uint64_t)j);
}

static float query_at(const cuco_ref_seeds *s, int j)
{
	return cuco_ref_value(s->run[S_QUERY], (uint64_t)j);
}

void ref_layout(int rank, int nranks, cuco_ref_layout *l)
{
	(void)nranks;
	if (rank == 0) {
		l->nin = 2;
		l->in[0] = (cuco_ref_array){ "hidden", (size_t)NB * BT * DM * sizeof(float), true };
		l->in[1] = (cuco_ref_array){ "w", (size_t)2 * DM * HD * sizeof(float), false };
	} else {
		l->nin = 1;
		l->in[0] = (cuco_ref_array){ "query", (size_t)HD * sizeof(float), false };
		l->nout = rank == 1;
		l->out[0] = (cuco_ref_array){ "out", (size_t)HD * sizeof(float), false };
	}
}

void ref_fill(int rank, int nranks, int array, const cuco_ref_seeds *s, void *dst)
{
	(void)nranks;
	float *f = dst;
	if (rank != 0) {
		for (int j = 0; j < HD; j++)
			f[j] = query_at(s, j);
	} else if (array == 0) {
		for (long tok = 0; tok < (long)NB * BT; tok++)
			for (int i = 0; i < DM; i++)
				f[tok * DM + i] = hidden_at(s, tok, i);
	} else {
		for (int i = 0; i < DM; i++)
			for (int j = 0; j < HD; j++) {
				f[i * HD + j] = wk_at(s, i, j);
				f[(size_t)DM * HD + (size_t)i * HD + j] = wv_at(s, i, j);
			}
	}
}

double ref_check(int rank, int nranks, const cuco_ref_seeds *s, void *const *out, uint64_t pick,
	long *checked)
{
	(void)nranks;
	*checked = 0;
	if (rank != 1)
		return 0;
	const float *got = out[0];
	int h = (int)(cuco_ref_draw(pick, 0) % H);
	static double wk[DM][D], wv[DM][D];
	double q[D], m = -INFINITY, l = 0, acc[D] = { 0 };
	for (int i = 0; i < DM; i++)
		for (int d = 0; d < D; d++) {
			wk[i][d] = wk_at(s, i, h * D + d);
			wv[i][d] = wv_at(s, i, h * D + d);
		}
	for (int d = 0; d < D; d++)
		q[d] = query_at(s, h * D + d);
	for (long tok = 0; tok < (long)NB * BT; tok++) {
		double x[DM], k[D], v[D], dot = 0;
		for (int i = 0; i < DM; i++)
			x[i] = hidden_at(s, tok, i);
		for (int d = 0; d < D; d++) {
			k[d] = v[d] = 0;
			for (int i = 0; i < DM; i++) {
				k[d] += x[i] * wk[i][d];
				v[d] += x[i] * wv[i][d];
			}
			dot += q[d] * k[d];
		}
		dot /= sqrt((double)D);
		if (dot > m) {
			double f = exp(m - dot);
			l *= f;
			for (int d = 0; d < D; d++)
				acc[d] *= f;
			m = dot;
		}
		double p = exp(dot - m);
		l += p;
		for (int d = 0; d < D; d++)
			acc[d] += p * v[d];
	}
	cuco_ref_error e = { 0, 0, 0 };
	for (int d = 0; d < D; d++)
		cuco_ref_error_add(&e, got[h * D + d], acc[d] / l);
	*checked = e.n;
	return cuco_ref_error_value(&e);
}
