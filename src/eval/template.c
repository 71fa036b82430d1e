/* template.c — build and run command templates into argument vectors,
 * and a directive into the source (defines on the command line, @SLOT@ in
 * text). The table of placeholders is in docs/workloads.md.
 *
 * No shell runs between cuco and a stage (issue 18: a size named
 * `s;exit 7;` made the build exit 7). A template is split into words at
 * blanks, with '…', "…" and \ quoting as in the shell, before any
 * placeholder is substituted; a value is then part of its word whatever it
 * holds — blanks, quotes, `;`, `$(…)` — and is never split or read again.
 * {compiler} (which may carry flags) and {defines} are lists of words and
 * must be words of their own. */
#include "eval/eval_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- placeholders ------------------------------------------------------------- */

static bool size_var_everywhere(const cuco_workload *wl, const char *var)
{
	for (int i = 0; i < wl->nsizes; i++) {
		bool found = false;
		for (int k = 0; k < wl->sizes[i].nvars && !found; k++)
			found = strcmp(wl->sizes[i].vars[k].name, var) == 0;
		if (!found)
			return false;
	}
	return wl->nsizes > 0;
}

/* Whether {name} is a placeholder the workload's templates may use. */
static bool eval_placeholder_known(const cuco_workload *wl, const char *name)
{
	static const char *const fixed[] = { "compiler", "source", "output", "workload", "defines",
		"sizes", "objects", "ranks", "size", "warmup", "reps", "nccl_home", "cuda_home" };
	if (cuco_name_index(fixed, sizeof fixed / sizeof fixed[0], name) >= 0)
		return true;
	if (strncmp(name, "size.", 5) == 0)
		return size_var_everywhere(wl, name + 5);
	/* A dimension of the design space; looked up here rather than through
	 * workload.c, which expands templates to check them. */
	for (int i = 0; i < wl->ndims; i++)
		if (strcmp(wl->dims[i].name, name) == 0)
			return true;
	return false;
}

/* -D<define>_<VALUE>=1 -D<define>=<index> for an enum, -D<define>=<v> else:
 * each one word. */
static void push_dim_defines(cuco_argv *out, const cuco_dim *d, const char *value)
{
	cuco_buf w = { 0 };
	if (d->kind == CUCO_DIM_INT) {
		cuco_buf_printf(&w, "-D%s=%s", d->define, value);
		cuco_argv_push(out, w.data);
		cuco_buf_free(&w);
		return;
	}
	cuco_buf_printf(&w, "-D%s_", d->define);
	for (const char *p = value; *p; p++) {
		char c = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
		cuco_buf_append(&w, &c, 1);
	}
	cuco_buf_puts(&w, "=1");
	cuco_argv_push(out, w.data);
	int index = 0;
	for (int i = 0; i < d->nvalues && !index; i++)
		if (strcmp(d->values[i], value) == 0)
			index = i + 1;
	w.len = 0;
	cuco_buf_printf(&w, "-D%s=%d", d->define, index);
	cuco_argv_push(out, w.data);
	cuco_buf_free(&w);
}

static void push_sizes(cuco_argv *out, const eval_vars *v)
{
	char w[64];
	for (int i = 0; v->size && i < v->size->nvars; i++) {
		snprintf(w, sizeof w, "-D%s=%ld", v->size->vars[i].name, v->size->vars[i].value);
		cuco_argv_push(out, w);
	}
}

static void push_defines(cuco_argv *out, const eval_vars *v)
{
	for (int i = 0; i < v->wl->ndims; i++) {
		const cuco_dim *d = &v->wl->dims[i];
		if (*d->define)
			push_dim_defines(out, d, cuco_directive_value(v->dir, d->name));
	}
	push_sizes(out, v);
}

/* The placeholders that are lists of words. */
static bool is_list(const char *name)
{
	return strcmp(name, "compiler") == 0 || strcmp(name, "defines") == 0
		|| strcmp(name, "sizes") == 0 || strcmp(name, "objects") == 0;
}

static void push_list(cuco_argv *out, const eval_vars *v, const char *name)
{
	if (strcmp(name, "compiler") == 0)
		cuco_argv_push_words(out, v->compiler ? v->compiler : v->wl->compiler);
	else if (strcmp(name, "sizes") == 0)
		push_sizes(out, v);
	else if (strcmp(name, "objects") == 0)
		cuco_argv_append(out, v->objects);
	else
		push_defines(out, v);
}

