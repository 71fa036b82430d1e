/* analyze_report.c — the communication analysis written out, for
 * `cuco analyze` and the fast path's prompts: a line on the program, its
 * kernels and streams, one numbered entry per host communication call,
 * the calls that order without moving data, and what a lexical reading
 * cannot see. */
#include "analyze/analyze_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NELEMS(a) ((int)(sizeof (a) / sizeof (a)[0]))

/* Bytes of one element of a datatype; 0 when unknown. */
static int elem_bytes(const char *type)
{
	static const struct { const char *name; int bytes; } types[] = {
		{ "ncclInt8", 1 }, { "ncclChar", 1 }, { "ncclUint8", 1 }, { "ncclFloat8e4m3", 1 },
		{ "ncclFloat8e5m2", 1 }, { "ncclFloat16", 2 }, { "ncclHalf", 2 }, { "ncclBfloat16", 2 },
		{ "ncclInt32", 4 }, { "ncclInt", 4 }, { "ncclUint32", 4 }, { "ncclFloat32", 4 },
		{ "ncclFloat", 4 }, { "ncclInt64", 8 }, { "ncclUint64", 8 }, { "ncclFloat64", 8 },
		{ "ncclDouble", 8 }, { "MPI_CHAR", 1 }, { "MPI_BYTE", 1 }, { "MPI_SIGNED_CHAR", 1 },
		{ "MPI_UNSIGNED_CHAR", 1 }, { "MPI_SHORT", 2 }, { "MPI_INT", 4 }, { "MPI_UNSIGNED", 4 },
		{ "MPI_FLOAT", 4 }, { "MPI_INT32_T", 4 }, { "MPI_LONG", 8 }, { "MPI_LONG_LONG", 8 },
		{ "MPI_INT64_T", 8 }, { "MPI_UINT64_T", 8 }, { "MPI_DOUBLE", 8 },
	};
	for (int i = 0; i < NELEMS(types); i++)
		if (strcmp(types[i].name, type) == 0)
			return types[i].bytes;
	return 0;
}

/* count without casts to integer types ("(size_t)M * K" → "M * K"). */
static void strip_casts(const char *count, char *out, size_t size)
{
	static const char *const casts[] = { "(size_t)", "(int)", "(long)", "(unsigned)",
		"(int64_t)", "(uint64_t)", "(long long)", "(unsigned long)", NULL };
	size_t n = 0;
	for (const char *c = count; *c && n + 1 < size;) {
		int k = 0;
		while (casts[k] && strncmp(c, casts[k], strlen(casts[k])) != 0)
			k++;
		if (casts[k]) {
			c += strlen(casts[k]);
			continue;
		}
		out[n++] = *c++;
	}
	out[n] = '\0';
}

/* A macro's value by name from the program and its headers; NULL none. */
static const char *macro_value(const an_analysis *a, const char *name, size_t n)
{
	for (int k = 0; k < a->nfiles; k++)
		for (int i = 0; i < a->files[k].lx.nmacros; i++) {
			const cuco_macro *m = &a->files[k].lx.macros[i];
			if (strlen(m->name) == n && strncmp(m->name, name, n) == 0)
				return m->value;
		}
	return NULL;
}

/* text with each identifier replaced by the size's value or its macro's
 * (parenthesised), depth levels deep; others stay as they are. */
static void expand(const an_analysis *a, const cuco_size *size, const char *text, int depth,
	cuco_buf *out)
{
	for (const char *c = text; *c;) {
		if (!isalpha((unsigned char)*c) && *c != '_') {
			cuco_buf_append(out, c++, 1);
			continue;
		}
		size_t n = 1;
		while (isalnum((unsigned char)c[n]) || c[n] == '_')
			n++;
		const char *value = NULL;
		char num[32];
		for (int i = 0; size && i < size->nvars && !value; i++)
			if (strlen(size->vars[i].name) == n && strncmp(size->vars[i].name, c, n) == 0) {
				snprintf(num, sizeof num, "%ld", size->vars[i].value);
				value = num;
			}
		if (!value && depth > 0)
			value = macro_value(a, c, n);
		if (value) {
			cuco_buf_puts(out, "(");
			if (value == num)
				cuco_buf_puts(out, num);
			else
				expand(a, size, value, depth - 1, out);
			cuco_buf_puts(out, ")");
		} else {
			cuco_buf_append(out, c, n);
		}
		c += n;
	}
}

