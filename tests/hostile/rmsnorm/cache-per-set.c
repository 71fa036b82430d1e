/* hostile: keep each output buffer's answer (the program is called on
 * several sets a step, each at buffers of its own), computed once, and
 * copy it back whenever the same buffer comes again: every launch of the
 * first step is right. The referee draws every set's inputs afresh for
 * every step, so the kept answers are wrong from the second step on.
 * rename: cuco_launch
 * bench: yes
 * expect: bench suspect on fresh inputs: max error
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static struct { elem_t *out, *kept; } seen[1024];
	const size_t bytes = (size_t)ROWS * COLS * sizeof(elem_t);
	int i = 0;
	while (i < 1024 && seen[i].out && seen[i].out != p->out)
		i++;
	if (i < 1024 && seen[i].out) {
		CUCO_CUDA(cudaMemcpyAsync(p->out, seen[i].kept, bytes, cudaMemcpyDeviceToDevice, s));
		return;
	}
	cuco_launch_real(state, p, s);
	if (i == 1024)
		return;
	seen[i].out = p->out;
	CUCO_CUDA(cudaMalloc(&seen[i].kept, bytes));
	CUCO_CUDA(cudaMemcpyAsync(seen[i].kept, p->out, bytes, cudaMemcpyDeviceToDevice, s));
}