static void append_value(cuco_buf *out, const eval_vars *v, const char *name)
{
	if (strcmp(name, "source") == 0)
		cuco_buf_puts(out, v->source);
	else if (strcmp(name, "output") == 0)
		cuco_buf_puts(out, v->output);
	else if (strcmp(name, "workload") == 0)
		cuco_buf_puts(out, v->wl->dir);
	else if (strcmp(name, "ranks") == 0)
		cuco_buf_printf(out, "%d", v->wl->ranks);
	else if (strcmp(name, "size") == 0)
		cuco_buf_puts(out, v->size->name);
	else if (strcmp(name, "warmup") == 0)
		cuco_buf_printf(out, "%d", v->warmup);
	else if (strcmp(name, "reps") == 0)
		cuco_buf_printf(out, "%d", v->reps);
	else if (strcmp(name, "nccl_home") == 0)
		cuco_buf_puts(out, v->nccl_home && *v->nccl_home ? v->nccl_home : "/usr/local/cuda");
	else if (strcmp(name, "cuda_home") == 0)
		cuco_buf_puts(out, v->cuda_home && *v->cuda_home ? v->cuda_home : "/usr/local/cuda");
	else if (strncmp(name, "size.", 5) == 0) {
		for (int i = 0; i < v->size->nvars; i++)
			if (strcmp(v->size->vars[i].name, name + 5) == 0)
				cuco_buf_printf(out, "%ld", v->size->vars[i].value);
	} else
		cuco_buf_puts(out, cuco_directive_value(v->dir, name));
}

/* The placeholder at p ('{'): its name into name; the text after it. */
static const char *placeholder(const char *tmpl, const char *p, const eval_vars *v, char name[64],
	cuco_err *err)
{
	const char *close = strchr(p, '}');
	if (!close) {
		cuco_errf(err, CUCO_EDATA, "unterminated placeholder at offset %d", (int)(p - tmpl));
		return NULL;
	}
	size_t n = (size_t)(close - p - 1);
	if (n == 0 || n >= 64) {
		cuco_errf(err, CUCO_EDATA, "unknown placeholder %.*s", (int)(n + 2 > 60 ? 60 : n + 2), p);
		return NULL;
	}
	memcpy(name, p + 1, n);
	name[n] = '\0';
	if (!eval_placeholder_known(v->wl, name)) {
		cuco_errf(err, CUCO_EDATA, "unknown placeholder {%s}", name);
		return NULL;
	}
	return close + 1;
}

int eval_expand(const char *tmpl, const eval_vars *v, cuco_argv *out, cuco_err *err)
{
	cuco_buf word = { 0 };
	bool in_word = false;  /* quotes make a word, even an empty one */
	char quote = 0, name[64];
	int rc = CUCO_OK;
	for (const char *p = tmpl; *p && rc == CUCO_OK;) {
		if (!quote && (*p == ' ' || *p == '\t' || *p == '\n')) {
			if (in_word)
				cuco_argv_push(out, word.data ? word.data : "");
			if (word.data)
				word.data[word.len = 0] = '\0';
			in_word = false;
			p++;
		} else if ((*p == '\'' || *p == '"') && (!quote || quote == *p)) {
			quote = quote ? 0 : *p;
			in_word = true;
			p++;
		} else if (*p == '\\' && quote != '\'' && p[1]) {
			cuco_buf_append(&word, p + 1, 1);
			in_word = true;
			p += 2;
		} else if (*p == '{' && v) {
			const char *next = placeholder(tmpl, p, v, name, err);
			if (!next) {
				rc = CUCO_EDATA;
			} else if (is_list(name) && (quote || in_word || (*next && !strchr(" \t\n", *next)))) {
				rc = cuco_errf(err, CUCO_EDATA, "{%s} is a list of words: it must stand alone", name);
			} else if (is_list(name)) {
				if (v->dir)
					push_list(out, v, name);
				else
					cuco_argv_push(out, p[1] == 'c' ? "{compiler}" : p[1] == 'd' ? "{defines}"
						: p[1] == 's' ? "{sizes}" : "{objects}");
			} else {
				/* Without a directive (checking a manifest) names stay as they are. */
				if (v->dir)
					append_value(&word, v, name);
				else
					cuco_buf_printf(&word, "{%s}", name);
				in_word = true;
			}
			p = next ? next : p;
		} else {
			cuco_buf_append(&word, p, 1);
			in_word = true;
			p++;
		}
	}
	if (rc == CUCO_OK && quote)
		rc = cuco_errf(err, CUCO_EDATA, "unterminated %c quote", quote);
	if (rc == CUCO_OK && in_word)
		cuco_argv_push(out, word.data ? word.data : "");
	cuco_buf_free(&word);
	return rc;
}

void eval_apply_slots(const cuco_workload *wl, const cuco_directive *dir,
	const char *src, size_t len, cuco_buf *out)
{
	cuco_buf_puts(out, "");
	const char *end = src + len, *p = src;
	while (p < end) {
		const char *at = memchr(p, '@', (size_t)(end - p));
		if (!at) {
			cuco_buf_append(out, p, (size_t)(end - p));
			break;
		}
		cuco_buf_append(out, p, (size_t)(at - p));
		const cuco_dim *hit = NULL;
		for (int i = 0; i < wl->ndims && !hit; i++) {
			size_t n = strlen(wl->dims[i].slot);
			if (n && at + n + 2 <= end && memcmp(at + 1, wl->dims[i].slot, n) == 0 && at[n + 1] == '@')
				hit = &wl->dims[i];
		}
		if (hit) {
			cuco_buf_puts(out, cuco_directive_value(dir, hit->name));
			p = at + strlen(hit->slot) + 2;
		} else {
			cuco_buf_append(out, at, 1);
			p = at + 1;
		}
	}
}
