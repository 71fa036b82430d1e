/* reply.c — read what a model answered: its directive, then its code as
 * SEARCH/REPLACE hunks, one fenced full file, or the tagged form CUCo and
 * ShinkaEvolve use (<NAME>, <DESCRIPTION>, <DIFF>, <CODE>).
 *
 * Parsing is strict where leniency hides damage: a reply that ends inside
 * a hunk, a fence or a tag was cut off (the output limit) and is refused,
 * not guessed at. Marker runs of 5 to 9 characters are accepted, because
 * models miscount them and the count carries no meaning.
 */
#include "models/models.h"

#include <cjson/cJSON.h>
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
	while (n > 0 && (isspace((unsigned char)*s) || (key && (*s == '-' || *s == '#')) || *s == '*' ||
		*s == '`' || *s == '"' || *s == '\'')) {
		s++;
		n--;
	}
	while (n > 0 && (isspace((unsigned char)s[n - 1]) || s[n - 1] == '*' || s[n - 1] == '`' ||
		s[n - 1] == '"' || s[n - 1] == '\'' || s[n - 1] == ',' || s[n - 1] == ';'))
		n--;
	snprintf(out, size, "%.*s", (int)n, s);
}

static bool is_directive_head(rline l)
{
	char t[64];
	clean(l.s, l.n < 60 ? l.n : 60, true, t, sizeof t);
	return strncasecmp(t, "DIRECTIVE", 9) == 0 && (t[9] == ':' || t[9] == '\0');
}

static void dims_list(const cuco_workload *wl, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < wl->ndims && used + 1 < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", wl->dims[i].name);
}

/* Reading a directive: what was stated where, so that a name stated twice
 * is refused (which value was meant is unknowable). */
typedef struct dir_reader {
	const cuco_workload *wl;
	cuco_directive *d;
	cuco_err *err;
	struct { char key[32]; size_t line; } seen[64];  /* more than dimensions and knobs together */
	size_t stated;
} dir_reader;

static int dir_set(dir_reader *r, size_t line, const char *name, const char *val)
{
	char key[32];
	cuco_strlcpy(key, name, sizeof key);
	for (char *p = key; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (r->wl && !cuco_workload_dim(r->wl, key)) {
		char dims[512];
		dims_list(r->wl, dims, sizeof dims);
		return cuco_errf(r->err, CUCO_EDATA, "directive line %zu: `%s` is not a dimension of %s "
			"(%s)", line, key, r->wl->name, dims);
	}
	for (size_t k = 0; k < r->stated && k < sizeof r->seen / sizeof *r->seen; k++)
		if (strcmp(r->seen[k].key, key) == 0)
			return cuco_errf(r->err, CUCO_EDATA, "directive line %zu: `%s` stated twice (first on "
				"line %zu); state each dimension once", line, key, r->seen[k].line);
	/* The schema's line copied whole: `backend: msg | rma | shm`. */
	if (strchr(val, '|'))
		return cuco_errf(r->err, CUCO_EDATA, "directive line %zu: `%s: %.80s` lists the allowed "
			"values; state one of them", line, key, val);
	if (!*val || cuco_directive_set(r->d, key, val) != CUCO_OK)
		return cuco_errf(r->err, CUCO_EDATA, "directive line %zu: cannot set %s to `%s`", line, key,
			val);
	if (r->stated < sizeof r->seen / sizeof *r->seen) {
		memcpy(r->seen[r->stated].key, key, sizeof key);
		r->seen[r->stated].line = line;
	}
	r->stated++;
	return CUCO_OK;
}

/* cuco's short notation, as every view prints a directive
 * (cuco_directive_short): "rma/one/interleave/flag/8", `-` for a field
 * the parent's keeps. */
static int dir_short(dir_reader *r, size_t line, const char *val)
{
	char part[CUCO_DIRDIM_COUNT][32];
	int n = 0;
	for (const char *p = val; n < CUCO_DIRDIM_COUNT + 1; n++) {
		size_t len = strcspn(p, "/");
		if (n < CUCO_DIRDIM_COUNT)
			clean(p, len, false, part[n], sizeof part[n]);
		if (!p[len]) {
			n++;
			break;
		}
		p += len + 1;
	}
	if (n != CUCO_DIRDIM_COUNT)
		return cuco_errf(r->err, CUCO_EDATA, "directive line %zu: `%.80s` is not the short notation "
			"(backend/issuer/placement/sync/granularity, `-` for the parent's value); state one "
			"`name: value` line per dimension", line, val);
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++) {
		int rc = strcmp(part[i], "-") == 0 ? CUCO_OK
			: dir_set(r, line, cuco_dirdim_name((cuco_dirdim)i), part[i]);
		if (rc != CUCO_OK)
			return rc;
	}
	return CUCO_OK;
}

