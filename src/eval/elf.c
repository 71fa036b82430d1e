/* elf.c — what a built program links: its undefined dynamic symbols (the
 * functions it calls in shared libraries), its DT_NEEDED libraries, and
 * whether its static symbol table defines host-call functions itself (a
 * statically linked NCCL, which no interposer would see).
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

/* Section i's header, or NULL. */
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
		if (sh->sh_type == SHT_DYNSYM && undef)
			push(&out->undefined, &out->nundefined, name);
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
