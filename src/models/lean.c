/* lean.c — a program as the lean prompt profile shows it: every line a
 * reply may quote, and little else.
 *
 * The lean profile is for a model whose context is a few thousand tokens
 * (docs/replies.md, "Prompt profiles"). Two kinds of lines go, each run
 * of them replaced by one line that says how many and why:
 *
 *   - the bodies of functions outside the EVOLVE-BLOCKs (the frame): a
 *     reply may not change them, and their signatures stay;
 *   - the branches of #if/#elif/#else that the parent's directive does
 *     not build: a templated seed holds every directive's code, and the
 *     model edits the one it runs.
 *
 * What is shown is the parent's own text, line for line. A note names
 * the parent's lines it stands for ("[… lines 71-78 not shown: …]"), so
 * a reply may quote it like any line: the edit is applied to the view
 * and each note then becomes its lines again (cuco_lean_expand). A condition is decided only from
 * the directive's defines (the evaluator's rule, src/eval/template.c:
 * -D<DEFINE>_<VALUE>=1 and -D<DEFINE>=<index> for a listed value,
 * -D<DEFINE>=<value> for a number); any other name, or an operator this
 * reader does not know, leaves the branch shown. The same reader tells
 * the patcher which lines a reply's directive builds (cuco_lean_built),
 * so that an edit of a branch it does not build is set aside. Braces are counted
 * outside comments, strings and characters; a frame whose braces do not
 * balance is shown whole.
 */
#include "models/models.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct src_line {
	const char *s;
	size_t n;
	int depth;        /* brace depth at the line's start */
	bool comment;     /* holds nothing but comment (or is inside a block comment) */
	bool opens_body;  /* a function body's '{' ends this line at depth 0 */
	cuco_marker marker;  /* an EVOLVE-BLOCK-START or -END line (text.h) */
	bool hidden;
	const char *why;  /* of a hidden run */
} src_line;

/* ---- #if conditions ---------------------------------------------------------- */

enum { V_NO, V_YES, V_UNKNOWN };

typedef struct cond {
	const cuco_workload *wl;
	const cuco_directive *d;
	const char *p;
	bool bad;         /* something this reader does not know */
} cond;

typedef struct val {
	long v;
	bool known;
} val;

