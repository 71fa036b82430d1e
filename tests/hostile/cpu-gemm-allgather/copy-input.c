/* hostile: write something cheap of the right shape: the input, copied
 * into the output, without the norm, the gather or the GEMM.
 * rename: step
 * expect: run wrong-answer verification 1 of 2
 */
static void step(void *arg, int rep)
{
	layer *l = arg;
	(void)rep;
	for (size_t i = 0; i < (size_t)M * N; i++)
		l->io.c[i] = l->io.x[i % ((size_t)l->io.rows * K)];
}