/* Whether a `name:` or `name=` starts at s[i]: a word after the start,
 * a space, a separator or markdown, then `:` or `=`. */
static bool pair_at(const char *s, size_t i, size_t *name_len, size_t *value_at)
{
	if (i > 0 && !isspace((unsigned char)s[i - 1]) && !strchr(",;*`#", s[i - 1]))
		return false;
	if (!isalpha((unsigned char)s[i]) && s[i] != '_')
		return false;
	size_t k = i;
	while (isalnum((unsigned char)s[k]) || s[k] == '_')
		k++;
	*name_len = k - i;
	while (s[k] == '*' || s[k] == '`')
		k++;
	while (s[k] == ' ' || s[k] == '\t')
		k++;
	if (s[k] != ':' && s[k] != '=')
		return false;
	*value_at = k + 1;
	return true;
}

/* Cut a trailing `# comment` (a schema line copied whole) off a line. */
static void cut_comment(char *s)
{
	bool content = false;
	for (char *p = s; *p; p++) {
		if (*p == '#' && content && p > s && isspace((unsigned char)p[-1])) {
			*p = '\0';
			return;
		}
		content |= !isspace((unsigned char)*p) && !strchr("#-*", *p);
	}
}

/* The pairs of one line of a directive: `name: value`, several on a line
 * separated by `,` or `;` (`DIRECTIVE: backend: shm, issuer: one`), with
 * `=` as well as `:` (`tile=256` after a short notation), and the short
 * notation after `backend:` or the head. *any says whether it held one. */
static int dir_line(dir_reader *r, size_t line, const char *s, size_t n, bool head, bool *any)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), s);
	cut_comment(buf);
	size_t name[16], nlen[16], at[16], np = 0;
	for (size_t i = 0; buf[i] && np < 16; i++) {
		size_t len, v;
		if (pair_at(buf, i, &len, &v)) {
			name[np] = i, nlen[np] = len, at[np++] = v;
			i = v - 1;
		}
	}
	*any = np > 0;
	char val[128];
	/* Before any name: the head's own value, `Directive: rma/one/…`. */
	clean(buf, np ? name[0] : strlen(buf), false, val, sizeof val);
	if (head && strchr(val, '/')) {
		*any = true;
		int rc = dir_short(r, line, val);
		if (rc != CUCO_OK)
			return rc;
	}
	for (size_t k = 0; k < np; k++) {
		size_t end = k + 1 < np ? name[k + 1] : strlen(buf);
		char key[32];
		snprintf(key, sizeof key, "%.*s", (int)(nlen[k] < 31 ? nlen[k] : 31), buf + name[k]);
		clean(buf + at[k], end - at[k], false, val, sizeof val);
		bool whole = strchr(val, '/') && r->wl && r->wl->ndims > 0 &&
			strcasecmp(key, cuco_dirdim_name(0)) == 0;
		int rc = whole ? dir_short(r, line, val) : dir_set(r, line, key, val);
		if (rc != CUCO_OK)
			return rc;
	}
	return CUCO_OK;
}

