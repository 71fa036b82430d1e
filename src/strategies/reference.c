/* reference.c — what a fast-path prompt carries besides its task and its
 * program, as CUCo's fast path does: the hardware, the communication
 * analysis of the program (eval's cuco_program_report), the reference of
 * the API the program moves to, read from the headers installed here
 * (cuco_api_reference), verified examples — this project's own
 * device-initiated (or one-sided) programs, which its tests build and run
 * — and the source of the helper headers the program includes. Each is a
 * section of the system message, marked for fitting (prompt.h's cut
 * table) and measured (cuco_fp_prompt's bytes).
 */
#include "analyze/analyze.h"
#include "strategies/search_int.h"
#include "text.h"

#include <ctype.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_FILE_SHOWN (24u << 10)  /* per header or example file, as per document */
#define MAX_SHOWN_FILES 16

/* Where the examples come from: the first shipped workload of the family
 * that is not the one at hand, its seed and the helpers it is built on. */
static const char *const gpu_examples[] = { "gemm-allgather", "kv-cache-transfer", NULL };
static const char *const cpu_examples[] = { "cpu-gemm-allgather", "cpu-kv-transfer", NULL };
static const char *const gpu_helpers[] = { "cuco_lsa.cuh", NULL };

typedef struct shown {
	char paths[MAX_SHOWN_FILES][PATH_MAX];
	int n;
} shown;

/* Whether path was shown already; notes it when not. */
static bool once(shown *s, const char *path)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return false;
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->paths[i], real) == 0)
			return false;
	if (s->n < MAX_SHOWN_FILES)
		cuco_strlcpy(s->paths[s->n++], real, sizeof s->paths[0]);
	return true;
}

static void put_file(cuco_buf *b, const char *title, const char *text, size_t len)
{
	cuco_buf_printf(b, "\n### %s\n```c\n", title);
	cuco_buf_append(b, text, len < MAX_FILE_SHOWN ? len : MAX_FILE_SHOWN);
	if (len > MAX_FILE_SHOWN)
		cuco_buf_printf(b, "\n[… %zu more bytes not shown]", len - MAX_FILE_SHOWN);
	cuco_buf_puts(b, len && text[len - 1] == '\n' ? "```\n" : "\n```\n");
}

/* text without the #if MACRO branches (an example's GIN code, for an LSA
 * program): the #else side of such an #if stays, its directives go. */
enum { KEEP, DROP, OTHER_SIDE };  /* an #if level: as is, dropped, after a dropped branch */

static bool directive_is(const char *d, const char *word)
{
	size_t n = strlen(word);
	return strncmp(d, word, n) == 0 && !isalnum((unsigned char)d[n]) && d[n] != '_';
}

static void drop_branches(const char *text, const char *macro, cuco_buf *out)
{
	int level[32], depth = 0, dropped = 0;  /* dropped: levels in DROP */
	for (const char *s = text; *s;) {
		size_t n = strcspn(s, "\n");
		const char *d = s;
		while (d < s + n && (*d == ' ' || *d == '\t'))
			d++;
		bool keep = dropped == 0;
		if (*d == '#') {
			d++;
			while (*d == ' ')
				d++;
			if (directive_is(d, "if") || directive_is(d, "ifdef") || directive_is(d, "ifndef")) {
				const char *arg = d + 2;
				while (*arg == ' ')
					arg++;
				bool ours = directive_is(d, "if") && directive_is(arg, macro);
				int mode = dropped || ours ? DROP : KEEP;
				keep = keep && mode == KEEP;
				if (depth < 32)
					level[depth++] = mode;
				dropped += mode == DROP;
			} else if ((directive_is(d, "else") || directive_is(d, "elif")) && depth > 0 &&
					level[depth - 1] != KEEP) {
				/* The other side of our #if stays (a nested dropped one's does not). */
				if (level[depth - 1] == DROP && dropped == 1) {
					level[depth - 1] = OTHER_SIDE;
					dropped--;
				}
				keep = false;
			} else if (directive_is(d, "endif") && depth > 0) {
				int mode = level[--depth];
				keep = keep && mode == KEEP;
				dropped -= mode == DROP;
			}
		}
		if (keep) {
			cuco_buf_append(out, s, n);
			cuco_buf_puts(out, "\n");
		}
		s += n + (s[n] == '\n');
	}
}

