/* elf.c — what a built program links: its undefined dynamic symbols (the
 * functions it calls in shared libraries), its DT_NEEDED libraries, and
 * whether its static symbol table defines host-call functions itself (a
 * statically linked NCCL, which no interposer would see); what a shared
 * library exports; and a relocatable object's sections, symbols and
 * relocations as they are (objcheck.c judges a candidate's object by them).
 *
 * Read with <elf.h>'s structures from the mapped file, 64-bit
 * little-endian only (x86-64, aarch64: where CUDA and Open MPI run), and
 * every offset checked against the file's size: the file is the output of
 * a candidate's build, so it is input like any other. */
#include "eval/eval_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct image {
	const unsigned char *p;
	size_t size;
} image;

/* A pointer to n bytes at off, or NULL when they are not all in the file. */
static const void *at(const image *im, uint64_t off, uint64_t n)
{
	return off <= im->size && n <= im->size - off ? im->p + off : NULL;
}

/* The NUL-terminated string at off in a string table, or NULL. */
static const char *str(const image *im, const Elf64_Shdr *tab, uint64_t off)
{
	if (!tab || off >= tab->sh_size || !at(im, tab->sh_offset, tab->sh_size))
		return NULL;
	const char *s = at(im, tab->sh_offset + off, tab->sh_size - off);
	return s && memchr(s, '\0', tab->sh_size - off) ? s : NULL;
}

static void push(char ***v, int *n, const char *s)
{
	*v = cuco_xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
	(*v)[(*n)++] = cuco_xstrdup(s);
}

/* Section header i, copied into *out (e_shoff need not keep it aligned);
 * NULL when it is not in the file. */
static const Elf64_Shdr *section(const image *im, const Elf64_Ehdr *eh, uint64_t i, Elf64_Shdr *out)
{
	if (i >= eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr)
		|| !at(im, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return NULL;
	const void *p = at(im, eh->e_shoff + i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr));
	if (!p)
		return NULL;
	memcpy(out, p, sizeof *out);
	return out;
}

