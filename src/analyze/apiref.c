/* apiref.c — the reference for the API a device-initiated (or, on CPUs,
 * one-sided) program is written against, read when asked from the headers
 * installed here, so a prompt quotes the NCCL or MPI that will build the
 * program and nothing is copied into the project.
 *
 * NCCL: nccl_device.h and every header it reaches through its quoted
 * includes, minus the implementations (*__funcs.h), the network backends'
 * internals (nccl_device/gin/) and the internal helpers; each remaining
 * header belongs to a topic, and a topic to LSA, GIN or both (the table
 * below; a topic a newer NCCL adds goes to both, so nothing new is lost);
 * plus nccl.h's host calls for memory and windows. MPI: mpi.h's one-sided
 * calls (put/get windows, or shared-memory windows), found through the
 * MPI compiler. Licence headers, include guards and includes are dropped.
 */
#include "analyze/analyze_int.h"
#include "env.h"
#include "proc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define HEADER_MAX (1u << 20)
#define COMPILER_S 60        /* the MPI compiler finding mpi.h, at most */
#define MAX_HEADERS 48

enum { PART_LSA = 1, PART_GIN = 2, PART_RMA = 4, PART_SHM = 8, PART_NONE = 0 };

/* NCCL's device headers by topic (the file name without .h or __types). */
static const struct { const char *topic; int parts; } nccl_topics[] = {
	{ "core", PART_LSA | PART_GIN }, { "coop", PART_LSA | PART_GIN },
	{ "ptr", PART_LSA | PART_GIN }, { "comm", PART_LSA | PART_GIN },
	{ "lsa_barrier", PART_LSA }, { "ll_a2a", PART_LSA },
	{ "gin", PART_GIN }, { "gin_barrier", PART_GIN }, { "barrier", PART_GIN },
	{ "utility", PART_NONE }, { "net_device", PART_NONE },
	{ "nccl", PART_NONE },  /* nccl.h: its device-side calls are quoted on their own */
};

/* nccl.h's host side of the Device API. */
static const char *const nccl_host[] = { "ncclMemAlloc", "ncclMemFree", "ncclCommWindowRegister",
	"ncclCommWindowDeregister", NULL };

/* mpi.h's one-sided calls: X(name, parts). */
static const struct { const char *name; int parts; } mpi_calls[] = {
	{ "MPI_Win_allocate", PART_RMA }, { "MPI_Win_create", PART_RMA },
	{ "MPI_Comm_split_type", PART_SHM }, { "MPI_Win_allocate_shared", PART_SHM },
	{ "MPI_Win_shared_query", PART_SHM }, { "MPI_Win_free", PART_RMA | PART_SHM },
	{ "MPI_Put", PART_RMA }, { "MPI_Get", PART_RMA }, { "MPI_Accumulate", PART_RMA },
	{ "MPI_Rput", PART_RMA }, { "MPI_Win_fence", PART_RMA | PART_SHM },
	{ "MPI_Win_lock", PART_RMA }, { "MPI_Win_unlock", PART_RMA },
	{ "MPI_Win_lock_all", PART_RMA | PART_SHM }, { "MPI_Win_unlock_all", PART_RMA | PART_SHM },
	{ "MPI_Win_flush", PART_RMA }, { "MPI_Win_flush_all", PART_RMA },
	{ "MPI_Win_flush_local", PART_RMA }, { "MPI_Win_sync", PART_RMA | PART_SHM },
	{ "MPI_Win_post", PART_RMA }, { "MPI_Win_start", PART_RMA },
	{ "MPI_Win_complete", PART_RMA }, { "MPI_Win_wait", PART_RMA },
};

void cuco_nccl_home(char *out, size_t size)
{
	const cuco_env *env = cuco_env_get();
	cuco_strlcpy(out, env->nccl_home ? env->nccl_home : env->cuda_home ? env->cuda_home
		: "/usr/local/cuda", size);
}

static int parts_of(cuco_family family, const char *backend)
{
	bool gpu = family != CUCO_FAMILY_CPU_MPI;
	if (backend && strcasecmp(backend, "lsa") == 0)
		return PART_LSA;
	if (backend && strcasecmp(backend, "gin") == 0)
		return PART_GIN;
	if (backend && strcasecmp(backend, "rma") == 0)
		return PART_RMA;
	if (backend && strcasecmp(backend, "shm") == 0)
		return PART_SHM;
	return gpu ? PART_LSA | PART_GIN : PART_RMA | PART_SHM;
}

