/* bench/soak — issue 7's soak: `cuco run --strategy evolve` for a given
 * time against the scripted model server (tests/agents/llm_server.py) in
 * its random mode, which cuts streams, refuses connections, answers late
 * or slowly, stalls past the idle limit, answers 500, 429 and garbage, and
 * whose replies are candidates that are fine, do not compile, crash or
 * hang. Every second (5 s in runs over 5 minutes) it samples the cuco
 * process: resident memory (/proc/PID/status), open files (/proc/PID/fd)
 * and descendants (a walk of /proc). At the end it checks the books:
 * every reply the server delivered is one candidate, every other request
 * is a failed attempt in cuco's log (but for the calls the run's end cut
 * short, which the store keeps as cancelled), every candidate was
 * evaluated; and that memory stayed flat after the warm-up, no file was
 * left open, no child left behind. Prints the figures; exits 1 when a check fails.
 *
 * A C program rather than a shell script: /proc is read directly at each
 * sample (no ps, awk or their cost in the figures), the store is read
 * through its own API, and the soak becomes a subreaper, so a candidate's
 * process that outlives its parent comes back to it and is counted.
 *
 * usage: soak [--minutes M | --seconds S] [--seed N] [--jobs J]
 *             [--rss-tolerance MIB] [--keep]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "store/store.h"

/* AddressSanitizer's quarantine and shadow memory make resident memory
 * meaningless; under it the memory check is reported, not enforced. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define IDLE_S 2          /* the client's idle limit; a stall outlasts it */
#define REFUSE_S 6        /* the longest refusal: longer than one call's retries */
/* evolve keeps a small record of every candidate (about 150 bytes: its
 * place in the tree, score and source hash; the directive is read from the
 * store when needed): memory that grows with the history by design. Flat
 * means growth of no more than this per candidate made after the warm-up
 * (the records twice over, for the arrays' doubling), on top of the
 * tolerance. */
#define BYTES_PER_CANDIDATE 512
#define FD_SLACK 4        /* the floor of open files wobbles with the work in flight */

typedef struct options {
	double seconds;
	int seed, jobs;
	double rss_tol_mib;
	int keep;
} options;

typedef struct sample {
	double t;
	long rss_kb, anon_kb;
	int fds, children;
	int resident;  /* open files that are not pipes, sockets or a stage's work files */
} sample;

/* Open files counted by kind, in the order first seen. */
#define MAX_FD_KINDS 64
typedef struct fd_kinds {
	int n;
	struct { char name[256]; int count; } kind[MAX_FD_KINDS];
} fd_kinds;

typedef struct soak {
	options o;
	char dir[64];
	pid_t server, cuco;
	int cuco_status;
	double wall0;          /* wall-clock time of the first sample */
	sample *s;
	size_t n, cap;
	int orphans_reaped;    /* grandchildren that came back to the subreaper */
	char orphan_names[128]; /* their names, each once */
	int orphans_left;      /* and those still alive at the end */
	int peak_fds;          /* the most open files seen, when, and of what */
	double peak_t;
	fd_kinds peak_kinds;
} soak;

/* ---- setup ---------------------------------------------------------------- */

static int put(const char *dir, const char *name, const char *text)
{
	char path[256];
	cuco_err err;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (cuco_write_file(path, text, strlen(text), &err) == CUCO_OK)
		return 0;
	fprintf(stderr, "soak: %s\n", err.msg);
	return -1;
}

/* The toy fixture, with time limits short enough that a hanging candidate
 * costs seconds, not the fixture's ten. The seal's header goes beside it,
 * since toy.h's path to the tree's copy does not hold outside the tree. */
static int copy_toy(const soak *k)
{
	static const char *const files[] = { "tests/agents/fixtures/toy/workload.json",
		"tests/agents/fixtures/toy/baseline.c", "tests/agents/fixtures/toy/seed.c",
		"tests/agents/fixtures/toy/toy.h", "workloads/common/cuco_seal.h" };
	static const char seal_path[] = "\"../../../../workloads/common/cuco_seal.h\"";
	char dst[128];
	snprintf(dst, sizeof dst, "%s/toy", k->dir);
	if (cuco_mkdir_p(dst, NULL) != CUCO_OK)
		return -1;
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char src[1024], *text;
		snprintf(src, sizeof src, "%s/%s", CUCO_SOURCE_ROOT, files[i]);
		cuco_err err;
		if (cuco_read_file(src, 1 << 20, &text, NULL, &err) != CUCO_OK) {
			fprintf(stderr, "soak: %s\n", err.msg);
			return -1;
		}
		char *lim = strstr(text, "\"run_s\": 10, \"bench_s\": 10");
		if (lim)
			memcpy(lim, "\"run_s\":  2, \"bench_s\":  2", 26);
		char *inc = strstr(text, seal_path);
		if (inc)  /* same length, blank-padded: "cuco_seal.h" then spaces */
			memcpy(inc, "\"cuco_seal.h\"                             ", sizeof seal_path - 1);
		int rc = put(dst, strrchr(files[i], '/') + 1, text);
		free(text);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* One reply template of a kind: the toy's directive, then a line after
 * main's opening brace (which every descendant keeps) naming the kind and
 * the request, so no two replies are alike and the store tells them apart. */
static void add_reply(cJSON *replies, const char *kind, int weight, const char *code)
{
	char text[1024];
	snprintf(text, sizeof text, "DIRECTIVE:\nbackend: msg\nissuer: one\nplacement: after\n"
		"sync: fence\ngranularity: 1\n\n<NAME>soak_%s_{n}</NAME>\n<DESCRIPTION>Soak reply {n} "
		"(%s).</DESCRIPTION>\n<DIFF>\n<<<<<<< SEARCH\nint main(int argc, char **argv)\n{\n"
		"=======\nint main(int argc, char **argv)\n{\n\tenum { CUCO_SOAK_%s_{n} = {n} };\n%s"
		">>>>>>> REPLACE\n</DIFF>\n", kind, kind, kind, code);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "kind", kind);
	cJSON_AddNumberToObject(r, "weight", weight);
	cJSON_AddStringToObject(r, "text", text);
	cJSON_AddItemToArray(replies, r);
}

