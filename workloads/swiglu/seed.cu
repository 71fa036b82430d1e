// swiglu seed: the tunable kernel. A group of threads (a CTA or a warp)
// owns rows in turn and streams them with vector loads of VEC elements.
//
// Directive (defines from the manifest):
//   issuer      CUCO_ISSUER_CTA | _WARP: who owns a row
//   placement   direct (no reuse: each element is read once)
//   sync        none (no reduction)
//   granularity CUCO_ROWS_PER_GROUP: rows each group handles in turn
//   knobs       CUCO_THREADS (per CTA), CUCO_VEC_BYTES (bytes per load)
//
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_launch once per step (../gpu-common/cuco_gpu_step.h).
#include "swiglu.cuh"

// EVOLVE-BLOCK-START
__global__ void __launch_bounds__(CUCO_THREADS) swiglu(const elem_t *x, elem_t *y)
{
	const int lane = threadIdx.x % ROWS_GROUP;
	const size_t group = (size_t)blockIdx.x * ROWS_GROUPS_PER_CTA + threadIdx.x / ROWS_GROUP;
	for (int r = 0; r < CUCO_ROWS_PER_GROUP; r++) {
		const size_t row = group * CUCO_ROWS_PER_GROUP + r;
		const rows_vec_t *gate = (const rows_vec_t *)(x + row * 2 * COLS), *up = gate + ROWS_NVEC;
		rows_vec_t *out = (rows_vec_t *)(y + row * COLS);
		for (int i = lane; i < ROWS_NVEC; i += ROWS_GROUP) {
			rows_vec_t g = gate[i], u = up[i], o;
			for (int e = 0; e < CUCO_VEC; e++)
				o.v[e] = cuco_from_float<elem_t>(swiglu_one(cuco_to_float(g.v[e]), cuco_to_float(u.v[e])));
			out[i] = o;
		}
	}
}

extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	swiglu<<<ROWS_CTAS, CUCO_THREADS, 0, s>>>(p->in, p->out);
}
// EVOLVE-BLOCK-END
