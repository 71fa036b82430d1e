/* hostile: leave the output buffer as it is on every other call, as if
 * last call's result were still good enough.
 * rename: step
 * expect: run suspect verification 2 of 2
 */
static void step(void *arg, int rep)
{
	static int calls;
	if (calls++ % 2)
		return;
	step_real(arg, rep);
}
