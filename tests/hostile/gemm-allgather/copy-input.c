/* hostile: write something cheap of the right size: the input X, copied
 * into the output, without gathering or multiplying.
 * rename: layer
 * expect: run wrong-answer verification 1 of 2
 */
static void layer(schedule *s)
{
	const size_t bytes = std::min((size_t)NOUT * TOKENS * sizeof(__nv_bfloat16), ga_x_bytes());
	CUCO_CUDA(cudaMemcpyAsync(s->p->C, s->X.ptr, bytes, cudaMemcpyDeviceToDevice, s->c->stream));
}