/* The server's random mode: about one request in three meets a fault. */
static char *server_script(const soak *k)
{
	static const struct { const char *name; double p; } faults[] = {
		{ "truncate", 0.05 }, { "refuse", 0.02 }, { "wait", 0.04 }, { "slow", 0.04 },
		{ "stall", 0.02 }, { "500", 0.04 }, { "429", 0.03 }, { "invalid_json", 0.03 },
		{ "close", 0.02 },
	};
	cJSON *root = cJSON_CreateObject(), *rnd = cJSON_AddObjectToObject(root, "random");
	cJSON_AddNumberToObject(rnd, "seed", k->o.seed);
	cJSON_AddNumberToObject(rnd, "idle", IDLE_S);
	cJSON_AddNumberToObject(rnd, "refuse_s", REFUSE_S);
	cJSON *f = cJSON_AddObjectToObject(rnd, "faults");
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		cJSON_AddNumberToObject(f, faults[i].name, faults[i].p);
	cJSON *replies = cJSON_AddArrayToObject(rnd, "replies");
	add_reply(replies, "GOOD", 12, "");
	add_reply(replies, "BROKEN", 2, "\tthis is not C;\n");
	add_reply(replies, "CRASH", 2, "\tif (argc > 0)\n\t\t__builtin_trap();\n");
	add_reply(replies, "HANG", 1, "\tfor (volatile int spin = 1; spin;)\n\t\t;\n");
	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

static pid_t start(char *const argv[], const char *xdg, const char *out)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (xdg)
		setenv("XDG_CONFIG_HOME", xdg, 1);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	execv(argv[0], argv);
	_exit(127);
}

static int start_server(soak *k)
{
	char *script = server_script(k);
	int rc = put(k->dir, "script.json", script);
	free(script);
	if (rc != 0)
		return -1;
	char sp[128], lp[128], pp[128], out[128];
	snprintf(sp, sizeof sp, "%s/script.json", k->dir);
	snprintf(lp, sizeof lp, "%s/requests.jsonl", k->dir);
	snprintf(pp, sizeof pp, "%s/port", k->dir);
	snprintf(out, sizeof out, "%s/server.out", k->dir);
	char *argv[] = { CUCO_PYTHON, CUCO_LLM_SERVER, sp, lp, pp, NULL };
	if ((k->server = start(argv, NULL, out)) < 0)
		return -1;
	for (int i = 0; i < 200; i++) {  /* 10 s for the interpreter to start */
		char *text;
		if (cuco_read_file(pp, 64, &text, NULL, NULL) == CUCO_OK) {
			int port = atoi(text);
			free(text);
			return port;
		}
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
	fprintf(stderr, "soak: the model server did not start (see %s)\n", out);
	return -1;
}

/* Short timeouts and backoffs so that faults cost seconds: a stall is
 * dropped after IDLE_S, four retries span about 3 s, so a refusal of up
 * to REFUSE_S sometimes outlasts a call (which the run must survive). */
static int write_config(const soak *k, int port)
{
	char cfg_dir[128], text[512];
	snprintf(cfg_dir, sizeof cfg_dir, "%s/xdg/cuco", k->dir);
	if (cuco_mkdir_p(cfg_dir, NULL) != CUCO_OK)
		return -1;
	snprintf(text, sizeof text, "retries = 4\nbackoff = 0.2\nbackoff_max = 2\n"
		"connect_timeout = 2\nidle_timeout = %d\ntimeout = 60\n"
		"[model test]\nprovider = openai\nmodel = test\nurl = http://127.0.0.1:%d/v1\n"
		"api_key_env =\n[evolve]\nfastpath = false\nmeta_interval = 0\n", IDLE_S, port);
	return put(cfg_dir, "config", text);
}

static int start_cuco(soak *k)
{
	char wl[128], run[128], xdg[128], out[128], minutes[32], seed[16], jobs[16];
	snprintf(wl, sizeof wl, "%s/toy", k->dir);
	snprintf(run, sizeof run, "%s/run", k->dir);
	snprintf(xdg, sizeof xdg, "%s/xdg", k->dir);
	snprintf(out, sizeof out, "%s/cuco.out", k->dir);
	snprintf(minutes, sizeof minutes, "%.4f", k->o.seconds / 60);
	snprintf(seed, sizeof seed, "%d", k->o.seed);
	snprintf(jobs, sizeof jobs, "%d", k->o.jobs);
	char *argv[] = { CUCO_BIN, "run", wl, "--run", run, "--headless", "--strategy", "evolve",
		"--minutes", minutes, "--seed", seed, "--jobs", jobs, "--rebench", "0", NULL };
	k->cuco = start(argv, xdg, out);
	return k->cuco < 0 ? -1 : 0;
}

/* ---- sampling ------------------------------------------------------------- */

static long status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long kb = -1;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			kb = atol(line + kl + 1);
	if (f)
		fclose(f);
	return kb;
}

