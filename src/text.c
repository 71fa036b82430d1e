/* text.c — the rules of program text (text.h says them). */
#include "text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
