/* lex.c — C, C++ and CUDA source as tokens, for the communication analysis
 * (analyze.c) and `cuco init`. No preprocessor: comments go, directive
 * lines are read for what they say (#include, and object-like #defines,
 * noting those under an #ifndef of their own name: values a build's -D
 * may override) and leave no tokens,
 * and both sides of every #if stay. Every bracket knows its partner. */
#include "analyze/analyze_int.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest first: the lexer takes the first that matches. */
static const char *const puncts[] = {
	"<<<", ">>>", "<<=", ">>=", "...", "->", "::", "<<", ">>", "++", "--", "+=", "-=", "*=",
	"/=", "%=", "&=", "|=", "^=", "==", "!=", "<=", ">=", "&&", "||", NULL,
};

typedef struct lexer {
	an_lexed *lx;
	const char *s, *end;
	int line;
	bool bol;              /* only blanks since the line began */
	char guard[64];        /* the name the #ifndef just before tested */
} lexer;

static void push_tok(lexer *l, an_tok_kind kind, const char *s, size_t len)
{
	an_lexed *lx = l->lx;
	if (lx->ntoks == lx->cap) {
		lx->cap = lx->cap ? 2 * lx->cap : 1024;
		lx->toks = cuco_xrealloc(lx->toks, (size_t)lx->cap * sizeof *lx->toks);
	}
	lx->toks[lx->ntoks++] = (an_tok){ kind, l->line, s, (int)len, -1 };
	l->guard[0] = '\0';  /* code between #ifndef and #define: no guard */
}

/* Past a quoted literal starting at s (its quote); newlines counted. */
static const char *skip_quoted(lexer *l, const char *s)
{
	char q = *s++;
	while (s < l->end && *s != q && *s != '\n') {
		if (*s == '\\' && s + 1 < l->end) {
			if (s[1] == '\n')
				l->line++;
			s++;
		}
		s++;
	}
	return s < l->end && *s == q ? s + 1 : s;
}

/* C++ raw string R"delim( … )delim" starting at its quote. */
static const char *skip_raw(lexer *l, const char *s)
{
	const char *open = memchr(s, '(', (size_t)(l->end - s));
	if (!open || open - s > 17)
		return skip_quoted(l, s);
	char close[24];
	int n = snprintf(close, sizeof close, ")%.*s\"", (int)(open - s - 1), s + 1);
	for (const char *p = open; p + n <= l->end; p++) {
		if (*p == '\n')
			l->line++;
		if (memcmp(p, close, (size_t)n) == 0)
			return p + n;
	}
	return l->end;
}

static void add_include(an_lexed *lx, const char *name, size_t n, bool local, int line)
{
	if (lx->nincludes == AN_LEX_INCLUDES)
		return;
	cuco_include *in = &lx->includes[lx->nincludes++];
	snprintf(in->name, sizeof in->name, "%.*s", (int)n, name);
	in->local = local;
	in->line = line;
}

static void add_macro(lexer *l, const char *name, size_t n, const char *value, int line,
	bool guarded)
{
	an_lexed *lx = l->lx;
	if (lx->nmacros == AN_LEX_MACROS)
		return;
	cuco_macro *m = &lx->macros[lx->nmacros++];
	snprintf(m->name, sizeof m->name, "%.*s", (int)n, name);
	cuco_strlcpy(m->value, value, sizeof m->value);
	char *t = cuco_trim(m->value);
	memmove(m->value, t, strlen(t) + 1);
	m->line = line;
	m->guarded = guarded;
}

/* One directive's text, comments and continuations folded into d. */
static const char *read_directive(lexer *l, const char *s, char *d, size_t size)
{
	size_t n = 0;
	while (s < l->end && *s != '\n') {
		if (*s == '\\' && s + 1 < l->end && s[1] == '\n') {
			l->line++;
			s += 2;
			continue;
		}
		if (*s == '/' && s + 1 < l->end && s[1] == '/')
			break;
		if (*s == '/' && s + 1 < l->end && s[1] == '*') {
			const char *e = s + 2;
			while (e + 1 < l->end && !(e[0] == '*' && e[1] == '/'))
				l->line += *e++ == '\n';
			s = e + 2 <= l->end ? e + 2 : l->end;
			if (n + 1 < size)
				d[n++] = ' ';
			continue;
		}
		if (n + 1 < size)
			d[n++] = *s;
		s++;
	}
	while (s < l->end && *s != '\n')
		s++;
	d[n] = '\0';
	return s;
}

