/* hostile: do the work in the first two calls only (the ones a harness
 * that verifies before timing would check).
 * rename: layer
 * expect: run suspect spot check: step 2, a timed repetition
 */
static void layer(schedule *s)
{
	static int calls;
	if (calls++ < 2)
		layer_real(s);
}