/* Whether a line (before the code, in a reply without a DIRECTIVE head)
 * starts with a dimension's `name:`, as `# Backend: …` or `**sync**: …`. */
static bool dimension_line(rline l, const cuco_workload *wl)
{
	char buf[96], key[32];
	clean(l.s, l.n < 90 ? l.n : 90, true, buf, sizeof buf);
	size_t len, v;
	if (!wl || !pair_at(buf, 0, &len, &v))
		return false;
	snprintf(key, sizeof key, "%.*s", (int)(len < 31 ? len : 31), buf);
	for (char *p = key; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return cuco_workload_dim(wl, key) != NULL;
}

/* The directive from line `first` on (the head's own value first when
 * `head`), up to a blank line or a line that states nothing. */
static int parse_directive(const rlines *ls, size_t first, bool head, const cuco_workload *wl,
	cuco_directive *d, cuco_err *err)
{
	dir_reader r = { .wl = wl, .d = d, .err = err };
	for (size_t i = first; i < ls->n; i++) {
		rline l = ls->v[i];
		bool any = false;
		if (i == first && head) {
			const char *colon = memchr(l.s, ':', l.n);
			size_t off = colon ? (size_t)(colon + 1 - l.s) : l.n;
			int rc = dir_line(&r, i + 1, l.s + off, l.n - off, true, &any);
			if (rc != CUCO_OK)
				return rc;
			continue;
		}
		if (rtrim_n(l.s, l.n) == 0 || is_fence(l) || is_search(l) || l.s[0] == '<')
			break;
		int rc = dir_line(&r, i + 1, l.s, l.n, false, &any);
		if (rc != CUCO_OK)
			return rc;
		if (!any)
			break;
	}
	if (r.stated == 0)
		return cuco_errf(err, CUCO_EDATA, "directive line %zu: DIRECTIVE states no `name: value` "
			"line", first + 1);
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
			out->hunks[out->nhunks++] = (cuco_hunk){ search.data, replace.data, start, false };
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

/* The directive read must lie in the design space and break no constraint. */
static int valid_directive(const cuco_workload *wl, cuco_reply *out, cuco_err *err)
{
	cuco_err why = { 0 };
	if (!wl || cuco_directive_valid(wl, &out->directive, &why))
		return CUCO_OK;
	out->directive_refused = true;
	return cuco_errf(err, CUCO_EDATA, "directive outside the design space: %s", why.msg);
}

/* A directive and nothing else, where a change of code is asked for. */
static int no_code(cuco_err *err)
{
	return cuco_errf(err, CUCO_EDATA, "reply holds no code, only a directive: give the change as "
		"SEARCH/REPLACE hunks (or the whole file)");
}

/* ---- the JSON of structured output ---------------------------------------------- */

/* Where a JSON reply starts: its first character, or inside a ```json
 * fence; NULL when the reply is not one. */
static const char *json_start(const char *text, size_t *len)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '{') {
		*len = strlen(p);
		return p;
	}
	if (strncmp(p, "```", 3) != 0)
		return NULL;
	p += strcspn(p, "\n");
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '{')
		return NULL;
	const char *close = strstr(p, "\n```");
	*len = close ? (size_t)(close - p) + 1 : strlen(p);
	return p;
}

/* A string of the JSON as lines, each ending in '\n'. */
static char *json_lines(const cJSON *v)
{
	size_t n = strlen(v->valuestring);
	char *s = cuco_xmalloc(n + 2);
	memcpy(s, v->valuestring, n);
	if (n > 0 && s[n - 1] != '\n')
		s[n++] = '\n';
	s[n] = '\0';
	return s;
}

