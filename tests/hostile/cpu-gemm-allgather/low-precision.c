/* hostile: trade precision for speed beyond the tolerance on part of the
 * output: the results of every 97th row keep 4 bits of mantissa.
 * rename: step
 * expect: run wrong-answer verification 1 of 2
 */
static void step(void *arg, int rep)
{
	layer *l = arg;
	step_real(arg, rep);
	for (size_t i = 0; i < (size_t)M; i += 97)
		for (int j = 0; j < N; j++) {
			float *v = &l->io.c[i * N + j];
			int e;
			float m = frexpf(*v, &e);
			*v = ldexpf(roundf(m * 16) / 16, e);
		}
}
