/* template.c — expanding build and run command templates, and putting a
 * directive into the source (defines on the command line, @SLOT@ in text).
 * The table of placeholders is in docs/workloads.md. */
#include "eval/eval_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void eval_shell_quote(cuco_buf *out, const char *word)
{
	bool plain = *word != '\0';
	for (const char *p = word; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || strchr("_./-+=,:@%", *p);
	if (plain) {
		cuco_buf_puts(out, word);
		return;
	}
	cuco_buf_puts(out, "'");
	for (const char *p = word; *p; p++) {
		if (*p == '\'')
			cuco_buf_puts(out, "'\\''");
		else
			cuco_buf_append(out, p, 1);
	}
	cuco_buf_puts(out, "'");
}

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

bool eval_placeholder_known(const cuco_workload *wl, const char *name)
{
	static const char *const fixed[] = { "compiler", "source", "output", "workload", "defines",
		"ranks", "size", "warmup", "reps", "nccl_home", "cuda_home", NULL };
	for (int i = 0; fixed[i]; i++)
		if (strcmp(name, fixed[i]) == 0)
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

/* -D<define>_<VALUE>=1 -D<define>=<index> for an enum, -D<define>=<v> else. */
static void append_dim_defines(cuco_buf *out, const cuco_dim *d, const char *value)
{
	if (d->kind == CUCO_DIM_INT) {
		cuco_buf_printf(out, " -D%s=%s", d->define, value);
		return;
	}
	cuco_buf_printf(out, " -D%s_", d->define);
	for (const char *p = value; *p; p++) {
		char c = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
		cuco_buf_append(out, &c, 1);
	}
	int index = 0;
	for (int i = 0; i < d->nvalues && !index; i++)
		if (strcmp(d->values[i], value) == 0)
			index = i + 1;
	cuco_buf_printf(out, "=1 -D%s=%d", d->define, index);
}

static void append_defines(cuco_buf *out, const eval_vars *v)
{
	size_t start = out->len;
	for (int i = 0; i < v->wl->ndims; i++) {
		const cuco_dim *d = &v->wl->dims[i];
		if (*d->define)
			append_dim_defines(out, d, cuco_directive_value(v->dir, d->name));
	}
	for (int i = 0; v->size && i < v->size->nvars; i++)
		cuco_buf_printf(out, " -D%s=%ld", v->size->vars[i].name, v->size->vars[i].value);
	/* Drop the leading space, so "{defines}" alone yields no stray blank. */
	if (out->len > start) {
		memmove(out->data + start, out->data + start + 1, out->len - start);
		out->len--;
	}
}

static void append_value(cuco_buf *out, const eval_vars *v, const char *name)
{
	if (strcmp(name, "compiler") == 0)
		cuco_buf_puts(out, v->compiler ? v->compiler : v->wl->compiler);  /* may carry flags */
	else if (strcmp(name, "source") == 0)
		eval_shell_quote(out, v->source);
	else if (strcmp(name, "output") == 0)
		eval_shell_quote(out, v->output);
	else if (strcmp(name, "workload") == 0)
		eval_shell_quote(out, v->wl->dir);
	else if (strcmp(name, "defines") == 0)
		append_defines(out, v);
	else if (strcmp(name, "ranks") == 0)
		cuco_buf_printf(out, "%d", v->wl->ranks);
	else if (strcmp(name, "size") == 0)
		cuco_buf_puts(out, v->size->name);
	else if (strcmp(name, "warmup") == 0)
		cuco_buf_printf(out, "%d", v->warmup);
	else if (strcmp(name, "reps") == 0)
		cuco_buf_printf(out, "%d", v->reps);
	else if (strcmp(name, "nccl_home") == 0)
		eval_shell_quote(out, v->nccl_home && *v->nccl_home ? v->nccl_home : "/usr/local/cuda");
	else if (strcmp(name, "cuda_home") == 0)
		eval_shell_quote(out, v->cuda_home && *v->cuda_home ? v->cuda_home : "/usr/local/cuda");
	else if (strncmp(name, "size.", 5) == 0) {
		for (int i = 0; i < v->size->nvars; i++)
			if (strcmp(v->size->vars[i].name, name + 5) == 0)
				cuco_buf_printf(out, "%ld", v->size->vars[i].value);
	} else
		cuco_buf_puts(out, cuco_directive_value(v->dir, name));
}

int eval_expand(const char *tmpl, const eval_vars *v, cuco_buf *out, cuco_err *err)
{
	cuco_buf_puts(out, "");
	for (const char *p = tmpl; *p;) {
		const char *open = strchr(p, '{');
		if (!open) {
			cuco_buf_puts(out, p);
			break;
		}
		cuco_buf_append(out, p, (size_t)(open - p));
		const char *close = strchr(open, '}');
		if (!close)
			return cuco_errf(err, CUCO_EDATA, "unterminated placeholder at offset %d", (int)(open - tmpl));
		char name[64];
		size_t n = (size_t)(close - open - 1);
		if (n == 0 || n >= sizeof name)
			return cuco_errf(err, CUCO_EDATA, "unknown placeholder %.*s", (int)(n + 2 > 60 ? 60 : n + 2), open);
		memcpy(name, open + 1, n);
		name[n] = '\0';
		if (!eval_placeholder_known(v->wl, name))
			return cuco_errf(err, CUCO_EDATA, "unknown placeholder {%s}", name);
		/* Without a directive (checking a manifest) names stay as they are. */
		if (v->dir)
			append_value(out, v, name);
		else
			cuco_buf_printf(out, "{%s}", name);
		p = close + 1;
	}
	return CUCO_OK;
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
