/* diff.c — Myers' greedy line diff and unified-diff hunks.
 *
 * Lines are compared by a hash first and then by bytes. The forward pass
 * keeps each round's V array (the furthest x on each diagonal), which
 * costs O(D^2) memory; walking those back gives the edit script. Past
 * max_d rounds the texts are treated as wholly different instead. */
#include "core.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct line {
	const char *text;
	int len;
	uint64_t hash;
} line;

typedef struct lines {
	line *v;
	int n;
} lines;

/* One step of the edit script, in order. */
typedef enum { OP_KEEP, OP_DEL, OP_ADD } op_kind;
typedef struct op {
	op_kind kind;
	int a, b;  /* line index in old (KEEP, DEL) and new (KEEP, ADD) */
} op;

static uint64_t fnv1a(const char *s, int n)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static void split_lines(const char *text, size_t len, lines *out)
{
	int cap = 64;
	out->v = cuco_xmalloc(sizeof(line) * (size_t)cap);
	out->n = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (out->n == cap) {
			cap *= 2;
			out->v = cuco_xrealloc(out->v, sizeof(line) * (size_t)cap);
		}
		line *l = &out->v[out->n++];
		l->text = text + i;
		l->len = (int)(end - i);
		l->hash = fnv1a(l->text, l->len);
		i = end + 1;
	}
}

static int same(const line *a, const line *b)
{
	return a->hash == b->hash && a->len == b->len && memcmp(a->text, b->text, (size_t)a->len) == 0;
}

