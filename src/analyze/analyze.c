/* analyze.c — a program's host communication, read from its tokens
 * (lex.c): every NCCL and MPI call with its buffers, count and datatype,
 * the loop it sits in (or the loop around a call of its function), the
 * kernels and functions that write its send buffer before it and read its
 * receive buffer after it, and the streams each runs on. `cuco analyze`
 * prints the report, `cuco init` keeps the facts, and the fast path puts
 * the report in its prompts.
 *
 * A buffer is named by its base: the identifier chain an argument starts
 * from once casts, & and * are dropped (`(float *)s->x + off` → `s->x`),
 * followed through plain assignments (`float *mine = l->a + …`). What a
 * kernel or function does with an argument comes from its definition in
 * the program or its local headers: a pointer it stores through is
 * written, one it loads from is read. A callee defined nowhere is assumed
 * to do both, and the report says so.
 */
#include "analyze/analyze_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls that order communication without moving data: listed apart. */
static const char *const sync_calls[] = {
	"MPI_Barrier", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Test", "MPI_Win_fence",
	"MPI_Win_flush", "MPI_Win_flush_all", "MPI_Win_lock", "MPI_Win_lock_all", "MPI_Win_unlock",
	"MPI_Win_unlock_all", "MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait",
	"ncclGroupStart", "ncclGroupEnd", "cudaDeviceSynchronize", "cudaStreamSynchronize",
	"cudaEventSynchronize", "cudaStreamWaitEvent", "cudaEventRecord", NULL,
};

/* Library calls that copy: X(name, destination, source, stream). */
#define COPY_CALLS(X) \
	X(memcpy, 0, 1, -1) X(memmove, 0, 1, -1) X(memset, 0, -1, -1) \
	X(cudaMemcpy, 0, 1, -1) X(cudaMemcpyAsync, 0, 1, 4) X(cudaMemset, 0, -1, -1) \
	X(cudaMemsetAsync, 0, -1, 3) X(cudaMemcpyPeerAsync, 0, 2, 5) \
	X(cublasSgemm, 12, 7, -1) X(cublasGemmEx, 14, 7, -1)

/* Callees that never stand for a buffer's producer or consumer. */
static const char *const inert[] = {
	"printf", "fprintf", "snprintf", "fmax", "fmin", "fmaxf", "fminf", "abs", "labs", "floor",
	"ceil", "pow", "powf", "log", "logf", "tanh", "tanhf", "sprintf", "puts", "fputs", "fflush", "malloc", "calloc",
	"realloc", "free", "exit", "abort", "assert", "strcmp", "strncmp", "strlen", "strtol",
	"strtod", "atoi", "atof", "fabs", "fabsf", "sqrt", "sqrtf", "exp", "expf", "rand", "srand",
	"sizeof", "getenv", "fopen", "fclose", "time", "clock_gettime", "usleep", "sleep",
	"return", "if", "for", "while", "switch", "do", "else", "case", "defined", "decltype",
	"alignof", "static_assert", "typeof", "__launch_bounds__", "__attribute__", NULL,
};

static const char *const keywords[] = { "if", "for", "while", "switch", "return", "sizeof",
	"do", "else", "case", "new", "delete", "throw", "catch", "alignof", "decltype", NULL };

const comm_row an_comm_rows[] = {
#define X(n, k, s, r, c, t, p, st) { #n, k, s, r, c, t, p, st },
	COMM_CALLS(X)
#undef X
};
static const int an_ncomm_rows = sizeof an_comm_rows / sizeof an_comm_rows[0];

typedef struct copy_row {
	const char *name;
	int dst, src, stream;
} copy_row;

static const copy_row copy_rows[] = {
#define X(n, d, s, st) { #n, d, s, st },
	COPY_CALLS(X)
#undef X
};

#define NELEMS(a) ((int)(sizeof (a) / sizeof (a)[0]))


static bool in_list(const char *const *list, const char *s, int len)
{
	for (int i = 0; list[i]; i++)
		if ((int)strlen(list[i]) == len && strncmp(list[i], s, (size_t)len) == 0)
			return true;
	return false;
}

static void tok_text(const an_tok *t, char *out, size_t size)
{
	snprintf(out, size, "%.*s", t->len, t->s);
}

/* Tokens [from, to) as text, spaced as a person writes them. */
void an_range_text(const an_lexed *lx, int from, int to, char *out, size_t size)
{
	size_t n = 0;
	out[0] = '\0';
	for (int i = from; i < to && n + 1 < size; i++) {
		const an_tok *t = &lx->toks[i], *prev = i > from ? &lx->toks[i - 1] : NULL;
		/* A unary & * - ! ~ follows an operator, an opening or nothing. */
		bool unary_prev = prev && strchr("&*-!~", prev->s[0]) && prev->len == 1 &&
			(i - 1 == from || (lx->toks[i - 2].kind == AN_TK_PUNCT &&
			!strchr(")]", lx->toks[i - 2].s[0])));
		bool cast_prev = prev && an_tok_is(prev, ")") && prev->match >= from &&
			t->kind != AN_TK_PUNCT;
		for (int k = prev ? prev->match + 1 : 0; cast_prev && k < i - 1; k++)
			cast_prev = lx->toks[k].kind == AN_TK_IDENT || an_tok_is(&lx->toks[k], "*");
		bool tight = !prev || strchr(")],.;", t->s[0]) || an_tok_is(t, "->") ||
			an_tok_is(t, "::") || an_tok_is(t, "[") ||
			(an_tok_is(t, "(") && prev->kind == AN_TK_IDENT) ||
			strchr("([.!~", prev->s[0]) || an_tok_is(prev, "->") || an_tok_is(prev, "::") ||
			unary_prev || cast_prev;
		int k = snprintf(out + n, size - n, "%s%.*s", tight ? "" : " ", t->len, t->s);
		if (k < 0 || (size_t)k >= size - n)
			break;
		n += (size_t)k;
	}
}

