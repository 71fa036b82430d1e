/* hostile: do the work only in the first two steps, the ones a harness
 * that verifies before timing would check, and nothing afterwards.
 * defence: referee — every step checked, warm-ups and timed ones alike
 * rename: cuco_step
 * bench: yes
 * expect: bench suspect verification: step 3 of 18 (a warm-up), on fresh inputs
 */
void cuco_step(void *state, cuco_io *io)
{
	if (io->step < 2)
		cuco_step_real(state, io);
}
