/* fuzz_config — the config file reader on arbitrary text: every input is
 * read or refused with one line naming file:line: key. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategies/strategies.h"

static char path[64];

/* The scratch file goes with the process (replay runs in every test run). */
static void remove_scratch(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		strcpy(path, "/tmp/cuco-fuzz-config-XXXXXX");
		int fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(remove_scratch);
	}
	if (cuco_write_file(path, (const char *)data, size, NULL) != CUCO_OK)
		return 0;
	static cuco_config cfg;
	cuco_config_defaults(&cfg);
	cuco_err err;
	if (cuco_config_load(path, &cfg, &err) != CUCO_OK && strchr(err.msg, '\n'))
		abort();
	if (cfg.llm.nmodels < 0 || cfg.llm.nmodels > CUCO_MAX_MODELS)
		abort();
	return 0;
}
