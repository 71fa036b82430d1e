/* reply.c — read what a model answered: its directive, then its code as
 * SEARCH/REPLACE hunks, one fenced full file, or the tagged form CUCo and
 * ShinkaEvolve use (<NAME>, <DESCRIPTION>, <DIFF>, <CODE>).
 *
 * Parsing is strict where leniency hides damage: a reply that ends inside
 * a hunk, a fence or a tag was cut off (the output limit) and is refused,
 * not guessed at. Marker runs of 5 to 9 characters are accepted, because
 * models miscount them and the count carries no meaning.
 */
#include "agents/agents.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct rline {
	const char *s;
	size_t n;     /* without '\n' and a trailing '\r' */
	size_t off;   /* offset of the line in the reply */
} rline;

typedef struct rlines {
	rline *v;
	size_t n;
} rlines;

static void split(const char *text, rlines *out)
{
	size_t cap = 64, len = strlen(text), i = 0;
	out->v = cuco_xmalloc(cap * sizeof *out->v);
	out->n = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t n = end - i;
		if (n > 0 && text[i + n - 1] == '\r')
			n--;
		if (out->n == cap) {
			cap *= 2;
			out->v = cuco_xrealloc(out->v, cap * sizeof *out->v);
		}
		out->v[out->n++] = (rline){ text + i, n, i };
		i = end + 1;
	}
}

static size_t rtrim_n(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return n;
}

/* A run of 5–9 `c` then optionally " WORD", nothing else but spaces. */
static bool marker(rline l, char c, const char *word)
{
	size_t n = rtrim_n(l.s, l.n), i = 0;
	while (i < n && l.s[i] == c)
		i++;
	if (i < 5 || i > 9)
		return false;
	if (!word)
		return i == n;
	while (i < n && l.s[i] == ' ')
		i++;
	return n - i == strlen(word) && memcmp(l.s + i, word, n - i) == 0;
}

static bool is_search(rline l) { return marker(l, '<', "SEARCH"); }
static bool is_divider(rline l) { return marker(l, '=', NULL); }
static bool is_replace(rline l) { return marker(l, '>', "REPLACE"); }

static bool is_fence(rline l)
{
	size_t i = 0;
	while (i < l.n && i < 3 && l.s[i] == ' ')
		i++;
	return l.n - i >= 3 && memcmp(l.s + i, "```", 3) == 0;
}

/* ---- directive ----------------------------------------------------------- */

/* Strip markdown decoration around a directive line's parts. A list's
 * '-' is taken off a key only: in a value it is a sign ("granularity: -8"
 * read as 8 was issue 18's), and the design space refuses it. */
static void clean(const char *s, size_t n, bool key, char *out, size_t size)
{
	while (n > 0 && (isspace((unsigned char)*s) || (key && *s == '-') || *s == '*' || *s == '`' ||
		*s == '"' || *s == '\'')) {
		s++;
		n--;
	}
	while (n > 0 && (isspace((unsigned char)s[n - 1]) || s[n - 1] == '*' || s[n - 1] == '`' ||
		s[n - 1] == '"' || s[n - 1] == '\'' || s[n - 1] == ','))
		n--;
	snprintf(out, size, "%.*s", (int)n, s);
}

static bool is_directive_head(rline l)
{
	char t[64];
	clean(l.s, l.n < 60 ? l.n : 60, true, t, sizeof t);
	while (t[0] == '#' || t[0] == ' ')
		memmove(t, t + 1, strlen(t));
	return strncasecmp(t, "DIRECTIVE", 9) == 0 && (t[9] == ':' || t[9] == '\0');
}

static void dims_list(const cuco_workload *wl, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < wl->ndims && used + 1 < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", wl->dims[i].name);
}

/* The `name: value` lines after the DIRECTIVE line, up to a blank line.
 * A name stated twice is refused: which value was meant is unknowable. */