static void symbols(const image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, eval_elf *out)
{
	Elf64_Shdr strtab_copy;
	const Elf64_Shdr *strtab = section(im, eh, sh->sh_link, &strtab_copy);
	if (sh->sh_entsize != sizeof(Elf64_Sym) || !at(im, sh->sh_offset, sh->sh_size))
		return;
	for (uint64_t k = 1; k < sh->sh_size / sizeof(Elf64_Sym); k++) {
		const void *p = at(im, sh->sh_offset + k * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
		Elf64_Sym s;
		if (p)
			memcpy(&s, p, sizeof s);
		const Elf64_Sym *sym = p ? &s : NULL;
		const char *name = sym ? str(im, strtab, sym->st_name) : NULL;
		if (!name || !*name)
			continue;
		bool undef = sym->st_shndx == SHN_UNDEF;
		int bind = ELF64_ST_BIND(sym->st_info), type = ELF64_ST_TYPE(sym->st_info);
		if (sh->sh_type == SHT_DYNSYM && undef)
			push(&out->undefined, &out->nundefined, name);
		else if (sh->sh_type == SHT_DYNSYM && bind != STB_LOCAL && (type == STT_OBJECT || type == STT_TLS
			|| type == STT_COMMON))
			push(&out->exported_data, &out->nexported_data, name);
		else if (sh->sh_type == SHT_DYNSYM && bind != STB_LOCAL)
			push(&out->exported, &out->nexported, name);
		else if (sh->sh_type == SHT_SYMTAB && !undef && ELF64_ST_TYPE(sym->st_info) == STT_FUNC)
			push(&out->defined, &out->ndefined, name);
	}
}

static void needed(const image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, eval_elf *out)
{
	Elf64_Shdr strtab_copy;
	const Elf64_Shdr *strtab = section(im, eh, sh->sh_link, &strtab_copy);
	if (sh->sh_entsize != sizeof(Elf64_Dyn) || !at(im, sh->sh_offset, sh->sh_size))
		return;
	for (uint64_t k = 0; k < sh->sh_size / sizeof(Elf64_Dyn); k++) {
		/* Copied out: a section's offset need not keep the entries aligned
		 * (found by tests/fuzz/fuzz_elf under UBSan). */
		const void *p = at(im, sh->sh_offset + k * sizeof(Elf64_Dyn), sizeof(Elf64_Dyn));
		Elf64_Dyn d;
		if (!p)
			break;
		memcpy(&d, p, sizeof d);
		if (d.d_tag == DT_NULL)
			break;
		const char *name = d.d_tag == DT_NEEDED ? str(im, strtab, d.d_un.d_val) : NULL;
		if (name)
			push(&out->needed, &out->nneeded, name);
	}
}

static int parse(const image *im, const char *path, eval_elf *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	const Elf64_Ehdr *eh = at(im, 0, sizeof *eh);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return cuco_errf(err, CUCO_EDATA, "%s: not an ELF file", path);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return cuco_errf(err, CUCO_EDATA, "%s: not a 64-bit little-endian ELF file", path);
	for (uint64_t i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr sh_copy;
		const Elf64_Shdr *sh = section(im, eh, i, &sh_copy);
		if (!sh)
			return cuco_errf(err, CUCO_EDATA, "%s: section header %llu lies outside the file",
				path, (unsigned long long)i);
		if (sh->sh_type == SHT_DYNSYM || sh->sh_type == SHT_SYMTAB)
			symbols(im, eh, sh, out);
		else if (sh->sh_type == SHT_DYNAMIC)
			needed(im, eh, sh, out);
	}
	return CUCO_OK;
}

int eval_elf_read(const char *path, eval_elf *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(e));
	}
	if (sb.st_size <= 0) {
		close(fd);
		return cuco_errf(err, CUCO_EDATA, "%s: empty file", path);
	}
	image im = { mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0), (size_t)sb.st_size };
	close(fd);
	if (im.p == MAP_FAILED)
		return cuco_errf(err, CUCO_EENV, "%s: mmap: %s", path, strerror(errno));
	int rc = eval_elf_parse(im.p, im.size, path, out, err);
	munmap((void *)im.p, im.size);
	return rc;
}

