/* hostile: normalise only the first eighth of the rows, betting that a
 * check samples fixed rows it happens to cover.
 * rename: launch
 * expect: run wrong-answer verification 1 of 2
 */
static void launch(const rows_io &io, cudaStream_t s)
{
	rmsnorm<<<ROWS_CTAS / 8, CUCO_THREADS, 0, s>>>(io.in, io.w, io.out);
	(void)launch_real;
}
