/* test_wait.c — a timed wait on a condition runs on the monotonic clock
 * and lasts what it was asked: a condition made with the realtime clock
 * would take the monotonic deadline as long past and return at once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core.h"

static void test_timed_wait_lasts(void **state)
{
	(void)state;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond;
	cuco_cond_init(&cond);
	pthread_mutex_lock(&lock);
	double t0 = cuco_mono();
	cuco_cond_wait_s(&cond, &lock, 0.2);
	double waited = cuco_mono() - t0;
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&cond);
	/* Not woken, so the whole 0.2 s (a spurious wake-up is rare; a loaded
	 * machine only lengthens it). */
	assert_true(waited >= 0.15);
	assert_true(waited < 5.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timed_wait_lasts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
