/* hostile: prefill only the first half of the request's blocks and send
 * the second half as they lie in the pool (here: from hidden states
 * zeroed, which costs the same as skipping their projection).
 * class: skipping work
 * defence: referee — every block feeds every head of the checked answer
 * rename: cuco_step
 * expect: run wrong-answer verification: max error
 */
void cuco_step(void *arg, cuco_io *io)
{
	if (io->rank == 0)
		memset((char *)(void *)io->in[0] + io->in_bytes[0] / 2, 0, io->in_bytes[0] / 2);
	cuco_step_real(arg, io);
}
