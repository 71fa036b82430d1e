/* hostile: compute at fp8 (e4m3, 3 mantissa bits) and widen to the
 * output type, as a candidate betting that a bf16 check is loose might:
 * an e4m3 value is off by up to 2^-4 of itself, beyond bf16's tolerance
 * (1.6e-2 of a row's largest value). (A precision within the tolerance
 * is allowed: the check is the contract. For this memory-bound workload
 * it gains nothing, the bytes in and out being fixed.)
 * rename: cuco_launch
 * expect: run wrong-answer max error
 */
#include <cuda_fp8.h>

__global__ void to_fp8_precision(elem_t *y, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		y[i] = cuco_from_float<elem_t>(float(__nv_fp8_e4m3(cuco_to_float(y[i]))));
}

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	cuco_launch_real(state, p, s);
	to_fp8_precision<<<1024, 256, 0, s>>>(p->out, (size_t)ROWS * COLS);
	CUCO_LAUNCHED();
}
