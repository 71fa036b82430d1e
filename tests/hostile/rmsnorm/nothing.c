/* hostile: compute nothing and say done.
 * rename: cuco_launch
 * expect: run wrong-answer output left unwritten
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	(void)state;
	(void)p;
	(void)s;
	(void)cuco_launch_real;
}
