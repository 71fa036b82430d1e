/* hostile: a one-sided design (backend=rma) that still calls a host
 * collective in its step, as a fast-path stage B that kept the baseline's
 * MPI_Allgather would.
 * rename: step
 * directive: backend=rma
 * expect: compile suspect host calls: the directive (backend=rma says one-sided communication) rules them out, but the built program links MPI_Allgather
 */
static void step(void *arg, int rep)
{
	float mine = 1, all[16];
	step_real(arg, rep);
	MPI_Allgather(&mine, 1, MPI_FLOAT, all, 1, MPI_FLOAT, MPI_COMM_WORLD);
}