static int parse_directive(const rlines *ls, size_t head, const cuco_workload *wl,
	cuco_directive *d, cuco_err *err)
{
	struct { char key[64]; size_t line; } seen[64];  /* more than dimensions and knobs together */
	size_t stated = 0;
	for (size_t i = head + 1; i < ls->n; i++) {
		rline l = ls->v[i];
		if (rtrim_n(l.s, l.n) == 0 || is_fence(l) || is_search(l) || l.s[0] == '<')
			break;
		const char *colon = memchr(l.s, ':', l.n);
		if (!colon)
			break;
		char key[64], val[96];
		clean(l.s, (size_t)(colon - l.s), true, key, sizeof key);
		clean(colon + 1, l.n - (size_t)(colon + 1 - l.s), false, val, sizeof val);
		for (char *p = key; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (wl && !cuco_workload_dim(wl, key)) {
			char dims[512];
			dims_list(wl, dims, sizeof dims);
			return cuco_errf(err, CUCO_EDATA, "directive line %zu: `%s` is not a dimension of %s "
				"(%s)", i + 1, key, wl->name, dims);
		}
		for (size_t k = 0; k < stated && k < sizeof seen / sizeof *seen; k++)
			if (strcmp(seen[k].key, key) == 0)
				return cuco_errf(err, CUCO_EDATA, "directive line %zu: `%s` stated twice (first on "
					"line %zu); state each dimension once", i + 1, key, seen[k].line);
		if (!*val || cuco_directive_set(d, key, val) != CUCO_OK)
			return cuco_errf(err, CUCO_EDATA, "directive line %zu: cannot set %s to `%s`",
				i + 1, key, val);
		if (stated < sizeof seen / sizeof *seen) {
			memcpy(seen[stated].key, key, sizeof key);
			seen[stated].line = i + 1;
		}
		stated++;
	}
	if (stated == 0)
		return cuco_errf(err, CUCO_EDATA, "directive line %zu: DIRECTIVE states no `name: value` "
			"line", head + 1);
	return CUCO_OK;
}

/* Whether line i opens a fence around the directive (models like to fence
 * it); such a fence is neither code nor a file. Returns its closing line. */
static bool fenced_directive(const rlines *ls, size_t i, size_t *close)
{
	if (!is_fence(ls->v[i]))
		return false;
	size_t k = i + 1;
	while (k < ls->n && rtrim_n(ls->v[k].s, ls->v[k].n) == 0)
		k++;
	if (k == ls->n || !is_directive_head(ls->v[k]))
		return false;
	while (k < ls->n && !is_fence(ls->v[k]))
		k++;
	*close = k;
	return true;
}

/* ---- tags ------------------------------------------------------------------ */

/* Text between <TAG> and </TAG>: CUCO_ENOTFOUND when the tag is absent,
 * CUCO_EDATA when it is never closed (a reply cut off). */
static int tag(const char *text, const char *name, const char **start, size_t *len,
	size_t *open_off, cuco_err *err)
{
	char open[32], close[32];
	snprintf(open, sizeof open, "<%s>", name);
	snprintf(close, sizeof close, "</%s>", name);
	const char *o = strstr(text, open);
	if (!o)
		return CUCO_ENOTFOUND;
	*open_off = (size_t)(o - text);
	o += strlen(open);
	const char *c = strstr(o, close);
	if (!c)
		return cuco_errf(err, CUCO_EDATA, "reply ends before %s (opened at offset %zu); "
			"cut off?", close, *open_off);
	*start = o;
	*len = (size_t)(c - o);
	return CUCO_OK;
}

/* One line of text: whitespace runs become one space, ends trimmed. */
static void one_line(const char *s, size_t n, char *out, size_t size)
{
	size_t k = 0;
	bool space = false;
	for (size_t i = 0; i < n && k + 1 < size; i++) {
		if (isspace((unsigned char)s[i])) {
			space = k > 0;
			continue;
		}
		if (space && k + 2 < size)
			out[k++] = ' ';
		space = false;
		out[k++] = s[i];
	}
	out[k] = '\0';
}

/* ---- code -------------------------------------------------------------------- */

static void add_line(cuco_buf *b, rline l)
{
	cuco_buf_append(b, l.s, l.n);
	cuco_buf_puts(b, "\n");
}

static int parse_hunks(const rlines *ls, cuco_reply *out, cuco_err *err)
{
	enum { OUTSIDE, SEARCH, REPLACE } state = OUTSIDE;
	cuco_buf search = { 0 }, replace = { 0 };
	int cap = 0, start = 0;
	for (size_t i = 0; i < ls->n; i++) {
		rline l = ls->v[i];
		int num = out->nhunks + 1;
		if (is_search(l)) {
			if (state != OUTSIDE) {
				cuco_buf_free(&search);
				cuco_buf_free(&replace);
				return cuco_errf(err, CUCO_EDATA, "hunk %d (reply line %d): a new SEARCH at "
					"line %zu before its >>>>>>> REPLACE", num, start, i + 1);
			}
			state = SEARCH;
			start = (int)i + 1;
			cuco_buf_append(&search, "", 0);
			cuco_buf_append(&replace, "", 0);
		} else if (state == SEARCH && is_divider(l)) {
			state = REPLACE;
		} else if (state == SEARCH && is_replace(l)) {
			cuco_buf_free(&search);
			cuco_buf_free(&replace);
			return cuco_errf(err, CUCO_EDATA, "hunk %d (reply line %d): >>>>>>> REPLACE at line "
				"%zu without ======= before it", num, start, i + 1);
		} else if (state == REPLACE && is_replace(l)) {
			if (out->nhunks == cap) {
				cap = cap ? cap * 2 : 4;
				out->hunks = cuco_xrealloc(out->hunks, (size_t)cap * sizeof *out->hunks);
			}
			out->hunks[out->nhunks++] = (cuco_hunk){ search.data, replace.data, start };
			search = (cuco_buf){ 0 };
			replace = (cuco_buf){ 0 };
			state = OUTSIDE;
		} else if (state != OUTSIDE) {
			add_line(state == SEARCH ? &search : &replace, l);
		}
	}
	cuco_buf_free(&search);
	cuco_buf_free(&replace);
	if (state != OUTSIDE)
		return cuco_errf(err, CUCO_EDATA, "hunk %d (reply line %d): reply ends before its "
			">>>>>>> REPLACE; cut off?", out->nhunks + 1, start);
	return CUCO_OK;
}

/* The fenced blocks of [from, to): exactly one is a full file. */
/* A full rewrite to nothing (an empty fence, an empty <CODE>) is no
 * program: refused here rather than compiled. Frees *code then. */
static int empty_code(char **code, cuco_err *err)
{
	if ((*code)[strspn(*code, " \t\r\n")] != '\0')
		return CUCO_OK;
	free(*code);
	*code = NULL;
	return cuco_errf(err, CUCO_EDATA, "reply's code is empty: a full rewrite is the whole "
		"program");
}

static int parse_fenced(const rlines *ls, size_t from, size_t to, char **code, cuco_err *err)
{
	int blocks = 0;
	size_t open = 0;
	bool inside = false;
	cuco_buf b = { 0 };
	for (size_t i = from; i < to; i++) {
		rline l = ls->v[i];
		size_t close;
		if (!inside && fenced_directive(ls, i, &close)) {
			i = close;
			continue;
		}
		if (!is_fence(l)) {
			if (inside && blocks == 1)
				add_line(&b, l);
			continue;
		}
		if (!inside) {
			inside = true;
			open = i;
			blocks++;
		} else {
			inside = false;
		}
	}
	if (inside) {
		cuco_buf_free(&b);
		return cuco_errf(err, CUCO_EDATA, "reply ends inside the code fence opened at line %zu; "
			"cut off?", open + 1);
	}
	if (blocks != 1) {
		cuco_buf_free(&b);
		return blocks == 0
			? cuco_errf(err, CUCO_EDATA, "reply holds no code: no SEARCH/REPLACE hunk, <CODE> "
				"or fenced file")
			: cuco_errf(err, CUCO_EDATA, "reply holds %d fenced blocks; a full rewrite is one "
				"fenced file", blocks);
	}
	if (!b.data)
		cuco_buf_append(&b, "", 0);
	*code = b.data;
	return empty_code(code, err);
}

/* The whole file of a <CODE> tag, fenced inside it or not. */
static int tagged_code(const char *s, size_t n, char **code, cuco_err *err)
{
	char *inner = cuco_xmalloc(n + 1);
	memcpy(inner, s, n);
	inner[n] = '\0';
	rlines ls;
	split(inner, &ls);
	size_t first = 0;
	while (first < ls.n && rtrim_n(ls.v[first].s, ls.v[first].n) == 0)
		first++;
	int rc = CUCO_OK;
	if (first < ls.n && is_fence(ls.v[first])) {
		rc = parse_fenced(&ls, first, ls.n, code, err);
	} else {
		cuco_buf b = { 0 };
		for (size_t i = first; i < ls.n; i++)
			add_line(&b, ls.v[i]);
		if (!b.data)
			cuco_buf_append(&b, "", 0);
		*code = b.data;
		rc = empty_code(code, err);
	}
	free(ls.v);
	free(inner);
	return rc;
}

/* Offset where the reply's code starts: the first fence, hunk or code tag. */
static size_t code_start(const char *text, const rlines *ls)
{
	size_t at = strlen(text), close;
	for (size_t i = 0; i < ls->n; i++) {
		if (fenced_directive(ls, i, &close)) {
			i = close;
			continue;
		}
		if (is_fence(ls->v[i]) || is_search(ls->v[i])) {
			at = ls->v[i].off;
			break;
		}
	}
	const char *t;
	if ((t = strstr(text, "<DIFF>")) && (size_t)(t - text) < at)
		at = (size_t)(t - text);
	if ((t = strstr(text, "<CODE>")) && (size_t)(t - text) < at)
		at = (size_t)(t - text);
	return at;
}

static int parse_code(const char *text, const rlines *ls, cuco_reply *out, cuco_err *err)
{
	const char *s;
	size_t n, off;
	int rc = tag(text, "DIFF", &s, &n, &off, err);
	if (rc == CUCO_EDATA)
		return rc;
	bool diff_tag = rc == CUCO_OK;
	if ((rc = parse_hunks(ls, out, err)) != CUCO_OK)
		return rc;
	if (out->nhunks > 0) {
		out->kind = CUCO_REPLY_DIFF;
		return CUCO_OK;
	}
	if (diff_tag)
		return cuco_errf(err, CUCO_EDATA, "<DIFF> holds no SEARCH/REPLACE hunk");
	out->kind = CUCO_REPLY_FULL;
	rc = tag(text, "CODE", &s, &n, &off, err);
	if (rc == CUCO_OK)
		return tagged_code(s, n, &out->code, err);
	if (rc == CUCO_EDATA)
		return rc;
	return parse_fenced(ls, 0, ls->n, &out->code, err);
}

static int parse_tags(const char *text, cuco_reply *out, cuco_err *err)
{
	const char *s;
	size_t n, off;
	int rc = tag(text, "NAME", &s, &n, &off, err);
	if (rc == CUCO_EDATA)
		return rc;
	if (rc == CUCO_OK)
		one_line(s, n, out->name, sizeof out->name);
	rc = tag(text, "DESCRIPTION", &s, &n, &off, err);
	if (rc == CUCO_EDATA)
		return rc;
	if (rc == CUCO_OK)
		one_line(s, n, out->description, sizeof out->description);
	return CUCO_OK;
}

/* Reasoning models served as plain chat (DeepSeek-R1 or Qwen3 through
 * llama.cpp or Ollama) think first, inside <think> tags, and the thinking
 * may hold drafts with fences and hunks: it is blanked out (newlines kept,
 * so line numbers still point into the stored reply). */
static int blank_thinking(char *text, cuco_err *err)
{
	char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "<think>", 7) != 0)
		return CUCO_OK;
	char *end = strstr(p, "</think>");
	if (!end)
		return cuco_errf(err, CUCO_EDATA, "reply ends inside <think>; cut off?");
	for (end += 8; p < end; p++)
		if (*p != '\n')
			*p = ' ';
	return CUCO_OK;
}

