/* hostile: normalise only the first eighth of the rows, betting that a
 * check samples fixed rows it happens to cover. The referee draws the
 * rows it checks after every step.
 * rename: cuco_launch
 * expect: run wrong-answer output left unwritten
 */
extern "C" void cuco_launch(void *, const cuco_problem *p, cudaStream_t s)
{
	rmsnorm<<<ROWS_CTAS / 8, CUCO_THREADS, 0, s>>>(p->in, p->w, p->out);
	(void)cuco_launch_real;
}
