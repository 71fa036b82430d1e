/* hostile: a one-sided design (backend=rma) that still calls a host
 * collective in its step, as a fast-path stage B that kept the baseline's
 * MPI_Allgather would.
 * defence: host calls — the built program's imports against the directive
 * rename: cuco_step
 * directive: backend=rma
 * expect: compile suspect host calls: the directive (backend=rma says one-sided communication) rules them out, but the built program links MPI_Allgather
 */
void cuco_step(void *state, cuco_io *io)
{
	float mine = 1, all[64];
	cuco_step_real(state, io);
	MPI_Allgather(&mine, 1, MPI_FLOAT, all, 1, MPI_FLOAT, MPI_COMM_WORLD);
}
