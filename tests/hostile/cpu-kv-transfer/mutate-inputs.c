/* hostile: overwrite the inputs in place — the prefill rank zeroes its
 * hidden states and its projections in the channel — so that an answer
 * computed from them is trivial (all zeros), as a harness that compares
 * against a reference run on the same, mutated, arrays would accept.
 * class: KernelArena/Makora: mutating the inputs the reference reads
 * defence: referee — its reference rebuilds the inputs from its own seeds
 * rename: cuco_step
 * expect: run wrong-answer verification: max error
 */
void cuco_step(void *arg, cuco_io *io)
{
	if (io->rank == 0) {
		memset((void *)io->in[0], 0, io->in_bytes[0]);
		memset((void *)io->in[1], 0, io->in_bytes[1]);
	}
	cuco_step_real(arg, io);
}
