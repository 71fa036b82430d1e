/* hostile: a one-sided design (backend=rma) that calls a host collective
 * by its profiling name, PMPI_Allgather: the host-call rules know MPI_
 * names only, and the interposer counts MPI_ calls only.
 * class: issue 24, class 2 (library names); a design that lies about itself
 * defence: object checker — imports outside the family's list (PMPI_*)
 * rename: cuco_step
 * directive: backend=rma
 * expect: compile suspect PMPI_Allgather
 * expect: compile suspect object: imports PMPI_Allgather
 */
void cuco_step(void *state, cuco_io *io)
{
	float mine = (float)io->rank, all[64];
	cuco_step_real(state, io);
	PMPI_Allgather(&mine, 1, MPI_FLOAT, all, 1, MPI_FLOAT, MPI_COMM_WORLD);
}