/* The count in bytes from the size's variables and the defines of the
 * program and its headers; NAN when it depends on anything else. */
static double count_bytes(const cuco_program *p, const cuco_size *size, int ranks,
	const char *count, const char *type)
{
	int eb = elem_bytes(type);
	if (eb == 0 || !*count)
		return NAN;
	char clean[256];
	strip_casts(count, clean, sizeof clean);
	cuco_buf b = { 0 };
	expand(p->an, size, clean, 4, &b);
	char casts[512];
	strip_casts(b.data ? b.data : "", casts, sizeof casts);
	cuco_buf_free(&b);
	double v;
	if (cuco_expr(casts, NULL, ranks, &v, NULL) != CUCO_OK || !(v >= 0))
		return NAN;
	return v * eb;
}

static void put_bytes(cuco_buf *b, double bytes)
{
	if (bytes >= 1 << 20)
		cuco_buf_printf(b, "%.3g MiB", bytes / (1 << 20));
	else if (bytes >= 1 << 10)
		cuco_buf_printf(b, "%.3g KiB", bytes / (1 << 10));
	else
		cuco_buf_printf(b, "%.0f bytes", bytes);
}

static void put_event(cuco_buf *b, const an_analysis *a, const event *e)
{
	if (e->kind == EV_LAUNCH)
		cuco_buf_printf(b, "kernel %s<<<…>>> at line %d on %s", e->name, e->line, e->stream);
	else if (e->kind == EV_ACCESS)
		cuco_buf_printf(b, "%s[…] at line %d, in the code itself", e->name, e->line);
	else if (e->kind == EV_COMM)
		cuco_buf_printf(b, "%s at line %d", e->name, e->line);
	else
		cuco_buf_printf(b, "%s() at line %d%s%s", e->name, e->line, *e->stream ? " on " : "",
			e->stream);
	if ((e->kind == EV_CALL || e->kind == EV_LAUNCH) && e->callee < 0)
		cuco_buf_puts(b, " (not defined in the program or its local headers: assumed to read and "
			"write every argument)");
	else if (e->callee >= 0 && a->funcs[e->callee].file > 0)
		cuco_buf_printf(b, " (defined in %s)", an_file_name(a->files[a->funcs[e->callee].file].path));
}

static bool has_base(char bases[][96], int n, const char *b)
{
	for (int i = 0; i < n && *b; i++)
		if (strcmp(bases[i], b) == 0)
			return true;
	return false;
}

/* Events of the anchor's function that write (before) or read (after)
 * buffer b, nearest first; around a loop, the other side of the loop
 * counts for the next or previous iteration. */
static int related_in(cuco_buf *out, const an_analysis *a, const event *c, const char *b,
	bool before, const char *title, int shown, const event *via)
{
	const loop *l = an_loop_around(a, c->func, c->tok);
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < a->nevs && shown < MAX_SHOWN; k++) {
			int i = before ? (int)(c - a->evs) - 1 - k : (int)(c - a->evs) + 1 + k;
			if (pass == 1)
				i = before ? a->nevs - 1 - k : k;
			if (i < 0 || i >= a->nevs)
				continue;
			const event *e = &a->evs[i];
			if (e == c || e->func != c->func || e->kind == EV_SYNC)
				continue;
			bool side = before ? e->tok < c->tok : e->tok > c->tok;
			if (pass == 0 ? !side : (side || !l || e->tok < l->start || e->tok > l->end))
				continue;
			if (!(before ? has_base((char (*)[96])e->writes, e->nwrites, b) :
					has_base((char (*)[96])e->reads, e->nreads, b)))
				continue;
			cuco_buf_printf(out, "   %s ", shown ? "      " : title);
			put_event(out, a, e);
			if (via)
				cuco_buf_printf(out, ", around the call of %s() at line %d", via->name, via->line);
			if (pass == 1)
				cuco_buf_printf(out, " — %s iteration of the loop", before ? "in the previous" :
					"in the next");
			cuco_buf_puts(out, "\n");
			shown++;
		}
	}
	return shown;
}

