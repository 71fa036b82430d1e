/* hostile: a device-initiated design that still calls a host NCCL
 * collective, as a fast-path stage B that kept one of the baseline's would.
 * rename: layer
 * expect: compile suspect host calls: the directive (backend=lsa says device-initiated communication) rules them out, but the built program links ncclAllReduce
 */
static void layer(schedule *s)
{
	static float *one;
	if (!one)
		CUCO_CUDA(cudaMalloc(&one, sizeof *one));
	layer_real(s);
	CUCO_NCCL(ncclAllReduce(one, one, 1, ncclFloat, ncclSum, s->c->comm, s->c->stream));
}
