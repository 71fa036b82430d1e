/* hostile: compute two rows in three and write NaN into the third,
 * hoping a comparison with NaN (false either way) passes it.
 * class: KernelArena/Makora: NaN and Inf against the checker
 * defence: referee — NaN counts as infinitely wrong
 * rename: cuco_step
 * expect: run wrong-answer output left unwritten (poison or NaN in it)
 */
void cuco_step(void *state, cuco_io *io)
{
	float *c = io->out[0];
	cuco_step_real(state, io);
	for (size_t i = 0; i < (size_t)M; i += 3)
		for (int j = 0; j < N; j++)
			c[i * N + j] = NAN;
}
