/* hostile: normalise once, then copy the kept output back. A step runs
 * the program on several sets, each with inputs of its own, and the
 * referee draws every step's inputs afresh, so the kept answer is wrong
 * from the second launch on: in the first step's other sets (or, with one
 * set, from the second step on).
 * rename: cuco_launch
 * bench: yes
 * expect: run wrong-answer max error
 * expect: bench suspect on fresh inputs: max error
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
