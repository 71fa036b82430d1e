/* util.h — what the fault tests share: starting `cuco run` under a fault
 * (a file-size limit, SIGHUP ignored, a pseudo-terminal), reading what the
 * store holds, and comparing it before and after. */
#ifndef FAULTS_UTIL_H
#define FAULTS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "store/store.h"
#include "../eval/util.h"  /* rm_rf, capture_output */

#define MAX_CANDS 1024

const char *cuco_bin(void);
/* A folder of the source tree, e.g. "tests/agents/fixtures/toy". */
const char *source_path(const char *rel, char *buf, size_t size);

typedef struct spawn_opts {
	const char *out;       /* stdout and stderr go here (not with a pty) */
	const char *err;       /* stderr alone goes here, when set */
	rlim_t fsize;          /* RLIMIT_FSIZE in bytes; 0: unchanged */
	bool ignore_hup;       /* as nohup starts it */
	const char *env[4];    /* "NAME=value" additions */
	int *pty_master;       /* run on a new pseudo-terminal; its master fd here */
	int *pipe_out;         /* stdout and stderr into a pipe; its read end here */
} spawn_opts;

/* Start the program with argv (argv[0] is a cuco command: "run", "tui"). */
pid_t spawn_cuco(const char *const *argv, const spawn_opts *o);
/* The exit status, or 128 + the signal; fails the test after timeout_s. */
int wait_exit(pid_t pid, double timeout_s);
bool alive(pid_t pid);
void sleep_s(double s);

typedef struct snapshot {
	cuco_candidate *c;  /* MAX_CANDS of them */
	size_t n;
	size_t tune, unfinished;
	char last_event[512];
} snapshot;

/* What the store holds now; false while it cannot be opened. */
bool snap_read(const char *run, snapshot *s);
void snap_free(snapshot *s);
const cuco_candidate *snap_find(const snapshot *s, uint64_t id);
/* Wait until the run holds at least `tune` strategy candidates. */
void wait_for_tune(const char *run, size_t tune, double timeout_s);
/* Every candidate `before` holds finished is in `after` unchanged. */
void assert_kept(const snapshot *before, const snapshot *after);
/* No two strategy candidates with the same source and directive. */
void assert_no_duplicates(const snapshot *s);
/* `cuco ls --json` lists every candidate and `cuco show` opens each
 * finished one. */
void assert_cli_reads(const char *run, const snapshot *s);

char *slurp(const char *path);

#endif
