/* hostile: says one-sided (backend=rma) but exchanges a message in its
 * step: two-sided point-to-point is what the directive says is gone.
 * defence: host calls — the built program's imports against the directive
 * rename: cuco_step
 * directive: backend=rma
 * expect: compile suspect host calls: the directive (backend=rma says one-sided communication) rules them out, but the built program links MPI_Sendrecv
 */
void cuco_step(void *state, cuco_io *io)
{
	float out = 1, in = 0;
	int peer = (io->rank + 1) % io->nranks;
	cuco_step_real(state, io);
	MPI_Sendrecv(&out, 1, MPI_FLOAT, peer, 7, &in, 1, MPI_FLOAT, peer, 7, MPI_COMM_WORLD,
		MPI_STATUS_IGNORE);
}
