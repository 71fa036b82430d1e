/* hostile: only rank 0's answer is real; the other ranks leave zeros, as
 * if a harness looked at rank 0 alone.
 * rename: step
 * ranks: 2
 * expect: run wrong-answer on rank 1
 */
static void step(void *arg, int rep)
{
	layer *l = arg;
	step_real(arg, rep);
	if (l->io.rank != 0)
		memset(l->io.c, 0, (size_t)M * N * sizeof(float));
}