/* ---- files ------------------------------------------------------------------ */

static int add_file(an_analysis *a, const char *path, char *text, size_t len)
{
	src_file *f = &a->files[a->nfiles];
	cuco_strlcpy(f->path, path, sizeof f->path);
	f->text = text;
	an_lex(text, len, &f->lx);
	return a->nfiles++;
}

/* The local headers the files include, breadth first, each once. */
static void read_headers(an_analysis *a, const char *dir0)
{
	for (int k = 0; k < a->nfiles && a->nfiles < MAX_FILES; k++) {
		char dir[PATH_MAX];
		if (k == 0) {
			cuco_strlcpy(dir, dir0, sizeof dir);
		} else {
			cuco_strlcpy(dir, a->files[k].path, sizeof dir);
			char *slash = strrchr(dir, '/');
			if (slash)
				*slash = '\0';
			else
				cuco_strlcpy(dir, ".", sizeof dir);
		}
		if (!*dir)
			continue;
		const an_lexed *lx = &a->files[k].lx;
		for (int i = 0; i < lx->nincludes && a->nfiles < MAX_FILES; i++) {
			if (!lx->includes[i].local)
				continue;
			char path[PATH_MAX + 160], real[PATH_MAX];
			snprintf(path, sizeof path, "%s/%s", dir, lx->includes[i].name);
			if (!realpath(path, real))
				continue;
			bool seen = false;
			for (int j = 0; j < a->nfiles && !seen; j++)
				seen = strcmp(a->files[j].path, real) == 0;
			char *text;
			size_t len;
			if (!seen && cuco_read_file(real, FILE_MAX, &text, &len, NULL) == CUCO_OK)
				add_file(a, real, text, len);
		}
	}
}

/* ---- functions ---------------------------------------------------------------- */

static void parse_param(const an_lexed *lx, int from, int to, param *p)
{
	memset(p, 0, sizeof *p);
	int name = -1;
	bool star = false;
	for (int i = from; i < to; i++) {
		const an_tok *t = &lx->toks[i];
		if (an_tok_is(t, "*") || an_tok_is(t, "[") || an_tok_is(t, "&")) {
			p->pointer = true;
			star = true;
		} else if (an_tok_is(t, "const") && !star) {
			p->readonly = true;
		} else if (an_tok_is(t, "=")) {
			break;  /* a default value */
		} else if (t->kind == AN_TK_IDENT) {
			name = i;
		}
	}
	if (name >= 0)
		tok_text(&lx->toks[name], p->name, sizeof p->name);
	if (!p->pointer)
		p->readonly = true;
}

/* Whether the identifier at i is stored through: p[..] = , *p = , p->f = ,
 * p[..].f += …; compound assignments read too. */
static bool stored_through(const an_lexed *lx, int i, int end, bool *also_read)
{
	int j = i + 1;
	bool deref = i > 0 && an_tok_is(&lx->toks[i - 1], "*") && (i < 2 ||
		lx->toks[i - 2].kind == AN_TK_PUNCT);
	while (j < end) {
		const an_tok *t = &lx->toks[j];
		if (an_tok_is(t, "[") && t->match > j) {
			deref = true;
			j = t->match + 1;
		} else if ((an_tok_is(t, ".") || an_tok_is(t, "->")) && j + 1 < end) {
			deref = deref || an_tok_is(t, "->");
			j += 2;
		} else {
			break;
		}
	}
	if (!deref || j >= end)
		return false;
	const an_tok *op = &lx->toks[j];
	if (op->kind != AN_TK_PUNCT || op->s[op->len - 1] != '=' || an_tok_is(op, "==") ||
			an_tok_is(op, "!=") || an_tok_is(op, "<=") || an_tok_is(op, ">="))
		return an_tok_is(op, "++") || an_tok_is(op, "--") ? (*also_read = true) : false;
	*also_read = op->len > 1;
	return true;
}

static void resolve(const an_analysis *a, int fi, char *base, size_t size);

/* Past a lambda of function fi named at token i: its body's end, else i. */
static int past_lambda(const an_analysis *a, int fi, int i)
{
	for (int k = 0; k < a->nfuncs; k++)
		if (a->funcs[k].parent == fi && a->funcs[k].name_tok == i)
			return a->funcs[k].body_end;
	return i;
}

static bool has_alias(const an_analysis *a, int fi, const an_tok *t)
{
	for (int i = 0; i < a->naliases; i++)
		if (a->aliases[i].func == fi && (int)strlen(a->aliases[i].name) == t->len &&
				strncmp(a->aliases[i].name, t->s, (size_t)t->len) == 0)
			return true;
	return false;
}

/* What a function does with each parameter: an identifier of its body,
 * followed back through the body's plain assignments (oi = out + …) to a
 * parameter, is a store through it or a load from it. The assignment that
 * makes an alias is neither. */
