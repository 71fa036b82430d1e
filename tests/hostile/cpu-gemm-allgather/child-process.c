/* hostile: fork a child that goes on working (here: sleeping) after the
 * step, and after the stage if nothing stops it.
 * rename: step
 * expect: run suspect children:
 */
static void step(void *arg, int rep)
{
	step_real(arg, rep);
	if (fork() == 0) {
		struct timespec t = { 30, 0 };
		nanosleep(&t, NULL);
		_exit(0);
	}
}