/* The kind of an open file, for the peak's make-up: "pipe", "socket",
 * "anon_inode:[pidfd]"..., "work" for a stage's work file, else its path. */
static void fd_kind(const char *target, const char *work, char *kind, size_t size)
{
	if (strncmp(target, work, strlen(work)) == 0)
		snprintf(kind, size, "work");
	else
		snprintf(kind, size, "%.*s", (int)strcspn(target, ":["), target);
	if (strncmp(target, "anon_inode:", 11) == 0)
		snprintf(kind, size, "%s", target);
}

/* Adds one to KIND's count (a path by its first 255 bytes); a kind past
 * the table's room is not counted. */
static void count_kind(fd_kinds *k, const char *kind)
{
	int i = 0;
	while (i < k->n && strncmp(k->kind[i].name, kind, sizeof k->kind[0].name - 1) != 0)
		i++;
	if (i == MAX_FD_KINDS)
		return;
	if (i == k->n) {
		cuco_strlcpy(k->kind[i].name, kind, sizeof k->kind[0].name);
		k->kind[k->n++].count = 0;
	}
	k->kind[i].count++;
}

/* The counts as "kind xN, kind xN, ...", in the order first seen. */
static void kinds_text(const fd_kinds *k, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < k->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s x%d", i ? ", " : "",
			k->kind[i].name, k->kind[i].count);
}

/* Open files of pid, all of them and those that stay: the store, the log,
 * the terminal's streams. Pipes, sockets, event descriptors and the files
 * under the run's work directory come and go with the evaluations and
 * calls in flight. -1 when the process is gone. KINDS, when not NULL,
 * gets what they are, counted by kind. */
static int count_fds(const soak *k, pid_t pid, int *resident, fd_kinds *kinds)
{
	char path[64], target[PATH_MAX], work[96], kind[PATH_MAX];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	snprintf(work, sizeof work, "%s/run/work", k->dir);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	*resident = 0;
	if (kinds)
		kinds->n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		ssize_t len = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
		if (len <= 0)
			continue;  /* closed between the listing and the look */
		target[len] = '\0';
		*resident += target[0] == '/' && strncmp(target, work, strlen(work)) != 0;
		if (kinds) {
			fd_kind(target, work, kind, sizeof kind);
			count_kind(kinds, kind);
		}
	}
	closedir(d);
	return n;
}

/* A process's parent, from /proc/PID/stat (the name may hold spaces and
 * parentheses, hence the last ')'); -1 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	int ppid;
	return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : -1;
}

/* Every process's parent, for descendant walks; pids[i] → ppids[i]. */
static size_t process_table(pid_t **pids, pid_t **ppids)
{
	size_t n = 0, cap = 512;
	*pids = cuco_xmalloc(cap * sizeof **pids);
	*ppids = cuco_xmalloc(cap * sizeof **ppids);
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		pid_t pid = (pid_t)atoi(e->d_name), pp;
		if (pid <= 0 || (pp = parent_of(pid)) < 0)
			continue;
		if (n == cap) {
			cap *= 2;
			*pids = cuco_xrealloc(*pids, cap * sizeof **pids);
			*ppids = cuco_xrealloc(*ppids, cap * sizeof **ppids);
		}
		(*pids)[n] = pid;
		(*ppids)[n++] = pp;
	}
	if (d)
		closedir(d);
	return n;
}

/* How many processes descend from root (root excluded). */
static int descendants(pid_t root)
{
	pid_t *pids, *ppids;
	size_t n = process_table(&pids, &ppids);
	char *in = calloc(n, 1);
	int count = 0;
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (in[i])
				continue;
			bool child = ppids[i] == root;
			for (size_t j = 0; j < n && !child; j++)
				child = in[j] && pids[j] == ppids[i];
			if (child) {
				in[i] = 1;
				count++;
				grew = true;
			}
		}
	}
	free(in);
	free(pids);
	free(ppids);
	return count;
}

/* An orphan's name, read while it is still a zombie. */
static void note_orphan(soak *k, pid_t pid)
{
	char path[64], name[32] = "?";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (f && fgets(name, sizeof name, f))
		name[strcspn(name, "\n")] = '\0';
	if (f)
		fclose(f);
	k->orphans_reaped++;
	size_t used = strlen(k->orphan_names);
	if (!strstr(k->orphan_names, name) && used + strlen(name) + 2 < sizeof k->orphan_names)
		snprintf(k->orphan_names + used, sizeof k->orphan_names - used, " %s", name);
}

