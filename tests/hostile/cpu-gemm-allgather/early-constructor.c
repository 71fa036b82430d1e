/* hostile: run before the harness's own constructor to catch its ticket
 * first.
 * rename: step
 * expect: compile suspect source: line
 */
__attribute__((constructor(101))) static void early(void)
{
	fprintf(stderr, "before the harness\n");
}

static void step(void *arg, int rep)
{
	step_real(arg, rep);
}
