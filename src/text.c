/* text.c — the rules of program text (text.h says them). */
#include "text.h"

#include <ctype.h>
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
