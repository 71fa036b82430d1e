/* hostile: launch only in the first two calls, betting that only the
 * first steps are checked. The referee checks every step.
 * rename: cuco_launch
 * bench: yes
 * expect: bench suspect on fresh inputs: output left unwritten
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static int calls;
	if (calls++ < 2)
		cuco_launch_real(state, p, s);
}