static void param_uses(an_analysis *a, int fi)
{
	func *f = &a->funcs[fi];
	const an_lexed *lx = &a->files[f->file].lx;
	for (int i = f->body + 1; i < f->body_end; i++) {
		i = past_lambda(a, fi, i);
		const an_tok *t = &lx->toks[i];
		if (t->kind != AN_TK_IDENT || an_tok_is(&lx->toks[i - 1], ".") ||
				an_tok_is(&lx->toks[i - 1], "->"))
			continue;
		bool defines = an_tok_is(&lx->toks[i + 1], "=") && has_alias(a, fi, t);
		bool defined_from = an_tok_is(&lx->toks[i - 1], "=") &&
			lx->toks[i - 2].kind == AN_TK_IDENT && has_alias(a, fi, &lx->toks[i - 2]);
		if (defines || defined_from)
			continue;
		char root[96];
		tok_text(t, root, sizeof root);
		resolve(a, fi, root, sizeof root);
		root[strcspn(root, ".-")] = '\0';
		for (int p = 0; p < f->nparams; p++) {
			param *pr = &f->params[p];
			if (strcmp(pr->name, root) != 0)
				continue;
			bool read = false;
			if (stored_through(lx, i, f->body_end, &read))
				pr->writes = true;
			else
				read = true;
			pr->reads = pr->reads || read;
		}
	}
	for (int p = 0; p < f->nparams; p++)
		if (f->params[p].readonly)
			f->params[p].writes = false;
}

/* After a parameter list: qualifiers, attributes, a trailing return type,
 * then '{' — a definition. */
static int body_after(const an_lexed *lx, int close)
{
	int j = close + 1;
	while (j < lx->ntoks) {
		const an_tok *t = &lx->toks[j];
		if (an_tok_is(t, "{"))
			return j;
		if (an_tok_is(t, "->") || an_tok_is(t, "::") || an_tok_is(t, "*") ||
				an_tok_is(t, "&")) {
			j++;
		} else if (t->kind == AN_TK_IDENT) {
			j++;
			if (j < lx->ntoks && an_tok_is(&lx->toks[j], "(") && lx->toks[j].match > j)
				j = lx->toks[j].match + 1;
		} else {
			return -1;
		}
	}
	return -1;
}

static int new_func(an_analysis *a, int file, const an_tok *name, int body, int parent)
{
	const an_lexed *lx = &a->files[file].lx;
	a->funcs = cuco_xrealloc(a->funcs, (size_t)(a->nfuncs + 1) * sizeof *a->funcs);
	func *f = &a->funcs[a->nfuncs];
	memset(f, 0, sizeof *f);
	tok_text(name, f->name, sizeof f->name);
	f->file = file;
	f->line = name->line;
	f->parent = parent;
	f->name_tok = (int)(name - lx->toks);
	f->body = body;
	f->body_end = lx->toks[body].match;
	return a->nfuncs++;
}

/* The parameters between the parentheses at open. */
static void parse_params(const an_lexed *lx, int open, func *f)
{
	int from = open + 1, close = lx->toks[open].match;
	for (int k = from; k <= close && f->nparams < MAX_PARAMS; k++) {
		const an_tok *c = &lx->toks[k];
		if ((an_tok_is(c, "(") || an_tok_is(c, "[") || an_tok_is(c, "<")) && c->match > k) {
			k = c->match;
		} else if (an_tok_is(c, ",") || k == close) {
			if (k > from && !(k - from == 1 && an_tok_is(&lx->toks[from], "void")))
				parse_param(lx, from, k, &f->params[f->nparams++]);
			from = k + 1;
		}
	}
}

/* Named lambdas in [from, to) of function parent: `auto name = [..](..) {..}`
 * are functions of their own, called by name or passed as values. */
static void find_lambdas(an_analysis *a, int file, int parent, int from, int to)
{
	const an_lexed *lx = &a->files[file].lx;
	for (int i = from; i + 3 < to; i++) {
		const an_tok *t = &lx->toks[i];
		if (t->kind != AN_TK_IDENT || !an_tok_is(&lx->toks[i + 1], "=") ||
				!an_tok_is(&lx->toks[i + 2], "[") || lx->toks[i + 2].match < 0)
			continue;
		int j = lx->toks[i + 2].match + 1, params = -1;
		if (j < to && an_tok_is(&lx->toks[j], "(") && lx->toks[j].match > j) {
			params = j;
			j = lx->toks[j].match;
		} else {
			j--;
		}
		int body = body_after(lx, j);
		if (body < 0 || body >= to || lx->toks[body].match < 0)
			continue;
		int fi = new_func(a, file, t, body, parent);
		if (params >= 0)
			parse_params(lx, params, &a->funcs[fi]);
		find_lambdas(a, file, fi, body + 1, a->funcs[fi].body_end);
		i = a->funcs[fi].body_end;
	}
}

static void find_functions(an_analysis *a, int file)
{
	const an_lexed *lx = &a->files[file].lx;
	int decl = 0;  /* where the current declaration began */
	for (int i = 0; i < lx->ntoks; i++) {
		const an_tok *t = &lx->toks[i];
		if (an_tok_is(t, ";") || an_tok_is(t, "}") || an_tok_is(t, "{")) {
			decl = i + 1;
			continue;
		}
		if (t->kind != AN_TK_IDENT || i + 1 >= lx->ntoks || !an_tok_is(&lx->toks[i + 1], "(") ||
				lx->toks[i + 1].match < 0 || in_list(keywords, t->s, t->len))
			continue;
		int body = body_after(lx, lx->toks[i + 1].match);
		if (body < 0 || lx->toks[body].match < 0)
			continue;
		int fi = new_func(a, file, t, body, -1);
		func *f = &a->funcs[fi];
		for (int k = decl; k < i; k++)
			f->kernel = f->kernel || an_tok_is(&lx->toks[k], "__global__");
		parse_params(lx, i + 1, f);
		i = f->body_end;
		decl = i + 1;
		find_lambdas(a, file, fi, body + 1, i);
	}
}


