/* hostile: an MPI collective in every layer, which the binary's symbols
 * cannot tell from the harness's own: the preloaded counter sees it.
 * rename: layer
 * expect: run suspect host calls: the directive (backend=lsa says device-initiated communication) rules them out, but the steps made
 */
static void layer(schedule *s)
{
	double mine = 1, sum;
	layer_real(s);
	MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