/* The declaration statement holding the first `name (` outside every
 * body, as text; false when there is none. */
static bool declaration(const an_lexed *lx, const char *name, cuco_buf *out)
{
	/* Braces of extern "C" { … } hold declarations: they do not count. */
	int depth = 0, start = 0;
	for (int i = 0; i + 1 < lx->ntoks; i++) {
		const an_tok *t = &lx->toks[i];
		bool open = an_tok_is(t, "{"), close = an_tok_is(t, "}");
		if (open && !(i > 0 && lx->toks[i - 1].kind == AN_TK_STRING))
			depth++;
		else if (close && t->match >= 0 && !(t->match > 0 &&
				lx->toks[t->match - 1].kind == AN_TK_STRING))
			depth--;
		if (an_tok_is(t, ";") || open || close) {
			start = i + 1;
			continue;
		}
		if (depth > 0 || !an_tok_is(t, name) || !an_tok_is(&lx->toks[i + 1], "("))
			continue;
		int end = i + 1;
		while (end < lx->ntoks && !an_tok_is(&lx->toks[end], ";"))
			end++;
		char text[2048];
		an_range_text(lx, start, end + 1 < lx->ntoks ? end + 1 : end, text, sizeof text);
		cuco_buf_printf(out, "%s\n", text);
		return true;
	}
	return false;
}

/* A header's text without its licence block, guard, includes and
 * conditionals, blank lines folded. */
static void clean_header(const char *text, cuco_buf *out)
{
	const char *s = text;
	while (*s == ' ' || *s == '\n')
		s++;
	if (strncmp(s, "/*", 2) == 0) {
		const char *e = strstr(s, "*/");
		s = e ? e + 2 : s;
	}
	bool blank = true;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		const char *t = s;
		while (t < s + n && (*t == ' ' || *t == '\t'))
			t++;
		bool directive = *t == '#' && (strncmp(t, "#if", 3) == 0 || strncmp(t, "#endif", 6) == 0 ||
			strncmp(t, "#else", 5) == 0 || strncmp(t, "#include", 8) == 0 ||
			(strncmp(t, "#define _NCCL", 13) == 0 && t[n - (size_t)(t - s) - 1] == '_'));
		bool empty = t == s + n;
		if (!directive && !(empty && blank)) {
			cuco_buf_append(out, s, n);
			cuco_buf_puts(out, "\n");
			blank = empty;
		}
		s += n + (nl != NULL);
	}
}

typedef struct header {
	char path[PATH_MAX + 64];
	char rel[512];            /* below the include root */
	int parts;
	int order;
} header;

/* The topic's parts and place; a header of no topic ranks last, in both. */
static void classify(header *h)
{
	const char *base = strrchr(h->rel, '/');
	base = base ? base + 1 : h->rel;
	char topic[128];
	cuco_strlcpy(topic, base, sizeof topic);
	bool types = strstr(topic, "__types.h") != NULL;
	bool funcs = strstr(topic, "__funcs.h") != NULL;
	topic[strcspn(topic, ".")] = '\0';
	char *cut = strstr(topic, "__");
	if (cut)
		*cut = '\0';
	h->parts = PART_LSA | PART_GIN;
	h->order = 100;
	if (funcs || strncmp(h->rel, "nccl_device/gin/", 16) == 0 || strcmp(h->rel, "nccl_device.h") == 0)
		h->parts = PART_NONE;
	for (size_t i = 0; i < sizeof nccl_topics / sizeof nccl_topics[0]; i++)
		if (strcmp(nccl_topics[i].topic, topic) == 0) {
			if (h->parts)
				h->parts = nccl_topics[i].parts;
			h->order = (int)i;
		}
	h->order += types ? 50 : 0;  /* the declarations first, their structs after */
}