/* The producers or consumers of b around c, else around the calls of
 * c's function (a small lambda's work is often its caller's). */
static void related(cuco_buf *out, const an_analysis *a, const event *c, const char *b,
	bool before, const char *title)
{
	if (!*b)
		return;
	int shown = related_in(out, a, c, b, before, title, 0, NULL);
	for (int i = 0; i < a->nevs && !shown; i++)
		if (a->evs[i].kind == EV_CALL && a->evs[i].callee == c->func)
			shown = related_in(out, a, &a->evs[i], b, before, title, shown, &a->evs[i]);
	if (!shown)
		cuco_buf_printf(out, "   %s none found in %s() or around its calls\n", title,
			a->funcs[c->func].name);
}

/* Whether identifier token i names function f as a value (not its call,
 * not a lambda's own definition). */
static bool used_as_value(const an_analysis *a, const func *f, int i)
{
	const an_lexed *lx = &a->files[0].lx;
	const an_tok *t = &lx->toks[i];
	int n = (int)strlen(f->name);
	return t->kind == AN_TK_IDENT && t->len == n && strncmp(t->s, f->name, (size_t)n) == 0 &&
		!(i + 1 < lx->ntoks && an_tok_is(&lx->toks[i + 1], "(")) &&
		!(f->file == 0 && i == f->name_tok);
}

/* Where the loops around function fi's calls are, up the callers. */
static int callers_loops(cuco_buf *out, const an_analysis *a, int fi, int depth)
{
	const func *f = &a->funcs[fi];
	int said = 0;
	for (int i = 0; i < a->nevs; i++) {
		const event *e = &a->evs[i];
		if (e->kind != EV_CALL || e->callee != fi)
			continue;
		const loop *outer = an_loop_around(a, e->func, e->tok);
		cuco_buf_printf(out, "   %s() is called at line %d in %s()", f->name, e->line,
			a->funcs[e->func].name);
		if (outer)
			cuco_buf_printf(out, ", inside the %s loop of line %d\n", outer->kw, outer->line);
		else
			cuco_buf_puts(out, ", outside any loop there\n");
		said++;
		if (!outer && depth > 0)
			said += callers_loops(out, a, e->func, depth - 1);
	}
	const an_lexed *lx = &a->files[0].lx;
	for (int i = 0; i < lx->ntoks; i++)
		if (used_as_value(a, f, i)) {
			cuco_buf_printf(out, "   %s is passed as a value at line %d: it is called through a "
				"pointer (a harness's timed loop, say), and that loop is not seen here\n",
				f->name, lx->toks[i].line);
			said++;
			break;
		}
	return said;
}

static void loop_of(cuco_buf *out, const an_analysis *a, const event *c)
{
	const loop *l = an_loop_around(a, c->func, c->tok);
	if (l)
		cuco_buf_printf(out, "   inside the %s loop of line %d\n", l->kw, l->line);
	else if (!callers_loops(out, a, c->func, 3))
		cuco_buf_printf(out, "   not inside a loop of %s()\n", a->funcs[c->func].name);
}

