/* cuco_trust.h — what the trusted harnesses share (cuco_harness.h for the
 * CPU workloads, gpu-common/cuco_gpu.h for the GPU ones): the evaluator's
 * ticket, the harness's own random draws, the watch on what a step leaves
 * running, the verdict's reasons and the sealed line that carries them.
 * docs/workloads.md ("Trust") says what each defence is for.
 *
 * Plain C99 that also compiles as C++ (nvcc), header-only, no MPI: each
 * harness gathers the ranks' findings its own way and hands them here. */
#ifndef CUCO_TRUST_H
#define CUCO_TRUST_H

#include "cuco_seal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CUCO_MAX_TASKS 512
#define CUCO_SPOT_CHECKS 2.0     /* timed repetitions checked per run, on average */
#define CUCO_UNSEALED_SEED 0x5eedull

/* ---- the evaluator's ticket ------------------------------------------------ */

static struct { int sealed; cuco_seal_ticket t; } cuco_ticket;

#ifdef CUCO_FRAME
/* A framed program's (a frame defines CUCO_FRAME: the one-GPU family,
 * gpu-common/cuco_gpu_frame.cuh). Its frame's main() runs before any of
 * the program's code and calls this first: the ticket is the file
 * CUCO_SEAL_FILE the evaluator wrote in the stage's working folder, read,
 * emptied (in the sandbox it is a mount point, which cannot be removed)
 * and removed. No environment, and no process but this one, ever holds
 * the key. No file (run by hand): not sealed. Returns NULL, or why the
 * file could not be emptied (an environment failure: the key would stay
 * readable). */
static inline const char *cuco_take_ticket_file(void)
{
	char text[128];
	int fd = open(CUCO_SEAL_FILE, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, text, sizeof text - 1);
	text[n > 0 ? n : 0] = '\0';
	cuco_ticket.sealed = cuco_seal_ticket_parse(text, &cuco_ticket.t) == 0;
	memset(text, 0, sizeof text);
	int emptied = ftruncate(fd, 0) == 0;
	close(fd);
	unlink(CUCO_SEAL_FILE);
	return emptied ? NULL : "the ticket file " CUCO_SEAL_FILE " could not be emptied";
}
#else
/* An unframed program's ($CUCO_HARNESS). Priority 101, the first a program
 * may use: before any constructor of default priority (and C++'s static
 * initialisation) a candidate might write; the evaluator's source scan
 * refuses prioritised ones in candidate code. The value is wiped in place,
 * so /proc/self/environ no longer holds it either (its ancestors' still
 * do). */
__attribute__((constructor(101))) static void cuco_take_ticket(void)
{
	char *v = getenv(CUCO_SEAL_ENV);
	if (!v)
		return;
	cuco_ticket.sealed = cuco_seal_ticket_parse(v, &cuco_ticket.t) == 0;
	memset(v, 0, strlen(v));
	unsetenv(CUCO_SEAL_ENV);
}
#endif

/* The evaluator's input seed (a fixed one when run by hand). */
static inline uint64_t cuco_ticket_seed(void)
{
	return cuco_ticket.sealed ? cuco_ticket.t.seed : CUCO_UNSEALED_SEED;
}

/* ---- randomness ---------------------------------------------------------------- */

static inline uint64_t cuco_mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* The harness's own draws (what to spot-check, scales, the post-loop
 * inputs): from the kernel, so the program cannot predict them. In [0, 1). */
static inline double cuco_draw(void)
{
	uint64_t x = 0;
	if (getrandom(&x, sizeof x, 0) != (ssize_t)sizeof x)
		x = cuco_mix((uint64_t)clock() ^ (uint64_t)getpid());
	return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- what a step leaves running ---------------------------------------------------- */

/* Threads alive before the steps (the MPI, CUDA and NCCL libraries' own),
 * and what the host-call interposer offers when the evaluator preloaded
 * it (src/eval/count.c). */
typedef struct cuco_watch {
	int ntids;
	long tids[CUCO_MAX_TASKS];
	int (*count_window)(int on);
	int (*count_names)(const char *const **names);
	long (*count_of)(int i);
} cuco_watch;

/* Whether /proc/self/task/<tid>/stat tells of a live (not zombie) task. */
static inline int cuco_task_alive(long tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] && p[2] != 'Z' && p[2] != 'X';
}

