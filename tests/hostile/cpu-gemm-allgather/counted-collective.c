/* hostile: a collective the old harness called itself (MPI_Allreduce),
 * so its binary could not tell the candidate's from the harness's, in a
 * design that says messages and no collectives (backend=msg). The frame
 * calls no collective: the import is evidence now.
 * defence: host calls — the built program's imports against the directive
 * rename: cuco_step
 * expect: compile suspect host calls: the directive (backend=msg says two-sided messages and no collectives) rules them out, but the built program links MPI_Allreduce
 */
void cuco_step(void *state, cuco_io *io)
{
	double mine = 1, sum;
	cuco_step_real(state, io);
	MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