static void put_comm(cuco_buf *out, const cuco_program *p, const event *c, int n,
	const cuco_size *size, int ranks)
{
	const an_analysis *a = p->an;
	const comm_row *r = &an_comm_rows[c->row];
	char send[160], recv[160], count[160], type[64], peer[96];
	an_arg_text(a, c, r->send, send, sizeof send);
	an_arg_text(a, c, r->recv, recv, sizeof recv);
	/* MPI_IN_PLACE: the receive side's count and type describe the data
	 * (MPI_Allgather's layout: s, sc, st, r, rc, rt). */
	bool in_place = strcmp(send, "MPI_IN_PLACE") == 0 && r->recv == r->count + 2;
	an_arg_text(a, c, in_place ? r->recv + 1 : r->count, count, sizeof count);
	an_arg_text(a, c, in_place ? r->recv + 2 : r->type, type, sizeof type);
	an_arg_text(a, c, r->peer, peer, sizeof peer);
	cuco_buf_printf(out, "\n%d. %s at line %d, in %s()\n", n, c->name, c->line,
		a->funcs[c->func].name);
	loop_of(out, a, c);
	if (r->send >= 0 && r->recv >= 0 && r->send != r->recv)
		cuco_buf_printf(out, "   send %s%s, receive %s\n", send, strcmp(send, "MPI_IN_PLACE") == 0 ?
			" (the data is in the receive buffer)" : "", recv);
	else if (r->send >= 0)
		cuco_buf_printf(out, "   %s %s\n", r->recv == r->send ? "buffer" : "send", send);
	else
		cuco_buf_printf(out, "   receive %s\n", recv);
	cuco_buf_printf(out, "   count %s of %s", count, type);
	double bytes = count_bytes(p, size, ranks, count, type);
	if (isfinite(bytes)) {
		cuco_buf_puts(out, " = ");
		put_bytes(out, bytes);
		cuco_buf_puts(out, size && *size->name ? " at this size" : " at the program's sizes");
	}
	cuco_buf_puts(out, "\n");
	if (*peer)
		cuco_buf_printf(out, "   %s %s\n", r->kind == NCCL || r->kind == MPI ? "root" : "peer", peer);
	if (r->kind == NCCL || r->kind == NCCL_P2P)
		cuco_buf_printf(out, "   stream %s\n", *c->stream ? c->stream : "?");
	else if (strncmp(c->name, "MPI_I", 5) == 0)
		cuco_buf_puts(out, "   a nonblocking host call: it completes at an MPI_Wait or MPI_Waitall\n");
	else
		cuco_buf_puts(out, "   a host call: it blocks the calling thread until done\n");
	if (r->kind == MPI_RMA)
		cuco_buf_puts(out, "   one-sided already: synchronized by the window calls listed below\n");
	related(out, a, c, c->nreads ? c->reads[0] : "", true, "written before it by:");
	related(out, a, c, c->nwrites ? c->writes[0] : "", false, "read after it by:");
}

static void put_kernels(cuco_buf *out, const an_analysis *a)
{
	int shown = 0;
	for (int i = 0; i < a->nfuncs; i++) {
		const func *f = &a->funcs[i];
		if (!f->kernel)
			continue;
		cuco_buf_printf(out, "%s%s (line %d%s%s)", shown++ ? "; " : "- kernels: ", f->name, f->line,
			f->file ? " of " : "", f->file ? an_file_name(a->files[f->file].path) : "");
		const char *sep = ": writes ";
		for (int k = 0; k < f->nparams; k++)
			if (f->params[k].writes) {
				cuco_buf_printf(out, "%s%s", sep, f->params[k].name);
				sep = ", ";
			}
		sep = "; reads ";
		for (int k = 0; k < f->nparams; k++)
			if (f->params[k].reads && f->params[k].pointer) {
				cuco_buf_printf(out, "%s%s", sep, f->params[k].name);
				sep = ", ";
			}
	}
	if (shown)
		cuco_buf_puts(out, "\n");
}