/* Tids of this process's threads into out[0..max); returns the count. */
static inline int cuco_tasks(long *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) && n < max)
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			out[n++] = atol(e->d_name);
	if (d)
		closedir(d);
	return n;
}

/* A thread alive now that was not there when the watch started, or 0. */
static inline long cuco_new_thread(const cuco_watch *w)
{
	long now[CUCO_MAX_TASKS];
	int n = cuco_tasks(now, CUCO_MAX_TASKS);
	for (int i = 0; i < n; i++) {
		int known = 0;
		for (int j = 0; j < w->ntids && !known; j++)
			known = now[i] == w->tids[j];
		if (!known && cuco_task_alive(now[i]))
			return now[i];
	}
	return 0;
}

/* A live child of this process, or 0. The process is a child subreaper,
 * so a daemon that forked twice and called setsid() is still its child.
 * waitid() says at once when there is no child at all (the common case);
 * only otherwise is /proc read, for a child's ppid that is not a zombie. */
static inline long cuco_live_child(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return 0;  /* ECHILD */
	DIR *d = opendir("/proc");
	long self = (long)getpid(), found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300], buf[512];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		const char *p = strrchr(buf, ')');
		long ppid = 0;
		char state = 0;
		if (p && sscanf(p + 1, " %c %ld", &state, &ppid) == 2 && ppid == self
			&& state != 'Z' && state != 'X')
			found = atol(e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* Take the threads alive now as the libraries' own, become a subreaper,
 * and find the interposer. */
static inline void cuco_watch_start(cuco_watch *w)
{
	w->ntids = cuco_tasks(w->tids, CUCO_MAX_TASKS);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	*(void **)&w->count_window = dlsym(RTLD_DEFAULT, "cuco_count_window");
	*(void **)&w->count_names = dlsym(RTLD_DEFAULT, "cuco_count_names");
	*(void **)&w->count_of = dlsym(RTLD_DEFAULT, "cuco_count_of");
	if (!w->count_names || !w->count_of)
		w->count_window = NULL;
}

/* The threads alive now are the libraries' too (the GPU harness calls it
 * after the first step: CUDA, NCCL and cuBLAS may start threads on first
 * use). */
static inline void cuco_watch_rebase(cuco_watch *w)
{
	w->ntids = cuco_tasks(w->tids, CUCO_MAX_TASKS);
}

/* Count host calls only inside steps. */
static inline void cuco_watch_window(const cuco_watch *w, int on)
{
	if (w->count_window)
		w->count_window(on);
}

/* After a step: a thread or a child it left running, or 0. A thread it
 * joined may take a moment to leave /proc, so look again for up to ~50 ms
 * before judging. A child found is killed, with any others: the verdict
 * says it was there, and left alive it would hold the ranks' output open
 * and keep mpirun waiting. */
static inline void cuco_watch_step(const cuco_watch *w, long *thread, long *child)
{
	const struct timespec ms = { 0, 1000000L };
	*thread = *child = 0;
	for (int i = 0; i < 50; i++) {
		*thread = cuco_new_thread(w);
		*child = cuco_live_child();
		if (!*thread && !*child)
			return;
		nanosleep(&ms, NULL);
	}
	for (long c = *child; c; c = cuco_live_child()) {
		kill((pid_t)c, SIGKILL);
		waitpid((pid_t)c, NULL, 0);
	}
}

/* ---- the verdict ------------------------------------------------------------------ */

/* One rank's findings, gathered by the harness with a MAX over ranks
 * (every cell starts at -1): the worst error of each kind of checked step
 * (the GPU's stream probe is one), the first step that left a thread, a
 * child or device work running (with how long the device went on, in µs),
 * and the stream probe's findings when it contradicts the samples: the
 * device time per launch it measured and the samples' median. */
enum { CUCO_V1, CUCO_V2, CUCO_SPOT, CUCO_PROBE, CUCO_POST, CUCO_SPOT_REP, CUCO_THREAD_REP,
	CUCO_CHILD_REP, CUCO_STREAM_REP, CUCO_STREAM_US, CUCO_PROBE_US, CUCO_PROBE_SAID, CUCO_ROW };

static inline void cuco_row_init(double *row)
{
	for (int s = 0; s < CUCO_ROW; s++)
		row[s] = -1;
}

/* Record a checked step's error e (NaN: infinitely wrong) in row[slot]. */
static inline double cuco_row_error(double *row, int slot, double e)
{
	if (isnan(e))
		e = INFINITY;
	if (e > row[slot])
		row[slot] = e;
	return e;
}

/* Record that step rep left something running (first one counts). */
static inline void cuco_row_first(double *row, int slot, int rep)
{
	if (row[slot] < 0)
		row[slot] = rep;
}

/* The first rank whose rows[slot] exceeds limit (-1: none), its value. */
static inline int cuco_worst(const double *rows, int nranks, int slot, double limit, double *value)
{
	for (int q = 0; q < nranks; q++)
		if (rows[q * CUCO_ROW + slot] > limit) {
			*value = rows[q * CUCO_ROW + slot];
			return q;
		}
	return -1;
}

/* "max error 0.3" or, for poison left in place, the unwritten output. */
static inline const char *cuco_error_words(double e, char *buf, size_t size)
{
	if (isinf(e))
		snprintf(buf, size, "output left unwritten (poison or NaN in it)");
	else
		snprintf(buf, size, "max error %.3g", e);
	return buf;
}

/* The verdict's reasons from all ranks' rows: why (the first verified run
 * was wrong: a wrong answer) or suspect (a defence caught something). A
 * step that left work running is suspect whatever its answer; a wrong
 * answer that only a later check saw (other inputs, a timed repetition,
 * the post-loop step) is suspect too: the first verified run was right. */
static inline void cuco_judge(const double *rows, int nranks, double tolerance, uint64_t seed,
	char *why, size_t wsize, char *suspect, size_t ssize)
{
	double v;
	int q;
	char e[64];
	why[0] = suspect[0] = '\0';
	if ((q = cuco_worst(rows, nranks, CUCO_THREAD_REP, -1, &v)) >= 0)
		snprintf(suspect, ssize, "threads: on rank %d, step %.0f returned with a thread it started "
			"still running: work outside the timed region", q, v);
	else if ((q = cuco_worst(rows, nranks, CUCO_CHILD_REP, -1, &v)) >= 0)
		snprintf(suspect, ssize, "children: on rank %d, step %.0f left a child process running: "
			"work outside the timed region", q, v);
	else if ((q = cuco_worst(rows, nranks, CUCO_STREAM_REP, -1, &v)) >= 0)
		snprintf(suspect, ssize, "streams: on rank %d, step %.0f left device work running %.0f us "
			"after its main stream was done: work on a stream not joined to it", q, v,
			rows[q * CUCO_ROW + CUCO_STREAM_US]);
	else if ((q = cuco_worst(rows, nranks, CUCO_PROBE_US, -1, &v)) >= 0)
		snprintf(suspect, ssize, "streams: on rank %d, launches back to back kept the device busy "
			"%.2f us each (host clock, every stream), but the timed samples say %.2f us: work the "
			"main stream's events did not time", q, v, rows[q * CUCO_ROW + CUCO_PROBE_SAID]);
	else if ((q = cuco_worst(rows, nranks, CUCO_V1, tolerance, &v)) >= 0)
		snprintf(why, wsize, "verification 1 of 2 (input seed %016llx): %s on rank %d",
			(unsigned long long)cuco_mix(seed ^ 1), cuco_error_words(v, e, sizeof e), q);
	else if ((q = cuco_worst(rows, nranks, CUCO_V2, tolerance, &v)) >= 0)
		snprintf(suspect, ssize, "verification 2 of 2 (input seed %016llx): %s on rank %d, on other "
			"inputs than the first verified run, which was right: results kept across calls, or "
			"right only on some inputs", (unsigned long long)cuco_mix(seed ^ 2),
			cuco_error_words(v, e, sizeof e), q);
	else if ((q = cuco_worst(rows, nranks, CUCO_SPOT, tolerance, &v)) >= 0)
		snprintf(suspect, ssize, "spot check: step %.0f, a timed repetition: %s on rank %d, although "
			"both verified runs were right: work skipped or deferred in timed repetitions",
			rows[q * CUCO_ROW + CUCO_SPOT_REP], cuco_error_words(v, e, sizeof e), q);
	else if ((q = cuco_worst(rows, nranks, CUCO_PROBE, tolerance, &v)) >= 0)
		snprintf(suspect, ssize, "stream probe: a launch of the back-to-back ones after the timed "
			"loop, checked at random: %s on rank %d: work skipped when unchecked",
			cuco_error_words(v, e, sizeof e), q);
	else if ((q = cuco_worst(rows, nranks, CUCO_POST, tolerance, &v)) >= 0)
		snprintf(suspect, ssize, "post-loop check: the step after the timed loop, on fresh inputs: "
			"%s on rank %d: results kept from earlier calls", cuco_error_words(v, e, sizeof e), q);
}

/* The worst error of every checked step on every rank. */
static inline double cuco_rows_error(const double *rows, int nranks)
{
	double worst = 0;
	for (int q = 0; q < nranks; q++)
		for (int s = CUCO_V1; s <= CUCO_POST; s++)
			worst = fmax(worst, rows[q * CUCO_ROW + s]);
	return worst;
}

/* JSON string contents: quotes, backslashes and control bytes become '. */
static inline void cuco_plain(char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < ' ')
			*s = '\'';
}

