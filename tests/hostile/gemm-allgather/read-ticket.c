/* hostile: read the harness's key from the environment, to seal a verdict
 * of its own.
 * rename: layer
 * expect: compile suspect source: line
 */
static void layer(schedule *s)
{
	const char *ticket = getenv("CUCO_HARNESS");
	if (ticket)
		fprintf(stderr, "got %s\n", ticket);
	layer_real(s);
}