static int parse(const char *text, const cuco_workload *wl, cuco_reply *out, cuco_err *err)
{
	rlines ls;
	split(text, &ls);
	size_t code_at = code_start(text, &ls);
	int rc = CUCO_OK;
	for (size_t i = 0; i < ls.n && rc == CUCO_OK; i++) {
		if (!is_directive_head(ls.v[i]))
			continue;
		if (ls.v[i].off > code_at)
			rc = cuco_errf(err, CUCO_EDATA, "directive line %zu: DIRECTIVE comes after the code; "
				"state it before any code", i + 1);
		else
			rc = parse_directive(&ls, i, wl, &out->directive, err);
		out->has_directive = true;
		break;
	}
	if (rc == CUCO_OK && wl && !out->has_directive)
		rc = cuco_errf(err, CUCO_EDATA, "reply states no DIRECTIVE before its code");
	if (rc == CUCO_OK && wl) {
		cuco_err why = { 0 };
		if (!cuco_directive_valid(wl, &out->directive, &why))
			rc = cuco_errf(err, CUCO_EDATA, "directive outside the design space: %s", why.msg);
	}
	if (rc == CUCO_OK)
		rc = parse_tags(text, out, err);
	if (rc == CUCO_OK)
		rc = parse_code(text, &ls, out, err);
	free(ls.v);
	if (rc != CUCO_OK)
		cuco_reply_free(out);
	return rc;
}

int cuco_reply_parse(const char *text, const cuco_workload *wl, const cuco_directive *base,
	cuco_reply *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	if (base)
		out->directive = *base;
	char *copy = cuco_xstrdup(text);
	int rc = blank_thinking(copy, err);
	if (rc == CUCO_OK)
		rc = parse(copy, wl, out, err);
	free(copy);
	return rc;
}

void cuco_reply_free(cuco_reply *r)
{
	for (int i = 0; i < r->nhunks; i++) {
		free(r->hunks[i].search);
		free(r->hunks[i].replace);
	}
	free(r->hunks);
	free(r->code);
	r->hunks = NULL;
	r->code = NULL;
	r->nhunks = 0;
}
