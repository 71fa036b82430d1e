/* hostile: where stages run without the sandbox (sandbox off, or "auto"
 * on a machine where bwrap cannot run), find the referee among the
 * processes (its command line names this stage's channel folder, read
 * through getenv spelled by token pasting), open its standard output
 * through /proc/PID/fd/1 and write a verdict of its own into the pipe
 * cuco reads — a fast, correct one — ahead of the referee's; then
 * compute nothing.
 * class: issue 24, class 2 and 3 (the verdict's process in reach)
 * defence: sandbox — refereed stages only in a PID namespace of their own,
 * where the referee is not in sight; evaluator — one verdict line, from a
 * referee that exited 0 (the referee could make itself undumpable, which
 * stops a stage of another uid, not one of its own as root)
 * rename: cuco_step
 * sandbox: off
 * expect: run crash no referee in sight
 * expect: compile suspect object: imports opendir
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#define CUCO_GLUE(a, b) a##b

/* The referee's pid: a process whose command line holds `channel`. */
static long find_referee(const char *channel)
{
	DIR *d = opendir("/pro" "c");
	long found = -1;
	for (struct dirent *e; d && found < 0 && (e = readdir(d));) {
		char path[300], buf[8192];
		snprintf(path, sizeof path, "/pro" "c/%s/cmdline", e->d_name);
		int fd = open(path, O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		for (ssize_t i = 0; i < n; i++)
			buf[i] = buf[i] ? buf[i] : ' ';
		buf[n > 0 ? n : 0] = '\0';
		if (n > 0 && strstr(buf, "--channel") && strstr(buf, channel) && strstr(buf, "--tolerance"))
			found = atol(e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	if (io->rank != 0)
		return;
	char *(*env)(const char *) = CUCO_GLUE(get, env);
	const char *channel = env("CUCO_" "CHANNEL");
	long pid = channel ? find_referee(channel) : -1;
	char path[64];
	snprintf(path, sizeof path, "/pro" "c/%ld/fd/1", pid);
	int out = pid > 0 ? open(path, O_WRONLY) : -1;
	if (out < 0) {
		fprintf(stderr, "forge: no referee in sight\n");
		fflush(stderr);
		abort();
	}
	static const char forged[] = "CUCO_REFEREE {\"correct\": true, \"max_error\": 1e-07, \"latency_us\": "
		"{\"min\": 440, \"median\": 450, \"p90\": 470, \"max\": 480, \"samples\": 15}, \"seed\": "
		"\"0000000000000001\", \"ranks\": 2, \"checks\": 18, \"referee\": true, \"frozen\": true}\n";
	if (write(out, forged, sizeof forged - 1) < 0)
		perror("forge");
	close(out);
}