static void skip_space(cond *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

static bool word(cond *c, char *out, size_t size)
{
	skip_space(c);
	size_t n = 0;
	if (!isalpha((unsigned char)*c->p) && *c->p != '_')
		return false;
	while (isalnum((unsigned char)c->p[n]) || c->p[n] == '_')
		n++;
	snprintf(out, size, "%.*s", (int)(n < size - 1 ? n : size - 1), c->p);
	c->p += n;
	return true;
}

/* A macro's value under the directive: known for the directive's defines
 * (and for another value's define of a listed dimension: not defined,
 * so 0), unknown for any other name. *defined says whether it is. */
static val macro(const cond *c, const char *name, bool *defined)
{
	*defined = false;
	for (int i = 0; i < c->wl->ndims; i++) {
		const cuco_dim *dim = &c->wl->dims[i];
		size_t dn = strlen(dim->define);
		if (!dn || strncmp(name, dim->define, dn) != 0)
			continue;
		const char *value = cuco_directive_value(c->d, dim->name);
		if (name[dn] == '\0') {
			*defined = true;
			if (dim->kind == CUCO_DIM_INT)
				return (val){ strtol(value, NULL, 10), true };
			for (int k = 0; k < dim->nvalues; k++)
				if (strcmp(dim->values[k], value) == 0)
					return (val){ k + 1, true };
			return (val){ 0, true };
		}
		if (name[dn] != '_' || dim->nvalues == 0)
			continue;
		char want[64];
		size_t w = 0;
		for (const char *p = value; *p && w + 1 < sizeof want; p++)
			want[w++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
		want[w] = '\0';
		*defined = strcmp(name + dn + 1, want) == 0;
		return (val){ *defined, true };
	}
	return (val){ 0, false };
}

static val or_expr(cond *c);

static val unary(cond *c)
{
	skip_space(c);
	char name[64];
	if (*c->p == '!') {
		c->p++;
		val v = unary(c);
		return (val){ !v.v, v.known };
	}
	if (*c->p == '(') {
		c->p++;
		val v = or_expr(c);
		skip_space(c);
		if (*c->p++ != ')')
			c->bad = true;
		return v;
	}
	if (isdigit((unsigned char)*c->p)) {
		char *end;
		long v = strtol(c->p, &end, 0);
		c->p = end;
		while (*c->p == 'u' || *c->p == 'U' || *c->p == 'l' || *c->p == 'L')
			c->p++;
		return (val){ v, true };
	}
	if (!word(c, name, sizeof name)) {
		c->bad = true;
		return (val){ 0, false };
	}
	bool defined;
	if (strcmp(name, "defined") == 0) {
		skip_space(c);
		bool paren = *c->p == '(';
		c->p += paren;
		if (!word(c, name, sizeof name))
			c->bad = true;
		skip_space(c);
		if (paren && *c->p++ != ')')
			c->bad = true;
		val v = macro(c, name, &defined);
		return (val){ defined, v.known };
	}
	return macro(c, name, &defined);
}

static val compare(cond *c)
{
	val a = unary(c);
	skip_space(c);
	static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">" };
	for (int i = 0; i < 6; i++) {
		size_t n = strlen(ops[i]);
		if (strncmp(c->p, ops[i], n) != 0)
			continue;
		c->p += n;
		val b = unary(c);
		long r = i == 0 ? a.v == b.v : i == 1 ? a.v != b.v : i == 2 ? a.v <= b.v :
			i == 3 ? a.v >= b.v : i == 4 ? a.v < b.v : a.v > b.v;
		return (val){ r, a.known && b.known };
	}
	return a;
}

/* a && b && … (any false one decides), or a || b || … (any true one). */
static val logic(cond *c, bool any)
{
	const char *op = any ? "||" : "&&";
	val a = any ? logic(c, false) : compare(c);
	for (skip_space(c); strncmp(c->p, op, 2) == 0; skip_space(c)) {
		c->p += 2;
		val b = any ? logic(c, false) : compare(c);
		bool decided = (a.known && !a.v == !any) || (b.known && !b.v == !any);
		a = decided ? (val){ any, true } : (val){ any ? (a.v || b.v) : (a.v && b.v),
			a.known && b.known };
	}
	return a;
}

static val or_expr(cond *c)
{
	return logic(c, true);
}

/* V_YES, V_NO or V_UNKNOWN for the text after #if, #elif, #ifdef or #ifndef. */
static int decide(const cuco_workload *wl, const cuco_directive *d, const char *kw,
	const char *text, size_t n)
{
	char buf[512], *code = cuco_text_strip(text, n, false);
	snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), code);
	free(code);
	cond c = { wl, d, buf, false };
	val v;
	if (strcmp(kw, "ifdef") == 0 || strcmp(kw, "ifndef") == 0) {
		char name[64];
		bool defined;
		if (!word(&c, name, sizeof name))
			return V_UNKNOWN;
		v = macro(&c, name, &defined);
		v.v = strcmp(kw, "ifdef") == 0 ? defined : !defined;
	} else {
		v = or_expr(&c);
	}
	skip_space(&c);
	if (c.bad || *c.p || !v.known)
		return V_UNKNOWN;
	return v.v ? V_YES : V_NO;
}

/* The directive of a preprocessor line ("if", "elif", "else", "endif", …)
 * into kw, and where its argument starts; false for any other line. */
static bool pp_line(const src_line *l, char *kw, size_t size, size_t *arg)
{
	size_t i = 0;
	while (i < l->n && (l->s[i] == ' ' || l->s[i] == '\t'))
		i++;
	if (i == l->n || l->s[i] != '#')
		return false;
	i++;
	while (i < l->n && (l->s[i] == ' ' || l->s[i] == '\t'))
		i++;
	size_t k = 0;
	while (i + k < l->n && isalpha((unsigned char)l->s[i + k]))
		k++;
	snprintf(kw, size, "%.*s", (int)(k < size - 1 ? k : size - 1), l->s + i);
	*arg = i + k;
	return true;
}

#define PP_DEPTH 32

/* Hide the lines of branches the directive does not build. */
static void hide_branches(src_line *v, size_t n, const cuco_workload *wl, const cuco_directive *d)
{
	/* Per open #if: whether this branch is built (V_*), whether an earlier
	 * branch surely was, whether any branch may be, where it starts, and
	 * whether the whole #if sits in a hidden one. */
	struct { int now; bool taken, maybe, outer_off; size_t at; } st[PP_DEPTH];
	int top = -1;
	for (size_t i = 0; i < n; i++) {
		char kw[16];
		size_t arg;
		bool off = top >= 0 && (st[top].now == V_NO || st[top].outer_off);
		if (!pp_line(&v[i], kw, sizeof kw, &arg)) {
			if (off && !v[i].hidden) {
				v[i].hidden = true;
				v[i].why = "other directives";
			}
			continue;
		}
		/* An #elif, #else or #endif shows where its #if does. */
		bool line_off = off;
		if (!strcmp(kw, "if") || !strcmp(kw, "ifdef") || !strcmp(kw, "ifndef")) {
			if (top + 1 == PP_DEPTH)
				return;  /* too deep to follow: what was decided stands */
			int now = decide(wl, d, kw, v[i].s + arg, v[i].n - arg);
			top++;
			st[top].now = now;
			st[top].taken = now == V_YES;
			st[top].maybe = now != V_NO;
			st[top].outer_off = off;
			st[top].at = i;
		} else if (top >= 0 && (!strcmp(kw, "elif") || !strcmp(kw, "else"))) {
			line_off = st[top].outer_off;
			int now = !strcmp(kw, "else") ? V_YES : decide(wl, d, "if", v[i].s + arg, v[i].n - arg);
			if (st[top].taken)
				now = V_NO;
			else if (st[top].now == V_UNKNOWN && now == V_YES)
				now = V_UNKNOWN;  /* an earlier branch may have been the one */
			st[top].now = now;
			st[top].taken |= now == V_YES;
			st[top].maybe |= now != V_NO;
		} else if (top >= 0 && !strcmp(kw, "endif")) {
			line_off = st[top].outer_off;
			/* No branch built: the whole #if, its own lines too, goes. */
			for (size_t k = st[top].at; !st[top].maybe && !line_off && k < i; k++) {
				v[k].hidden = true;
				v[k].why = "other directives";
			}
			line_off |= !st[top].maybe;
			top--;
		}
		if (line_off && !v[i].hidden) {
			v[i].hidden = true;
			v[i].why = "other directives";
		}
	}
}