/* Myers' forward search; fills *ops (malloc'd) or returns -1 past max_d. */
static int myers(const lines *a, const lines *b, int max_d, op **ops_out, int *nops_out)
{
	int n = a->n, m = b->n, max = n + m;
	if (max_d > max)
		max_d = max;
	/* trace[d] holds V[-d..d] after round d, offset by d. */
	int **trace = cuco_xcalloc((size_t)max_d + 1, sizeof(int *));
	int *v = cuco_xcalloc((size_t)2 * (size_t)max + 3, sizeof(int));
	int off = max + 1, found = -1;
	for (int d = 0; d <= max_d && found < 0; d++) {
		for (int k = -d; k <= d; k += 2) {
			int x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				? v[off + k + 1] : v[off + k - 1] + 1;
			int y = x - k;
			while (x < n && y < m && same(&a->v[x], &b->v[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= n && y >= m) {
				found = d;
				break;
			}
		}
		trace[d] = cuco_xmalloc(sizeof(int) * (size_t)(2 * d + 1));
		memcpy(trace[d], v + off - d, sizeof(int) * (size_t)(2 * d + 1));
	}
	free(v);
	if (found < 0) {
		for (int d = 0; d <= max_d; d++)
			free(trace[d]);
		free(trace);
		return -1;
	}
	/* Walk back from (n, m): round d is one edit followed by a snake. */
	int nops = 0;
	op *rev = cuco_xmalloc(sizeof(op) * (size_t)(n + m + 1));
	int x = n, y = m;
	for (int d = found; d > 0; d--) {
		const int *pv = trace[d - 1];  /* V[-(d-1)..d-1] at offset d-1 */
		int k = x - y;
		bool down = k == -d || (k != d && pv[k - 1 + d - 1] < pv[k + 1 + d - 1]);
		int pk = down ? k + 1 : k - 1;
		int px = pv[pk + d - 1], py = px - pk;
		while (x > px && y > py) {
			x--, y--;
			rev[nops++] = (op){ OP_KEEP, x, y };
		}
		if (x == px)
			rev[nops++] = (op){ OP_ADD, x, py };
		else
			rev[nops++] = (op){ OP_DEL, px, y };
		x = px;
		y = py;
	}
	while (x > 0 && y > 0) {
		x--, y--;
		rev[nops++] = (op){ OP_KEEP, x, y };
	}
	for (int d = 0; d <= found; d++)
		free(trace[d]);
	free(trace);
	op *ops = cuco_xmalloc(sizeof(op) * (size_t)(nops ? nops : 1));
	for (int i = 0; i < nops; i++)
		ops[i] = rev[nops - 1 - i];
	free(rev);
	*ops_out = ops;
	*nops_out = nops;
	return found;
}

/* Every old line deleted, every new one added: the fallback past max_d. */
static void replace_all(const lines *a, const lines *b, op **ops_out, int *nops_out)
{
	op *ops = cuco_xmalloc(sizeof(op) * (size_t)(a->n + b->n + 1));
	int nops = 0;
	for (int i = 0; i < a->n; i++)
		ops[nops++] = (op){ OP_DEL, i, 0 };
	for (int j = 0; j < b->n; j++)
		ops[nops++] = (op){ OP_ADD, a->n, j };
	*ops_out = ops;
	*nops_out = nops;
}

static void push(cuco_diff *d, size_t *cap, cuco_diff_kind kind, const char *text, int len)
{
	if (d->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		d->lines = cuco_xrealloc(d->lines, sizeof(cuco_diff_line) * *cap);
	}
	d->lines[d->n++] = (cuco_diff_line){ kind, text, len };
}

/* Group the script into hunks: changes closer than 2*context merge. */
#define HEADER_MAX 64

static void build_hunks(cuco_diff *d, const op *ops, int nops, const lines *a, const lines *b,
	int context)
{
	size_t cap = 0, hcap = 0, hlen = 0;
	/* First pass sizes the header storage: at most one header per change. */
	for (int i = 0; i < nops; i++)
		if (ops[i].kind != OP_KEEP)
			hcap += HEADER_MAX;
	d->headers = cuco_xmalloc(hcap + 1);
	int i = 0;
	while (i < nops) {
		while (i < nops && ops[i].kind == OP_KEEP)
			i++;
		if (i == nops)
			break;
		int start = i - context < 0 ? 0 : i - context;
		/* Extend while the next change is within 2*context kept lines. */
		int end = i, keep_run = 0;
		for (int j = i; j < nops; j++) {
			if (ops[j].kind == OP_KEEP) {
				if (++keep_run > 2 * context)
					break;
			} else {
				keep_run = 0;
				end = j;
			}
		}
		int stop = end + 1 + context > nops ? nops : end + 1 + context;
		/* Every op carries the old and new positions it stands at. */
		int la = ops[start].a, lb = ops[start].b, acount = 0, bcount = 0;
		for (int j = start; j < stop; j++) {
			acount += ops[j].kind != OP_ADD;
			bcount += ops[j].kind != OP_DEL;
		}
		char *h = d->headers + hlen;
		int hl = snprintf(h, HEADER_MAX, "@@ -%d,%d +%d,%d @@", acount ? la + 1 : la, acount,
			bcount ? lb + 1 : lb, bcount);
		hlen += (size_t)hl + 1;
		push(d, &cap, CUCO_DIFF_HUNK, h, hl);
		for (int j = start; j < stop; j++) {
			const line *l = ops[j].kind == OP_ADD ? &b->v[ops[j].b] : &a->v[ops[j].a];
			cuco_diff_kind kind = ops[j].kind == OP_KEEP ? CUCO_DIFF_CONTEXT
				: ops[j].kind == OP_DEL ? CUCO_DIFF_DEL : CUCO_DIFF_ADD;
			push(d, &cap, kind, l->text, l->len);
		}
		i = stop;
	}
}

void cuco_diff_compute(cuco_diff *d, const char *old, size_t old_len,
	const char *new, size_t new_len, int context, int max_d)
{
	memset(d, 0, sizeof *d);
	lines a, b;
	split_lines(old, old_len, &a);
	split_lines(new, new_len, &b);
	op *ops = NULL;
	int nops = 0;
	if (myers(&a, &b, max_d, &ops, &nops) < 0)
		replace_all(&a, &b, &ops, &nops);
	for (int i = 0; i < nops; i++) {
		d->added += ops[i].kind == OP_ADD;
		d->deleted += ops[i].kind == OP_DEL;
	}
	build_hunks(d, ops, nops, &a, &b, context);
	free(ops);
	free(a.v);
	free(b.v);
}

void cuco_diff_free(cuco_diff *d)
{
	free(d->lines);
	free(d->headers);
	memset(d, 0, sizeof *d);
}