int eval_elf_parse(const void *data, size_t size, const char *name, eval_elf *out, cuco_err *err)
{
	image im = { data, size };
	int rc = parse(&im, name, out, err);
	if (rc != CUCO_OK)
		eval_elf_free(out);
	return rc;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void eval_elf_free(eval_elf *e)
{
	free_list(e->undefined, e->nundefined);
	free_list(e->defined, e->ndefined);
	free_list(e->needed, e->nneeded);
	free_list(e->exported, e->nexported);
	free_list(e->exported_data, e->nexported_data);
	memset(e, 0, sizeof *e);
}

bool eval_elf_has(char *const *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

bool eval_elf_needs(const eval_elf *e, const char *prefix)
{
	for (int i = 0; i < e->nneeded; i++)
		if (strncmp(e->needed[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* ---- a relocatable object ------------------------------------------------------ */

/* What the object's symbol table says of symbol k, copied out; false when
 * it lies outside the file or its name outside its string table. */
static bool obj_symbol(const image *im, const Elf64_Shdr *tab, const Elf64_Shdr *strtab, uint64_t k,
	eval_obj_symbol *out)
{
	const void *p = at(im, tab->sh_offset + k * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
	Elf64_Sym s;
	if (!p)
		return false;
	memcpy(&s, p, sizeof s);
	const char *name = s.st_name ? str(im, strtab, s.st_name) : "";
	if (!name)
		return false;
	*out = (eval_obj_symbol){ .name = name, .value = s.st_value, .size = s.st_size,
		.type = ELF64_ST_TYPE(s.st_info), .bind = ELF64_ST_BIND(s.st_info),
		.shndx = s.st_shndx };
	return true;
}

static int obj_symbols(const image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *tab, const char *path,
	eval_obj *o, cuco_err *err)
{
	Elf64_Shdr strtab_copy;
	const Elf64_Shdr *strtab = section(im, eh, tab->sh_link, &strtab_copy);
	if (o->symbols)
		return cuco_errf(err, CUCO_EDATA, "%s: more than one symbol table", path);
	if (tab->sh_entsize != sizeof(Elf64_Sym) || !at(im, tab->sh_offset, tab->sh_size) || !strtab)
		return cuco_errf(err, CUCO_EDATA, "%s: the symbol table lies outside the file", path);
	o->nsymbols = (int)(tab->sh_size / sizeof(Elf64_Sym));
	o->symbols = cuco_xcalloc((size_t)o->nsymbols + 1, sizeof *o->symbols);
	for (int k = 0; k < o->nsymbols; k++) {
		if (!obj_symbol(im, tab, strtab, (uint64_t)k, &o->symbols[k]))
			return cuco_errf(err, CUCO_EDATA, "%s: symbol %d has no name in the file", path, k);
		if (o->symbols[k].shndx == SHN_XINDEX)
			return cuco_errf(err, CUCO_EDATA, "%s: symbol %s: extended section indices are not "
				"read", path, o->symbols[k].name);
	}
	return CUCO_OK;
}

static int obj_relocs(const image *im, const Elf64_Shdr *sh, const char *path, eval_obj *o,
	cuco_err *err)
{
	if (sh->sh_entsize != sizeof(Elf64_Rela) || !at(im, sh->sh_offset, sh->sh_size)
		|| sh->sh_info >= (uint64_t)o->nsections)
		return cuco_errf(err, CUCO_EDATA, "%s: a relocation section lies outside the file", path);
	uint64_t n = sh->sh_size / sizeof(Elf64_Rela);
	o->relocs = cuco_xrealloc(o->relocs, (size_t)(o->nrelocs + n) * sizeof *o->relocs);
	for (uint64_t k = 0; k < n; k++) {
		Elf64_Rela r;
		memcpy(&r, im->p + sh->sh_offset + k * sizeof r, sizeof r);
		o->relocs[o->nrelocs++] = (eval_obj_reloc){ .section = sh->sh_info,
			.type = (uint32_t)ELF64_R_TYPE(r.r_info), .symbol = (uint32_t)ELF64_R_SYM(r.r_info),
			.offset = r.r_offset, .addend = r.r_addend };
	}
	return CUCO_OK;
}

/* A COMDAT group's members: what the linker keeps once, from the first
 * object that has the group. */
static int obj_group(const image *im, const Elf64_Shdr *sh, const char *path, eval_obj *o,
	cuco_err *err)
{
	if (sh->sh_size < 4 || !at(im, sh->sh_offset, sh->sh_size))
		return cuco_errf(err, CUCO_EDATA, "%s: a section group lies outside the file", path);
	uint32_t words[2];
	memcpy(words, im->p + sh->sh_offset, 4);
	if (!(words[0] & GRP_COMDAT))
		return CUCO_OK;
	for (uint64_t k = 1; k < sh->sh_size / 4; k++) {
		memcpy(&words[1], im->p + sh->sh_offset + 4 * k, 4);
		if (words[1] >= (uint32_t)o->nsections)
			return cuco_errf(err, CUCO_EDATA, "%s: a section group names section %u, which "
				"is not there", path, words[1]);
		o->sections[words[1]].comdat = true;
	}
	return CUCO_OK;
}

static int obj_parse(const image *im, const char *path, eval_obj *o, cuco_err *err)
{
	const Elf64_Ehdr *eh = at(im, 0, sizeof *eh);
	Elf64_Shdr names_copy;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return cuco_errf(err, CUCO_EDATA, "%s: not an ELF file", path);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return cuco_errf(err, CUCO_EDATA, "%s: not a 64-bit little-endian ELF file", path);
	o->machine = eh->e_machine;
	if (eh->e_type != ET_REL)
		return cuco_errf(err, CUCO_EDATA, "%s: not a relocatable object (ELF type %u)", path, eh->e_type);
	if (eh->e_shnum == 0 || eh->e_shstrndx == SHN_XINDEX)
		return cuco_errf(err, CUCO_EDATA, "%s: no section headers, or too many to count", path);
	const Elf64_Shdr *names = section(im, eh, eh->e_shstrndx, &names_copy);
	o->nsections = eh->e_shnum;
	o->sections = cuco_xcalloc((size_t)o->nsections, sizeof *o->sections);
	for (int i = 0; i < o->nsections; i++) {
		Elf64_Shdr copy;
		const Elf64_Shdr *sh = section(im, eh, (uint64_t)i, &copy);
		const char *name = sh && names ? str(im, names, sh->sh_name) : NULL;
		if (!name)
			return cuco_errf(err, CUCO_EDATA, "%s: section header %d, or its name, lies outside "
				"the file", path, i);
		if (sh->sh_type != SHT_NOBITS && !at(im, sh->sh_offset, sh->sh_size))
			return cuco_errf(err, CUCO_EDATA, "%s: section %s lies outside the file", path, name);
		o->sections[i] = (eval_obj_section){ .name = name, .type = sh->sh_type,
			.flags = sh->sh_flags, .size = sh->sh_size, .link = sh->sh_link, .info = sh->sh_info,
			.data = sh->sh_type == SHT_NOBITS ? NULL : im->p + sh->sh_offset };
	}
	for (int i = 0; i < o->nsections; i++) {
		Elf64_Shdr copy;
		const Elf64_Shdr *sh = section(im, eh, (uint64_t)i, &copy);
		int rc = sh->sh_type == SHT_SYMTAB ? obj_symbols(im, eh, sh, path, o, err)
			: sh->sh_type == SHT_RELA ? obj_relocs(im, sh, path, o, err)
			: sh->sh_type == SHT_REL ? cuco_errf(err, CUCO_EDATA, "%s: section %s: REL "
				"relocations (x86-64 objects have RELA)", path, o->sections[i].name)
			: sh->sh_type == SHT_GROUP ? obj_group(im, sh, path, o, err) : CUCO_OK;
		if (rc != CUCO_OK)
			return rc;
	}
	for (int k = 0; k < o->nrelocs; k++)
		if (o->relocs[k].symbol >= (uint32_t)o->nsymbols)
			return cuco_errf(err, CUCO_EDATA, "%s: a relocation of %s names symbol %u, which is "
				"not there", path, o->sections[o->relocs[k].section].name, o->relocs[k].symbol);
	return CUCO_OK;
}

int eval_obj_parse(const void *data, size_t size, const char *name, eval_obj *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	image im = { data, size };
	int rc = obj_parse(&im, name, out, err);
	if (rc != CUCO_OK)
		eval_obj_free(out);
	return rc;
}

int eval_obj_read(const char *path, eval_obj *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	char *data;
	size_t len;
	int rc = cuco_read_file(path, 1u << 30, &data, &len, err);
	if (rc != CUCO_OK)
		return rc;
	rc = eval_obj_parse(data, len, path, out, err);
	if (rc == CUCO_OK)
		out->file = data;
	else
		free(data);
	return rc;
}

void eval_obj_free(eval_obj *o)
{
	free(o->sections);
	free(o->symbols);
	free(o->relocs);
	free(o->file);
	memset(o, 0, sizeof *o);
}

int eval_obj_symbol_at(const eval_obj *o, uint32_t section, uint64_t offset)
{
	int best = -1;
	for (int k = 0; k < o->nsymbols; k++) {
		const eval_obj_symbol *s = &o->symbols[k];
		bool named = s->type == STT_FUNC || s->type == STT_OBJECT || s->type == STT_GNU_IFUNC;
		if (named && s->shndx == section && offset >= s->value && offset - s->value < (s->size ? s->size : 1)
			&& (best < 0 || s->bind != STB_LOCAL))
			best = k;
	}
	return best;
}