/* ---- the frame ------------------------------------------------------------------- */

/* Brace depths, function bodies at depth 0, comment lines and marker
 * lines, read from the text with comments and quotes blanked (text.h);
 * false when the braces do not balance (the frame is then shown whole). */
static bool read_braces(src_line *v, size_t n, const char *text, size_t len)
{
	char *code = cuco_text_strip(text, len, true), *bare = cuco_text_strip(text, len, false);
	int depth = 0;
	char last = ';';  /* the last code character before a '{' */
	for (size_t i = 0; i < n && depth >= 0; i++) {
		const char *c = code + (v[i].s - text), *b = bare + (v[i].s - text);
		v[i].depth = depth;
		v[i].marker = cuco_text_marker(v[i].s, v[i].n);
		size_t first = 0;
		while (first < v[i].n && isspace((unsigned char)c[first]))
			first++;
		bool pp = first < v[i].n && c[first] == '#';
		bool holds_code = false, said = false;
		for (size_t k = 0; k < v[i].n && !pp && depth >= 0; k++) {
			said |= b[k] != v[i].s[k];
			if (isspace((unsigned char)c[k]))
				continue;
			holds_code = true;
			if (c[k] == '{') {
				if (depth == 0 && last == ')')
					v[i].opens_body = true;
				depth++;
			} else if (c[k] == '}') {
				depth--;
			} else {
				last = c[k];
			}
		}
		v[i].comment = !pp && said && !holds_code;
	}
	free(code);
	free(bare);
	return depth == 0;
}

/* Hide the frame, the bodies of functions outside the EVOLVE-BLOCKs (the
 * lines between a body's opening line and its closing brace's line, when
 * no marker is among them), and comments of two lines or more anywhere:
 * a reply that quotes one quotes its note, which stands for it. */
static void hide_frame(src_line *v, size_t n, const char *text, size_t len)
{
	if (!read_braces(v, n, text, len))
		return;
	bool inside = false;
	for (size_t i = 0; i < n; i++) {
		if (v[i].marker) {
			inside = v[i].marker == CUCO_MARKER_START;
			continue;
		}
		if (v[i].comment) {
			size_t end = i;
			while (end < n && v[end].comment && !v[end].marker)
				end++;
			for (size_t k = i; end - i >= 2 && k < end; k++) {
				v[k].hidden = true;
				v[k].why = "a comment";
			}
			i = end - 1;
			continue;
		}
		if (inside)
			continue;
		if (!v[i].opens_body)
			continue;
		size_t end = i + 1;
		while (end < n && v[end].depth > 0)
			end++;
		/* end: the first line back at depth 0; the body closes on end - 1. */
		bool markers = false;
		for (size_t k = i + 1; k < end; k++)
			markers |= v[k].marker != CUCO_MARKER_NONE;
		for (size_t k = i + 1; !markers && k + 1 < end; k++) {
			v[k].hidden = true;
			v[k].why = "outside the blocks";
		}
		if (!markers)
			i = end - 1;
	}
}

#define NOTE_BYTES 48  /* about what the line that stands for a run takes */

/* The lines of text, none hidden yet; how many in *n. */
static src_line *split_lines(const char *text, size_t len, size_t *n)
{
	size_t cap = 64;
	src_line *v = cuco_xcalloc(cap, sizeof *v);
	*n = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (*n == cap) {
			cap *= 2;
			v = cuco_xrealloc(v, cap * sizeof *v);
		}
		v[(*n)++] = (src_line){ .s = text + i, .n = end - i };
		i = end + 1;
	}
	return v;
}

