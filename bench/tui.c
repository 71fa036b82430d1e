/* bench/tui — the workbench screen over a 100 000-candidate store, driven
 * through a pseudo-terminal (forkpty) as a person's terminal would.
 *
 * Measures, in one run: the time from exec to the first full frame, the
 * keypress-to-redrawn-screen latency (median and p90 over alternating j/k
 * presses in the lineage tree), the time a search over every candidate
 * takes to show its first match, the resident memory of the screen, and
 * the bytes it sends while idle. Targets (issue 6): first frame < 300 ms,
 * median keypress < 16 ms, RSS < 200 MB, an idle refresh sends almost
 * nothing.
 *
 * usage: tui [N] [DIR] [COLSxROWS]   (defaults: 100000, a fresh temporary
 * folder, 120x40; an existing DIR/run is used as it is)
 * The store is filled by tests/tui/mkrun, the screen is the real cuco.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define PRESSES 200

/* Everything the screen wrote so far (searched for the frame's end). */
static cuco_buf out;

/* Read what is there within ms milliseconds; returns bytes read. */
static size_t pump(int fd, int ms)
{
	size_t got = 0;
	struct pollfd p = { fd, POLLIN, 0 };
	while (poll(&p, 1, ms) > 0) {
		char buf[65536];
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		cuco_buf_append(&out, buf, (size_t)n);
		got += (size_t)n;
		ms = 0;  /* drain what is already queued, then return */
	}
	return got;
}

/* Read until the output stops for quiet_ms; returns bytes read. */
static size_t settle(int fd, int quiet_ms)
{
	size_t total = 0, n;
	while ((n = pump(fd, quiet_ms)) > 0)
		total += n;
	return total;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	char dir[256];
	if (argc > 2)
		cuco_strlcpy(dir, argv[2], sizeof dir);
	else {
		snprintf(dir, sizeof dir, "/tmp/cuco-bench-tui-XXXXXX");
		if (!mkdtemp(dir))
			return perror("mkdtemp"), 3;
	}
	char cmd[1024], probe[300];
	snprintf(probe, sizeof probe, "%s/run/data.mdb", dir);
	double t0 = cuco_mono();
	if (access(probe, R_OK) != 0) {
		snprintf(cmd, sizeof cmd, "'%s' '%s/run' big %ld", CUCO_MKRUN, dir, n);
		if (system(cmd) != 0)
			return fprintf(stderr, "tui: %s failed\n", cmd), 3;
		printf("store: %ld candidates written in %.1f s\n", n, cuco_mono() - t0);
	}
	unsigned short cols = 120, rows = 40;
	if (argc > 3 && sscanf(argv[3], "%hux%hu", &cols, &rows) != 2)
		return fprintf(stderr, "tui: %s: not COLSxROWS\n", argv[3]), 1;
	printf("terminal: %ux%u\n", cols, rows);

	/* The screen takes the run for a live one while RUN/run.lock names a
	 * process that is alive (this one): its clock ticks, as in a search. */
	char lock[320], pidtext[32];
	snprintf(lock, sizeof lock, "%s/run/run.lock", dir);
	snprintf(pidtext, sizeof pidtext, "%ld\n", (long)getpid());
	if (cuco_write_file(lock, pidtext, strlen(pidtext), NULL) != CUCO_OK)
		return fprintf(stderr, "tui: cannot write %s\n", lock), 3;

	struct winsize ws = { .ws_row = rows, .ws_col = cols };
	int fd;
	char run[300];
	snprintf(run, sizeof run, "%s/run", dir);
	t0 = cuco_mono();
	pid_t pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0)
		return perror("forkpty"), 3;
	if (pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("LANG", "C.UTF-8", 1);
		execl(CUCO_BIN, "cuco", "tui", "--run", run, (char *)NULL);
		_exit(127);
	}
	/* The hint bar, the bottom row, is written last: when it is out, the frame is. */
	while (!(out.data && strstr(out.data, "zoom")) && cuco_mono() - t0 < 10)
		pump(fd, 10);
	double first = cuco_mono() - t0;
	settle(fd, 300);

	double lat[PRESSES];
	for (int i = 0; i < PRESSES; i++) {
		char key = i % 2 ? 'k' : 'j';
		double k0 = cuco_mono();
		if (write(fd, &key, 1) != 1)
			return perror("write"), 3;
		while (pump(fd, 1000) == 0 && cuco_mono() - k0 < 2)
			;
		lat[i] = cuco_mono() - k0;
		settle(fd, 5);
	}
	qsort(lat, PRESSES, sizeof lat[0], cmp);

	long rss = rss_kib(pid);

	/* Idle: the clock in the status line is all that should change. */
	settle(fd, 300);
	size_t idle = 0;
	double i0 = cuco_mono();
	while (cuco_mono() - i0 < 5)
		idle += pump(fd, 100);

	/* A search reads every candidate's record once, a chunk per turn of
	 * the loop, redrawing its progress in the title: the time to its first
	 * match, and to its end (the last output before 500 ms of quiet). With
	 * the lock gone the screen calls the run stopped within 2 s, and its
	 * clock stops: nothing else is drawn meanwhile. */
	unlink(lock);
	for (double w0 = cuco_mono(); cuco_mono() - w0 < 3;)
		pump(fd, 100);
	size_t from = out.len;
	double s0 = cuco_mono(), first_match = NAN, last = s0;
	if (write(fd, "/tune\r", 6) != 6)
		return perror("write"), 3;
	while (cuco_mono() - s0 < 120) {
		if (pump(fd, 500) == 0)
			break;
		last = cuco_mono();
		if (isnan(first_match) && strstr(out.data + from, "match 1 of"))
			first_match = last - s0;
	}
	double searched = last - s0;

	if (write(fd, "q", 1) != 1)
		perror("write");
	int status = 0;
	waitpid(pid, &status, 0);
	printf("first full frame: %.1f ms (target < 300)\n", first * 1e3);
	printf("keypress to redraw: median %.2f ms, p90 %.2f ms over %d presses (target median < 16)\n",
		lat[PRESSES / 2] * 1e3, lat[PRESSES * 9 / 10] * 1e3, PRESSES);
	printf("search: first match shown after %.0f ms, all %ld candidates searched after %.0f ms\n",
		first_match * 1e3, n, searched * 1e3);
	printf("resident memory: %.1f MB (target < 200)\n", rss / 1024.0);
	printf("idle: %zu bytes in 5 s (%.0f bytes/s: the status line's clock)\n", idle, idle / 5.0);
	printf("screen exit status: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	cuco_buf_free(&out);
	if (argc <= 2) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "tui: could not remove %s\n", dir);
	}
	return 0;
}