static int json_directive(const cJSON *o, const cuco_workload *wl, cuco_reply *out, cuco_err *err)
{
	if (!cJSON_IsObject(o))
		return cuco_errf(err, CUCO_EDATA, "JSON reply: `directive` is not an object of "
			"`name: value`");
	dir_reader r = { .wl = wl, .d = &out->directive, .err = err };
	const cJSON *v;
	cJSON_ArrayForEach(v, o) {
		char val[64];
		if (cJSON_IsString(v))
			cuco_strlcpy(val, v->valuestring, sizeof val);
		else if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble)
			snprintf(val, sizeof val, "%lld", (long long)v->valuedouble);
		else
			return cuco_errf(err, CUCO_EDATA, "JSON reply: directive.%.40s is not a string or a "
				"whole number", v->string);
		int rc = dir_set(&r, 1, v->string, val);
		if (rc != CUCO_OK)
			return rc;
	}
	out->has_directive = true;
	return CUCO_OK;
}

static int json_strings(const cJSON *a, const char *what, char ***out, int *n, cuco_err *err)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, a) {
		if (!cJSON_IsString(v))
			return cuco_errf(err, CUCO_EDATA, "JSON reply: %s[%d] is not a string", what, *n);
		*out = cuco_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
		(*out)[(*n)++] = json_lines(v);
	}
	return CUCO_OK;
}

/* Each edit: `search` and `replace`, or `function` (a name) and `text`
 * (its whole new definition). */
static int json_edits(const cJSON *a, cuco_reply *out, cuco_err *err)
{
	const cJSON *e;
	int i = 0;
	cJSON_ArrayForEach(e, a) {
		bool fn = cJSON_GetObjectItemCaseSensitive(e, "function") != NULL;
		const char *const keys[2][2] = { { "search", "replace" }, { "function", "text" } };
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, keys[fn][0]);
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, keys[fn][1]);
		if (!cJSON_IsString(s) || !cJSON_IsString(r))
			return cuco_errf(err, CUCO_EDATA, "JSON reply: edits[%d].%s is not a string", i,
				keys[fn][cJSON_IsString(s)]);
		out->hunks = cuco_xrealloc(out->hunks, (size_t)(out->nhunks + 1) * sizeof *out->hunks);
		out->hunks[out->nhunks++] = (cuco_hunk){ json_lines(s), *r->valuestring ? json_lines(r)
			: cuco_xstrdup(""), i + 1, fn };
		i++;
	}
	return CUCO_OK;
}

static const char *const json_keys[CUCO_REPLY_KIND_COUNT] = {
#define X(e, key, help) key,
	CUCO_REPLY_KINDS(X)
#undef X
};

const char *cuco_reply_json_key(cuco_reply_kind k)
{
	return (unsigned)k < CUCO_REPLY_KIND_COUNT ? json_keys[k] : NULL;
}

/* A reply as structured output writes it (docs/replies.md): the
 * directive as an object, then the edits, the blocks' new text, or the
 * whole file; none of them is a directive-only child. */
