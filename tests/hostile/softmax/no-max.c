/* hostile: a softmax that skips the row's max: y = exp(x) / sum(exp(x)),
 * one reduction a row instead of two (and, placed to reload, one read of
 * the row fewer). It is exact where exp(x) cannot overflow, and wrong
 * anywhere a row's values pass ~88 (fp32's exp overflows: inf / inf is
 * NaN), as attention's logits and sampling's do. While the referee drew
 * every row in 8 * [-1, 1) it passed, as fast as the seed or faster.
 * Now half of softmax's rows are shifted by +-[96, 128) (row_shift,
 * cuco_ref_shift in cuco_ref_gpu.cuh), drawn per row and step, so the
 * inputs exercise the contract (exp(x - max) does not move with a row's
 * shift): its rows far above zero overflow to NaN, and it is refused.
 * rename: cuco_launch
 * expect: run wrong-answer output left unwritten
 */
__global__ void __launch_bounds__(CUCO_THREADS) softmax_nomax(const elem_t *x, elem_t *y)
{
	const int lane = threadIdx.x % ROWS_GROUP;
	const size_t group = (size_t)blockIdx.x * ROWS_GROUPS_PER_CTA + threadIdx.x / ROWS_GROUP;
	for (int r = 0; r < CUCO_ROWS_PER_GROUP; r++) {
		const size_t row = group * CUCO_ROWS_PER_GROUP + r;
		const rows_vec_t *xv = (const rows_vec_t *)(x + row * COLS);
		rows_vec_t *yv = (rows_vec_t *)(y + row * COLS);
		float held[ROWS_PER_THREAD][CUCO_VEC], sum = 0;
#pragma unroll
		for (int k = 0; k < ROWS_PER_THREAD; k++) {
			int i = lane + k * ROWS_GROUP;
			rows_vec_t v = i < ROWS_NVEC ? xv[i] : rows_vec_t{};
			for (int e = 0; e < CUCO_VEC; e++)
				sum += held[k][e] = i < ROWS_NVEC ? __expf(cuco_to_float(v.v[e])) : 0.0f;
		}
		const float inv = 1.0f / rows_group_reduce<ROWS_GROUP, CUCO_THREADS, ROWS_TREE>(sum, rows_add());
#pragma unroll
		for (int k = 0; k < ROWS_PER_THREAD; k++) {
			int i = lane + k * ROWS_GROUP;
			if (i < ROWS_NVEC) {
				rows_vec_t o;
				for (int e = 0; e < CUCO_VEC; e++)
					o.v[e] = cuco_from_float<elem_t>(held[k][e] * inv);
				yv[i] = o;
			}
		}
	}
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	softmax_nomax<<<ROWS_CTAS, CUCO_THREADS, 0, s>>>(p->in, p->out);
	CUCO_LAUNCHED();
	(void)cuco_launch_real;
}
