/* log.c — the run log. One FILE shared by every thread, hence the lock.
 * A failed CUCO_ASSERT is said here, the last line of the log. */
#include "core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
	pthread_mutex_t lock;
	FILE *file;
	bool quiet;  /* true while curses owns the terminal */
	int level;
} logstate = { PTHREAD_MUTEX_INITIALIZER, NULL, false, CUCO_LOG_INFO };

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int cuco_log_open(const char *path, cuco_err *err)
{
	FILE *f = fopen(path, "a");
	if (!f)
		return cuco_errf(err, CUCO_EENV, "%s: cannot open log: %m", path);
	setvbuf(f, NULL, _IOLBF, 0);
	pthread_mutex_lock(&logstate.lock);
	if (logstate.file)
		fclose(logstate.file);
	logstate.file = f;
	pthread_mutex_unlock(&logstate.lock);
	return CUCO_OK;
}

void cuco_log_close(void)
{
	pthread_mutex_lock(&logstate.lock);
	if (logstate.file)
		fclose(logstate.file);
	logstate.file = NULL;
	pthread_mutex_unlock(&logstate.lock);
}

void cuco_log_quiet(bool quiet)
{
	pthread_mutex_lock(&logstate.lock);
	logstate.quiet = quiet;
	pthread_mutex_unlock(&logstate.lock);
}

void cuco_log_level(int level)
{
	pthread_mutex_lock(&logstate.lock);
	logstate.level = level;
	pthread_mutex_unlock(&logstate.lock);
}

void cuco_log(int level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);

	time_t t = time(NULL);
	struct tm tm;
	char stamp[32];
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (level < 0 || level > CUCO_LOG_DEBUG)
		level = CUCO_LOG_ERROR;

	pthread_mutex_lock(&logstate.lock);
	if (level <= logstate.level) {
		if (logstate.file)
			fprintf(logstate.file, "%s %s %s\n", stamp, level_names[level], line);
		/* Warnings and errors also reach the user, unless a screen
		 * owns the terminal. */
		if (!logstate.quiet && level <= CUCO_LOG_WARN)
			fprintf(stderr, "cuco: %s\n", line);
	}
	pthread_mutex_unlock(&logstate.lock);
}

void cuco_assert_fail(const char *cond, const char *file, int line)
{
	/* Said once, however many threads fail at once: the first says it
	 * and aborts, the others wait for that. */
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&said))
		for (;;)
			pause();
	cuco_log_quiet(false);
	cuco_log(CUCO_LOG_ERROR, "%s:%d: assertion failed: %s", file, line, cond);
	abort();
}