static int find_func(const an_analysis *a, const char *name, int len)
{
	for (int i = 0; i < a->nfuncs; i++)
		if ((int)strlen(a->funcs[i].name) == len && strncmp(a->funcs[i].name, name, (size_t)len) == 0)
			return i;
	return -1;
}

/* ---- statements and loops ------------------------------------------------------ */

/* The last token of the statement starting at i (before limit). */
static int stmt_end(const an_lexed *lx, int i, int limit)
{
	if (i >= limit)
		return limit - 1;
	const an_tok *t = &lx->toks[i];
	if (an_tok_is(t, "{"))
		return t->match > i && t->match < limit ? t->match : limit - 1;
	bool cond = an_tok_is(t, "if") || an_tok_is(t, "for") || an_tok_is(t, "while") ||
		an_tok_is(t, "switch");
	if (cond && i + 1 < limit && an_tok_is(&lx->toks[i + 1], "(") && lx->toks[i + 1].match > i) {
		int e = stmt_end(lx, lx->toks[i + 1].match + 1, limit);
		if (an_tok_is(t, "if") && e + 1 < limit && an_tok_is(&lx->toks[e + 1], "else"))
			e = stmt_end(lx, e + 2, limit);
		return e;
	}
	if (an_tok_is(t, "do")) {
		int e = stmt_end(lx, i + 1, limit);
		if (e + 2 < limit && an_tok_is(&lx->toks[e + 1], "while") && lx->toks[e + 2].match > e)
			return lx->toks[e + 2].match + 1 < limit ? lx->toks[e + 2].match + 1 : limit - 1;
		return e;
	}
	for (int k = i; k < limit; k++) {
		const an_tok *c = &lx->toks[k];
		if (an_tok_is(c, ";"))
			return k;
		if (an_tok_is(c, "}"))
			return k - 1;
		if ((an_tok_is(c, "(") || an_tok_is(c, "[") || an_tok_is(c, "{")) && c->match > k)
			k = c->match;
	}
	return limit - 1;
}

static void find_loops(an_analysis *a, int fi)
{
	const func *f = &a->funcs[fi];
	const an_lexed *lx = &a->files[f->file].lx;
	for (int i = f->body + 1; i < f->body_end; i++) {
		i = past_lambda(a, fi, i);
		const an_tok *t = &lx->toks[i];
		bool is_for = an_tok_is(t, "for"), is_while = an_tok_is(t, "while");
		int start;
		if ((is_for || is_while) && i + 1 < f->body_end && lx->toks[i + 1].match > i) {
			/* do { … } while (…); is the do's loop, not a second one. */
			if (is_while && an_tok_is(&lx->toks[i - 1], "}") && lx->toks[i - 1].match > 0 &&
					an_tok_is(&lx->toks[lx->toks[i - 1].match - 1], "do"))
				continue;
			start = lx->toks[i + 1].match + 1;
		} else if (an_tok_is(t, "do")) {
			start = i + 1;
		} else {
			continue;
		}
		a->loops = cuco_xrealloc(a->loops, (size_t)(a->nloops + 1) * sizeof *a->loops);
		a->loops[a->nloops++] = (loop){ fi, start, stmt_end(lx, start, f->body_end), t->line,
			is_for ? "for" : is_while ? "while" : "do" };
	}
}

/* The innermost loop of function fi around token t; NULL when none. */
const loop *an_loop_around(const an_analysis *a, int fi, int t)
{
	const loop *best = NULL;
	for (int i = 0; i < a->nloops; i++) {
		const loop *l = &a->loops[i];
		if (l->func == fi && l->start <= t && t <= l->end && (!best || l->start > best->start))
			best = l;
	}
	return best;
}

/* ---- buffers ---------------------------------------------------------------------- */

/* The base of the expression [from, to): its leading identifier chain
 * once casts, &, * and a cast's parentheses are gone; "" when none. */
