/* fuzz_reply — the LLM reply parser and the patch applier on arbitrary
 * text. The input is a parent file and a reply separated by a line
 * "=====REPLY=====": a model can answer anything, and the answer must be
 * applied whole or refused with one line, never crash or half-apply. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/strategies.h"

#define SEP "\n=====REPLY=====\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	char *cut = strstr(text, SEP);
	const char *parent = "", *reply = text;
	if (cut) {
		*cut = '\0';
		parent = text;
		reply = cut + strlen(SEP);
	}
	cuco_reply r;
	cuco_err err;
	if (cuco_reply_parse(reply, NULL, NULL, &r, &err) == CUCO_OK) {
		cuco_patched p;
		if (cuco_patch_apply(parent, strlen(parent), &r, NULL, &p, &err) == CUCO_OK) {
			if (p.text[p.len] != '\0')
				abort();
			cuco_patched_free(&p);
		} else if (strchr(err.msg, '\n')) {
			abort();
		}
		cuco_reply_free(&r);
	} else if (strchr(err.msg, '\n')) {
		abort();
	}
	free(text);
	return 0;
}
