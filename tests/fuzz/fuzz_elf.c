/* fuzz_elf — the ELF reader (src/eval/elf.c) on arbitrary bytes: the file
 * it reads is the output of a candidate's build, so every offset in it is
 * outside input. It must say what is wrong or list what it found, never
 * read out of bounds: as a built program, and as a relocatable object
 * (what objcheck.c judges), whose relocations are looked up too. */
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
	eval_obj o;
	if (eval_obj_parse(data, size, "fuzz", &o, &err) == CUCO_OK) {
		for (int k = 0; k < o.nrelocs; k++)
			if (o.relocs[k].symbol >= (uint32_t)o.nsymbols || o.relocs[k].section >= (uint32_t)o.nsections
				|| eval_obj_symbol_at(&o, o.relocs[k].section, o.relocs[k].offset) >= o.nsymbols)
				abort();
		eval_obj_free(&o);
	}
	return 0;
}