void an_base_of(const an_lexed *lx, int from, int to, char *out, size_t size)
{
	out[0] = '\0';
	/* c ? x + i : y + j — the first branch's buffer. */
	for (int k = from; k < to; k++) {
		const an_tok *t = &lx->toks[k];
		if ((an_tok_is(t, "(") || an_tok_is(t, "[")) && t->match > k) {
			k = t->match;
		} else if (an_tok_is(t, "?")) {
			from = k + 1;
			for (int e = from; e < to; e++) {
				if ((an_tok_is(&lx->toks[e], "(") || an_tok_is(&lx->toks[e], "[")) &&
						lx->toks[e].match > e)
					e = lx->toks[e].match;
				else if (an_tok_is(&lx->toks[e], ":"))
					to = e;
			}
			break;
		}
	}
	int i = from;
	while (i < to) {
		const an_tok *t = &lx->toks[i];
		if (an_tok_is(t, "&") || an_tok_is(t, "*") || an_tok_is(t, "(") ) {
			/* A cast: ( type… ) ; or parentheses around the expression. */
			if (an_tok_is(t, "(") && t->match > i && t->match + 1 < to) {
				bool type = true;
				for (int k = i + 1; k < t->match && type; k++)
					type = lx->toks[k].kind == AN_TK_IDENT || an_tok_is(&lx->toks[k], "*") ||
						an_tok_is(&lx->toks[k], "::");
				i = type ? t->match + 1 : i + 1;
			} else {
				i++;
			}
		} else if (t->kind == AN_TK_IDENT && (an_tok_is(t, "static_cast") ||
				an_tok_is(t, "reinterpret_cast") || an_tok_is(t, "const_cast"))) {
			while (i < to && !an_tok_is(&lx->toks[i], "("))
				i++;
			i++;
		} else {
			break;
		}
	}
	/* A call's result (calloc(…), f(x)) is no named buffer. */
	if (i >= to || lx->toks[i].kind != AN_TK_IDENT ||
			(i + 1 < to && an_tok_is(&lx->toks[i + 1], "(")))
		return;
	size_t n = 0;
	for (; i < to; i++) {
		const an_tok *t = &lx->toks[i];
		bool ok = n == 0 ? t->kind == AN_TK_IDENT :
			(an_tok_is(t, ".") || an_tok_is(t, "->")) && i + 1 < to &&
			lx->toks[i + 1].kind == AN_TK_IDENT;
		if (!ok)
			break;
		if (n > 0) {
			n += (size_t)snprintf(out + n, size - n, "%.*s", t->len, t->s);
			t = &lx->toks[++i];
		}
		if (n + (size_t)t->len + 1 >= size)
			break;
		n += (size_t)snprintf(out + n, size - n, "%.*s", t->len, t->s);
		/* x.data() and t.data_ptr() stand for x and t. */
		if (i + 2 < to && an_tok_is(&lx->toks[i + 1], "(") && lx->toks[i + 1].match == i + 2)
			break;
	}
}

/* A base through the function's plain assignments (mine = l->a + …). */
static void resolve(const an_analysis *a, int fi, char *base, size_t size)
{
	/* A lambda sees the variables of the function around it; a cycle of
	 * assignments (a swap of two pointers) leaves the name as it is. */
	char seen[6][96];
	cuco_strlcpy(seen[0], base, sizeof seen[0]);
	for (int depth = 1; depth < 6 && *base; depth++) {
		int hit = -1;
		for (int f = fi; f >= 0 && hit < 0; f = a->funcs[f].parent)
			for (int i = 0; i < a->naliases && hit < 0; i++)
				if (a->aliases[i].func == f && strcmp(a->aliases[i].name, base) == 0)
					hit = i;
		if (hit < 0)
			return;
		for (int k = 0; k < depth; k++)
			if (strcmp(seen[k], a->aliases[hit].base) == 0) {
				cuco_strlcpy(base, seen[0], size);
				return;
			}
		cuco_strlcpy(base, a->aliases[hit].base, size);
		cuco_strlcpy(seen[depth], base, sizeof seen[0]);
	}
}

static void find_aliases(an_analysis *a, int fi)
{
	const func *f = &a->funcs[fi];
	const an_lexed *lx = &a->files[f->file].lx;
	for (int i = f->body + 1; i + 2 < f->body_end; i++) {
		i = past_lambda(a, fi, i);
		const an_tok *t = &lx->toks[i];
		if (t->kind != AN_TK_IDENT || !an_tok_is(&lx->toks[i + 1], "=") ||
				an_tok_is(&lx->toks[i - 1], ".") || an_tok_is(&lx->toks[i - 1], "->"))
			continue;
		int end = i + 2;
		while (end < f->body_end && !an_tok_is(&lx->toks[end], ";") &&
				!an_tok_is(&lx->toks[end], ","))
			end = lx->toks[end].match > end ? lx->toks[end].match + 1 : end + 1;
		alias al = { .func = fi };
		tok_text(t, al.name, sizeof al.name);
		an_base_of(lx, i + 2, end, al.base, sizeof al.base);
		if (!*al.base || strcmp(al.base, al.name) == 0)
			continue;
		a->aliases = cuco_xrealloc(a->aliases, (size_t)(a->naliases + 1) * sizeof *a->aliases);
		a->aliases[a->naliases++] = al;
	}
}

static void add_base(char bases[][96], int *n, const char *b)
{
	if (!*b || *n == MAX_BASES)
		return;
	for (int i = 0; i < *n; i++)
		if (strcmp(bases[i], b) == 0)
			return;
	cuco_strlcpy(bases[(*n)++], b, 96);
}

static void arg_base(const an_analysis *a, const event *e, int k, char *out, size_t size)
{
	out[0] = '\0';
	if (k < 0 || k >= e->nargs)
		return;
	an_base_of(&a->files[0].lx, e->args[k][0], e->args[k][1], out, size);
	resolve(a, e->func, out, size);
}

void an_arg_text(const an_analysis *a, const event *e, int k, char *out, size_t size)
{
	out[0] = '\0';
	if (k >= 0 && k < e->nargs)
		an_range_text(&a->files[0].lx, e->args[k][0], e->args[k][1], out, size);
}

