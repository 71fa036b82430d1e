/* hostile: launch the kernel on a stream of its own, never joined to the
 * main one: the main stream's events time an empty stretch. At this size
 * the kernel (about 17 us) ends too soon after the main stream for the lag
 * check, so the stream probe must catch it. (At the tiny size the kernel
 * is shorter than its launch, and hiding it gains about a tenth, 6.0 to
 * 6.8 us against the seed's 7.1 to 7.2 on an H200: no check here tells
 * that from a quicker launch. docs/workloads.md says so.)
 * rename: cuco_launch
 * size: medium
 * expect: run suspect streams: on rank 0, launches back to back
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static cudaStream_t mine;
	(void)s;
	if (!mine)
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
	cuco_launch_real(state, p, mine);
}
