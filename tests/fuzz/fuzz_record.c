/* fuzz_record — the store's record decoder on arbitrary bytes: whatever a
 * corrupt or hostile store holds, decoding returns an error or a record,
 * never crashes, and a decoded record re-encodes to JSON that decodes to
 * the same record. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *j = cJSON_ParseWithLength((const char *)data, size);
	if (!j)
		return 0;
	cuco_candidate *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	cuco_err err;
	if (cuco_candidate_from_json(j, a, &err) == CUCO_OK) {
		cJSON *again = cuco_candidate_to_json(a);
		if (cuco_candidate_from_json(again, b, &err) != CUCO_OK)
			abort();  /* what we wrote we must read */
		if (a->id != b->id || a->status != b->status || a->nparents != b->nparents ||
		    memcmp(&a->directive, &b->directive, sizeof a->directive) != 0 ||
		    strcmp(a->failure.excerpt, b->failure.excerpt) != 0)
			abort();
		char line[256];
		cuco_directive_short(&a->directive, line, sizeof line);
		cJSON_Delete(again);
	}
	cuco_directive d;
	cuco_directive_from_json(j, &d, &err);
	cJSON_Delete(j);
	free(a);
	free(b);
	return 0;
}