/* What the event writes and reads, as bases. */
static void effects(an_analysis *a, event *e)
{
	char b[96];
	switch (e->kind) {
	case EV_COMM: {
		const comm_row *r = &an_comm_rows[e->row];
		char send[96], recv[96];
		arg_base(a, e, r->send, send, sizeof send);
		arg_base(a, e, r->recv, recv, sizeof recv);
		if (strcmp(send, "MPI_IN_PLACE") == 0)
			cuco_strlcpy(send, recv, sizeof send);
		add_base(e->reads, &e->nreads, send);
		add_base(e->writes, &e->nwrites, recv);
		break;
	}
	case EV_COPY: {
		const copy_row *r = &copy_rows[e->row];
		arg_base(a, e, r->dst, b, sizeof b);
		add_base(e->writes, &e->nwrites, b);
		arg_base(a, e, r->src, b, sizeof b);
		add_base(e->reads, &e->nreads, b);
		break;
	}
	case EV_CALL:
	case EV_LAUNCH:
		for (int k = 0; k < e->nargs; k++) {
			arg_base(a, e, k, b, sizeof b);
			const param *p = e->callee >= 0 && k < a->funcs[e->callee].nparams ?
				&a->funcs[e->callee].params[k] : NULL;
			if (!p || p->writes)
				add_base(e->writes, &e->nwrites, b);
			if (!p || p->reads)
				add_base(e->reads, &e->nreads, b);
		}
		break;
	case EV_SYNC:
	case EV_ACCESS:  /* its bases are set where it is found */
		break;
	}
}

/* A lambda that captures by reference touches what the calls in it touch:
 * a call of one takes them on, nested lambdas first (a few levels). */
static void lambda_effects(an_analysis *a)
{
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < a->nevs; i++) {
			event *e = &a->evs[i];
			if (e->kind != EV_CALL || e->callee < 0 || a->funcs[e->callee].parent < 0)
				continue;
			for (int k = 0; k < a->nevs; k++) {
				const event *in = &a->evs[k];
				if (in->func != e->callee || in == e)
					continue;
				for (int w = 0; w < in->nwrites; w++)
					add_base(e->writes, &e->nwrites, in->writes[w]);
				for (int r = 0; r < in->nreads; r++)
					add_base(e->reads, &e->nreads, in->reads[r]);
			}
		}
}

/* ---- events ---------------------------------------------------------------------- */

static void split_args(const an_lexed *lx, int open, event *e)
{
	int close = lx->toks[open].match, from = open + 1;
	e->nargs = 0;
	for (int k = from; k <= close && e->nargs < MAX_ARGS; k++) {
		const an_tok *c = &lx->toks[k];
		if ((an_tok_is(c, "(") || an_tok_is(c, "[") || an_tok_is(c, "{")) && c->match > k) {
			k = c->match;
		} else if (an_tok_is(c, ",") || k == close) {
			if (k > from) {
				e->args[e->nargs][0] = from;
				e->args[e->nargs][1] = k;
				e->nargs++;
			}
			from = k + 1;
		}
	}
}

static event *new_event(an_analysis *a, ev_kind kind, int fi, int t)
{
	a->evs = cuco_xrealloc(a->evs, (size_t)(a->nevs + 1) * sizeof *a->evs);
	event *e = &a->evs[a->nevs++];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->func = fi;
	e->tok = t;
	e->line = a->files[0].lx.toks[t].line;
	e->callee = -1;
	return e;
}

static bool is_macro_name(const an_tok *t)
{
	for (int i = 0; i < t->len; i++)
		if (islower((unsigned char)t->s[i]))
			return false;
	return true;
}

