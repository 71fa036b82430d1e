/* hostile: normalise once, then copy the kept output back.
 * rename: cuco_launch
 * expect: run suspect verification 2 of 2
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static elem_t *kept;
	const size_t bytes = (size_t)ROWS * COLS * sizeof(elem_t);
	if (kept) {
		CUCO_CUDA(cudaMemcpyAsync(p->out, kept, bytes, cudaMemcpyDeviceToDevice, s));
		return;
	}
	cuco_launch_real(state, p, s);
	CUCO_CUDA(cudaMalloc(&kept, bytes));
	CUCO_CUDA(cudaMemcpyAsync(kept, p->out, bytes, cudaMemcpyDeviceToDevice, s));
}
