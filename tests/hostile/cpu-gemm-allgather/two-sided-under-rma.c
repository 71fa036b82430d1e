/* hostile: says one-sided (backend=rma) but exchanges a message in its
 * step: two-sided point-to-point is what the directive says is gone.
 * rename: step
 * directive: backend=rma
 * expect: compile suspect host calls: the directive (backend=rma says one-sided communication) rules them out, but the built program links MPI_Sendrecv
 */
static void step(void *arg, int rep)
{
	layer *l = arg;
	float out = 1, in = 0;
	int peer = (l->io.rank + 1) % l->io.nranks;
	step_real(arg, rep);
	MPI_Sendrecv(&out, 1, MPI_FLOAT, peer, 7, &in, 1, MPI_FLOAT, peer, 7, MPI_COMM_WORLD,
		MPI_STATUS_IGNORE);
}
