/* hostile: skip the work when it is timed. The step reads the bench's
 * timing flag and returns at once in timed repetitions, so only the
 * verified runs do the work.
 * rename: step
 * expect: run suspect spot check: step 2, a timed repetition
 */
static void step(void *arg, int rep)
{
	layer *l = arg;
	if (l->io.bench->timing)
		return;
	step_real(arg, rep);
}