/* Reap what has ended: cuco itself, or an orphan handed to the subreaper.
 * True once cuco has ended. */
static bool reap(soak *k)
{
	for (;;) {
		siginfo_t si = { 0 };
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
			break;
		pid_t p = si.si_pid;
		if (p != k->cuco && p != k->server)
			note_orphan(k, p);
		int st;
		waitpid(p, &st, 0);
		if (p == k->cuco) {
			k->cuco_status = st;
			k->cuco = 0;
		}
	}
	return k->cuco == 0;
}

static void take_sample(soak *k, double t)
{
	int resident = 0;
	fd_kinds kinds;
	int fds = count_fds(k, k->cuco, &resident, &kinds);
	sample s = { .t = t, .rss_kb = status_kb(k->cuco, "VmRSS"),
		.anon_kb = status_kb(k->cuco, "RssAnon"), .fds = fds, .resident = resident,
		.children = descendants(k->cuco) };
	if (s.rss_kb < 0 || s.fds < 0)
		return;  /* it ended between two looks */
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 256;
		k->s = cuco_xrealloc(k->s, k->cap * sizeof *k->s);
	}
	k->s[k->n++] = s;
	if (fds > k->peak_fds) {
		k->peak_fds = fds, k->peak_t = t;
		k->peak_kinds = kinds;
	}
}

/* Sample until cuco ends; it ends by its own --minutes, or is stopped
 * after a grace of two minutes past them (the time a run may take to
 * finish its evaluations in flight). */
static void watch(soak *k)
{
	double t0 = cuco_mono(), every = k->o.seconds > 300 ? 5 : 1;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	k->wall0 = (double)now.tv_sec + now.tv_nsec / 1e9;
	bool stopped = false;
	while (!reap(k)) {
		double t = cuco_mono() - t0;
		take_sample(k, t);
		if (!stopped && t > k->o.seconds + 120) {
			fprintf(stderr, "soak: cuco run outlived its time by 2 minutes; stopping it\n");
			kill(k->cuco, SIGTERM);
			stopped = true;
		}
		nanosleep(&(struct timespec){ (time_t)every, (long)(fmod(every, 1) * 1e9) }, NULL);
	}
}

/* The soak's own children besides the server once cuco is gone: orphans
 * of candidates that are still alive. */
static int leftover_children(const soak *k)
{
	pid_t *pids, *ppids;
	size_t n = process_table(&pids, &ppids);
	int left = 0;
	for (size_t i = 0; i < n; i++)
		left += ppids[i] == getpid() && pids[i] != k->server;
	free(pids);
	free(ppids);
	return left;
}

/* ---- the books ------------------------------------------------------------ */

enum { K_GOOD, K_BROKEN, K_CRASH, K_HANG, K_NONE, NKINDS };
static const char *const kind_name[NKINDS] = { "GOOD", "BROKEN", "CRASH", "HANG", "?" };

typedef struct books {
	/* the server's log */
	int requests, delivered, by_kind[NKINDS];
	char fault[16][16];
	int fault_n[16], nfaults;
	/* cuco's log */
	int retries, refused_attempts, gave_up_lines;
	/* the store */
	int cands, llm, statuses[CUCO_STATUS_COUNT], outcome[NKINDS][3];  /* done, failed, other */
	int dup_replies, model_errors, refused_errors, candidate_events;
	int cancelled;          /* calls the run's end cut short */
	double warm_wall;       /* wall-clock end of the warm-up */
	int after_warm;         /* candidates created after it */
	char end[160];
	int max_n;              /* reply numbers are below it */
} books;

static int fault_slot(books *b, const char *name)
{
	for (int i = 0; i < b->nfaults; i++)
		if (strcmp(b->fault[i], name) == 0)
			return i;
	if (b->nfaults == 16)
		return 15;
	cuco_strlcpy(b->fault[b->nfaults], name, sizeof b->fault[0]);
	return b->nfaults++;
}

static int kind_of(const char *name)
{
	for (int i = 0; i < K_NONE; i++)
		if (strcmp(name, kind_name[i]) == 0)
			return i;
	return K_NONE;
}

/* Call fn on each line of DIR/name. */
static int each_line(const soak *k, const char *name, void (*fn)(char *, books *), books *b)
{
	char path[128], *text;
	snprintf(path, sizeof path, "%s/%s", k->dir, name);
	if (cuco_read_file(path, 1u << 30, &text, NULL, NULL) != CUCO_OK) {
		fprintf(stderr, "soak: cannot read %s\n", path);
		return -1;
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		fn(line, b);
	}
	free(text);
	return 0;
}

/* A line of the server's request log. */
static void request_line(char *line, books *b)
{
	cJSON *r = cJSON_Parse(line);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(r, "fault");
	const cJSON *kd = cJSON_GetObjectItemCaseSensitive(r, "kind");
	b->requests++;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "delivered"))) {
		b->delivered++;
		b->by_kind[kind_of(cJSON_IsString(kd) ? kd->valuestring : "")]++;
	}
	b->fault_n[fault_slot(b, cJSON_IsString(f) ? f->valuestring : "?")]++;
	cJSON_Delete(r);
}

