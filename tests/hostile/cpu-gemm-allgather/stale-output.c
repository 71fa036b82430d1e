/* hostile: leave the output as it is on every other step, as if the last
 * step's result were still good enough.
 * defence: referee — outputs poisoned before every step
 * rename: cuco_step
 * bench: yes
 * expect: bench suspect step 2 of 18 (a warm-up), on fresh inputs: output left unwritten
 */
void cuco_step(void *state, cuco_io *io)
{
	if (io->step % 2 == 0)
		cuco_step_real(state, io);
}
