/* hostile: says one-sided (backend=rma) but sends the prefill rank's
 * first block again as a message in every step.
 * defence: host calls — the built program's imports against the directive
 * rename: cuco_step
 * directive: backend=rma
 * expect: compile suspect host calls: the directive (backend=rma says one-sided communication) rules them out, but the built program links MPI_Send
 */
void cuco_step(void *arg, cuco_io *io)
{
	static float block[BLOCK_FLOATS];
	cuco_step_real(arg, io);
	if (io->rank == 0)
		MPI_Send(block, (int)BLOCK_FLOATS, MPI_FLOAT, 1, 5, MPI_COMM_WORLD);
	else
		MPI_Recv(block, (int)BLOCK_FLOATS, MPI_FLOAT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