/* Whether a failed attempt never reached the server: refused, or reset
 * in the listen backlog when a "refuse" fault closed the listener (the
 * reset lands while the request is sent, or while the answer is awaited). */
static bool unheard(const char *why)
{
	return strstr(why, "Couldn't connect") || strstr(why, "Failure when receiving data") ||
		strstr(why, "Failed sending data to the peer");
}

/* A line of cuco's log: each failed attempt that was retried is one. */
static void log_line(char *line, books *b)
{
	if (strstr(line, " llm: ") && strstr(line, "; retrying in ")) {
		b->retries++;
		b->refused_attempts += unheard(line);
	}
	b->gave_up_lines += strstr(line, "engine: a model call gave up") != NULL;
}

typedef struct store_walk {
	books *b;
	cuco_txn *txn;
	char *seen;             /* reply numbers met, to catch duplicates */
} store_walk;

/* The reply behind an LLM child: the first marker after main's brace is
 * its own (a descendant keeps its parents' lines below it). */
static void reply_of(const char *src, int *kind, int *n)
{
	*kind = K_NONE;
	*n = -1;
	const char *m = strstr(src, "enum { CUCO_SOAK_");
	char name[16];
	if (m && sscanf(m, "enum { CUCO_SOAK_%15[A-Z]_%d", name, n) == 2)
		*kind = kind_of(name);
}

static int cand_one(const cuco_candidate *c, void *arg)
{
	store_walk *w = arg;
	books *b = w->b;
	b->cands++;
	b->statuses[c->status]++;
	b->after_warm += c->created >= b->warm_wall;
	if (c->origin != CUCO_ORIGIN_LLM_FULL && c->origin != CUCO_ORIGIN_LLM_DIFF &&
			c->origin != CUCO_ORIGIN_LLM_CROSS)
		return 0;
	b->llm++;
	char *src = NULL;
	size_t len;
	int kind = K_NONE, n = -1;
	if (cuco_source_get(w->txn, c->source_hash, &src, &len) == CUCO_OK)
		reply_of(src, &kind, &n);
	free(src);
	if (n >= 0 && n < b->max_n) {
		b->dup_replies += w->seen[n];
		w->seen[n] = 1;
	}
	int o = c->status == CUCO_STATUS_DONE ? 0 : c->status == CUCO_STATUS_FAILED ? 1 : 2;
	b->outcome[kind][o]++;
	return 0;
}

static int event_one(const cuco_event *ev, void *arg)
{
	books *b = ((store_walk *)arg)->b;
	if (ev->kind == CUCO_EVENT_MODEL_ERROR) {
		b->model_errors++;
		b->refused_errors += unheard(ev->text);
	}
	b->candidate_events += ev->kind == CUCO_EVENT_CANDIDATE;
	if (ev->kind == CUCO_EVENT_RUN_END)
		cuco_strlcpy(b->end, ev->text, sizeof b->end);
	return 0;
}

static int call_one(const cuco_call *c, void *arg)
{
	((store_walk *)arg)->b->cancelled += c->outcome == CUCO_CALL_CANCELLED;
	return 0;
}

static int books_txn(cuco_txn *txn, void *arg)
{
	store_walk *w = arg;
	w->txn = txn;
	int rc = cuco_cand_each(txn, 1, cand_one, w);
	if (rc == CUCO_OK)
		rc = cuco_event_each(txn, 1, event_one, w);
	return rc == CUCO_OK ? cuco_call_each(txn, 1, call_one, w) : rc;
}

static int read_store(const soak *k, books *b)
{
	char run[128];
	snprintf(run, sizeof run, "%s/run", k->dir);
	cuco_store *st;
	cuco_err err;
	if (cuco_store_open(run, CUCO_STORE_RDONLY, &st, &err) != CUCO_OK) {
		fprintf(stderr, "soak: %s\n", err.msg);
		return -1;
	}
	b->max_n = b->requests + 1;
	store_walk w = { .b = b, .seen = calloc((size_t)b->max_n, 1) };
	int rc = cuco_store_read(st, books_txn, &w, &err);
	if (rc != CUCO_OK)
		fprintf(stderr, "soak: %s\n", err.msg);
	free(w.seen);
	cuco_store_close(st);
	return rc == CUCO_OK ? 0 : -1;
}

/* ---- figures and checks --------------------------------------------------- */

typedef struct figures {
	size_t from;            /* first sample after the warm-up */
	long anon_first, anon_last, anon_max, rss_first, rss_last, rss_max;
	double anon_slope, rss_slope;  /* MiB per 10 min, least squares */
	long grown_kb;          /* mean of the last tenth − mean of the first tenth */
	int fd_min, fd_max, children_max;
	int fd_early[3], fd_late[3];  /* min, median, max: first and last quarter after warm-up */
	int res_early[3], res_late[3]; /* the same of the resident files alone */
} figures;

static double mean_anon(const soak *k, size_t a, size_t b)
{
	double sum = 0;
	for (size_t i = a; i < b; i++)
		sum += (double)k->s[i].anon_kb;
	return b > a ? sum / (double)(b - a) : 0;
}