/* nccl_device.h and the headers its quoted includes reach, breadth first. */
static int reach_headers(const char *root, header *hs, int max)
{
	int n = 0;
	snprintf(hs[n].rel, sizeof hs[n].rel, "nccl_device.h");
	snprintf(hs[n].path, sizeof hs[n].path, "%s/nccl_device.h", root);
	n++;
	for (int k = 0; k < n; k++) {
		char *text;
		if (cuco_read_file(hs[k].path, HEADER_MAX, &text, NULL, NULL) != CUCO_OK)
			continue;
		an_lexed lx;
		an_lex(text, strlen(text), &lx);
		char dir[256];
		cuco_strlcpy(dir, hs[k].rel, sizeof dir);
		char *slash = strrchr(dir, '/');
		*(slash ? slash : dir) = '\0';
		for (int i = 0; i < lx.nincludes && n < max; i++) {
			if (!lx.includes[i].local)
				continue;
			/* Relative to the includer, else to the include root. */
			char rel[512], path[PATH_MAX + 600], real[PATH_MAX];
			snprintf(rel, sizeof rel, "%s%s%s", dir, *dir ? "/" : "", lx.includes[i].name);
			snprintf(path, sizeof path, "%s/%s", root, rel);
			if (!realpath(path, real)) {
				cuco_strlcpy(rel, lx.includes[i].name, sizeof rel);
				snprintf(path, sizeof path, "%s/%s", root, rel);
				if (!realpath(path, real))
					continue;
			}
			bool seen = false;
			for (int j = 0; j < n && !seen; j++)
				seen = strcmp(hs[j].path, real) == 0;
			if (seen)
				continue;
			cuco_strlcpy(hs[n].path, real, sizeof hs[n].path);
			/* The name below the root, folded (impl/../core.h → core.h). */
			char rroot[PATH_MAX];
			const char *r = realpath(root, rroot) && strncmp(real, rroot, strlen(rroot)) == 0 ?
				real + strlen(rroot) + 1 : rel;
			cuco_strlcpy(hs[n].rel, r, sizeof hs[n].rel);
			n++;
		}
		an_lexed_free(&lx);
		free(text);
	}
	return n;
}

static int cmp_header(const void *a, const void *b)
{
	const header *x = a, *y = b;
	return x->order != y->order ? x->order - y->order : strcmp(x->rel, y->rel);
}

static void nccl_version(const char *text, char *out, size_t size)
{
	int v[3] = { -1, -1, -1 };
	static const char *const keys[] = { "#define NCCL_MAJOR ", "#define NCCL_MINOR ",
		"#define NCCL_PATCH " };
	for (int i = 0; i < 3; i++) {
		const char *at = strstr(text, keys[i]);
		if (at)
			v[i] = atoi(at + strlen(keys[i]));
	}
	if (v[0] >= 0 && v[1] >= 0 && v[2] >= 0)
		snprintf(out, size, "%d.%d.%d", v[0], v[1], v[2]);
	else
		cuco_strlcpy(out, "of unknown version", size);
}

static int nccl_reference(int parts, cuco_buf *out, char *from, size_t size, cuco_err *err)
{
	char home[PATH_MAX], root[PATH_MAX + 16], path[PATH_MAX + 32];
	cuco_nccl_home(home, sizeof home);
	snprintf(root, sizeof root, "%s/include", home);
	snprintf(path, sizeof path, "%s/nccl.h", root);
	char *nccl_h;
	if (cuco_read_file(path, HEADER_MAX, &nccl_h, NULL, NULL) != CUCO_OK)
		return cuco_errf(err, CUCO_EENV, "%s: no NCCL headers (set CUCO_NCCL_HOME)", path);
	snprintf(path, sizeof path, "%s/nccl_device.h", root);
	if (access(path, R_OK) != 0) {
		free(nccl_h);
		return cuco_errf(err, CUCO_EENV, "%s: missing: the Device API needs NCCL >= 2.28", path);
	}
	char version[48];
	nccl_version(nccl_h, version, sizeof version);
	snprintf(from, size, "NCCL %s, %s", version, root);
	cuco_buf_printf(out, "Declarations of the NCCL Device API %s (%s parts), read from %s.\n\n"
		"### nccl.h: memory and windows (host)\n", version,
		parts == PART_LSA ? "LSA" : parts == PART_GIN ? "GIN" : "LSA and GIN", root);
	an_lexed lx;
	an_lex(nccl_h, strlen(nccl_h), &lx);
	for (int i = 0; nccl_host[i]; i++)
		declaration(&lx, nccl_host[i], out);
	an_lexed_free(&lx);
	for (const char *d = strstr(nccl_h, "#define NCCL_WIN_"); d; d = strstr(d + 1, "#define NCCL_WIN_"))
		cuco_buf_printf(out, "%.*s\n", (int)strcspn(d, "\n"), d);
	free(nccl_h);
	header *hs = cuco_xcalloc(MAX_HEADERS, sizeof *hs);
	int n = reach_headers(root, hs, MAX_HEADERS);
	for (int i = 0; i < n; i++)
		classify(&hs[i]);
	qsort(hs, (size_t)n, sizeof *hs, cmp_header);
	for (int i = 0; i < n; i++) {
		char *text;
		if (!(hs[i].parts & parts) || cuco_read_file(hs[i].path, HEADER_MAX, &text, NULL, NULL))
			continue;
		cuco_buf_printf(out, "\n### %s\n", hs[i].rel);
		clean_header(text, out);
		free(text);
	}
	free(hs);
	return CUCO_OK;
}

