/* hostile: compute once, then hand back the kept result: every later call
 * copies the first call's output instead of computing.
 * rename: step
 * expect: run suspect verification 2 of 2
 */
static void step(void *arg, int rep)
{
	layer *l = arg;
	static float *kept;
	size_t bytes = (size_t)M * N * sizeof(float);
	if (kept) {
		memcpy(l->io.c, kept, bytes);
		return;
	}
	step_real(arg, rep);
	kept = malloc(bytes);
	memcpy(kept, l->io.c, bytes);
}