/* The least-squares slope of samples[from..] in MiB per 10 minutes;
 * anon picks RssAnon, else VmRSS. */
static double slope(const soak *k, size_t from, bool anon)
{
	double n = (double)(k->n - from), st = 0, sy = 0, stt = 0, sty = 0;
	for (size_t i = from; i < k->n; i++) {
		double t = k->s[i].t, y = (double)(anon ? k->s[i].anon_kb : k->s[i].rss_kb);
		st += t, sy += y, stt += t * t, sty += t * y;
	}
	double den = n * stt - st * st;
	return den > 0 ? (n * sty - st * sy) / den * 600 / 1024 : 0;
}

static void memory_figures(const soak *k, figures *f)
{
	size_t n = k->n - f->from, tenth = n / 10 ? n / 10 : 1;
	f->anon_first = k->s[f->from].anon_kb, f->anon_last = k->s[k->n - 1].anon_kb;
	f->rss_first = k->s[f->from].rss_kb, f->rss_last = k->s[k->n - 1].rss_kb;
	for (size_t i = f->from; i < k->n; i++) {
		const sample *s = &k->s[i];
		f->anon_max = s->anon_kb > f->anon_max ? s->anon_kb : f->anon_max;
		f->rss_max = s->rss_kb > f->rss_max ? s->rss_kb : f->rss_max;
	}
	f->anon_slope = slope(k, f->from, true);
	f->rss_slope = slope(k, f->from, false);
	f->grown_kb = (long)(mean_anon(k, k->n - tenth, k->n) - mean_anon(k, f->from, f->from + tenth));
}

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Min, median and max of the open files (or the resident ones) in
 * samples [a, b). */
static void fd_spread(const soak *k, size_t a, size_t b, bool resident, int out[3])
{
	int *v = cuco_xmalloc((b - a) * sizeof *v);
	for (size_t i = a; i < b; i++)
		v[i - a] = resident ? k->s[i].resident : k->s[i].fds;
	qsort(v, b - a, sizeof *v, by_value);
	out[0] = v[0], out[1] = v[(b - a) / 2], out[2] = v[b - a - 1];
	free(v);
}

/* Open files come and go with the evaluations and calls in flight: within
 * one quarter of a 60 s soak under the sandbox they range 15-32, and a
 * quarter's peak is whichever moment the most stages and calls overlapped
 * (CI once saw 22 in the first quarter and 33 in the last, with the same
 * floor). A leak lifts the floor instead, the moments with the least in
 * flight: the last quarter's floor is held to the first's plus a slack
 * (measured floors differed by 0 to 3), and the files outside the work
 * directory, which only a file or two opened for a moment (a source read,
 * a log) make wobble, to the first quarter's peak. */
static void fd_figures(const soak *k, figures *f)
{
	size_t quarter = (k->n - f->from) / 4 ? (k->n - f->from) / 4 : 1;
	f->fd_min = k->s[0].fds;
	for (size_t i = 0; i < k->n; i++) {
		const sample *s = &k->s[i];
		f->fd_min = s->fds < f->fd_min ? s->fds : f->fd_min;
		f->fd_max = s->fds > f->fd_max ? s->fds : f->fd_max;
		f->children_max = s->children > f->children_max ? s->children : f->children_max;
	}
	fd_spread(k, f->from, f->from + quarter, false, f->fd_early);
	fd_spread(k, k->n - quarter, k->n, false, f->fd_late);
	fd_spread(k, f->from, f->from + quarter, true, f->res_early);
	fd_spread(k, k->n - quarter, k->n, true, f->res_late);
}

static int failures;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("  %-4s ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures += !ok;
}

static void print_resources(const soak *k, const figures *f)
{
	double warm = k->s[f->from].t, span = k->s[k->n - 1].t;
	printf("resources of the cuco process (%zu samples over %.0f s; warm-up %.0f s):\n", k->n,
		span, warm);
	printf("  %-28s %10s %10s %10s %14s\n", "after warm-up, MiB", "first", "last", "max",
		"slope/10 min");
	printf("  %-28s %10.1f %10.1f %10.1f %+14.2f\n", "VmRSS (heap + mapped store)",
		f->rss_first / 1024.0, f->rss_last / 1024.0, f->rss_max / 1024.0, f->rss_slope);
	printf("  %-28s %10.1f %10.1f %10.1f %+14.2f\n", "RssAnon (heap, stacks)",
		f->anon_first / 1024.0, f->anon_last / 1024.0, f->anon_max / 1024.0, f->anon_slope);
	printf("  %-28s %10d %10d\n", "open files (min, max)", f->fd_min, f->fd_max);
	printf("  %-28s %10d %10d %10d\n", "  1st quarter min/med/max", f->fd_early[0],
		f->fd_early[1], f->fd_early[2]);
	printf("  %-28s %10d %10d %10d\n", "  last quarter min/med/max", f->fd_late[0],
		f->fd_late[1], f->fd_late[2]);
	printf("  %-28s %10d %10d %10d\n", "  resident, 1st quarter", f->res_early[0],
		f->res_early[1], f->res_early[2]);
	printf("  %-28s %10d %10d %10d\n", "  resident, last quarter", f->res_late[0], f->res_late[1],
		f->res_late[2]);
	char kinds[512];
	kinds_text(&k->peak_kinds, kinds, sizeof kinds);
	printf("  %-28s %10d at %.0f s: %s\n", "  the peak, by kind", k->peak_fds, k->peak_t, kinds);
	printf("  %-28s %10d\n", "descendants, max", f->children_max);
	printf("  %-28s %10d %10d  %s\n", "orphans reaped, left", k->orphans_reaped, k->orphans_left,
		k->orphan_names);
}

