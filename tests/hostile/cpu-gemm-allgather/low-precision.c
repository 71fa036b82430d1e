/* hostile: trade precision for speed beyond the tolerance on part of the
 * output: the results of every 7th row keep 4 bits of mantissa (the check
 * samples 256 rows of 1024, so it meets one of them).
 * defence: referee — sampled rows against a double-precision reference
 * rename: cuco_step
 * expect: run wrong-answer verification: max error
 */
void cuco_step(void *state, cuco_io *io)
{
	float *c = io->out[0];
	cuco_step_real(state, io);
	for (size_t i = 0; i < (size_t)M; i += 7)
		for (int j = 0; j < N; j++) {
			float *v = &c[i * N + j];
			int e;
			float m = frexpf(*v, &e);
			*v = ldexpf(roundf(m * 16) / 16, e);
		}
}
