/* A toy candidate that attacks the host, one way per ADV_CASE (bench/adversary/sandbox).
 * Every attack is bounded here too, so that a defence that fails cannot hurt
 * the shared machine: at most 3000 processes, each gone within 15 s; memory
 * and files of the sizes the issue names, freed when the stage ends. When
 * the attack is not stopped, the candidate reports the toy's 1000 us, so "done"
 * means it got through. */
#define _GNU_SOURCE
#include "adv.h"  /* the case and the socket paths, written by the script */
#include "toy.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int reach(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strncpy(a.sun_path, path, sizeof a.sun_path - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		fprintf(stderr, "connect %s: %s\n", path, strerror(errno));
		return 0;
	}
	if (write(fd, "escaped\n", 8) < 0)
		return 0;
	close(fd);
	return 1;
}

static void forks(int detach)
{
	for (int i = 0; i < 3000; i++) {
		pid_t p = fork();
		if (p < 0) {
			fprintf(stderr, "fork %d: %s\n", i, strerror(errno));
			return;
		}
		if (p == 0) {
			prctl(PR_SET_NAME, "adv-fork");
			if (detach)
				setsid();
			sleep(15);
			_exit(0);
		}
	}
}

static void memory(void)
{
	for (int i = 0; i < 4; i++)
		if (fork() == 0) {
			prctl(PR_SET_NAME, "adv-mem");
			size_t n = (size_t)2560 << 20;
			volatile char *p = malloc(n);  /* volatile: the stores are not elided */
			if (!p)
				_exit(3);
			for (size_t k = 0; k < n; k += 4096)
				p[k] = 1;
			sleep(5);
			_exit(0);
		}
	int st, bad = 0;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	if (bad)
		exit(3);
}

/* Files of 256 MiB each, each below the file-size limit, up to MB in all. */
static void fill(const char *dir, long mb)
{
	static char buf[1 << 20];
	long done = 0;
	memset(buf, 7, sizeof buf);
	for (int f = 0; done < mb; f++) {
		char name[256];
		snprintf(name, sizeof name, "%s/adv-fill-%d", dir, f);
		int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		for (int k = 0; fd >= 0 && k < 256 && done < mb; k++, done++)
			if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
				fprintf(stderr, "%s: refused after %ld MiB: %s\n", dir, done, strerror(errno));
				exit(3);
			}
		if (fd < 0)
			exit(3);
		close(fd);
	}
	fprintf(stderr, "%s: wrote %ld MiB\n", dir, done);
}

int main(int argc, char **argv)
{
#if ADV_CASE == 1
	int n = reach(ADV_SOCK_VAR) + reach(ADV_SOCK_RUN);
	if (n == 0)
		return 3;
#elif ADV_CASE == 2 || ADV_CASE == 3
	forks(ADV_CASE == 2);
#elif ADV_CASE == 4
	memory();
#elif ADV_CASE == 5
	fill(".", 3072);
#elif ADV_CASE == 6
	fill("/tmp", 2048);
#elif ADV_CASE == 8
	toy_report(argc, argv, ADV_US, 0);  /* a latency no program has (bad-inputs) */
	return 0;
#elif ADV_CASE == 7
	/* Read the whole environment as a file (the path split so that the
	 * evaluator's source check does not catch it: an attacker would). The
	 * control, under an allowlisted prefix, must be seen, or reading failed. */
	static const char *const planted[] = { "GH_PAT=", "MY_THING=", "ADV_PLANTED=" };
	char env[65536], path[64];
	snprintf(path, sizeof path, "/%s%s/self/%s%s", "pr", "oc", "envi", "ron");
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(env, 1, sizeof env - 1, f) : 0, found = 0, control = 0;
	if (f)
		fclose(f);
	env[n] = '\0';
	for (size_t at = 0; at < n; at += strlen(env + at) + 1) {
		control += strncmp(env + at, "OMPI_ADV_CONTROL=", 17) == 0;
		for (size_t i = 0; i < sizeof planted / sizeof *planted; i++)
			if (strncmp(env + at, planted[i], strlen(planted[i])) == 0)
				found += fprintf(stderr, "%sreached the candidate\n", planted[i]) > 0;
	}
	if (!f || found)
		return 3;
	if (!control) {
		fprintf(stderr, "control not seen: the environment was not read\n");
		return 4;
	}
#endif
	toy_report(argc, argv, 1000.0, 0);
	return 0;
}