static void print_books(const books *b)
{
	printf("model server: %d requests, %d whole replies delivered; by fault:\n ", b->requests,
		b->delivered);
	for (int i = 0; i < b->nfaults; i++)
		printf(" %s %d", b->fault[i], b->fault_n[i]);
	printf("\nreplies delivered by kind:");
	for (int i = 0; i < K_NONE; i++)
		printf(" %s %d", kind_name[i], b->by_kind[i]);
	printf("\ncuco: %d attempts retried (%d refused or reset at connect), %d calls gave up "
		"(model-error events; %d log lines)\n", b->retries, b->refused_attempts, b->model_errors,
		b->gave_up_lines);
	printf("model calls: %d made = %d answered + %d gave up; %d candidates from the model; "
		"%d evaluations finished\n", b->delivered + b->model_errors, b->delivered,
		b->model_errors, b->llm, b->statuses[CUCO_STATUS_DONE] + b->statuses[CUCO_STATUS_FAILED]);
	printf("store: %d candidates, %d from the model; statuses:", b->cands, b->llm);
	for (int s = 0; s < CUCO_STATUS_COUNT; s++)
		if (b->statuses[s])
			printf(" %s %d", cuco_status_name(s), b->statuses[s]);
	printf("\n  model candidates by reply (done/failed/other):");
	for (int i = 0; i < NKINDS; i++)
		if (b->outcome[i][0] + b->outcome[i][1] + b->outcome[i][2])
			printf(" %s %d/%d/%d", kind_name[i], b->outcome[i][0], b->outcome[i][1],
				b->outcome[i][2]);
	printf("\n  run-end: %s\n", b->end[0] ? b->end : "(none)");
}

static void check_all(const soak *k, const figures *f, const books *b)
{
	printf("checks:\n");
	check(WIFEXITED(k->cuco_status) && WEXITSTATUS(k->cuco_status) == 0,
		"cuco run exited 0 (status %d)", k->cuco_status);
	long allowed = (long)(k->o.rss_tol_mib * 1024) + BYTES_PER_CANDIDATE * (long)b->after_warm / 1024;
	if (UNDER_ASAN)
		printf("  --   resident memory not checked under AddressSanitizer\n");
	else
		check(f->grown_kb <= allowed, "RssAnon after warm-up grew %.2f MiB (mean of the last "
			"tenth of samples - of the first; %.0f bytes per candidate made since), allowed "
			"%.1f MiB + %d bytes x %d candidates = %.2f MiB", f->grown_kb / 1024.0,
			b->after_warm ? 1024.0 * f->grown_kb / b->after_warm : 0.0, k->o.rss_tol_mib,
			BYTES_PER_CANDIDATE, b->after_warm, allowed / 1024.0);
	check(f->fd_late[0] <= f->fd_early[0] + FD_SLACK && f->res_late[0] <= f->res_early[2],
		"open files: last quarter's floor %d, first quarter's %d (slack %d); resident files' "
		"floor %d, first quarter's peak %d", f->fd_late[0], f->fd_early[0], FD_SLACK,
		f->res_late[0], f->res_early[2]);
	check(k->orphans_left == 0, "no process left behind (%d)", k->orphans_left);
	check(b->llm <= b->delivered, "every candidate from the model is a delivered reply: %d "
		"candidates, %d replies", b->llm, b->delivered);
	check(b->dup_replies == 0 && b->outcome[K_NONE][0] + b->outcome[K_NONE][1] +
		b->outcome[K_NONE][2] == 0, "no duplicate or unknown candidate (%d, %d)", b->dup_replies,
		b->outcome[K_NONE][0] + b->outcome[K_NONE][1] + b->outcome[K_NONE][2]);
	int pending = b->cands - b->statuses[CUCO_STATUS_DONE] - b->statuses[CUCO_STATUS_FAILED] -
		b->statuses[CUCO_STATUS_REJECTED];
	check(pending == 0, "every candidate evaluated (%d left unfinished)", pending);
	check(b->candidate_events == b->cands, "one candidate event per candidate (%d)",
		b->candidate_events);
	int bad_done = b->outcome[K_BROKEN][0] + b->outcome[K_CRASH][0] + b->outcome[K_HANG][0];
	check(bad_done == 0, "no broken, crashing or hanging candidate passed (%d)", bad_done);
	/* Each request that got no whole reply is one failed attempt in cuco's
	 * log: retried, or the last of a call that gave up. Attempts refused
	 * at connect never reached the server. */
	int failed_seen = b->retries - b->refused_attempts + b->model_errors - b->refused_errors;
	check(failed_seen <= b->requests - b->delivered, "every failed attempt in cuco's log is a "
		"failed request: %d attempts, %d requests", failed_seen, b->requests - b->delivered);
	/* The server decides what a request gets when it draws it; the time
	 * limit may cancel a call while its reply streams or its fault plays
	 * out, and the call is stored as cancelled. Nothing pauses or stops a
	 * soak, so only its end cancels. Every other request is accounted for:
	 * a delivered reply is one candidate, a failed one a failed attempt. */
	int lost = (b->delivered - b->llm) + (b->requests - b->delivered - failed_seen);
	check(lost <= b->cancelled, "every other request was cut short by the run's end: %d "
		"unaccounted (%d replies with no candidate, %d failures not logged), %d calls "
		"cancelled", lost, b->delivered - b->llm, b->requests - b->delivered - failed_seen,
		b->cancelled);
	check(b->gave_up_lines == b->model_errors, "every call that gave up is logged (%d)",
		b->gave_up_lines);
	check(b->llm > 0 && b->nfaults > 1, "the run made candidates and met faults");
}

