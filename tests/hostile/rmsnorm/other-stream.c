/* hostile: launch the kernel on a stream of its own, never joined to the
 * main one: the main stream's events time an empty stretch.
 * rename: launch
 * expect: run suspect streams:
 */
static void launch(const rows_io &io, cudaStream_t s)
{
	static cudaStream_t mine;
	(void)s;
	if (!mine)
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
	launch_real(io, mine);
}