/* ---- sections ------------------------------------------------------------------- */

static void section_analysis(cuco_buf *b, const cuco_workload *wl, const char *program, size_t len)
{
	cuco_program *p;
	cuco_err err;
	if (cuco_program_parse("the program", wl->dir, program, len, &p, &err) != CUCO_OK) {
		cuco_log(CUCO_LOG_WARN, "fastpath: analysis: %s", err.msg);
		return;
	}
	cuco_buf_puts(b, "\n## The program's host communication\nA lexical reading of the program "
		"below (`cuco analyze`), to tell what its host calls move, where they sit and what "
		"produces and consumes their buffers:\n\n");
	cuco_program_report(p, cuco_workload_size(wl, NULL), wl->ranks, b);
	cuco_program_free(p);
}

/* LSA unless this machine offers GIN and the design space has it; on
 * CPUs both one-sided forms. */
static const char *api_backend(const cuco_workload *wl, const cuco_hardware *hw)
{
	if (wl->family == CUCO_FAMILY_CPU_MPI)
		return NULL;
	const cuco_dim *d = cuco_workload_dim(wl, "backend");
	for (int v = 0; d && hw && hw->gin && v < d->nvalues; v++)
		if (strcasecmp(d->values[v], "gin") == 0)
			return "gin";
	return "lsa";
}

static void section_api(cuco_buf *b, const cuco_workload *wl, const cuco_hardware *hw,
	char *from, size_t size)
{
	cuco_buf ref = { 0 };
	cuco_err err = { 0 };
	if (cuco_api_reference(wl, api_backend(wl, hw), &ref, from, size, &err) != CUCO_OK) {
		snprintf(from, size, "none: %.400s", err.msg);
		cuco_log(CUCO_LOG_WARN, "fastpath: API reference: %s", err.msg);
		cuco_buf_free(&ref);
		return;
	}
	cuco_buf_printf(b, "\n## API reference\nThe declarations to write against, from the headers "
		"that will build the program (%s). Use these, not what another version documents.\n\n",
		from);
	cuco_buf_append(b, ref.data, ref.len);
	cuco_buf_free(&ref);
}

static bool read_into(const char *path, char **text, size_t *len)
{
	return cuco_read_file(path, 4u << 20, text, len, NULL) == CUCO_OK;
}

static void section_examples(cuco_buf *b, const cuco_workload *wl, const cuco_hardware *hw,
	shown *seen)
{
	const char *const *names = wl->family == CUCO_FAMILY_CPU_MPI ? cpu_examples : gpu_examples;
	const char *backend = api_backend(wl, hw);
	for (int i = 0; names[i]; i++) {
		cuco_workload *ex;
		if (strcmp(names[i], wl->name) == 0 || cuco_workload_load(names[i], &ex, NULL) != CUCO_OK)
			continue;
		cuco_buf_printf(b, "\n## Verified examples\nCorrect programs of this project's own "
			"(its tests build and run them): the %s workload's device-initiated seed%s. Take "
			"their setup and synchronization as models; the workload they serve differs.\n",
			ex->name, wl->family == CUCO_FAMILY_CPU_MPI ? "" : " and the LSA helpers it is built on");
		for (int e = 0; e < ex->nextras && wl->family != CUCO_FAMILY_CPU_MPI; e++) {
			const char *base = strrchr(ex->extras[e], '/') ? strrchr(ex->extras[e], '/') + 1 :
				ex->extras[e];
			char path[PATH_MAX + 200], *text;
			size_t len;
			snprintf(path, sizeof path, "%s/%s", ex->dir, ex->extras[e]);
			for (int h = 0; gpu_helpers[h]; h++)
				if (strcmp(base, gpu_helpers[h]) == 0 && once(seen, path) &&
						read_into(path, &text, &len)) {
					put_file(b, base, text, len);
					free(text);
				}
		}
		char path[PATH_MAX + 200], *text;
		size_t len;
		snprintf(path, sizeof path, "%s/%s", ex->dir, ex->seed_file);
		if (*ex->seed_file && once(seen, path) && read_into(path, &text, &len)) {
			char title[256];
			snprintf(title, sizeof title, "%s/%s%s", ex->name, ex->seed_file, backend &&
				strcmp(backend, "lsa") == 0 ? " (its GIN branches left out)" : "");
			if (backend && strcmp(backend, "lsa") == 0) {
				cuco_buf lsa = { 0 };
				drop_branches(text, "CUCO_BACKEND_GIN", &lsa);
				put_file(b, title, lsa.data ? lsa.data : "", lsa.len);
				cuco_buf_free(&lsa);
			} else {
				put_file(b, title, text, len);
			}
			free(text);
		}
		cuco_workload_free(ex);
		return;
	}
	/* Said once: every prompt of a run, and each of `cuco analyze --prompt`'s, would. */
	static atomic_bool said;
	if (!atomic_exchange(&said, true))
		cuco_log(CUCO_LOG_WARN, "fastpath: no verified examples: none of cuco's own %s "
			"workloads found in the workload folders (cuco doctor lists them)", names[0]);
}

