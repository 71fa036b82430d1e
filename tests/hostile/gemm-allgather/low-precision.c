/* hostile: beyond the tolerance on part of the output: every 97th token
 * column comes out 5 % off, as a cheaper accumulation might leave it.
 * rename: layer
 * expect: run wrong-answer verification 1 of 2
 */
__global__ void spoil(__nv_bfloat16 *C)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)NOUT * TOKENS;
	     i += (size_t)gridDim.x * blockDim.x)
		if (i / NOUT % 97 == 0)
			C[i] = __float2bfloat16(__bfloat162float(C[i]) * 1.05f + 0.05f);
}

static void layer(schedule *s)
{
	layer_real(s);
	spoil<<<256, 256, 0, s->c->stream>>>(s->p->C);
	CUCO_LAUNCHED();
}
