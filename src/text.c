/* text.c — the rules of program text (text.h says them). */
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- blocks --------------------------------------------------------------------- */

cuco_marker cuco_text_marker(const char *line, size_t n)
{
	bool s = memmem(line, n, CUCO_MARK_START, strlen(CUCO_MARK_START)) != NULL;
	bool e = memmem(line, n, CUCO_MARK_END, strlen(CUCO_MARK_END)) != NULL;
	return s && e ? CUCO_MARKER_BOTH : s ? CUCO_MARKER_START : e ? CUCO_MARKER_END
		: CUCO_MARKER_NONE;
}

bool cuco_text_names_marker(const char *line, size_t n)
{
	return memmem(line, n, CUCO_MARK_STEM, strlen(CUCO_MARK_STEM)) != NULL;
}

bool cuco_text_marked(const char *text, size_t len)
{
	/* Neither word holds a '\n': a line holds one when the text does. */
	return cuco_text_marker(text, len) != CUCO_MARKER_NONE;
}

/* Why the marker on a line breaks the rule, given whether a block is open. */
static const char *refused(cuco_marker m, bool open)
{
	if (m == CUCO_MARKER_BOTH)
		return CUCO_MARK_START " and " CUCO_MARK_END " on one line";
	if (m == CUCO_MARKER_START && open)
		return CUCO_MARK_START " without a matching END before it";
	if (m == CUCO_MARKER_END && !open)
		return CUCO_MARK_END " without a matching START";
	return NULL;
}

int cuco_text_blocks(const char *text, size_t len, const char *who, cuco_block **out, size_t *n,
	cuco_err *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0, line = 0, p = 0;
	cuco_block b = { 0 };
	bool open = false;
	const char *why = NULL;
	for (; p < len; line++) {
		const char *nl = memchr(text + p, '\n', len - p);
		size_t eol = nl ? (size_t)(nl - text) : len, next = nl ? eol + 1 : len;
		cuco_marker m = cuco_text_marker(text + p, eol - p);
		if ((why = refused(m, open)))
			break;
		if (m == CUCO_MARKER_START) {
			b = (cuco_block){ .start = line, .from = next };
			open = true;
		} else if (m == CUCO_MARKER_END) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 4;
				*out = cuco_xrealloc(*out, cap * sizeof **out);
			}
			b.end = line;
			b.to = p;
			(*out)[(*n)++] = b;
			open = false;
		}
		p = next;
	}
	if (!why && open) {
		why = CUCO_MARK_START " is never closed";
		line = b.start;
	}
	if (!why)
		return CUCO_OK;
	free(*out);
	*out = NULL;
	*n = 0;
	return cuco_errf(err, CUCO_EDATA, "%s: line %zu: %s", who, line + 1, why);
}

size_t cuco_text_nblocks(const char *text, size_t len)
{
	cuco_block *b;
	size_t n;
	if (cuco_text_blocks(text, len, "text", &b, &n, NULL) != CUCO_OK)
		return 0;
	free(b);
	return n;
}

/* ---- comments ------------------------------------------------------------------- */

char *cuco_text_strip(const char *src, size_t len, bool blank_quotes)
{
	char *out = cuco_xmalloc(len + 1);
	char quote = 0;
	for (size_t i = 0; i < len; i++) {
		char c = src[i];
		if (quote) {
			out[i] = blank_quotes ? ' ' : c;
			if (c == '\\' && i + 1 < len) {
				i++;
				out[i] = blank_quotes && src[i] != '\n' ? ' ' : src[i];
			} else if (c == quote || c == '\n') {
				quote = 0;
				out[i] = c == '\n' ? '\n' : out[i];
			}
		} else if (c == '/' && i + 1 < len && src[i + 1] == '/') {
			for (; i < len && src[i] != '\n'; i++)
				out[i] = ' ';
			if (i < len)
				out[i] = '\n';
		} else if (c == '/' && i + 1 < len && src[i + 1] == '*') {
			size_t end = i + 2;
			while (end + 1 < len && !(src[end] == '*' && src[end + 1] == '/'))
				end++;
			end = end + 1 < len ? end + 2 : len;
			for (; i < end; i++)
				out[i] = src[i] == '\n' ? '\n' : ' ';
			i--;
		} else {
			if (c == '"' || c == '\'')
				quote = c;
			out[i] = c;
		}
	}
	out[len] = '\0';
	return out;
}

