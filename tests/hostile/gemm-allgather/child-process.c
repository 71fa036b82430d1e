/* hostile: fork a child that goes on (here: sleeping) after the step.
 * rename: layer
 * expect: run suspect children:
 */
static void layer(schedule *s)
{
	layer_real(s);
	if (fork() == 0) {
		struct timespec t = { 30, 0 };
		nanosleep(&t, NULL);
		_exit(0);
	}
}
