/* hostile: hand work to a helper thread and return before it is done: the
 * thread goes on after the timed region closes (here it only sleeps, as
 * a stand-in for deferred work).
 * rename: step
 * expect: run suspect threads:
 */
static void *later(void *arg)
{
	(void)arg;
	struct timespec t = { 0, 300 * 1000000L };
	nanosleep(&t, NULL);
	return NULL;
}

static void step(void *arg, int rep)
{
	step_real(arg, rep);
	pthread_t t;
	if (pthread_create(&t, NULL, later, NULL) == 0)
		pthread_detach(t);
}
