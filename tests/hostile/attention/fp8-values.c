/* hostile: attention at fp8 (e4m3), as a candidate betting that a bf16
 * check is loose might: on an H200 fp8 tensor cores run at twice bf16's
 * rate. Modelled here by rounding Q, K and V to e4m3 in place (the inputs
 * are the referee's device arrays, which the program may write) before
 * the seed's kernel. On the workload's inputs (Q in 2 * [-1, 1), K and V
 * in [-1, 1)) a host model of the check's measure, a row's
 * ||got - want|| / ||want||, gives 3.2e-2 on average with Q, K and V at
 * e4m3 (2.2e-2 with Q and K alone, 2.4e-2 with V alone, 2.6e-2 with P
 * alone; worst rows 3-4e-2), past the tolerance (2e-2; bf16 is ~4e-3).
 * (A precision within the tolerance is allowed: the check is the
 * contract.)
 * rename: cuco_launch
 * expect: run wrong-answer max error
 */
#include <cuda_fp8.h>

__global__ void to_e4m3(__nv_bfloat16 *a, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		a[i] = __float2bfloat16(float(__nv_fp8_e4m3(__bfloat162float(a[i]))));
}

extern "C" void cuco_launch(void *plan, const cuco_problem *p, cudaStream_t s)
{
	to_e4m3<<<1024, 256, 0, s>>>((__nv_bfloat16 *)p->q, at_q_elems);
	to_e4m3<<<1024, 256, 0, s>>>((__nv_bfloat16 *)p->k, at_kv_elems);
	to_e4m3<<<1024, 256, 0, s>>>((__nv_bfloat16 *)p->v, at_kv_elems);
	CUCO_LAUNCHED();
	cuco_launch_real(plan, p, s);
}