static int parse_json(const char *j, size_t len, const cuco_workload *wl, bool alone,
	cuco_reply *out, cuco_err *err)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(j, len, &end, false);
	if (!root)
		return cuco_errf(err, CUCO_EDATA, "JSON reply is cut off or not JSON (at byte %zu of %zu)",
			end ? (size_t)(end - j) : 0, len);
	int rc = CUCO_OK;
	const cJSON *dir = cJSON_GetObjectItemCaseSensitive(root, "directive");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
	const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
	const cJSON *edits = cJSON_GetObjectItemCaseSensitive(root, json_keys[CUCO_REPLY_DIFF]);
	const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(root, json_keys[CUCO_REPLY_BLOCKS]);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, json_keys[CUCO_REPLY_FULL]);
	if (dir)
		rc = json_directive(dir, wl, out, err);
	else if (wl)
		rc = cuco_errf(err, CUCO_EDATA, "JSON reply states no `directive`");
	out->directive_refused = rc != CUCO_OK;
	if (rc == CUCO_OK)
		rc = valid_directive(wl, out, err);
	if (cJSON_IsString(name))
		one_line(name->valuestring, strlen(name->valuestring), out->name, sizeof out->name);
	if (cJSON_IsString(desc))
		one_line(desc->valuestring, strlen(desc->valuestring), out->description,
			sizeof out->description);
	out->kind = CUCO_REPLY_DIRECTIVE;
	if (rc == CUCO_OK && cJSON_GetArraySize(edits) > 0) {
		out->kind = CUCO_REPLY_DIFF;
		rc = json_edits(edits, out, err);
	} else if (rc == CUCO_OK && cJSON_GetArraySize(blocks) > 0) {
		out->kind = CUCO_REPLY_BLOCKS;
		rc = json_strings(blocks, json_keys[CUCO_REPLY_BLOCKS], &out->blocks, &out->nblocks,
			err);
	} else if (rc == CUCO_OK && cJSON_IsString(code)) {
		out->kind = CUCO_REPLY_FULL;
		out->code = json_lines(code);
		rc = empty_code(&out->code, err);
	} else if (rc == CUCO_OK && (edits || blocks || code) && !cJSON_IsArray(edits ? edits : blocks ?
			blocks : code)) {
		cuco_reply_kind k = edits ? CUCO_REPLY_DIFF : blocks ? CUCO_REPLY_BLOCKS : CUCO_REPLY_FULL;
		rc = cuco_errf(err, CUCO_EDATA, "JSON reply: `%s` is not %s", json_keys[k],
			k == CUCO_REPLY_FULL ? "a string" : "an array");
	} else if (rc == CUCO_OK && !alone) {
		rc = no_code(err);
	}
	cJSON_Delete(root);
	return rc;
}

/* <BLOCK>…</BLOCK> tags, in order: each EVOLVE-BLOCK's new text. */
static int parse_block_tags(const char *text, cuco_reply *out, cuco_err *err)
{
	for (const char *p = text; (p = strstr(p, "<BLOCK>"));) {
		const char *s;
		size_t n, off;
		int rc = tag(p, "BLOCK", &s, &n, &off, err);
		if (rc != CUCO_OK)
			return rc;
		char *code;
		if ((rc = tagged_code(s, n, &code, err)) != CUCO_OK)
			return rc;
		out->blocks = cuco_xrealloc(out->blocks, (size_t)(out->nblocks + 1) * sizeof *out->blocks);
		out->blocks[out->nblocks++] = code;
		p = s + n;
	}
	if (out->nblocks > 0)
		out->kind = CUCO_REPLY_BLOCKS;
	return CUCO_OK;
}

/* Where the directive is: a DIRECTIVE head, else (with a workload) the
 * first line before the code that starts with a dimension's name; false
 * when there is neither. */
static bool find_directive(const rlines *ls, size_t code_at, const cuco_workload *wl, size_t *at,
	bool *head)
{
	for (size_t i = 0; i < ls->n; i++) {
		if (is_directive_head(ls->v[i])) {
			*at = i;
			*head = true;
			return true;
		}
	}
	for (size_t i = 0; i < ls->n && ls->v[i].off < code_at; i++) {
		if (dimension_line(ls->v[i], wl)) {
			*at = i;
			*head = false;
			return true;
		}
	}
	return false;
}

