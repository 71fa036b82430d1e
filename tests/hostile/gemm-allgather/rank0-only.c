/* hostile: only rank 0's output is real; the others are zeroed, as if
 * only rank 0 were looked at.
 * rename: layer
 * ranks: 2
 * expect: run wrong-answer on rank 1
 */
static void layer(schedule *s)
{
	layer_real(s);
	if (s->c->rank != 0)
		CUCO_CUDA(cudaMemsetAsync(s->p->C, 0, (size_t)NOUT * TOKENS * sizeof(__nv_bfloat16), s->c->stream));
}