bool *cuco_lean_built(const cuco_workload *wl, const cuco_directive *d, const char *text,
	size_t len, size_t *n)
{
	src_line *v = split_lines(text, len, n);
	hide_branches(v, *n, wl, d);
	bool *built = cuco_xmalloc((*n ? *n : 1) * sizeof *built);
	for (size_t i = 0; i < *n; i++) {
		char kw[16];
		size_t arg;
		bool cond = pp_line(&v[i], kw, sizeof kw, &arg) && (!strcmp(kw, "if") ||
			!strcmp(kw, "ifdef") || !strcmp(kw, "ifndef") || !strcmp(kw, "elif") ||
			!strcmp(kw, "else") || !strcmp(kw, "endif"));
		built[i] = !v[i].hidden || cond;
	}
	free(v);
	return built;
}

void cuco_prompt_lean_code(const cuco_workload *wl, const cuco_directive *d, const char *text,
	size_t len, cuco_buf *out)
{
	size_t n;
	src_line *v = split_lines(text, len, &n);
	hide_frame(v, n, text, len);
	hide_branches(v, n, wl, d);
	for (size_t i = 0; i < n;) {
		if (!v[i].hidden) {
			cuco_buf_append(out, v[i].s, v[i].n);
			cuco_buf_puts(out, "\n");
			i++;
			continue;
		}
		size_t k = i, bytes = 0;
		while (k < n && v[k].hidden && v[k].why == v[i].why)
			bytes += v[k++].n + 1;
		if (bytes <= NOTE_BYTES) {
			/* Shorter than the line that would stand for it: shown. */
			for (; i < k; i++) {
				cuco_buf_append(out, v[i].s, v[i].n);
				cuco_buf_puts(out, "\n");
			}
			continue;
		}
		size_t ind = 0;
		while (ind < v[i].n && (v[i].s[ind] == ' ' || v[i].s[ind] == '\t'))
			ind++;
		cuco_buf_append(out, v[i].s, ind);
		cuco_buf_printf(out, "[… lines %zu-%zu not shown: %s]\n", i + 1, k, v[i].why);
		i = k;
	}
	if (!out->data)
		cuco_buf_append(out, "", 0);
	free(v);
}

/* "[… lines A-B not shown: …]" alone on a line (indentation before it):
 * the lines it stands for. */
static bool note_line(const char *s, size_t n, size_t *a, size_t *b)
{
	static const char head[] = "[\xe2\x80\xa6 lines ";
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (n - i < sizeof head || memcmp(s + i, head, sizeof head - 1) != 0 || s[n - 1] != ']')
		return false;
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)(n - i - (sizeof head - 1) < 63 ? n - i - (sizeof head - 1)
		: 63), s + i + sizeof head - 1);
	unsigned long x, y;
	int used = 0;
	if (sscanf(buf, "%lu-%lu not shown:%n", &x, &y, &used) != 2 || used == 0 || x == 0 || y < x)
		return false;
	*a = x;
	*b = y;
	return true;
}

bool cuco_lean_note(const char *s, size_t n)
{
	size_t a, b;
	return note_line(s, n, &a, &b);
}

int cuco_lean_expand(const char *view, size_t vlen, const char *parent, size_t plen,
	cuco_buf *out, cuco_err *err)
{
	/* The parent's line starts, to copy ranges of it; start[np] is its end. */
	size_t cap = 64, np = 0;
	size_t *start = cuco_xmalloc(cap * sizeof *start);
	for (size_t i = 0; i < plen;) {
		if (np + 1 >= cap) {
			cap *= 2;
			start = cuco_xrealloc(start, cap * sizeof *start);
		}
		start[np++] = i;
		const char *nl = memchr(parent + i, '\n', plen - i);
		i = nl ? (size_t)(nl - parent) + 1 : plen;
	}
	start[np] = plen;
	int rc = CUCO_OK;
	for (size_t i = 0; i < vlen && rc == CUCO_OK;) {
		const char *nl = memchr(view + i, '\n', vlen - i);
		size_t end = nl ? (size_t)(nl - view) : vlen, a, b;
		if (!note_line(view + i, end - i, &a, &b)) {
			cuco_buf_append(out, view + i, end - i + (nl != NULL));
		} else if (b > np) {
			rc = cuco_errf(err, CUCO_EDATA, "`%.*s` names lines the parent does not have (it has "
				"%zu lines); copy a note only as the prompt shows it", (int)(end - i < 80 ? end - i : 80),
				view + i, np);
		} else {
			cuco_buf_append(out, parent + start[a - 1], start[b] - start[a - 1]);
			if (start[b] == plen && parent[plen - 1] != '\n' && nl)
				cuco_buf_puts(out, "\n");
		}
		i = end + 1;
	}
	if (!out->data)
		cuco_buf_append(out, "", 0);
	free(start);
	return rc;
}
