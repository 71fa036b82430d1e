/* hostile: say the step is done at once and do its work afterwards: every
 * launch goes on a stream of the program's own, never joined to the
 * frame's, the first of a step behind a 3 ms stall, so "done" comes before
 * any output is written. The referee captures the rows it checks on its
 * own context at "done"; the GPU runs one context at a time, so the
 * capture waits for the work left running (a time slice, about 2 ms, when
 * it runs that long), and the step is refused for it; should the capture
 * come first, its rows are unwritten.
 * rename: cuco_launch
 * expect: run suspect probe:
 * expect: run wrong-answer output left unwritten
 */
__global__ void stall_3ms(void)
{
	long long t0 = clock64();
	while (clock64() - t0 < 6000000ll)
		;
}

extern "C" void cuco_launch(void *plan, const cuco_problem *p, cudaStream_t s)
{
	static cudaStream_t mine;
	static const __nv_bfloat16 *first;
	(void)s;
	if (!mine) {
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
		first = p->q;
	}
	if (p->q == first)
		stall_3ms<<<1, 1, 0, mine>>>();
	cuco_launch_real(plan, p, mine);
}
