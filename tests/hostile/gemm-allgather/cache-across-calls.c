/* hostile: compute once, then copy the kept output back on every later
 * call: one memcpy instead of an all-gather and a GEMM.
 * rename: layer
 * expect: run suspect verification 2 of 2
 */
static void layer(schedule *s)
{
	static __nv_bfloat16 *kept;
	const size_t bytes = (size_t)NOUT * TOKENS * sizeof(__nv_bfloat16);
	if (kept) {
		CUCO_CUDA(cudaMemcpyAsync(s->p->C, kept, bytes, cudaMemcpyDeviceToDevice, s->c->stream));
		return;
	}
	layer_real(s);
	CUCO_CUDA(cudaMalloc(&kept, bytes));
	CUCO_CUDA(cudaMemcpyAsync(kept, s->p->C, bytes, cudaMemcpyDeviceToDevice, s->c->stream));
}
