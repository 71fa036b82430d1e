// softmax seed: the tunable kernel. A group of threads (a CTA or a warp)
// owns a row; vector loads of VEC elements; the row stays in registers
// across the max, the sum and the write (or is read again for each); the
// group reduces with warp shuffles or a shared-memory tree.
//
// Directive (defines from the manifest):
//   issuer      CUCO_ISSUER_CTA | _WARP: who owns a row
//   placement   CUCO_PLACEMENT_REGISTERS | _RELOAD: where the row waits
//               between passes
//   sync        CUCO_SYNC_SHUFFLE | _SMEM: how the group reduces
//   granularity CUCO_ROWS_PER_GROUP: rows each group handles in turn
//   knobs       CUCO_THREADS (per CTA), CUCO_VEC_BYTES (bytes per load)
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_launch once per step (../gpu-common/cuco_gpu_step.h).
#include "softmax.cuh"

// EVOLVE-BLOCK-START
__global__ void __launch_bounds__(CUCO_THREADS) softmax(const elem_t *x, elem_t *y)
{
	const int lane = threadIdx.x % ROWS_GROUP;
	const size_t group = (size_t)blockIdx.x * ROWS_GROUPS_PER_CTA + threadIdx.x / ROWS_GROUP;
	for (int r = 0; r < CUCO_ROWS_PER_GROUP; r++) {
		const size_t row = group * CUCO_ROWS_PER_GROUP + r;
		const rows_vec_t *xv = (const rows_vec_t *)(x + row * COLS);
		rows_vec_t *yv = (rows_vec_t *)(y + row * COLS);
		float mx = -INFINITY, sum = 0;
#if defined(CUCO_PLACEMENT_RELOAD)
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
			for (int e = 0; e < CUCO_VEC; e++)
				o.v[e] = cuco_from_float<elem_t>(__expf(cuco_to_float(v.v[e]) - mx) * inv);
			yv[i] = o;
		}
#else
		float held[ROWS_PER_THREAD][CUCO_VEC];
#pragma unroll
		for (int k = 0; k < ROWS_PER_THREAD; k++) {
			int i = lane + k * ROWS_GROUP;
			rows_vec_t v = i < ROWS_NVEC ? xv[i] : rows_vec_t{};
			for (int e = 0; e < CUCO_VEC; e++) {
				held[k][e] = i < ROWS_NVEC ? cuco_to_float(v.v[e]) : -INFINITY;
				mx = fmaxf(mx, held[k][e]);
			}
		}
		mx = rows_group_reduce<ROWS_GROUP, CUCO_THREADS, ROWS_TREE>(mx, rows_max());
#pragma unroll
		for (int k = 0; k < ROWS_PER_THREAD; k++)
			for (int e = 0; e < CUCO_VEC; e++)
				sum += held[k][e] = __expf(held[k][e] - mx);
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
#endif
	}
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	softmax<<<ROWS_CTAS, CUCO_THREADS, 0, s>>>(p->in, p->out);
}
// EVOLVE-BLOCK-END