/* mpi.h as the MPI compiler finds it: the dependencies it prints for a
 * file that includes it. */
static bool find_mpi_h(const char *compiler, char *out, size_t size)
{
	char probe[PATH_MAX];
	snprintf(probe, sizeof probe, "%s/cuco-mpi-h-XXXXXX.c", cuco_tmp_dir());
	int fd = mkstemps(probe, 2);
	if (fd < 0)
		return false;
	static const char line[] = "#include <mpi.h>\n";
	bool wrote = write(fd, line, sizeof line - 1) == (ssize_t)(sizeof line - 1);
	close(fd);
	cuco_argv argv = { 0 };
	cuco_argv_push_words(&argv, compiler);
	cuco_argv_push(&argv, "-E");
	cuco_argv_push(&argv, "-M");
	cuco_argv_push(&argv, probe);
	char *deps = cuco_xmalloc(HEADER_MAX);
	bool ran = wrote && argv.n > 3 && cuco_proc_output(argv.v, COMPILER_S, deps, HEADER_MAX);
	unlink(probe);
	cuco_argv_free(&argv);
	bool found = false;
	for (char *p = ran ? deps : NULL, *word; p && *p && !found; p += strcspn(p, " \t\n\\")) {
		p += strspn(p, " \t\n\\");
		size_t n = strcspn(p, " \t\n\\");
		word = p;
		found = n >= 6 && n < size && strncmp(word + n - 6, "/mpi.h", 6) == 0;
		if (found)
			snprintf(out, size, "%.*s", (int)n, word);
	}
	free(deps);
	return found;
}

static int mpi_reference(const char *compiler, int parts, cuco_buf *out, char *from, size_t size,
	cuco_err *err)
{
	char path[PATH_MAX];
	if (!find_mpi_h(compiler, path, sizeof path))
		return cuco_errf(err, CUCO_EENV, "%s cannot find mpi.h (is it an MPI compiler?)", compiler);
	char *text;
	int rc = cuco_read_file(path, HEADER_MAX, &text, NULL, err);
	if (rc != CUCO_OK)
		return rc;
	snprintf(from, size, "%s", path);
	cuco_buf_printf(out, "Declarations of MPI's one-sided communication (%s), read from %s.\n\n",
		parts == PART_RMA ? "windows with put and get" : parts == PART_SHM ?
		"shared-memory windows" : "windows with put and get, and shared-memory windows", path);
	an_lexed lx;
	an_lex(text, strlen(text), &lx);
	for (size_t i = 0; i < sizeof mpi_calls / sizeof mpi_calls[0]; i++)
		if (mpi_calls[i].parts & parts)
			declaration(&lx, mpi_calls[i].name, out);
	an_lexed_free(&lx);
	free(text);
	return CUCO_OK;
}

int cuco_api_reference(const cuco_workload *wl, const char *backend, cuco_buf *out, char *from,
	size_t size, cuco_err *err)
{
	int parts = parts_of(wl->family, backend);
	if (wl->family == CUCO_FAMILY_CUDA)
		return cuco_errf(err, CUCO_ENOTFOUND, "%s: a one-GPU workload has no communication API",
			wl->name);
	if (wl->family == CUCO_FAMILY_CPU_MPI) {
		char compiler[256];
		cuco_workload_compiler(wl, cuco_env_get(), compiler, sizeof compiler);
		return mpi_reference(compiler, parts, out, from, size, err);
	}
	return nccl_reference(parts, out, from, size, err);
}
