/* test_assert.c — CUCO_ASSERT in a debug build: a false invariant says
 * where and what once, and aborts; a true one goes on, its condition
 * evaluated once. Each failure runs in a forked child (a death test). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core.h"

/* Run fn in a child with its stderr into out; the child's wait status. */
static int in_child(void (*fn)(void), char *out, size_t size)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], STDERR_FILENO);
		close(fd[0]);
		fn();
		_exit(0);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t got;
	while (n + 1 < size && (got = read(fd[0], out + n, size - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	close(fd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static int counted;

static int count(void)
{
	return ++counted;
}

static void true_one(void)
{
	CUCO_ASSERT(count() == 1);
}

static const int false_line = __LINE__ + 3;
static void false_one(void)
{
	CUCO_ASSERT(2 + 2 == 5);
}

static void *fail_in_thread(void *arg)
{
	pthread_barrier_t *b = arg;
	pthread_barrier_wait(b);
	CUCO_ASSERT(b == NULL);
	return NULL;
}

static void false_in_threads(void)
{
	enum { N = 4 };
	pthread_barrier_t b;
	pthread_t t[N];
	pthread_barrier_init(&b, NULL, N);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, fail_in_thread, &b);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
}

static void test_true_goes_on(void **state)
{
	(void)state;
	char out[512];
	int status = in_child(true_one, out, sizeof out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(out, "");
	true_one();
	assert_int_equal(counted, 1);  /* evaluated once */
}

static void test_false_aborts_saying_where(void **state)
{
	(void)state;
#ifdef NDEBUG
	skip();
#endif
	char out[512], want[128];
	int status = in_child(false_one, out, sizeof out);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	snprintf(want, sizeof want, "test_assert.c:%d: assertion failed: 2 + 2 == 5\n", false_line);
	assert_non_null(strstr(out, want));
	assert_int_equal(strncmp(out, "cuco: ", 6), 0);
}

static void test_said_once(void **state)
{
	(void)state;
#ifdef NDEBUG
	skip();
#endif
	char out[2048];
	int status = in_child(false_in_threads, out, sizeof out);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	const char *first = strstr(out, "assertion failed: b == NULL");
	assert_non_null(first);
	assert_null(strstr(first + 1, "assertion failed"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_true_goes_on),
		cmocka_unit_test(test_false_aborts_saying_where),
		cmocka_unit_test(test_said_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
