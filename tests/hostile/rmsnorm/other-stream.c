/* hostile: say the step is done at once and do its work afterwards: the
 * kernel goes on a stream of its own, never joined to the frame's, behind
 * a 3 ms stall, so "done" comes before any output is written. The referee
 * captures the rows it checks on its own context at "done"; the GPU runs
 * one context at a time, so that capture waits for the work left running
 * (a time slice, about 2 ms, when it runs that long), and the step is
 * refused for it; should the capture come first, the probe once the stage
 * is frozen waits instead (and the rows are unwritten). (Work left running
 * that ends sooner is counted in the step's time, the capture's wait, and
 * so gains nothing.)
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

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static cudaStream_t mine;
	(void)s;
	if (!mine)
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
	stall_3ms<<<1, 1, 0, mine>>>();
	cuco_launch_real(state, p, mine);
}