static void put_sync(cuco_buf *out, const an_analysis *a)
{
	int shown = 0;
	for (int i = 0; i < a->nevs; i++) {
		const event *e = &a->evs[i];
		if (e->kind != EV_SYNC)
			continue;
		if (shown++ == 0)
			cuco_buf_puts(out, "\nOrdering calls (no data moved):\n");
		const loop *l = an_loop_around(a, e->func, e->tok);
		char args[160];
		an_range_text(&a->files[0].lx, e->nargs ? e->args[0][0] : e->tok + 2,
			e->nargs ? e->args[e->nargs - 1][1] : e->tok + 2, args, sizeof args);
		cuco_buf_printf(out, "- %s(%s) at line %d in %s()%s\n", e->name, args, e->line,
			a->funcs[e->func].name, l ? ", in a loop" : "");
	}
}

static void put_streams(cuco_buf *out, const an_analysis *a)
{
	const an_lexed *lx = &a->files[0].lx;
	int shown = 0;
	for (int i = 0; i + 3 < lx->ntoks; i++) {
		const an_tok *t = &lx->toks[i];
		if (t->kind != AN_TK_IDENT || t->len < 16 || strncmp(t->s, "cudaStreamCreate", 16) != 0 ||
				!an_tok_is(&lx->toks[i + 1], "("))
			continue;
		int from = i + 2, to = from;
		while (to < lx->ntoks && !an_tok_is(&lx->toks[to], ",") && !an_tok_is(&lx->toks[to], ")"))
			to++;
		char name[96];
		an_base_of(lx, from, to, name, sizeof name);
		cuco_buf_printf(out, "%s%s (line %d)", shown++ ? ", " : "- streams created: ", name, t->line);
	}
	if (shown)
		cuco_buf_puts(out, "\n");
}

static const char blind_spots[] =
	"\nWhat this analysis cannot see: it reads the source without the preprocessor, so both "
	"sides of every #if count and macros are not expanded (a call or a buffer a macro hides is "
	"missed); a buffer is followed through plain assignments only, not through structures, "
	"arrays of pointers or other functions, and the code's own use of a buffer is seen where it "
	"subscripts it (buf[i]), not through *p or p + i; a call through a function pointer, and the loop "
	"around it, is invisible; kernels and functions from files the program does not include "
	"locally are assumed to read and write every argument; which rank takes which branch, and "
	"what a stream's events order across streams, is not worked out.\n";

void cuco_program_report(const cuco_program *p, const cuco_size *size, int ranks, cuco_buf *out)
{
	const an_analysis *a = p->an;
	cuco_buf_printf(out, "Communication analysis of %s\n- %d lines; ", an_file_name(p->path),
		p->lines);
	const char *libs[] = { p->mpi ? "MPI" : NULL, p->nccl ? "NCCL" : NULL,
		p->cuda ? "CUDA" : NULL, p->cublas ? "cuBLAS" : NULL };
	int nl = 0;
	for (int i = 0; i < 4; i++)
		if (libs[i])
			cuco_buf_printf(out, "%s%s", nl++ ? ", " : "", libs[i]);
	cuco_buf_printf(out, "%s; ", nl ? "" : "no MPI, NCCL or CUDA");
	if (p->main_line)
		cuco_buf_printf(out, "main() at line %d\n", p->main_line);
	else
		cuco_buf_puts(out, "no main()\n");
	if (p->device_api)
		cuco_buf_puts(out, "- already uses the NCCL Device API (device-initiated communication)\n");
	if (a->nfiles > 1) {
		cuco_buf_puts(out, "- local headers read:");
		for (int k = 1; k < a->nfiles; k++)
			cuco_buf_printf(out, " %s", an_file_name(a->files[k].path));
		cuco_buf_puts(out, "\n");
	}
	put_kernels(out, a);
	put_streams(out, a);
	cuco_buf_printf(out, "- host communication calls: %d\n", p->ncomm);
	int n = 0;
	for (int i = 0; i < a->nevs; i++)
		if (a->evs[i].kind == EV_COMM)
			put_comm(out, p, &a->evs[i], ++n, size, ranks);
	put_sync(out, a);
	cuco_buf_puts(out, blind_spots);
}
