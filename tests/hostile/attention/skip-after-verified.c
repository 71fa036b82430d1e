/* hostile: launch only in the first two calls, betting that only the
 * first launches are checked. The referee checks every step, and every
 * set of a step (at least 2 rows of each): the first step's third set is
 * left unwritten, where a step has three sets or more (256 at the tiny
 * size); else the second step.
 * rename: cuco_launch
 * bench: yes
 * expect: run wrong-answer output left unwritten
 * expect: bench suspect on fresh inputs: output left unwritten
 */
extern "C" void cuco_launch(void *plan, const cuco_problem *p, cudaStream_t s)
{
	static int calls;
	if (calls++ < 2)
		cuco_launch_real(plan, p, s);
}
