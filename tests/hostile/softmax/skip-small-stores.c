/* hostile: skip the stores a check's tolerance would forgive. The check
 * allows a row's outputs an error of 1.6e-2 of the row's largest (bf16),
 * and a softmax of inputs in 8 * [-1, 1) is mostly small: about 70 % of a
 * row's outputs are under 1e-2 of its largest (x under the row's max less
 * 4.6), so a vector of them all is near enough to zero. Not writing such a
 * vector saves its bytes (a 16-byte vector of eight; a whole 32-byte
 * sector skipped is what a DRAM write saves) — a speed cheat where the
 * outputs held zeros, or poison within the tolerance, before the step.
 * The referee poisons every output with NaN (0xff bytes) before every
 * step, so a vector left alone is NaN, and the step is refused. (Writing
 * zeros there instead passes, and saves no bytes: the tolerance is the
 * contract, the bytes moved are fixed.)
 * rename: cuco_launch
 * expect: run wrong-answer output left unwritten
 */
__global__ void __launch_bounds__(CUCO_THREADS) softmax_skip(const elem_t *x, elem_t *y)
{
	const int lane = threadIdx.x % ROWS_GROUP;
	const size_t group = (size_t)blockIdx.x * ROWS_GROUPS_PER_CTA + threadIdx.x / ROWS_GROUP;
	for (int r = 0; r < CUCO_ROWS_PER_GROUP; r++) {
		const size_t row = group * CUCO_ROWS_PER_GROUP + r;
		const rows_vec_t *xv = (const rows_vec_t *)(x + row * COLS);
		rows_vec_t *yv = (rows_vec_t *)(y + row * COLS);
		float mx = -INFINITY, sum = 0;
		for (int i = lane; i < ROWS_NVEC; i += ROWS_GROUP) {
			rows_vec_t v = xv[i];
			for (int e = 0; e < CUCO_VEC; e++)
				mx = fmaxf(mx, cuco_to_float(v.v[e]));
		}
		mx = rows_group_reduce<ROWS_GROUP, CUCO_THREADS, ROWS_TREE>(mx, rows_max());
		for (int i = lane; i < ROWS_NVEC; i += ROWS_GROUP) {
			rows_vec_t v = xv[i];
			for (int e = 0; e < CUCO_VEC; e++)
				sum += __expf(cuco_to_float(v.v[e]) - mx);
		}
		const float inv = 1.0f / rows_group_reduce<ROWS_GROUP, CUCO_THREADS, ROWS_TREE>(sum, rows_add());
		for (int i = lane; i < ROWS_NVEC; i += ROWS_GROUP) {
			rows_vec_t v = xv[i], o;
			bool small = true;
			for (int e = 0; e < CUCO_VEC; e++) {
				const float out = __expf(cuco_to_float(v.v[e]) - mx) * inv;
				small &= out < 1e-2f * inv;  /* the row's largest output is inv */
				o.v[e] = cuco_from_float<elem_t>(out);
			}
			if (!small)
				yv[i] = o;
		}
	}
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	softmax_skip<<<ROWS_CTAS, CUCO_THREADS, 0, s>>>(p->in, p->out);
	CUCO_LAUNCHED();
	(void)cuco_launch_real;
}