/* Append the verdict's common tail to json[0..n): seed, ranks, checks, the
 * host calls (when counted), why and suspect; then close the object. */
static inline int cuco_verdict_tail(char *json, size_t size, int n, int nranks, int checks,
	long host_calls, char *calls_by, char *why, char *suspect)
{
	n += snprintf(json + n, size - (size_t)n, ", \"seed\": \"%016llx\", \"ranks\": %d, \"checks\": %d",
		(unsigned long long)cuco_ticket_seed(), nranks, checks);
	if (host_calls >= 0) {
		cuco_plain(calls_by);
		n += snprintf(json + n, size - (size_t)n, ", \"host_calls\": %ld, \"host_calls_by\": \"%s\"",
			host_calls, calls_by);
	}
	cuco_plain(why);
	cuco_plain(suspect);
	if (*why)
		n += snprintf(json + n, size - (size_t)n, ", \"why\": \"%s\"", why);
	if (*suspect)
		n += snprintf(json + n, size - (size_t)n, ", \"suspect\": \"%s\"", suspect);
	return n + snprintf(json + n, size - (size_t)n, "}");
}

/* Print the verdict: sealed under the evaluator's key, or plain when run
 * by hand. One write(2), so no other output splits it. The key is wiped
 * after: nothing later in the process may seal a second verdict. */
static inline void cuco_emit(const char *json)
{
	char line[8192];
	int n;
	if (cuco_ticket.sealed)
		n = snprintf(line, sizeof line, "%s%016llx %s\n", CUCO_SEAL_TAG,
			(unsigned long long)cuco_seal(cuco_ticket.t.k0, cuco_ticket.t.k1, json, strlen(json)),
			json);
	else
		n = snprintf(line, sizeof line, "CUCO_RESULT %s\n", json);
	memset(&cuco_ticket.t, 0, sizeof cuco_ticket.t);
	cuco_ticket.sealed = 0;
	fflush(stdout);
	if (n >= (int)sizeof line)
		n = (int)sizeof line - 1;
	for (int off = 0; off < n;) {
		ssize_t w = write(1, line + off, (size_t)(n - off));
		if (w <= 0)
			break;
		off += (int)w;
	}
}

#endif
