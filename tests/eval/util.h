/* util.h — helpers shared by the evaluator's tests. */
#ifndef CUCO_TEST_EVAL_UTIL_H
#define CUCO_TEST_EVAL_UTIL_H

#include "eval/eval.h"

#include <stddef.h>
#include <sys/types.h>

/* $CUCO_SOURCE_ROOT/tests/eval/fixtures/<rel>, in the calling thread's buffer. */
const char *fixture(const char *rel);
/* A fresh folder under /tmp; the caller removes it with rm_rf(). */
void make_tmpdir(char *out, size_t size);
void rm_rf(const char *path);
/* The user stages run as under root (nobody, else uid and gid 65534),
 * and, in a child of a test run as root, becoming it (or _exit(2)). */
void stage_user_ids(uid_t *uid, gid_t *gid);
void become_stage_user(void);
/* Live processes whose command line contains needle (zombies excluded). */
int count_processes(const char *needle);
/* Read a fixture file whole; free the result. */
char *read_fixture(const char *rel, size_t *len);
/* cmd's standard output through sh, whole (free it); *status its exit
 * status, -1 when it did not exit. */
char *capture_output(const char *cmd, int *status);

/* For cmocka tests: fail naming the text when needle is not (is) in it. */
#define assert_has(text, needle) do { \
		if (!strstr((text), (needle))) \
			fail_msg("missing \"%s\" in:\n%s", (needle), (text)); \
	} while (0)
#define assert_lacks(text, needle) do { \
		if (strstr((text), (needle))) \
			fail_msg("unexpected \"%s\" in:\n%s", (needle), (text)); \
	} while (0)

#endif
