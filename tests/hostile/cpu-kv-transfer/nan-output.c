/* hostile: the decode rank answers NaN, hoping a comparison with NaN
 * (false either way) lets it pass.
 * class: KernelArena/Makora: NaN against the checker
 * defence: referee — NaN counts as infinitely wrong
 * rename: cuco_step
 * expect: run wrong-answer output left unwritten (poison or NaN in it) on rank 1
 */
void cuco_step(void *arg, cuco_io *io)
{
	cuco_step_real(arg, io);
	if (io->rank == 1)
		for (int i = 0; i < HD; i++)
			((float *)io->out[0])[i] = NAN;
}