void cuco_text_normalize(const char *text, size_t len, cuco_buf *out)
{
	char *code = cuco_text_strip(text, len, false);
	bool space = false;
	for (size_t i = 0; i < len; i++) {
		if (isspace((unsigned char)code[i])) {
			space = true;
			continue;
		}
		if (space && out->len > 0)
			cuco_buf_append(out, " ", 1);
		space = false;
		cuco_buf_append(out, &code[i], 1);
	}
	if (out->len == 0)
		cuco_buf_append(out, "", 0);
	free(code);
}

/* ---- includes ------------------------------------------------------------------- */

static size_t blanks(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

bool cuco_text_include(const char *line, size_t n, const char **name, size_t *len, bool *local)
{
	size_t i = blanks(line, 0, n);
	if (i == n || line[i] != '#')
		return false;
	i = blanks(line, i + 1, n);
	if (n - i < 7 || memcmp(line + i, "include", 7) != 0)
		return false;
	i += 7;
	if (i < n && (isalnum((unsigned char)line[i]) || line[i] == '_'))
		return false;  /* #include_next, say */
	i = blanks(line, i, n);
	if (i == n || (line[i] != '"' && line[i] != '<'))
		return false;
	*local = line[i] == '"';
	const char *close = memchr(line + i + 1, *local ? '"' : '>', n - i - 1);
	if (!close)
		return false;
	*name = line + i + 1;
	*len = (size_t)(close - *name);
	return true;
}

void cuco_text_includes(const char *text, size_t len, char (*names)[128], int *n, int max)
{
	char *code = cuco_text_strip(text, len, false);
	for (size_t p = 0; p < len && *n < max;) {
		const char *nl = memchr(code + p, '\n', len - p);
		size_t eol = nl ? (size_t)(nl - code) : len;
		const char *name;
		size_t nn;
		bool local, seen = true;
		if (cuco_text_include(code + p, eol - p, &name, &nn, &local) && local) {
			seen = false;
			for (int k = 0; k < *n && !seen; k++)
				seen = strlen(names[k]) == nn && memcmp(names[k], name, nn) == 0;
		}
		if (!seen) {
			nn = nn < 127 ? nn : 127;
			memcpy(names[*n], name, nn);
			names[(*n)++][nn] = '\0';
		}
		p = nl ? eol + 1 : len;
	}
	free(code);
}

/* ---- functions ------------------------------------------------------------------ */

/* Words before a '(' that name no function. */
static const char *const not_called[] = {
	"if", "for", "while", "switch", "return", "sizeof", "alignof", "_Alignof", "__alignof__",
	"typeof", "__typeof__", "decltype", "defined", "__attribute__", "__declspec", "asm",
	"__asm__", "__asm", "_Generic", "_Static_assert", "static_assert", "catch", "void", "int",
	"char", "short", "long", "float", "double", "unsigned", "signed", "const", "volatile",
};

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool called_word(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof not_called / sizeof *not_called; i++)
		if (strlen(not_called[i]) == n && memcmp(not_called[i], s, n) == 0)
			return false;
	return true;
}

static size_t white(const char *s, size_t i, size_t n)
{
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	return i;
}

/* Past the balanced parentheses that open at s[i]. */
static size_t past_parens(const char *s, size_t i, size_t n)
{
	for (int depth = 0; i < n; i++) {
		depth += s[i] == '(';
		if (s[i] == ')' && --depth == 0)
			return i + 1;
	}
	return n;
}

