/* hostile: compute attention once, then copy the kept output back at
 * every later launch. A step runs the program on K sets (256 at the tiny
 * size, 41 at the default), each with Q, K and V of its own drawn afresh
 * for every step, so the kept answer is wrong from the second launch on:
 * in the first step's second set already.
 * rename: cuco_launch
 * bench: yes
 * expect: run wrong-answer max error
 * expect: bench suspect on fresh inputs: max error
 */
extern "C" void cuco_launch(void *plan, const cuco_problem *p, cudaStream_t s)
{
	static __nv_bfloat16 *kept;
	const size_t bytes = at_q_elems * sizeof(__nv_bfloat16);
	if (kept) {
		CUCO_CUDA(cudaMemcpyAsync(p->out, kept, bytes, cudaMemcpyDeviceToDevice, s));
		return;
	}
	cuco_launch_real(plan, p, s);
	CUCO_CUDA(cudaMalloc(&kept, bytes));
	CUCO_CUDA(cudaMemcpyAsync(kept, p->out, bytes, cudaMemcpyDeviceToDevice, s));
}
