/* hostile: normalise once, then copy the kept output back.
 * rename: launch
 * expect: run suspect verification 2 of 2
 */
static void launch(const rows_io &io, cudaStream_t s)
{
	static elem_t *kept;
	const size_t bytes = (size_t)ROWS * COLS * sizeof(elem_t);
	if (kept) {
		CUCO_CUDA(cudaMemcpyAsync(io.out, kept, bytes, cudaMemcpyDeviceToDevice, s));
		return;
	}
	launch_real(io, s);
	CUCO_CUDA(cudaMalloc(&kept, bytes));
	CUCO_CUDA(cudaMemcpyAsync(kept, io.out, bytes, cudaMemcpyDeviceToDevice, s));
}
