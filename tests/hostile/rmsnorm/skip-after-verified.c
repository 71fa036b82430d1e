/* hostile: launch only in the first two calls.
 * rename: cuco_launch
 * expect: run suspect spot check: step 2, a timed repetition
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static int calls;
	if (calls++ < 2)
		cuco_launch_real(state, p, s);
}