/* A local include found beside the workload, or beside its harness and
 * extras (the folders a build's -I names, as ../gpu-common). */
static bool find_header(const cuco_workload *wl, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", wl->dir, name);
	if (access(out, R_OK) == 0)
		return true;
	for (int i = -1; i < wl->nextras; i++) {
		const char *f = i < 0 ? wl->harness_file : wl->extras[i];
		const char *slash = strrchr(f, '/');
		if (!*f || !slash)
			continue;
		snprintf(out, size, "%s/%.*s/%s", wl->dir, (int)(slash - f), f, name);
		if (access(out, R_OK) == 0)
			return true;
	}
	return false;
}

static void section_headers(cuco_buf *b, const cuco_workload *wl, const char *program, size_t len,
	shown *seen)
{
	char names[MAX_SHOWN_FILES][128];
	int n = 0, put = 0;
	cuco_text_includes(program, len, names, &n, MAX_SHOWN_FILES);
	for (int k = 0; k < n; k++) {
		char path[PATH_MAX + 200], *text;
		size_t tlen;
		if (!find_header(wl, names[k], path, sizeof path) || !once(seen, path) ||
				!read_into(path, &text, &tlen))
			continue;
		if (put++ == 0)
			cuco_buf_puts(b, "\n## Helper headers the program includes\nTheir source, as the "
				"build finds them: what the program calls from them and may rely on.\n");
		put_file(b, names[k], text, tlen);
		cuco_text_includes(text, tlen, names, &n, MAX_SHOWN_FILES);
		free(text);
	}
}

int fp_reference(const cuco_workload *wl, const cuco_hardware *hw, const char *program,
	size_t len, bool lean, cuco_fp_prompt *out, cuco_err *err)
{
	(void)err;
	cuco_buf *b = &out->system;
	shown seen = { .n = 0 };
	size_t start = b->len;
	if (hw) {
		cuco_prompt_put_hardware(b, hw);
		cuco_prompt_mark(&out->map, CUCO_CUT_HARDWARE, false, b, start);
		out->bytes[CUCO_FP_HARDWARE] = b->len - start;
	}
	start = b->len;
	section_analysis(b, wl, program, len);
	cuco_prompt_mark(&out->map, CUCO_CUT_ANALYSIS, false, b, start);
	out->bytes[CUCO_FP_ANALYSIS] = b->len - start;
	if (lean) {
		cuco_strlcpy(out->api_from, "none: the lean profile leaves it out", sizeof out->api_from);
		return CUCO_OK;
	}
	start = b->len;
	section_api(b, wl, hw, out->api_from, sizeof out->api_from);
	cuco_prompt_mark(&out->map, CUCO_CUT_API, false, b, start);
	out->bytes[CUCO_FP_API] = b->len - start;
	start = b->len;
	section_headers(b, wl, program, len, &seen);
	cuco_prompt_mark(&out->map, CUCO_CUT_HEADER, false, b, start);
	out->bytes[CUCO_FP_HEADERS] = b->len - start;
	start = b->len;
	section_examples(b, wl, hw, &seen);
	cuco_prompt_mark(&out->map, CUCO_CUT_EXAMPLE, false, b, start);
	out->bytes[CUCO_FP_EXAMPLES] = b->len - start;
	return CUCO_OK;
}