/* ---- main ------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: soak [--minutes M | --seconds S] [--seed N] [--jobs J] "
		"[--rss-tolerance MIB] [--keep]\n");
	return 2;
}

static int parse(int argc, char **argv, options *o)
{
	static const struct option longs[] = {
		{ "minutes", required_argument, NULL, 'm' }, { "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' }, { "jobs", required_argument, NULL, 'j' },
		{ "rss-tolerance", required_argument, NULL, 't' }, { "keep", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (options){ .seconds = 75, .seed = 1, .jobs = 2, .rss_tol_mib = 4 };
	for (int c; (c = getopt_long(argc, argv, "", longs, NULL)) != -1;) {
		switch (c) {
		case 'm': o->seconds = atof(optarg) * 60; break;
		case 's': o->seconds = atof(optarg); break;
		case 'r': o->seed = atoi(optarg); break;
		case 'j': o->jobs = atoi(optarg); break;
		case 't': o->rss_tol_mib = atof(optarg); break;
		case 'k': o->keep = 1; break;
		default: return -1;
		}
	}
	return optind == argc && o->seconds >= 20 && o->jobs >= 1 && o->jobs <= 16 ? 0 : -1;
}

static void cleanup(soak *k)
{
	if (k->server > 0) {
		kill(k->server, SIGTERM);
		waitpid(k->server, NULL, 0);
	}
	if (k->o.keep) {
		printf("kept: %s\n", k->dir);
		return;
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", k->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "soak: could not remove %s\n", k->dir);
}

static int run(soak *k)
{
	int port;
	if (copy_toy(k) != 0 || (port = start_server(k)) < 0 || write_config(k, port) != 0 ||
			start_cuco(k) != 0)
		return -1;
	watch(k);
	/* A candidate's process that outlived cuco has five seconds to end
	 * (a loaded machine may take a while to deliver a kill), then counts
	 * as left behind. */
	for (int i = 0; i < 50; i++) {
		reap(k);
		if ((k->orphans_left = leftover_children(k)) == 0)
			break;
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	if (k->n < 10) {
		fprintf(stderr, "soak: cuco ended after %zu samples (see %s/cuco.out)\n", k->n, k->dir);
		return -1;
	}
	figures f;
	memset(&f, 0, sizeof f);
	while (f.from + 1 < k->n && k->s[f.from].t < fmax(10, k->o.seconds * 0.2))
		f.from++;
	books b;
	memset(&b, 0, sizeof b);
	b.warm_wall = k->wall0 + k->s[f.from].t;
	if (each_line(k, "requests.jsonl", request_line, &b) != 0 ||
			each_line(k, "run/cuco.log", log_line, &b) != 0 || read_store(k, &b) != 0)
		return -1;
	memory_figures(k, &f);
	fd_figures(k, &f);
	print_resources(k, &f);
	print_books(&b);
	check_all(k, &f, &b);
	return 0;
}

int main(int argc, char **argv)
{
	soak k;
	memset(&k, 0, sizeof k);
	if (parse(argc, argv, &k.o) != 0)
		return usage();
	/* Orphaned grandchildren come back to the soak, to be counted. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		fprintf(stderr, "soak: no subreaper (%s): orphans go uncounted\n", strerror(errno));
	snprintf(k.dir, sizeof k.dir, "/tmp/cuco-soak-XXXXXX");
	if (!mkdtemp(k.dir)) {
		fprintf(stderr, "soak: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	printf("soak: cuco run --strategy evolve on the toy workload for %.0f s, %d jobs, seed %d, "
		"faults at random%s\n", k.o.seconds, k.o.jobs, k.o.seed,
		UNDER_ASAN ? " (AddressSanitizer build)" : "");
	fflush(stdout);
	int rc = run(&k);
	if (rc != 0 && k.cuco > 0) {
		kill(k.cuco, SIGTERM);
		waitpid(k.cuco, NULL, 0);
	}
	if (rc != 0 || failures)
		k.o.keep = 1;  /* for a look at what went wrong */
	cleanup(&k);
	free(k.s);
	if (rc == 0)
		printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
	return rc != 0 || failures ? 1 : 0;
}