static int parse(const char *text, const cuco_workload *wl, bool alone, cuco_reply *out,
	cuco_err *err)
{
	size_t jlen;
	const char *j = json_start(text, &jlen);
	if (j)
		return parse_json(j, jlen, wl, alone, out, err);
	rlines ls;
	split(text, &ls);
	size_t code_at = code_start(text, &ls);
	bool code = code_at < strlen(text) || strstr(text, "<BLOCK>");
	int rc = CUCO_OK;
	size_t at;
	bool head;
	if (find_directive(&ls, code_at, wl, &at, &head)) {
		out->has_directive = true;
		if (ls.v[at].off > code_at)
			rc = cuco_errf(err, CUCO_EDATA, "directive line %zu: DIRECTIVE comes after the code; "
				"state it before any code", at + 1);
		else
			rc = parse_directive(&ls, at, head, wl, &out->directive, err);
	}
	if (rc == CUCO_OK && wl && !out->has_directive)
		rc = code ? cuco_errf(err, CUCO_EDATA, "reply states no DIRECTIVE before its code")
			: cuco_errf(err, CUCO_EDATA, "reply states no DIRECTIVE and holds no code: state the "
				"directive, then the change");
	out->directive_refused = rc != CUCO_OK;
	if (rc == CUCO_OK)
		rc = valid_directive(wl, out, err);
	if (rc == CUCO_OK)
		rc = parse_tags(text, out, err);
	if (rc == CUCO_OK && !code && out->has_directive)
		rc = alone ? (out->kind = CUCO_REPLY_DIRECTIVE, CUCO_OK) : no_code(err);
	else if (rc == CUCO_OK && (rc = parse_block_tags(text, out, err)) == CUCO_OK && !out->nblocks)
		rc = parse_code(text, &ls, out, err);
	free(ls.v);
	return rc;
}

/* A hunk's one line as `name: value` of one of the workload's dimensions
 * or knobs (markdown around it taken off), into key and val. */
