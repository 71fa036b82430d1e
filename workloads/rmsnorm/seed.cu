// rmsnorm seed: the tunable kernel. A group of threads (a CTA or a warp)
// owns a row; vector loads of VEC elements; the row stays in registers
// between the sum of squares and the scaling (or is read again); the sum is
// reduced with warp shuffles (then across warps through shared memory) or
// with a shared-memory tree.
//
// Directive (defines from the manifest):
//   issuer      CUCO_ISSUER_CTA | _WARP: who owns a row
//   placement   CUCO_PLACEMENT_REGISTERS | _RELOAD: where the row waits
//               between the two passes
//   sync        CUCO_SYNC_SHUFFLE | _SMEM: how the group reduces
//   granularity CUCO_ROWS_PER_GROUP: rows each group handles in turn
//   knobs       CUCO_THREADS (per CTA), CUCO_VEC_BYTES (bytes per load)
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_launch once per step (../gpu-common/cuco_gpu_step.h).
#include "rmsnorm.cuh"

// EVOLVE-BLOCK-START
__device__ static float group_sum(float v)
{
	return rows_group_reduce<ROWS_GROUP, CUCO_THREADS, ROWS_TREE>(v, rows_add());
}

__global__ void __launch_bounds__(CUCO_THREADS) rmsnorm(const elem_t *x, const elem_t *w, elem_t *y)
{
	const int lane = threadIdx.x % ROWS_GROUP;
	const size_t group = (size_t)blockIdx.x * ROWS_GROUPS_PER_CTA + threadIdx.x / ROWS_GROUP;
	const rows_vec_t *wv = (const rows_vec_t *)w;
	for (int r = 0; r < CUCO_ROWS_PER_GROUP; r++) {
		const size_t row = group * CUCO_ROWS_PER_GROUP + r;
		const rows_vec_t *xv = (const rows_vec_t *)(x + row * COLS);
		rows_vec_t *yv = (rows_vec_t *)(y + row * COLS);
		float ss = 0;
#if defined(CUCO_PLACEMENT_RELOAD)
		for (int i = lane; i < ROWS_NVEC; i += ROWS_GROUP) {
			rows_vec_t v = xv[i];
			for (int e = 0; e < CUCO_VEC; e++)
				ss += cuco_to_float(v.v[e]) * cuco_to_float(v.v[e]);
		}
		const float inv = rsqrtf(group_sum(ss) / COLS + rms_eps);
		for (int i = lane; i < ROWS_NVEC; i += ROWS_GROUP) {
			rows_vec_t v = xv[i], g = wv[i], o;
			for (int e = 0; e < CUCO_VEC; e++)
				o.v[e] = cuco_from_float<elem_t>(cuco_to_float(v.v[e]) * inv * cuco_to_float(g.v[e]));
			yv[i] = o;
		}
#else
		rows_vec_t held[ROWS_PER_THREAD];
#pragma unroll
		for (int k = 0; k < ROWS_PER_THREAD; k++) {
			int i = lane + k * ROWS_GROUP;
			if (i < ROWS_NVEC) {
				held[k] = xv[i];
				for (int e = 0; e < CUCO_VEC; e++)
					ss += cuco_to_float(held[k].v[e]) * cuco_to_float(held[k].v[e]);
			}
		}
		const float inv = rsqrtf(group_sum(ss) / COLS + rms_eps);
#pragma unroll
		for (int k = 0; k < ROWS_PER_THREAD; k++) {
			int i = lane + k * ROWS_GROUP;
			if (i < ROWS_NVEC) {
				rows_vec_t g = wv[i], o;
				for (int e = 0; e < CUCO_VEC; e++)
					o.v[e] = cuco_from_float<elem_t>(cuco_to_float(held[k].v[e]) * inv * cuco_to_float(g.v[e]));
				yv[i] = o;
			}
		}
#endif
	}
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	rmsnorm<<<ROWS_CTAS, CUCO_THREADS, 0, s>>>(p->in, p->w, p->out);
}
// EVOLVE-BLOCK-END