static bool library_name(const an_tok *t)
{
	static const char *const prefixes[] = { "MPI_", "PMPI_", "nccl", "cuda", "cublas", "std", "__",
		NULL };
	for (int i = 0; prefixes[i]; i++)
		if (t->len >= (int)strlen(prefixes[i]) && strncmp(t->s, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* A kernel launch at the <<< at i: its name (before any template
 * arguments), its stream (the fourth launch parameter) and arguments. */
static void launch_at(an_analysis *a, int fi, int i)
{
	const an_lexed *lx = &a->files[0].lx;
	int n = i - 1;
	if (n > 0 && an_tok_is(&lx->toks[n], ">")) {
		int depth = 0;
		for (; n > 0; n--) {
			depth += an_tok_is(&lx->toks[n], ">") - an_tok_is(&lx->toks[n], "<");
			if (depth == 0)
				break;
		}
		n--;
	}
	int close = i + 1;
	while (close < lx->ntoks && !an_tok_is(&lx->toks[close], ">>>"))
		close++;
	if (n < 0 || close + 1 >= lx->ntoks || lx->toks[n].kind != AN_TK_IDENT ||
			!an_tok_is(&lx->toks[close + 1], "(") || lx->toks[close + 1].match < 0)
		return;
	event *e = new_event(a, EV_LAUNCH, fi, n);
	tok_text(&lx->toks[n], e->name, sizeof e->name);
	e->callee = find_func(a, lx->toks[n].s, lx->toks[n].len);
	/* The fourth launch parameter, if any, is the stream. */
	int field = 0, from = i + 1;
	cuco_strlcpy(e->stream, "the default stream", sizeof e->stream);
	for (int k = i + 1; k <= close; k++) {
		const an_tok *c = &lx->toks[k];
		if ((an_tok_is(c, "(") || an_tok_is(c, "{")) && c->match > k && c->match < close) {
			k = c->match;
		} else if (an_tok_is(c, ",") || k == close) {
			if (field == 3)
				an_range_text(lx, from, k, e->stream, sizeof e->stream);
			field++;
			from = k + 1;
		}
	}
	split_args(lx, close + 1, e);
}

static int comm_row_of(const an_tok *t)
{
	for (int r = 0; r < an_ncomm_rows; r++)
		if (an_tok_is(t, an_comm_rows[r].name))
			return r;
	return -1;
}

static int copy_row_of(const an_tok *t)
{
	for (int r = 0; r < NELEMS(copy_rows); r++)
		if (an_tok_is(t, copy_rows[r].name))
			return r;
	return -1;
}

static void find_events(an_analysis *a, int fi)
{
	const func *f = &a->funcs[fi];
	const an_lexed *lx = &a->files[0].lx;
	for (int i = f->body + 1; i < f->body_end; i++) {
		i = past_lambda(a, fi, i);
		const an_tok *t = &lx->toks[i];
		if (an_tok_is(t, "<<<")) {
			launch_at(a, fi, i);
			continue;
		}
		if (t->kind != AN_TK_IDENT || !an_tok_is(&lx->toks[i + 1], "(") ||
				lx->toks[i + 1].match < 0 || an_tok_is(&lx->toks[i - 1], ".") ||
				an_tok_is(&lx->toks[i - 1], "->"))
			continue;
		int row;
		event *e;
		if ((row = comm_row_of(t)) >= 0) {
			e = new_event(a, EV_COMM, fi, i);
			e->row = row;
		} else if ((row = copy_row_of(t)) >= 0) {
			e = new_event(a, EV_COPY, fi, i);
			e->row = row;
		} else if (in_list(sync_calls, t->s, t->len)) {
			e = new_event(a, EV_SYNC, fi, i);
		} else if (find_func(a, t->s, t->len) >= 0) {
			e = new_event(a, EV_CALL, fi, i);
			e->callee = find_func(a, t->s, t->len);
		} else if (!in_list(inert, t->s, t->len) && !is_macro_name(t) && !library_name(t)) {
			e = new_event(a, EV_CALL, fi, i);
		} else {
			continue;
		}
		tok_text(t, e->name, sizeof e->name);
		split_args(lx, i + 1, e);
		int stream = e->kind == EV_COMM ? an_comm_rows[e->row].stream :
			e->kind == EV_COPY ? copy_rows[e->row].stream : -1;
		an_arg_text(a, e, stream, e->stream, sizeof e->stream);
	}
}

/* Whether base b is what some communication call sends or receives. */
static bool comm_base(const an_analysis *a, const char *b)
{
	for (int i = 0; i < a->nevs; i++) {
		const event *e = &a->evs[i];
		for (int k = 0; e->kind == EV_COMM && k < e->nreads + e->nwrites; k++)
			if (strcmp(k < e->nreads ? e->reads[k] : e->writes[k - e->nreads], b) == 0)
				return true;
	}
	return false;
}

/* The access of base b on this token's line in function fi, made once. */
static event *access_at(an_analysis *a, int fi, int tok, const char *b)
{
	int line = a->files[0].lx.toks[tok].line;
	for (int i = a->nevs - 1; i >= 0; i--) {
		event *e = &a->evs[i];
		if (e->kind == EV_ACCESS && e->func == fi && e->line == line && strcmp(e->name, b) == 0)
			return e;
	}
	event *e = new_event(a, EV_ACCESS, fi, tok);
	cuco_strlcpy(e->name, b, sizeof e->name);
	return e;
}

/* Whether the token starts a call that is an event of function fi: its
 * arguments are that event's effects, not accesses of their own. */
static bool event_call_at(const an_analysis *a, int fi, int tok)
{
	for (int i = 0; i < a->nevs; i++)
		if (a->evs[i].func == fi && a->evs[i].tok == tok && a->evs[i].kind != EV_ACCESS)
			return true;
	return false;
}

/* The code's own subscripts of the communicated buffers: `sum[i]` read,
 * `g[i] = …` written. Found once every call's buffers are known. */
static void find_accesses(an_analysis *a, int fi)
{
	const func *f = &a->funcs[fi];
	const an_lexed *lx = &a->files[0].lx;
	for (int i = f->body + 1; i < f->body_end; i++) {
		i = past_lambda(a, fi, i);
		const an_tok *t = &lx->toks[i];
		if (t->kind == AN_TK_IDENT && an_tok_is(&lx->toks[i + 1], "(") &&
				lx->toks[i + 1].match > i && event_call_at(a, fi, i)) {
			i = lx->toks[i + 1].match;
			continue;
		}
		if (t->kind != AN_TK_IDENT || !an_tok_is(&lx->toks[i + 1], "[") ||
				an_tok_is(&lx->toks[i - 1], ".") || an_tok_is(&lx->toks[i - 1], "->"))
			continue;
		char b[96];
		tok_text(t, b, sizeof b);
		resolve(a, fi, b, sizeof b);
		if (!comm_base(a, b))
			continue;
		bool also_read = false, write = stored_through(lx, i, f->body_end, &also_read);
		event *e = access_at(a, fi, i, b);
		if (write)
			add_base(e->writes, &e->nwrites, b);
		if (!write || also_read)
			add_base(e->reads, &e->nreads, b);
	}
}

/* Events in the order of the source, function by function: a report
 * looks for the nearest producer and consumer by position. */
static int by_place(const void *x, const void *y)
{
	const event *a = x, *b = y;
	return a->func != b->func ? a->func - b->func : a->tok - b->tok;
}

/* ---- the whole program ------------------------------------------------------------ */

static bool any_token(const an_lexed *lx, const char *prefix)
{
	size_t n = strlen(prefix);
	for (int i = 0; i < lx->ntoks; i++)
		if (lx->toks[i].kind == AN_TK_IDENT && (size_t)lx->toks[i].len >= n &&
				strncmp(lx->toks[i].s, prefix, n) == 0)
			return true;
	return false;
}

bool cuco_program_includes(const cuco_program *p, const char *name)
{
	for (int i = 0; i < p->nincludes; i++) {
		const char *b = strrchr(p->includes[i].name, '/');
		if (strcmp(b ? b + 1 : p->includes[i].name, name) == 0)
			return true;
	}
	return false;
}

static void facts(cuco_program *p)
{
	const an_analysis *a = p->an;
	const an_lexed *lx = &a->files[0].lx;
	p->lines = lx->lines;
	p->nincludes = lx->nincludes < CUCO_PROGRAM_INCLUDES ? lx->nincludes : CUCO_PROGRAM_INCLUDES;
	memcpy(p->includes, lx->includes, (size_t)p->nincludes * sizeof p->includes[0]);
	for (int i = 0; i < lx->nmacros && p->nmacros < CUCO_PROGRAM_MACROS; i++)
		if (lx->macros[i].guarded)
			p->macros[p->nmacros++] = lx->macros[i];
	for (int i = 0; i < a->nfuncs; i++)
		if (a->funcs[i].file == 0 && strcmp(a->funcs[i].name, "main") == 0)
			p->main_line = a->funcs[i].line;
	const cuco_program *q = p;
	p->mpi = cuco_program_includes(q, "mpi.h") || any_token(lx, "MPI_");
	p->nccl = cuco_program_includes(q, "nccl.h") || any_token(lx, "nccl");
	p->cublas = cuco_program_includes(q, "cublas_v2.h") || cuco_program_includes(q, "cublas.h") ||
		any_token(lx, "cublas");
	p->device_api = cuco_program_includes(q, "nccl_device.h") || any_token(lx, "ncclGetLsaPointer") ||
		any_token(lx, "ncclLsaBarrierSession") || any_token(lx, "ncclGin") ||
		any_token(lx, "ncclDevComm");
	p->cuda = p->nccl || cuco_program_includes(q, "cuda_runtime.h") ||
		cuco_program_includes(q, "cuda.h") || any_token(lx, "__global__") ||
		any_token(lx, "cudaMalloc");
	for (int i = 0; i < lx->ntoks && !p->cuda; i++)
		p->cuda = an_tok_is(&lx->toks[i], "<<<");
	for (int i = 0; i < a->nevs; i++)
		p->ncomm += a->evs[i].kind == EV_COMM;
}

int cuco_program_parse(const char *name, const char *dir, const char *text, size_t len,
	cuco_program **out, cuco_err *err)
{
	(void)err;
	cuco_program *p = cuco_xcalloc(1, sizeof *p);
	cuco_strlcpy(p->path, name, sizeof p->path);
	an_analysis *a = p->an = cuco_xcalloc(1, sizeof *a);
	char *copy = cuco_xmalloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	add_file(a, name, copy, len);
	read_headers(a, dir ? dir : "");
	for (int k = 0; k < a->nfiles; k++)
		find_functions(a, k);
	for (int fi = 0; fi < a->nfuncs; fi++)
		find_aliases(a, fi);
	for (int fi = 0; fi < a->nfuncs; fi++)
		param_uses(a, fi);
	for (int fi = 0; fi < a->nfuncs; fi++) {
		if (a->funcs[fi].file != 0)
			continue;
		find_loops(a, fi);
		find_events(a, fi);
	}
	for (int i = 0; i < a->nevs; i++)
		effects(a, &a->evs[i]);
	lambda_effects(a);
	for (int fi = 0; fi < a->nfuncs; fi++)
		if (a->funcs[fi].file == 0)
			find_accesses(a, fi);
	if (a->nevs > 1)
		qsort(a->evs, (size_t)a->nevs, sizeof *a->evs, by_place);
	facts(p);
	*out = p;
	return CUCO_OK;
}

int cuco_program_read(const char *path, cuco_program **out, cuco_err *err)
{
	char *text;
	size_t len;
	int rc = cuco_read_file(path, FILE_MAX, &text, &len, err);
	if (rc != CUCO_OK)
		return rc;
	char dir[PATH_MAX];
	cuco_strlcpy(dir, path, sizeof dir);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		cuco_strlcpy(dir, ".", sizeof dir);
	rc = cuco_program_parse(path, dir, text, len, out, err);
	free(text);
	return rc;
}

void cuco_program_free(cuco_program *p)
{
	if (!p)
		return;
	an_analysis *a = p->an;
	for (int k = 0; k < a->nfiles; k++) {
		an_lexed_free(&a->files[k].lx);
		free(a->files[k].text);
	}
	free(a->funcs);
	free(a->evs);
	free(a->loops);
	free(a->aliases);
	free(a);
	free(p);
}

bool cuco_program_prints(const cuco_program *p, const char *needle, int *line)
{
	const an_lexed *lx = &p->an->files[0].lx;
	size_t n = strlen(needle);
	for (int i = 0; i < lx->ntoks; i++) {
		const an_tok *t = &lx->toks[i];
		if (t->kind != AN_TK_STRING)
			continue;
		for (int k = 0; k + (int)n <= t->len; k++)
			if (memcmp(t->s + k, needle, n) == 0) {
				if (line)
					*line = t->line;
				return true;
			}
	}
	return false;
}


const char *an_file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}