static bool directive_pair(const char *line, const cuco_workload *wl, char *key, char *val,
	size_t vsize)
{
	size_t n = strlen(line);
	if (n == 0 || line[n - 1] != '\n' || memchr(line, '\n', n - 1))
		return false;  /* one line only */
	char buf[160];
	clean(line, n - 1 < 150 ? n - 1 : 150, true, buf, sizeof buf);
	size_t len, at;
	if (!pair_at(buf, 0, &len, &at) || len > 31)
		return false;
	snprintf(key, 32, "%.*s", (int)len, buf);
	for (char *p = key; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	clean(buf + at, strlen(buf + at), false, val, vsize);
	return cuco_workload_dim(wl, key) != NULL && *val && !strpbrk(val, " \t(){};=");
}

/* A hunk's one line as a whole directive in cuco's short notation, as the
 * prompt shows the parent's (`msg/one/after/fence/1 tile=512`, maybe
 * after `directive:`), read over base into d. */
static bool short_directive(const char *line, const cuco_workload *wl, const cuco_directive *base,
	cuco_directive *d)
{
	size_t n = strlen(line);
	if (!base || n == 0 || line[n - 1] != '\n' || memchr(line, '\n', n - 1))
		return false;
	char buf[256];
	clean(line, n - 1 < 250 ? n - 1 : 250, true, buf, sizeof buf);
	const char *s = strncasecmp(buf, "directive:", 10) == 0 ? buf + 10 : buf;
	cuco_err err;
	dir_reader r = { .wl = wl, .d = d, .err = &err };
	bool any = false;
	*d = *base;
	return strchr(s, '/') && dir_line(&r, 1, s, strlen(s), true, &any) == CUCO_OK && any;
}

/* A hunk from one short notation to another: the key and value of the
 * first dimension it changes (the rest are taken by the caller). */
static bool short_change(const cuco_workload *wl, const cuco_directive *from,
	const cuco_directive *to, char *key, char *val, size_t vsize)
{
	for (int d = 0; d < wl->ndims; d++) {
		const char *name = wl->dims[d].name;
		if (strcmp(cuco_directive_value(from, name), cuco_directive_value(to, name)) != 0) {
			cuco_strlcpy(key, name, 32);
			cuco_strlcpy(val, cuco_directive_value(to, name), vsize);
			return true;
		}
	}
	return false;
}

/* A hunk's text as one bare word (letters, digits, `_`, `-`) on one line. */
static bool one_word(const char *text, char word[32])
{
	text += strspn(text, " \t");
	size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (n == 0 || n > 31 || text[n + strspn(text + n, " \t\r\n")] != '\0')
		return false;
	snprintf(word, 32, "%.*s", (int)n, text);
	return true;
}

/* A hunk from the parent's value of one dimension, alone, to another value
 * that dimension allows (`shm` into `rma`: no program has such a line):
 * that dimension and value into key and val. A value two dimensions hold
 * says nothing. */
static bool bare_value(const cuco_hunk *h, const cuco_workload *wl, const cuco_directive *base,
	char *key, char *val, size_t vsize)
{
	char from[32], to[32];
	if (!base || h->function || !one_word(h->search, from) || !one_word(h->replace, to))
		return false;
	int hit = -1;
	for (int d = 0; d < wl->ndims; d++)
		if (strcmp(cuco_directive_value(base, wl->dims[d].name), from) == 0) {
			if (hit >= 0)
				return false;
			hit = d;
		}
	if (hit < 0)
		return false;
	char (*vals)[32] = cuco_xmalloc(CUCO_DIM_LISTED * sizeof *vals);
	int n = cuco_dim_values(&wl->dims[hit], vals);
	bool allowed = false;
	for (int i = 0; i < n; i++)
		allowed |= strcmp(vals[i], to) == 0;
	free(vals);
	cuco_strlcpy(key, wl->dims[hit].name, 32);
	cuco_strlcpy(val, to, vsize);
	return allowed;
}

/* Hunks that edit the directive as if it were a line of the program
 * (`sync: pscw` into `sync: flag`, `pscw` into `flag`, or one short
 * notation into another):
 * the program holds no such line, and the directive is where the change
 * is stated. Each is set aside, its values taken where the stated
 * directive kept the parent's; a reply left with no hunk is a
 * directive-only child where one may be. */
static int directive_hunks(const cuco_workload *wl, const cuco_directive *base, bool alone,
	cuco_reply *out, cuco_err *err)
{
	char key[32], old[32], val[64], said[128] = "";
	int kept = 0, rc = CUCO_OK;
	for (int i = 0; i < out->nhunks; i++) {
		cuco_hunk *h = &out->hunks[i];
		cuco_directive from, to;
		bool whole = rc == CUCO_OK && !h->function && short_directive(h->search, wl, base, &from) &&
			short_directive(h->replace, wl, base, &to);
		if (whole) {
			/* Each dimension it changes, as a pair of its own. */
			while (rc == CUCO_OK && short_change(wl, &from, &to, key, val, sizeof val)) {
				const char *now = cuco_directive_value(&out->directive, key);
				if (strcmp(now, cuco_directive_value(base, key)) == 0)
					rc = cuco_directive_set(&out->directive, key, val);
				cuco_directive_set(&from, key, val);
				if (!*said)
					snprintf(said, sizeof said, "%s: %s", key, val);
			}
			free(h->search);
			free(h->replace);
			out->set_aside++;
			continue;
		}
		bool pair = directive_pair(h->search, wl, key, old, sizeof old) &&
			directive_pair(h->replace, wl, old, val, sizeof val) && strcmp(key, old) == 0;
		if (rc != CUCO_OK || !(pair || bare_value(h, wl, base, key, val, sizeof val))) {
			out->hunks[kept++] = *h;
			continue;
		}
		const char *now = cuco_directive_value(&out->directive, key);
		const char *was = base ? cuco_directive_value(base, key) : NULL;
		if (now && was && strcmp(now, was) == 0 && cuco_directive_set(&out->directive, key, val)
				!= CUCO_OK) {
			rc = cuco_errf(err, CUCO_EDATA, "hunk %d (`%s: %s`): cannot set %s to `%s`", h->line,
				key, val, key, val);
			out->hunks[kept++] = *h;
			continue;
		}
		if (!*said)
			snprintf(said, sizeof said, "%s: %s", key, val);
		free(h->search);
		free(h->replace);
		out->set_aside++;
	}
	out->nhunks = kept;
	if (rc != CUCO_OK || !out->set_aside)
		return rc;
	rc = valid_directive(wl, out, err);
	if (rc == CUCO_OK && !kept && !alone)
		return cuco_errf(err, CUCO_EDATA, "reply holds no code: its edits only restate the "
			"directive (`%s`), which the directive states; give the change of code as "
			"SEARCH/REPLACE hunks", said);
	if (rc == CUCO_OK && !kept)
		out->kind = CUCO_REPLY_DIRECTIVE;
	return rc;
}

/* Whether a hunk's text is the reply form's own placeholder line. */
static bool is_placeholder(const char *text, const char *placeholder)
{
	size_t n = strlen(placeholder);
	text += strspn(text, " \t");
	return strncmp(text, placeholder, n) == 0 && text[n + strspn(text + n, " \t\r\n")] == '\0';
}

/* The reply form's own edit sent back (SEARCH and REPLACE its two
 * placeholders: a small model copies the end of its prompt) is no edit:
 * it is set aside, and a reply left with no hunk is a directive-only child
 * where one may be (edit.c refuses it when the directive is the parent's,
 * saying it was the form sent back), else refused as the form itself. */
static int form_hunks(bool alone, cuco_reply *out, cuco_err *err)
{
	int kept = 0;
	for (int i = 0; i < out->nhunks; i++) {
		cuco_hunk *h = &out->hunks[i];
		if (!is_placeholder(h->search, CUCO_SEARCH_PLACEHOLDER) ||
				!is_placeholder(h->replace, CUCO_REPLACE_PLACEHOLDER)) {
			out->hunks[kept++] = *h;
			continue;
		}
		free(h->search);
		free(h->replace);
		out->echoed = true;
	}
	out->nhunks = kept;
	if (!out->echoed || kept)
		return CUCO_OK;
	if (!alone)
		return cuco_errf(err, CUCO_EDATA, "reply is the reply form sent back: its only edit is "
			"the form's placeholder (`" CUCO_SEARCH_PLACEHOLDER "`); give the change of code as "
			"edits whose SEARCH is lines copied from the program above");
	out->kind = CUCO_REPLY_DIRECTIVE;
	return CUCO_OK;
}

static int parse_reply(const char *text, const cuco_workload *wl, const cuco_directive *base,
	bool alone, cuco_reply *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	if (base)
		out->directive = *base;
	char *copy = cuco_xstrdup(text);
	int rc = blank_thinking(copy, err);
	if (rc == CUCO_OK)
		rc = parse(copy, wl, alone, out, err);
	if (rc == CUCO_OK && out->kind == CUCO_REPLY_DIFF)
		rc = form_hunks(alone, out, err);
	if (rc == CUCO_OK && wl && out->kind == CUCO_REPLY_DIFF)
		rc = directive_hunks(wl, base, alone, out, err);
	free(copy);
	if (rc != CUCO_OK)
		cuco_reply_free(out);
	return rc;
}

int cuco_reply_parse(const char *text, const cuco_workload *wl, const cuco_directive *base,
	cuco_reply *out, cuco_err *err)
{
	return parse_reply(text, wl, base, false, out, err);
}

int cuco_reply_parse_any(const char *text, const cuco_workload *wl, const cuco_directive *base,
	cuco_reply *out, cuco_err *err)
{
	return parse_reply(text, wl, base, true, out, err);
}

void cuco_reply_free(cuco_reply *r)
{
	for (int i = 0; i < r->nhunks; i++) {
		free(r->hunks[i].search);
		free(r->hunks[i].replace);
	}
	for (int i = 0; i < r->nblocks; i++)
		free(r->blocks[i]);
	free(r->hunks);
	free(r->blocks);
	free(r->code);
	r->hunks = NULL;
	r->blocks = NULL;
	r->code = NULL;
	r->nhunks = r->nblocks = 0;
}
