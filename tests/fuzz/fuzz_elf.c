/* fuzz_elf — the ELF reader (src/eval/elf.c) on arbitrary bytes: the file
 * it reads is the output of a candidate's build, so every offset in it is
 * outside input. It must say what is wrong or list what it found, never
 * read out of bounds. */
#include <stdint.h>
#include <stdlib.h>

#include "eval/eval_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	eval_elf e;
	cuco_err err;
	if (eval_elf_parse(data, size, "fuzz", &e, &err) == CUCO_OK) {
		if (e.nundefined < 0 || e.ndefined < 0 || e.nneeded < 0)
			abort();
		eval_elf_free(&e);
	}
	return 0;
}
