/* hostile: only rank 0's answer is real; the other ranks leave zeros, as
 * if the verdict looked at rank 0 alone.
 * defence: referee — every rank's outputs checked
 * rename: cuco_step
 * ranks: 2
 * expect: run wrong-answer on rank 1
 */
void cuco_step(void *state, cuco_io *io)
{
	cuco_step_real(state, io);
	if (io->rank != 0)
		memset(io->out[0], 0, io->out_bytes[0]);
}
