/* hostile: a collective the binary's symbols cannot tell from the
 * harness's own (MPI_Allreduce), called in every step: only the counter
 * preloaded into the ranks sees it.
 * rename: step
 * expect: run suspect host calls: the directive (backend=msg says two-sided messages and no collectives) rules them out, but the steps made
 */
static void step(void *arg, int rep)
{
	double mine = 1, sum;
	step_real(arg, rep);
	MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
