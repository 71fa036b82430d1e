/* hostile: run the whole layer on a stream of its own that the main
 * stream never waits for, so the events on the main stream time nothing.
 * rename: layer
 * expect: run suspect streams:
 */
static void layer(schedule *s)
{
	static cudaStream_t mine;
	if (!mine)
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
	cudaStream_t main_stream = s->c->stream;
	s->c->stream = mine;
	layer_real(s);
	s->c->stream = main_stream;
}
