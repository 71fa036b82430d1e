/* hostile: launch only in the first two calls.
 * rename: launch
 * expect: run suspect spot check: step 2, a timed repetition
 */
static void launch(const rows_io &io, cudaStream_t s)
{
	static int calls;
	if (calls++ < 2)
		launch_real(io, s);
}
