/* hostile: do the work only in the first two calls, the ones a harness
 * that verifies before timing would check, and nothing afterwards.
 * rename: step
 * expect: run suspect spot check: step 2, a timed repetition
 */
static void step(void *arg, int rep)
{
	static int calls;
	if (calls++ >= 2)
		return;
	step_real(arg, rep);
}