/* Whether the parameter list opening at s[i] is followed by a body:
 * words (const, noexcept, an attribute and its parentheses), then '{'. */
static bool has_body(const char *s, size_t i, size_t n)
{
	i = white(s, past_parens(s, i, n), n);
	while (i < n && (word_char(s[i]) || s[i] == '(')) {
		if (s[i] == '(')
			i = past_parens(s, i, n);
		else
			while (i < n && word_char(s[i]))
				i++;
		i = white(s, i, n);
	}
	return i < n && s[i] == '{';
}

/* Whether the word at s[i] follows `.`, `->` or `::`: a member or a
 * qualified name, not one of the text's own functions. */
static bool member(const char *s, size_t i)
{
	while (i > 0 && isspace((unsigned char)s[i - 1]))
		i--;
	return i > 0 && (s[i - 1] == '.' || (i > 1 && s[i - 1] == '>' && s[i - 2] == '-') ||
		(i > 1 && s[i - 1] == ':' && s[i - 2] == ':'));
}

static void add_fn(cuco_text_fn **v, size_t *n, const char *name, size_t len, const char *in,
	int line, bool defined)
{
	*v = cuco_xrealloc(*v, (*n + 1) * sizeof **v);
	cuco_text_fn *f = &(*v)[(*n)++];
	snprintf(f->name, sizeof f->name, "%.*s", (int)(len < 63 ? len : 63), name);
	cuco_strlcpy(f->in, in, sizeof f->in);
	f->line = line;
	f->defined = defined;
}

/* A preprocessor line at s[i] ('#'): a function-like #define is a
 * definition; returns where the line (and its continuations) ends. */
static size_t hash_line(const char *s, size_t i, size_t n, int *line, cuco_text_fn **v,
	size_t *nv)
{
	size_t k = white(s, i + 1, n);
	if (n - k > 6 && memcmp(s + k, "define", 6) == 0 && (s[k + 6] == ' ' || s[k + 6] == '\t')) {
		size_t a = white(s, k + 6, n), b = a;
		while (b < n && word_char(s[b]))
			b++;
		if (b > a && b < n && s[b] == '(')
			add_fn(v, nv, s + a, b - a, "", *line, true);
	}
	for (; i < n && s[i] != '\n'; i++)
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n')
			i++, (*line)++;
	return i;
}

size_t cuco_text_functions(const char *text, size_t len, cuco_text_fn **out)
{
	char *s = cuco_text_strip(text, len, true);
	cuco_text_fn *v = NULL;
	size_t nv = 0;
	int depth = 0, line = 1;
	char in[64] = "", pending[64] = "";
	bool line_start = true;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '\n') {
			line++;
			line_start = true;
			continue;
		}
		if (line_start && c == '#') {
			i = hash_line(s, i, len, &line, &v, &nv) - 1;
			continue;
		}
		line_start = line_start && isspace((unsigned char)c);
		if (c == '{' && depth++ == 0)
			cuco_strlcpy(in, pending, sizeof in);
		else if (c == '}' && depth > 0 && --depth == 0)
			in[0] = pending[0] = '\0';
		else if (c == ';' && depth == 0)
			pending[0] = '\0';
		if (!(isalpha((unsigned char)c) || c == '_') || (i > 0 && word_char(s[i - 1])))
			continue;
		size_t end = i;
		while (end < len && word_char(s[end]))
			end++;
		size_t paren = white(s, end, len);
		if (paren < len && s[paren] == '(' && called_word(s + i, end - i) && !member(s, i)) {
			if (depth > 0) {
				add_fn(&v, &nv, s + i, end - i, in, line, false);
			} else if (has_body(s, paren, len)) {
				add_fn(&v, &nv, s + i, end - i, "", line, true);
				cuco_strlcpy(pending, v[nv - 1].name, sizeof pending);
			}
		}
		i = end - 1;
	}
	free(s);
	*out = v;
	return nv;
}