static size_t ident_len(const char *s)
{
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

static void directive(lexer *l, const char *text, int line)
{
	const char *p = text + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t kw = ident_len(p);
	const char *arg = p + kw;
	while (*arg == ' ' || *arg == '\t')
		arg++;
	const char *name;
	size_t nlen;
	bool local;
	if (cuco_text_include(text, strlen(text), &name, &nlen, &local)) {
		add_include(l->lx, name, nlen, local, line);
	} else if (kw == 6 && strncmp(p, "ifndef", 6) == 0) {
		snprintf(l->guard, sizeof l->guard, "%.*s", (int)ident_len(arg), arg);
		return;
	} else if (kw == 6 && strncmp(p, "define", 6) == 0) {
		size_t n = ident_len(arg);
		/* A value under #ifndef of its own name is what -DNAME=… replaces. */
		if (n > 0 && arg[n] != '(')
			add_macro(l, arg, n, arg + n, line,
				strlen(l->guard) == n && strncmp(arg, l->guard, n) == 0);
	}
	l->guard[0] = '\0';
}

static void match_brackets(an_lexed *lx)
{
	int *stack = cuco_xmalloc(((size_t)lx->ntoks + 1) * sizeof *stack);
	int depth = 0;
	for (int i = 0; i < lx->ntoks; i++) {
		an_tok *t = &lx->toks[i];
		if (t->kind != AN_TK_PUNCT || t->len != 1)
			continue;
		char c = t->s[0];
		if (c == '(' || c == '[' || c == '{') {
			stack[depth++] = i;
		} else if (c == ')' || c == ']' || c == '}') {
			char open = c == ')' ? '(' : c == ']' ? '[' : '{';
			/* Unbalanced code (an #if with two openings): pair what pairs. */
			int k = depth - 1;
			while (k >= 0 && lx->toks[stack[k]].s[0] != open)
				k--;
			if (k < 0)
				continue;
			t->match = stack[k];
			lx->toks[stack[k]].match = i;
			depth = k;
		}
	}
	free(stack);
}

int an_lex(const char *text, size_t len, an_lexed *lx)
{
	memset(lx, 0, sizeof *lx);
	lx->text = text;
	lexer l = { .lx = lx, .s = text, .end = text + len, .line = 1, .bol = true };
	char dir[1024];
	while (l.s < l.end) {
		const char *s = l.s;
		unsigned char c = (unsigned char)*s;
		if (c == '\n') {
			l.line++;
			l.bol = true;
			l.s++;
		} else if (isspace(c)) {
			l.s++;
		} else if (c == '/' && s + 1 < l.end && s[1] == '/') {
			while (l.s < l.end && *l.s != '\n')
				l.s++;
		} else if (c == '/' && s + 1 < l.end && s[1] == '*') {
			l.s += 2;
			while (l.s + 1 < l.end && !(l.s[0] == '*' && l.s[1] == '/'))
				l.line += *l.s++ == '\n';
			l.s = l.s + 2 <= l.end ? l.s + 2 : l.end;
		} else if (c == '#' && l.bol) {
			int line = l.line;
			l.s = read_directive(&l, s, dir, sizeof dir);
			directive(&l, dir, line);
		} else {
			l.bol = false;
			if (c == '"' || c == '\'') {
				l.s = skip_quoted(&l, s);
				push_tok(&l, c == '"' ? AN_TK_STRING : AN_TK_CHAR, s, (size_t)(l.s - s));
			} else if (c == 'R' && s + 1 < l.end && s[1] == '"') {
				l.s = skip_raw(&l, s + 1);
				push_tok(&l, AN_TK_STRING, s + 1, (size_t)(l.s - s - 1));
			} else if (isalpha(c) || c == '_') {
				l.s += ident_len(s);
				push_tok(&l, AN_TK_IDENT, s, (size_t)(l.s - s));
			} else if (isdigit(c) || (c == '.' && s + 1 < l.end && isdigit((unsigned char)s[1]))) {
				while (l.s < l.end && (isalnum((unsigned char)*l.s) || *l.s == '.' ||
						((*l.s == '+' || *l.s == '-') && strchr("eEpP", l.s[-1]))))
					l.s++;
				push_tok(&l, AN_TK_NUMBER, s, (size_t)(l.s - s));
			} else {
				size_t n = 1;
				for (int i = 0; puncts[i]; i++) {
					size_t k = strlen(puncts[i]);
					if ((size_t)(l.end - s) >= k && memcmp(s, puncts[i], k) == 0) {
						n = k;
						break;
					}
				}
				l.s += n;
				push_tok(&l, AN_TK_PUNCT, s, n);
			}
		}
	}
	lx->lines = l.line;
	match_brackets(lx);
	return CUCO_OK;
}

void an_lexed_free(an_lexed *lx)
{
	free(lx->toks);
	lx->toks = NULL;
	lx->ntoks = lx->cap = 0;
}

bool an_tok_is(const an_tok *t, const char *s)
{
	return (int)strlen(s) == t->len && memcmp(t->s, s, (size_t)t->len) == 0;
}

