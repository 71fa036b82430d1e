/* replay.c — a fuzz target without libFuzzer: runs its
 * LLVMFuzzerTestOneInput once over each file named, or each file in each
 * folder named. Built with the regular compiler, so the seed corpora and
 * every crash the fuzzers found (tests/fuzz/regress/<target>/) are replayed
 * by plain test runs and by the ASan/UBSan builds.
 *
 * Each input is handed over in a buffer of exactly its size, as libFuzzer
 * does, so a parser that reads one byte past the end fails under ASan.
 * A folder that does not exist holds no inputs (a target without a kept
 * crash has no regress folder), but replaying nothing at all is a failure. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"

#define REPLAY_MAX_BYTES (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	cuco_err err;
	if (cuco_read_file(path, REPLAY_MAX_BYTES, &text, &len, &err) != CUCO_OK) {
		fprintf(stderr, "replay: %s\n", err.msg);
		return -1;
	}
	uint8_t *exact = malloc(len ? len : 1);
	memcpy(exact, text, len);
	free(text);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 1;
}

/* Files of one folder, not recursing: the corpora are flat. Returns the
 * number replayed, or -1. */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: cannot open\n", dir);
		return -1;
	}
	int n = 0;
	struct dirent *e;
	while (n >= 0 && (e = readdir(d))) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		n = replay_file(path) < 0 ? -1 : n + 1;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int total = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue;
		int n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	printf("replayed %d inputs, none failed\n", total);
	return 0;
}
