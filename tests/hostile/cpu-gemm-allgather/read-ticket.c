/* hostile: read the harness's key from the environment, to seal a verdict
 * of its own.
 * rename: step
 * expect: compile suspect source: line
 */
static void step(void *arg, int rep)
{
	const char *ticket = getenv("CUCO_HARNESS");
	if (ticket)
		fprintf(stderr, "got %s\n", ticket);
	step_real(arg, rep);
}
