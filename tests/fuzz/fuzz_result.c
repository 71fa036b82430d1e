/* fuzz_result — the harness result parsers (the native sealed verdict and
 * the compat pass/time/phase lines) on arbitrary program output: a
 * candidate can print anything, and the evaluator must classify it, never
 * crash. The input is split into lines and fed to both protocols under a
 * fixed ticket; since a mutated verdict never keeps its seal, every line
 * also goes to the verdict's JSON reader directly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_int.h"

static void feed(const cuco_workload *wl, const uint8_t *data, size_t size)
{
	eval_parse *p = malloc(sizeof *p);
	cuco_err err;
	if (eval_parse_init(p, wl, &err) != CUCO_OK) {
		free(p);
		return;
	}
	static const eval_ticket ticket = { .k0 = 1, .k1 = 2, .seed = 3 };
	p->ticket = &ticket;
	char *line = malloc(size + 1);
	size_t start = 0;
	for (size_t i = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			memcpy(line, data + start, i - start);
			line[i - start] = '\0';
			eval_parse_line(line, i - start, p);
			if (wl->protocol == CUCO_PROTO_NATIVE) {
				eval_outcome direct;
				memset(&direct, 0, sizeof direct);
				const char *brace = strchr(line, '{');
				eval_result_json(brace ? brace : line, &direct);
				const cuco_timing *t = &direct.timing;
				if (t->samples < 0 || t->nphases < 0 || t->nphases > CUCO_MAX_PHASES)
					abort();
			}
			start = i + 1;
		}
	}
	free(line);
	eval_outcome o;
	eval_parse_finish(p, &o);
	if (o.timing.samples < 0 || o.timing.nphases < 0 || o.timing.nphases > CUCO_MAX_PHASES)
		abort();
	eval_parse_free(p);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cuco_workload native, compat;
	if (!native.name[0]) {
		strcpy(native.name, "fuzz-native");
		native.protocol = CUCO_PROTO_NATIVE;
		native.tolerance = 1e-3;
		strcpy(compat.name, "fuzz-compat");
		compat.protocol = CUCO_PROTO_COMPAT;
		compat.tolerance = 1e-3;
		strcpy(compat.compat_pass, "Verification: PASS");
		strcpy(compat.compat_time, "Time: ([0-9.]+) ms");
		compat.compat_time_scale = 1000;
	}
	feed(&native, data, size);
	feed(&compat, data, size);
	return 0;
}
