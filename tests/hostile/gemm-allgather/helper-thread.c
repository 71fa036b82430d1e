#include <pthread.h>

/* hostile: leave a host thread running after the layer returns (a
 * stand-in for one that would launch or finish work later).
 * rename: layer
 * expect: run suspect threads:
 */
static void *later(void *arg)
{
	(void)arg;
	struct timespec t = { 0, 300 * 1000000L };
	nanosleep(&t, NULL);
	return NULL;
}

static void layer(schedule *s)
{
	layer_real(s);
	pthread_t t;
	if (pthread_create(&t, NULL, later, NULL) == 0)
		pthread_detach(t);
}
