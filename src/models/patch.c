/* patch.c — apply a parsed reply to its parent's source.
 *
 * The rules come from how other appliers fail (docs/replies.md says which):
 * every hunk is located in the same unedited parent, so a later hunk never
 * matches text an earlier one wrote; a match must be unique, never "the
 * first hit"; matching loosens one step at a time, stops at the first step
 * that finds anything, and the step is recorded; nothing is produced unless
 * every hunk applies. The parent's line endings and final newline are kept.
 */
#include "models/models.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct line {
	const char *s;
	size_t n;  /* without the line ending */
} line;

typedef struct lines {
	line *v;
	size_t n;
} lines;

/* The indentation a loose match found: the parent's lines carry `pre`
 * more (dir > 0) or less (dir < 0) leading whitespace than the SEARCH's. */
typedef struct shift {
	int dir;
	size_t n;
	char pre[128];
} shift;

/* Where one hunk landed in the parent. */
typedef struct placed {
	size_t at, len;     /* window of parent lines the SEARCH covers */
	size_t lo, hi;      /* the parent lines it changes, [lo, hi) */
	size_t rlo, rhi;    /* the replacement lines that differ, [rlo, rhi) */
	shift sh;
	cuco_match level;
	lines repl;
	char *own;          /* the rewritten line a part-of-line match made, which repl holds */
	bool unchanged;     /* its REPLACE is its SEARCH, whitespace aside (same_code): set
	                       aside beside others */
	bool unbuilt;       /* every line it changes lies in a branch the reply's directive
	                       does not build (in_unbuilt_branch): set aside the same way */
} placed;

static const char *const match_names[CUCO_MATCH_COUNT] = {
#define X(e, name, help) name,
	CUCO_MATCH_LEVELS(X)
#undef X
};

const char *cuco_match_name(cuco_match m)
{
	return m < CUCO_MATCH_COUNT ? match_names[m] : "?";
}

/* Split into lines without their endings (a '\r' before '\n' goes too);
 * a last line without '\n' still counts. */
static void split(const char *text, size_t len, lines *out)
{
	size_t cap = 16;
	out->v = cuco_xmalloc(cap * sizeof *out->v);
	out->n = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t n = end - i;
		if (nl && n > 0 && text[end - 1] == '\r')
			n--;
		if (out->n == cap) {
			cap *= 2;
			out->v = cuco_xrealloc(out->v, cap * sizeof *out->v);
		}
		out->v[out->n++] = (line){ text + i, n };
		i = end + 1;
	}
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static size_t rtrim(line l)
{
	while (l.n > 0 && is_space(l.s[l.n - 1]))
		l.n--;
	return l.n;
}

static size_t indent_of(line l)
{
	size_t i = 0;
	while (i < l.n && (l.s[i] == ' ' || l.s[i] == '\t'))
		i++;
	return i;
}

/* Typographic characters models write where code has ASCII: UTF-8 bytes
 * and the ASCII they stand for. */
static const struct { const char *utf8; char ascii; } typo[] = {
	{ "\xe2\x80\x98", '\'' }, { "\xe2\x80\x99", '\'' }, { "\xe2\x80\x9a", '\'' },
	{ "\xe2\x80\x9b", '\'' }, { "\xe2\x80\x9c", '"' }, { "\xe2\x80\x9d", '"' },
	{ "\xe2\x80\x9e", '"' }, { "\xe2\x80\x9f", '"' }, { "\xe2\x80\x90", '-' },
	{ "\xe2\x80\x91", '-' }, { "\xe2\x80\x92", '-' }, { "\xe2\x80\x93", '-' },
	{ "\xe2\x80\x94", '-' }, { "\xe2\x80\x95", '-' }, { "\xe2\x88\x92", '-' },
	{ "\xc2\xa0", ' ' },
};

/* The ASCII form of every line, in one buffer that *buf owns (the form
 * never grows, so the source's size is enough). */
static void ascii_form(const lines *in, lines *out, char **buf)
{
	size_t total = 0;
	for (size_t i = 0; i < in->n; i++)
		total += in->v[i].n;
	char *p = *buf = cuco_xmalloc(total + 1);
	out->v = cuco_xmalloc((in->n ? in->n : 1) * sizeof *out->v);
	out->n = in->n;
	for (size_t i = 0; i < in->n; i++) {
		const char *s = in->v[i].s;
		size_t n = in->v[i].n, k = 0;
		out->v[i].s = p;
		while (k < n) {
			size_t t = 0;
			for (; t < sizeof typo / sizeof typo[0]; t++) {
				size_t tl = strlen(typo[t].utf8);
				if (k + tl <= n && memcmp(s + k, typo[t].utf8, tl) == 0) {
					*p++ = typo[t].ascii;
					k += tl;
					break;
				}
			}
			if (t == sizeof typo / sizeof typo[0])
				*p++ = s[k++];
		}
		out->v[i].n = (size_t)(p - out->v[i].s);
	}
}

/* The ASCII form, made on first use: most hunks match before the last
 * level and never need it. */
typedef struct lazy_ascii {
	lines l;
	char *buf;
	bool made;
} lazy_ascii;

static const lines *ascii_of(const lines *in, lazy_ascii *a)
{
	if (!a->made)
		ascii_form(in, &a->l, &a->buf);
	a->made = true;
	return &a->l;
}

static void lazy_ascii_free(lazy_ascii *a)
{
	if (a->made) {
		free(a->l.v);
		free(a->buf);
	}
}

static bool same(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && memcmp(a, b, an) == 0;
}

/* One line pair under the indentation rule; *sh is fixed by the first
 * non-blank pair and every later pair must agree with it. */
static bool indent_match(line f, line s, shift *sh, bool *fixed)
{
	f.n = rtrim(f);
	s.n = rtrim(s);
	if (f.n == 0 || s.n == 0)
		return f.n == s.n;
	size_t fi = indent_of(f), si = indent_of(s);
	if (!same(f.s + fi, f.n - fi, s.s + si, s.n - si))
		return false;
	/* The longer indentation must end with the shorter one. */
	const char *longer = fi >= si ? f.s : s.s;
	size_t ln = fi >= si ? fi : si, sn = fi >= si ? si : fi;
	if (!same(longer + ln - sn, sn, fi >= si ? s.s : f.s, sn) || ln - sn >= sizeof sh->pre)
		return false;
	int dir = fi > si ? 1 : fi < si ? -1 : 0;
	if (!*fixed) {
		sh->dir = dir;
		sh->n = ln - sn;
		memcpy(sh->pre, longer, sh->n);
		*fixed = true;
		return true;
	}
	return sh->dir == dir && same(sh->pre, sh->n, longer, ln - sn);
}

/* Whether the SEARCH lines match the file at `at` under `level`. The
 * typography level is the indent level run over the ASCII forms. */
static bool match_at(const lines *file, size_t at, const lines *srch, cuco_match level,
	shift *sh)
{
	bool fixed = false;
	sh->dir = 0;
	sh->n = 0;
	for (size_t i = 0; i < srch->n; i++) {
		line f = file->v[at + i], s = srch->v[i];
		switch (level) {
		case CUCO_MATCH_EXACT:
			if (!same(f.s, f.n, s.s, s.n))
				return false;
			break;
		case CUCO_MATCH_TRAILING_SPACE:
			if (!same(f.s, rtrim(f), s.s, rtrim(s)))
				return false;
			break;
		default:
			if (!indent_match(f, s, sh, &fixed))
				return false;
		}
	}
	return true;
}

/* A short quote of a line for error messages. */
static void quote_from(line l, size_t from, char *buf, size_t size)
{
	size_t i = indent_of(l) + from, n = rtrim(l);
	size_t len = n > i ? n - i : 0;
	if (len > 60)
		len = 60;
	snprintf(buf, size, "%s%.*s%s", from ? "…" : "", (int)len, l.s + i, n - i > 60 ? "…" : "");
}

static void quote(line l, char *buf, size_t size)
{
	quote_from(l, 0, buf, size);
}

/* Two lines quoted where they differ: from a little before their first
 * differing character when that is past what a quote shows (issue 26: two
 * quotes of 60 characters read the same, and the model sent its SEARCH
 * back three times). */
static void quote_pair(line f, line s, char *fq, char *sq, size_t size)
{
	size_t fi = indent_of(f), si = indent_of(s), fn = rtrim(f), sn = rtrim(s), d = 0;
	while (fi + d < fn && si + d < sn && f.s[fi + d] == s.s[si + d])
		d++;
	size_t from = d > 50 ? d - 20 : 0;
	quote_from(f, from, fq, size);
	quote_from(s, from, sq, size);
}

/* Two lines equal once their indentation and trailing space are set aside. */
static bool trimmed_same(line f, line s)
{
	size_t fi = indent_of(f), si = indent_of(s), fn = rtrim(f), sn = rtrim(s);
	return same(f.s + fi, fn > fi ? fn - fi : 0, s.s + si, sn > si ? sn - si : 0);
}

/* A line that says something: not blank, not a lone brace or the like,
 * which match anywhere and point nowhere. */
static bool telling(line l)
{
	size_t i = indent_of(l), n = rtrim(l), k = 0;
	for (; i < n; i++)
		k += !strchr("{}();,", l.s[i]);
	return k >= 2;
}

/* How alike two lines are: the characters their trimmed texts share at
 * the start and at the end. */
static size_t likeness(line f, line s)
{
	size_t fi = indent_of(f), si = indent_of(s), fn = rtrim(f), sn = rtrim(s);
	size_t a = 0, b = 0;
	while (fi + a < fn && si + a < sn && f.s[fi + a] == s.s[si + a])
		a++;
	while (fn - b > fi + a && sn - b > si + a && f.s[fn - 1 - b] == s.s[sn - 1 - b])
		b++;
	return a + b;
}

/* The offset (parent line − SEARCH line) where most telling SEARCH lines
 * line up with the parent; false when none is anywhere in it. */
static bool best_offset(const lines *file, const lines *srch, long *off)
{
	size_t best = 0;
	for (size_t i = 0; i < srch->n; i++) {
		if (!telling(srch->v[i]))
			continue;
		for (size_t p = 0; p < file->n; p++) {
			if (!trimmed_same(file->v[p], srch->v[i]))
				continue;
			long o = (long)p - (long)i;
			size_t votes = 0;
			for (size_t k = 0; k < srch->n; k++) {
				long at = (long)k + o;
				votes += at >= 0 && at < (long)file->n && telling(srch->v[k]) &&
					trimmed_same(file->v[at], srch->v[k]);
			}
			if (votes > best) {
				best = votes;
				*off = o;
			}
		}
	}
	return best > 0;
}

/* What the model most likely meant, for a SEARCH that matches nothing:
 * its lines lined up with the parent where most of its telling lines
 * are, then the first line that differs (a parent line the SEARCH left
 * out is said as that); when none of its lines is in the parent, the
 * parent line most like its first telling line. */
static void closest(const lines *file, const lines *srch, char *buf, size_t size)
{
	char fq[96], sq[96];
	*buf = '\0';
	long off = 0;  /* set whenever best_offset says so; gcc 13 cannot see it */
	if (best_offset(file, srch, &off)) {
		for (size_t i = 0; i < srch->n; i++) {
			long at = (long)i + off;
			if (at < 0 || at >= (long)file->n)
				break;
			line f = file->v[at], s = srch->v[i];
			if (same(f.s, rtrim(f), s.s, rtrim(s)))
				continue;
			quote(f, fq, sizeof fq);
			if (at + 1 < (long)file->n && telling(s) && trimmed_same(file->v[at + 1], s)) {
				snprintf(buf, size, "; the parent has line %ld `%s` there, which the SEARCH leaves "
					"out; quote every line", at + 1, fq);
				return;
			}
			quote_pair(f, s, fq, sq, sizeof fq);
			snprintf(buf, size, "; closest is line %ld, where the parent has `%s` and the SEARCH `%s`",
				at + 1, fq, sq);
			return;
		}
		return;
	}
	size_t first = 0;
	while (first < srch->n && !telling(srch->v[first]))
		first++;
	if (first == srch->n)
		return;
	size_t best = 0, like = 0;
	for (size_t p = 0; p < file->n; p++) {
		size_t k = likeness(file->v[p], srch->v[first]);
		if (k > like) {
			like = k;
			best = p;
		}
	}
	if (like == 0)
		return;
	quote_pair(file->v[best], srch->v[first], fq, sq, sizeof fq);
	snprintf(buf, size, "; closest is line %zu, where the parent has `%s` and the SEARCH `%s`",
		best + 1, fq, sq);
}

/* A line's text with every run of whitespace as one space, trimmed. */
static void fold_line(line l, cuco_buf *out)
{
	bool any = false, space = false;
	for (size_t i = 0; i < l.n; i++) {
		if (is_space(l.s[i])) {
			space = any;
			continue;
		}
		if (space)
			cuco_buf_append(out, " ", 1);
		space = false;
		any = true;
		cuco_buf_append(out, &l.s[i], 1);
	}
}

/* Lines folded and joined by single spaces (blank ones add nothing). */
static void fold_lines(const lines *ls, size_t from, size_t n, cuco_buf *out)
{
	out->len = 0;
	cuco_buf_append(out, "", 0);
	for (size_t i = from; i < from + n; i++) {
		size_t before = out->len;
		if (before > 0)
			cuco_buf_append(out, " ", 1);
		size_t mark = out->len;
		fold_line(ls->v[i], out);
		if (out->len == mark)
			out->len = before, out->data[before] = '\0';
	}
}

/* The spacing level: windows of the parent, of any number of lines from a
 * non-blank one to a non-blank one, whose folded text is the SEARCH's.
 * Hits (at most 3 positions kept); the first's window in *at and *len. */
static size_t match_spacing(const lines *file, const lines *srch, size_t *where, size_t *at,
	size_t *len)
{
	cuco_buf want = { 0 }, got = { 0 };
	fold_lines(srch, 0, srch->n, &want);
	size_t hits = 0;
	for (size_t a = 0; want.len > 0 && a < file->n; a++) {
		if (rtrim(file->v[a]) == 0)
			continue;
		for (size_t k = 1; a + k <= file->n; k++) {
			fold_lines(file, a, k, &got);
			if (got.len > want.len || memcmp(got.data, want.data, got.len) != 0)
				break;
			if (got.len == want.len && rtrim(file->v[a + k - 1]) > 0) {
				if (hits < 3)
					where[hits] = a;
				if (hits++ == 0) {
					*at = a;
					*len = k;
				}
				break;
			}
		}
	}
	cuco_buf_free(&want);
	cuco_buf_free(&got);
	return hits;
}

/* The part-of-line level: a SEARCH whose one non-blank line is part of a
 * parent line (a small model quotes a call without its `;`, a signature
 * without its `static`: run 2 of bench/results/agents.md), at least
 * PART_MIN characters of it (a name or `true` points nowhere). Hits, and
 * the lines they are on in *nwhere (a part may occur twice in one line;
 * the first 3 kept in where); for the first, that line with the REPLACE (its
 * indentation and final line break set aside) in the part's place,
 * into p. */
#define PART_MIN 12

static size_t match_part(const lines *file, const lines *srch, const char *replace,
	size_t *where, size_t *nwhere, placed *p)
{
	size_t only = 0, nonblank = 0;
	for (size_t i = 0; i < srch->n; i++)
		if (rtrim(srch->v[i]) > 0) {
			only = i;
			nonblank++;
		}
	if (nonblank != 1)
		return 0;
	line s = srch->v[only];
	size_t si = indent_of(s), sn = rtrim(s) - si, hits = 0, last = 0;
	const char *hit = NULL;
	for (size_t a = 0; sn >= PART_MIN && a < file->n; a++) {
		const char *f = file->v[a].s, *end = f + file->v[a].n;
		for (const char *q = f; (q = memmem(q, (size_t)(end - q), s.s + si, sn)); q++) {
			if (*nwhere == 0 || last != a) {
				if (*nwhere < 3)
					where[*nwhere] = a;
				++*nwhere;
				last = a;
			}
			if (hits++ == 0) {
				p->at = a;
				hit = q;
			}
		}
	}
	p->level = CUCO_MATCH_PART;
	if (hits != 1)
		return hits;
	line f = file->v[p->at];
	size_t rn = strlen(replace), ri = strspn(replace, " \t");
	while (rn > ri && (replace[rn - 1] == '\n' || replace[rn - 1] == '\r'))
		rn--;
	cuco_buf b = { 0 };
	cuco_buf_append(&b, f.s, (size_t)(hit - f.s));
	cuco_buf_append(&b, replace + ri, rn - ri);
	cuco_buf_append(&b, hit + sn, (size_t)(f.s + f.n - hit - sn));
	p->own = b.data;
	free(p->repl.v);
	split(p->own, b.len, &p->repl);
	p->len = 1;
	p->sh = (shift){ 0 };
	return 1;
}

/* Where an ambiguous SEARCH matched, each of its nwhere lines once (the
 * first 3 in where): "lines 5, 11", "lines 2, 3, 9, …" when there are
 * more, "all on line 45" when every place is in one line. */
static void places(const size_t *where, size_t nwhere, char *buf, size_t size)
{
	if (nwhere == 1) {
		snprintf(buf, size, "all on line %zu", where[0] + 1);
		return;
	}
	int n = snprintf(buf, size, "lines");
	for (size_t i = 0; i < nwhere && i < 3 && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%s %zu", i ? "," : "", where[i] + 1);
	if (nwhere > 3 && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", …");
}

/* Locate hunk h: the first level with any match decides; more than one
 * match there is ambiguous. */
static int locate(const lines *file, lazy_ascii *afile, const cuco_hunk *h, int num,
	placed *p, cuco_err *err)
{
	lines srch;
	lazy_ascii asrch = { 0 };
	split(h->search, strlen(h->search), &srch);
	char first[96] = "";
	size_t nonblank = 0;
	for (size_t i = 0; i < srch.n; i++)
		if (rtrim(srch.v[i]) > 0 && nonblank++ == 0)
			quote(srch.v[i], first, sizeof first);
	if (nonblank == 0) {
		free(srch.v);
		return cuco_errf(err, CUCO_EDATA, "hunk %d: SEARCH is empty; quote the lines to change "
			"(to insert, quote the lines around the insertion)", num);
	}
	int rc = CUCO_OK;
	size_t hits = 0, where[3], nwhere = 0;  /* the lines matched, each once; 3 kept */
	for (int lv = 0; lv < CUCO_MATCH_COUNT && hits == 0; lv++) {
		if (lv == CUCO_MATCH_SPACING) {
			hits = match_spacing(file, &srch, where, &p->at, &p->len);
			nwhere = hits;
			p->sh = (shift){ 0 };
			p->level = CUCO_MATCH_SPACING;
			if (hits == 0)
				hits = match_part(file, &srch, h->replace, where, &nwhere, p);
			break;
		}
		const lines *f = lv == CUCO_MATCH_TYPOGRAPHY ? ascii_of(file, afile) : file;
		const lines *s = lv == CUCO_MATCH_TYPOGRAPHY ? ascii_of(&srch, &asrch) : &srch;
		for (size_t at = 0; at + s->n <= f->n; at++) {
			shift sh;
			if (!match_at(f, at, s, (cuco_match)lv, &sh))
				continue;
			if (hits < 3)
				where[hits] = at;
			nwhere++;
			if (hits++ == 0) {
				p->at = at;
				p->len = s->n;
				p->sh = sh;
				p->level = (cuco_match)lv;
			}
		}
	}
	if (hits == 0 && strstr(h->search, CUCO_SEARCH_PLACEHOLDER)) {
		rc = cuco_errf(err, CUCO_EDATA, "hunk %d: its SEARCH is the reply form's placeholder, not "
			"lines of the program; copy the lines to change from the program", num);
	} else if (hits == 0) {
		char near[320];
		closest(file, &srch, near, sizeof near);
		rc = cuco_errf(err, CUCO_EDATA, "hunk %d (`%s`): SEARCH matches nothing in the parent%s",
			num, first, near);
	} else if (hits > 1) {
		char at[80];
		places(where, nwhere, at, sizeof at);
		rc = cuco_errf(err, CUCO_EDATA, "hunk %d (`%s`): SEARCH matches %zu places (%s) at "
			"level %s; quote more lines to make it unique", num, first, hits, at,
			cuco_match_name(p->level));
	}
	free(srch.v);
	lazy_ascii_free(&asrch);
	return rc;
}

/* One replacement line, with the hunk's indentation shift applied. */
static void emit_repl(cuco_buf *out, line l, const shift *sh)
{
	if (sh->dir > 0 && rtrim(l) > 0)
		cuco_buf_append(out, sh->pre, sh->n);
	if (sh->dir < 0 && l.n >= sh->n && memcmp(l.s, sh->pre, sh->n) == 0) {
		l.s += sh->n;
		l.n -= sh->n;
	}
	cuco_buf_append(out, l.s, l.n);
}

/* Whether a replacement line, once written, equals the parent's line. */
static bool kept(line f, line r, const shift *sh)
{
	cuco_buf b = { 0 };
	emit_repl(&b, r, sh);
	bool eq = same(f.s, f.n, b.data, b.len);
	cuco_buf_free(&b);
	return eq;
}

/* The lines a placed hunk really changes: its window without the leading
 * and trailing lines the REPLACE writes back unchanged. */
static void changed_range(const lines *file, placed *p)
{
	size_t a = 0, b = 0;
	while (a < p->len && a < p->repl.n && kept(file->v[p->at + a], p->repl.v[a], &p->sh))
		a++;
	while (b < p->len - a && b < p->repl.n - a &&
		kept(file->v[p->at + p->len - 1 - b], p->repl.v[p->repl.n - 1 - b], &p->sh))
		b++;
	p->lo = p->at + a;
	p->hi = p->at + p->len - b;
	p->rlo = a;
	p->rhi = p->repl.n - b;
}

/* ---- whitespace that changes no code ------------------------------------------ */

/* Whether whitespace between a and b parts two tokens that would join
 * without it: two characters of a word or number, a literal's prefix and
 * its quote, an exponent and its sign, or the two halves of an operator
 * or comment opener (`+ +`, `/ *`). */
static bool parts_tokens(char a, char b)
{
	static const char *const pairs[] = { "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
		"&&", "||", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "..", "<:", ":>", "<%",
		"%>", "%:", "::", "//", "/*", "*/" };
	bool aw = isalnum((unsigned char)a) || a == '_' || a == '.';
	bool bw = isalnum((unsigned char)b) || b == '_' || b == '.';
	if ((aw && (bw || b == '"' || b == '\'')) || (a && strchr("eEpP", a) && strchr("+-", b)))
		return true;
	for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
		if (pairs[i][0] == a && pairs[i][1] == b)
			return true;
	return false;
}

/* Where code_form is in its text. */
typedef struct code_scan {
	char quote;           /* inside a string or character literal: its quote */
	bool block, comment;  /* inside a block comment; in a `//` comment */
	bool pp, fresh;       /* the line is a preprocessor line; nothing on it yet */
	bool space, nl;       /* whitespace before the next character; a line break in it */
	char last;            /* the last character written outside a literal; 0 after a
	                         comment's opener or closer */
} code_scan;

/* Whitespace before c as it matters: a line break where it ends a
 * preprocessor line or a `//` comment or starts a preprocessor line, one
 * space where it parts tokens or lies in a preprocessor line, else none. */
static void put_space(code_scan *s, char c, cuco_buf *out)
{
	bool hash = s->fresh && c == '#', any = out->len > 0;
	if (s->nl && (s->pp || s->comment || hash) && any)
		cuco_buf_append(out, "\n", 1);
	else if (s->space && ((s->pp && any) || parts_tokens(s->last, c)))
		cuco_buf_append(out, " ", 1);
	if (s->nl && !s->block)
		s->pp = s->comment = false;
	s->pp |= hash;
	s->fresh = s->space = s->nl = false;
}

/* Lines [from, upto) as their code reads: whitespace only where it
 * changes what the compiler sees (put_space), literals and comments as
 * written otherwise. Two texts of one form hold the same code. */
static void code_form(const lines *ls, size_t from, size_t upto, cuco_buf *out)
{
	code_scan s = { .fresh = true };
	out->len = 0;
	cuco_buf_append(out, "", 0);
	for (size_t i = from; i < upto; i++) {
		const char *t = ls->v[i].s;
		size_t n = ls->v[i].n;
		for (size_t k = 0; k < n; k++) {
			char c = t[k], next = k + 1 < n ? t[k + 1] : 0;
			if (s.quote) {
				cuco_buf_append(out, t + k, c == '\\' && next ? 2 : 1);
				k += c == '\\' && next;
				s.quote = c == s.quote ? 0 : s.quote;
				continue;
			}
			if (is_space(c)) {
				s.space = true;
				continue;
			}
			put_space(&s, c, out);
			bool opens = c == '/' && (next == '*' || next == '/') && !s.block && !s.comment;
			bool closes = c == '*' && next == '/' && s.block;
			if (opens || closes) {
				cuco_buf_append(out, t + k++, 2);
				s.block = opens && next == '*';
				s.comment |= opens && next == '/';
				s.last = 0;
				continue;
			}
			if ((c == '"' || c == '\'') && !s.block && !s.comment)
				s.quote = c;
			cuco_buf_append(out, &c, 1);
			s.last = c;
		}
		s.space = s.nl = true;
		s.fresh = !s.block;
		s.quote = 0;  /* a literal ends with its line */
	}
}

/* Whether file lines [flo, fhi) and replacement lines [rlo, rhi) hold the
 * same code, their whitespace aside where it changes nothing: the one
 * test of a hunk that changes nothing. */
static bool same_code(const lines *file, size_t flo, size_t fhi, const lines *repl, size_t rlo,
	size_t rhi)
{
	cuco_buf a = { 0 }, b = { 0 };
	code_form(file, flo, fhi, &a);
	code_form(repl, rlo, rhi, &b);
	bool eq = a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
	cuco_buf_free(&a);
	cuco_buf_free(&b);
	return eq;
}

static bool inside_region(const cuco_block *r, size_t nr, size_t lo, size_t hi)
{
	for (size_t i = 0; i < nr; i++)
		if (r[i].start < lo && hi <= r[i].end)
			return true;
	return false;
}

static int check_hunk(const lines *file, const cuco_block *r, size_t nr, int num, placed *p,
	cuco_err *err)
{
	char first[96];
	quote(file->v[p->at], first, sizeof first);
	changed_range(file, p);
	for (size_t i = p->rlo; nr > 0 && i < p->rhi; i++)
		if (cuco_text_names_marker(p->repl.v[i].s, p->repl.v[i].n))
			return cuco_errf(err, CUCO_EDATA, "hunk %d (`%s`): REPLACE adds or moves an "
				"EVOLVE-BLOCK marker", num, first);
	p->unchanged = same_code(file, p->lo, p->hi, &p->repl, p->rlo, p->rhi);
	if (p->unchanged)
		return CUCO_OK;
	if (nr > 0 && !inside_region(r, nr, p->lo, p->hi))
		return cuco_errf(err, CUCO_EDATA, "hunk %d (`%s`): edits line %zu, outside every "
			"EVOLVE-BLOCK; only code between EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change",
			num, first, p->lo + 1);
	return CUCO_OK;
}

static int by_position(const void *a, const void *b)
{
	const placed *x = *(placed *const *)a, *y = *(placed *const *)b;
	return x->at < y->at ? -1 : x->at > y->at;
}

static void assemble(const lines *file, placed **order, int n, const char *eol, bool final_nl,
	cuco_buf *out)
{
	size_t next = 0;
	bool any = false;
	for (int k = 0; k <= n; k++) {
		size_t upto = k < n ? order[k]->at : file->n;
		for (; next < upto; next++) {
			if (any)
				cuco_buf_puts(out, eol);
			cuco_buf_append(out, file->v[next].s, file->v[next].n);
			any = true;
		}
		if (k == n)
			break;
		for (size_t i = 0; i < order[k]->repl.n; i++) {
			if (any)
				cuco_buf_puts(out, eol);
			emit_repl(out, order[k]->repl.v[i], &order[k]->sh);
			any = true;
		}
		next = order[k]->at + order[k]->len;
	}
	if (any && final_nl)
		cuco_buf_puts(out, eol);
	if (!out->data)
		cuco_buf_append(out, "", 0);
}

/* ---- branches the directive does not build ----------------------------------- */

/* What the reply's directive builds of the parent (cuco_lean_built). */
typedef struct building {
	const cuco_workload *wl;
	const cuco_directive *d;
	bool *parent;  /* per parent line; NULL: no condition is decided */
	size_t n;
	char name[160];  /* the directive as cuco prints it in short */
} building;

/* Which lines of the parent, with hunk p applied when not NULL, the
 * directive builds: the text as '\n'-ended lines, so a parent's "\r\n"
 * reads like "\n". */
static bool *built_lines(const lines *file, placed *p, const building *b, size_t *n)
{
	cuco_buf text = { 0 };
	assemble(file, &p, p ? 1 : 0, "\n", true, &text);
	bool *built = cuco_lean_built(b->wl, b->d, text.data, text.len, n);
	cuco_buf_free(&text);
	return built;
}

/* Whether every line hunk p changes lies in a branch the directive does
 * not build: the parent lines it replaces, and the lines it writes where
 * they land in the parent with it alone applied. A conditional line
 * counts as built (cuco_lean_built), so a hunk that adds or removes one
 * changes what is built, and is not such a hunk. */
static bool in_unbuilt_branch(const lines *file, const building *b, placed *p)
{
	for (size_t i = p->lo; i < p->hi; i++)
		if (i >= b->n || b->parent[i])
			return false;
	if (p->rlo == p->rhi)
		return true;
	size_t n;
	bool *child = built_lines(file, p, b, &n), off = true;
	for (size_t i = p->lo; off && i < p->lo + (p->rhi - p->rlo); i++)
		off = i < n && !child[i];
	free(child);
	return off;
}

/* ---- a function's new text ------------------------------------------------------- */

/* The name a line at column 0 defines: the word before its first `(`,
 * for a line that is no preprocessor line, comment, brace or declaration
 * (`;` at its end); false otherwise. */
static bool defined_name(line l, char name[64])
{
	size_t len = rtrim(l);
	const char *open = len ? memchr(l.s, '(', len) : NULL;
	if (!open || strchr("#/*{} \t[", l.s[0]) || l.s[len - 1] == ';')
		return false;
	const char *e = open;
	while (e > l.s && is_space(e[-1]))
		e--;
	const char *b = e;
	while (b > l.s && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
		b--;
	if (b == e || e - b >= 64 || isdigit((unsigned char)*b))
		return false;
	snprintf(name, 64, "%.*s", (int)(e - b), b);
	return true;
}

/* A definition's last line: its first line when that holds the whole
 * body, else the next line that is `}` at column 0. */
static bool definition_end(const lines *file, size_t start, size_t *end)
{
	line f = file->v[start];
	size_t len = rtrim(f);
	if (memchr(f.s, '{', len) && f.s[len - 1] == '}') {
		*end = start;
		return true;
	}
	for (size_t i = start + 1; i < file->n; i++)
		if (rtrim(file->v[i]) == 1 && file->v[i].s[0] == '}') {
			*end = i;
			return true;
		}
	return false;
}

/* Each definition inside the blocks (all, without blocks): fn(start,
 * end, name, arg), stopping when it returns false. */
static void each_definition(const lines *file, const cuco_block *r, size_t nr,
	bool (*fn)(size_t, size_t, const char *, void *), void *arg)
{
	char name[64];
	size_t end;
	for (size_t i = 0; i < file->n; i++)
		if (defined_name(file->v[i], name) && definition_end(file, i, &end) &&
				(nr == 0 || inside_region(r, nr, i, end + 1)) && !fn(i, end, name, arg))
			return;
}

typedef struct names_of {
	char (*names)[64];
	int n, max;
	const char *want;  /* NULL: every name; else only hits of this one */
	size_t hits, at, end;
} names_of;

static bool add_name(size_t start, size_t end, const char *name, void *arg)
{
	names_of *o = arg;
	if (o->want) {
		if (strcmp(o->want, name) == 0 && o->hits++ == 0) {
			o->at = start;
			o->end = end;
		}
		return true;
	}
	cuco_strlcpy(o->names[o->n++], name, sizeof o->names[0]);
	return o->n < o->max;
}

int cuco_patch_functions(const char *text, size_t len, char (*names)[64], int max)
{
	lines file;
	split(text, len, &file);
	cuco_block *r = NULL;
	size_t nr = 0;
	cuco_err err;
	names_of o = { .names = names, .max = max };
	if (max > 0 && cuco_text_blocks(text, len, "parent", &r, &nr, &err) == CUCO_OK && nr > 0)
		each_definition(&file, r, nr, add_name, &o);
	free(file.v);
	free(r);
	return o.n;
}

/* ---- the lines a SEARCH may be under a grammar ------------------------------ */

/* '(' less ')' on a line (strings and comments not told apart: a wrapped
 * call or condition is what it finds). */
static int paren_balance(line l)
{
	int b = 0;
	for (size_t i = 0; i < l.n; i++)
		b += (l.s[i] == '(') - (l.s[i] == ')');
	return b;
}

#define JOIN_MAX 6  /* lines of one wrapped statement, at most */

/* The SEARCH offered at line i, malloc'd, and in *next the line after it:
 * the line without its indentation, or, where its parentheses stay open,
 * the statement's lines up to where they close, joined by single spaces
 * (folded, as the spacing level reads them); NULL when it holds no word
 * (blank, a brace: it says nothing of where), is a marker or a note. */
static char *offer_at(const lines *file, size_t i, size_t *next)
{
	*next = i + 1;
	line l = file->v[i];
	size_t in = indent_of(l), end = rtrim(l);
	bool word = false;
	for (size_t k = in; k < end && !word; k++)
		word = isalnum((unsigned char)l.s[k]);
	if (!word || cuco_lean_note(l.s, l.n) || cuco_text_names_marker(l.s, l.n))
		return NULL;
	int bal = l.s[in] == '#' ? 0 : paren_balance(l);
	size_t j = i + 1;
	while (bal > 0 && j < file->n && j - i < JOIN_MAX && rtrim(file->v[j]) > 0 &&
			!cuco_text_names_marker(file->v[j].s, file->v[j].n))
		bal += paren_balance(file->v[j++]);
	cuco_buf b = { 0 };
	if (bal > 0 || j == i + 1)
		cuco_buf_append(&b, l.s + in, end - in);
	else
		fold_lines(file, i, j - i, &b), *next = j;
	return b.data;
}

size_t cuco_patch_search_lines(const char *text, size_t len, const bool *built, size_t nbuilt,
	size_t max, char ***out)
{
	*out = NULL;
	lines file;
	split(text, len, &file);
	cuco_block *r = NULL;
	size_t nr = 0, n = 0;
	if (cuco_text_blocks(text, len, "parent", &r, &nr, NULL) == CUCO_OK)
		*out = cuco_xmalloc((max ? max : 1) * sizeof **out);
	lazy_ascii afile = { 0 };
	size_t next = 0;
	for (size_t i = 0; *out && n < max && i < file.n; i = next) {
		bool unbuilt = built && i < nbuilt && !built[i];
		char *t = inside_region(r, nr, i, i + 1) && !unbuilt ? offer_at(&file, i, &next) : NULL;
		next = t ? next : i + 1;
		/* Offered only where the matcher finds it here alone, inside a block. */
		cuco_hunk h = { .search = t, .replace = "" };
		placed p = { 0 };
		cuco_err err;
		bool ok = t && locate(&file, &afile, &h, 1, &p, &err) == CUCO_OK && p.at == i &&
			inside_region(r, nr, p.at, p.at + p.len);
		free(p.repl.v);
		free(p.own);
		if (ok)
			(*out)[n++] = t;
		else
			free(t);
	}
	lazy_ascii_free(&afile);
	free(file.v);
	free(r);
	return n;
}

void cuco_patch_lines_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- calls an edit left without a function ----------------------------- */

static const cuco_text_fn *definition(const cuco_text_fn *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].defined && strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* Whether text holds word as a whole word. */
static bool holds_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = text; text && (p = strstr(p, word)); p += n)
		if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
				!(isalnum((unsigned char)p[n]) || p[n] == '_'))
			return true;
	return false;
}

/* The libraries' names, which a header the program includes declares
 * (MPI_Win_lock is not a name made of a program's `lock`). */
static const char *const library_prefixes[] = { "MPI_", "PMPI_", "nccl", "cuda", "cu", "pthread_",
	"sem_", "atomic_", "__", "std" };

/* Whether name is part joined to other words by `_` (`parallelize_produce`
 * of `produce`), and not a library's name. */
static bool made_of(const char *name, const char *part)
{
	for (size_t i = 0; i < sizeof library_prefixes / sizeof *library_prefixes; i++)
		if (strncmp(name, library_prefixes[i], strlen(library_prefixes[i])) == 0)
			return false;
	size_t n = strlen(part);
	for (const char *p = name; (p = strstr(p, part)); p++)
		if ((p == name || p[-1] == '_') && (p[n] == '\0' || p[n] == '_') && strcmp(name, part))
			return true;
	return false;
}

/* Why a call of the child names no function: one the parent defined and
 * the child does not, or a new name made of a parent's function's name
 * that the child, the parent and known (the headers it includes) define
 * nowhere; NULL when every call is defined. */
static const cuco_text_fn *undefined_call(const cuco_text_fn *pv, size_t pn,
	const cuco_text_fn *cv, size_t cn, const char *parent, const char *known, bool *removed)
{
	for (size_t i = 0; i < cn; i++) {
		const cuco_text_fn *c = &cv[i];
		if (c->defined || definition(cv, cn, c->name))
			continue;
		*removed = definition(pv, pn, c->name) != NULL;
		if (*removed)
			return c;
		if (holds_word(parent, c->name) || holds_word(known, c->name))
			continue;
		for (size_t k = 0; k < pn; k++)
			if (pv[k].defined && made_of(c->name, pv[k].name))
				return c;
	}
	return NULL;
}

int cuco_patch_calls(const char *parent, size_t plen, const char *child, size_t clen,
	const char *known, cuco_err *err)
{
	cuco_text_fn *pv, *cv;
	size_t pn = cuco_text_functions(parent, plen, &pv), cn = cuco_text_functions(child, clen, &cv);
	bool removed = false;
	const cuco_text_fn *c = undefined_call(pv, pn, cv, cn, parent, known, &removed);
	int rc = CUCO_OK;
	char where[96];
	if (c && c->in[0])
		snprintf(where, sizeof where, "%s still calls (line %d)", c->in, c->line);
	else if (c)
		snprintf(where, sizeof where, "line %d still calls", c->line);
	if (c && removed)
		rc = cuco_errf(err, CUCO_EDATA, "the edit removed %s(), which %s; keep its definition "
			"or change the call", c->name, where);
	else if (c)
		rc = cuco_errf(err, CUCO_EDATA, "the edit calls %s() (line %d%s%s), which is defined "
			"nowhere; define it in the edit or call a function the program defines", c->name,
			c->line, c->in[0] ? ", in " : "", c->in);
	free(pv);
	free(cv);
	return rc;
}

/* Place a hunk that names a function (JSON `{"function", "text"}`):
 * its definition inside the blocks, which its text must define again. */
static int locate_function(const lines *file, const cuco_block *r, size_t nr, const cuco_hunk *h,
	int num, placed *p, cuco_err *err)
{
	char want[64];
	size_t n = strcspn(h->search, "\r\n");
	snprintf(want, sizeof want, "%.*s", (int)(n < 63 ? n : 63), h->search);
	names_of o = { .want = want };
	each_definition(file, r, nr, add_name, &o);
	if (o.hits == 1) {
		lines text;
		split(h->replace, strlen(h->replace), &text);
		char name[64] = "";
		for (size_t i = 0; i < text.n && !defined_name(text.v[i], name); i++)
			;
		free(text.v);
		if (strcmp(name, want) != 0)
			return cuco_errf(err, CUCO_EDATA, "hunk %d (function `%s`): its text must be the "
				"function's whole new definition, from its first line `%s(…` at column 0 to its "
				"closing `}`", num, want, want);
		*p = (placed){ .at = o.at, .len = o.end - o.at + 1, .level = CUCO_MATCH_FUNCTION,
			.repl = p->repl };
		return CUCO_OK;
	}
	if (o.hits > 1)
		return cuco_errf(err, CUCO_EDATA, "hunk %d (function `%s`): defined %zu times in the "
			"program (under different #if branches); give a search/replace edit instead", num,
			want, o.hits);
	char names[16][64];
	names_of all = { .names = names, .max = 16 };
	each_definition(file, r, nr, add_name, &all);
	cuco_buf list = { 0 };
	for (int i = 0; i < all.n; i++)
		cuco_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
	int rc = cuco_errf(err, CUCO_EDATA, "hunk %d: no function `%s` is defined inside the "
		"EVOLVE-BLOCKs; those that are: %s", num, want, list.data ? list.data : "none");
	cuco_buf_free(&list);
	return rc;
}

/* Why hunk num (p) was set aside, in one line for a refusal. */
static void aside_why(const lines *file, const placed *p, int num, const building *b,
	char *buf, size_t size)
{
	char first[96];
	quote(file->v[p->at], first, sizeof first);
	if (p->unbuilt)
		snprintf(buf, size, "hunk %d (`%s`): in a branch directive `%s` does not build; the hunk "
			"changes nothing compiled", num, first, b->name);
	else
		snprintf(buf, size, "hunk %d (`%s`): REPLACE equals SEARCH, whitespace aside; the hunk "
			"changes nothing", num, first);
}

/* The hunks that change something, in order[], how many in *m; a reply
 * whose every hunk is set aside is refused for the first, and for the
 * first set aside for the other reason when there is one. */
static int changing(const lines *file, placed *pl, int n, const building *b, placed **order,
	int *m, cuco_err *err)
{
	*m = 0;
	int other = 0;
	for (int i = 0; i < n; i++) {
		if (!pl[i].unchanged && !pl[i].unbuilt)
			order[(*m)++] = &pl[i];
		else if (!other && pl[i].unbuilt != pl[0].unbuilt)
			other = i;
	}
	if (*m > 0 || n == 0)
		return CUCO_OK;
	char why[2][400];
	aside_why(file, &pl[0], 1, b, why[0], sizeof why[0]);
	if (other)
		aside_why(file, &pl[other], other + 1, b, why[1], sizeof why[1]);
	return cuco_errf(err, CUCO_EDATA, "%s%s%s", why[0], other ? "; " : "", other ? why[1] : "");
}

/* Locate and check each hunk, and tell those that change nothing. */
static int place_hunks(const lines *file, const cuco_block *r, size_t nr, const cuco_reply *reply,
	const building *b, placed *pl, cuco_err *err)
{
	lazy_ascii afile = { 0 };
	int rc = CUCO_OK;
	for (int i = 0; i < reply->nhunks && rc == CUCO_OK; i++) {
		split(reply->hunks[i].replace, strlen(reply->hunks[i].replace), &pl[i].repl);
		rc = reply->hunks[i].function
			? locate_function(file, r, nr, &reply->hunks[i], i + 1, &pl[i], err)
			: locate(file, &afile, &reply->hunks[i], i + 1, &pl[i], err);
		if (rc == CUCO_OK)
			rc = check_hunk(file, r, nr, i + 1, &pl[i], err);
		if (rc == CUCO_OK && b->parent && !pl[i].unchanged)
			pl[i].unbuilt = in_unbuilt_branch(file, b, &pl[i]);
	}
	lazy_ascii_free(&afile);
	return rc;
}

/* With a workload and the reply's directive, a hunk that changes only
 * lines of branches that directive does not build changes nothing
 * compiled: a reply that changes the directive edits the lines its lean
 * view shows, which are the parent directive's branches (issue 26). */
static int apply_hunks(const lines *file, const cuco_block *r, size_t nr, const cuco_reply *reply,
	const cuco_workload *wl, const char *eol, bool final_nl, cuco_patched *out, cuco_err *err)
{
	int n = reply->nhunks, m = 0;
	building b = { .wl = wl, .d = &reply->directive };
	if (wl && reply->has_directive) {
		b.parent = built_lines(file, NULL, &b, &b.n);
		cuco_directive_short(b.d, b.name, sizeof b.name);
	}
	placed *pl = cuco_xcalloc((size_t)n, sizeof *pl);
	placed **order = cuco_xcalloc((size_t)n, sizeof *order);
	int rc = place_hunks(file, r, nr, reply, &b, pl, err);
	/* A hunk that changes nothing is set aside beside others that do. */
	if (rc == CUCO_OK)
		rc = changing(file, pl, n, &b, order, &m, err);
	if (rc == CUCO_OK) {
		qsort(order, (size_t)m, sizeof *order, by_position);
		for (int k = 1; k < m && rc == CUCO_OK; k++)
			if (order[k]->at < order[k - 1]->at + order[k - 1]->len)
				rc = cuco_errf(err, CUCO_EDATA, "hunk %d overlaps hunk %d (both quote parent "
					"line %zu); merge them into one hunk", (int)(order[k] - pl) + 1,
					(int)(order[k - 1] - pl) + 1, order[k]->at + 1);
	}
	if (rc == CUCO_OK) {
		cuco_buf b = { 0 };
		assemble(file, order, m, eol, final_nl, &b);
		out->text = b.data;
		out->len = b.len;
		out->nhunks = n;
		for (int i = 0; i < n; i++) {
			out->unchanged += pl[i].unchanged;
			out->unbuilt += pl[i].unbuilt;
		}
		out->levels = cuco_xcalloc((size_t)n, sizeof *out->levels);
		out->loosest = CUCO_MATCH_EXACT;
		for (int i = 0; i < n; i++) {
			out->levels[i] = pl[i].level;
			if (pl[i].level > out->loosest)
				out->loosest = pl[i].level;
		}
	}
	for (int i = 0; i < n; i++) {
		free(pl[i].repl.v);
		free(pl[i].own);
	}
	free(pl);
	free(order);
	free(b.parent);
	return rc;
}

/* A segment's lines with comments dropped and whitespace folded
 * (cuco_text_normalize), for comparing frames. */
static void normal_form(const lines *f, size_t from, size_t upto, cuco_buf *out)
{
	cuco_buf raw = { 0 };
	for (size_t i = from; i < upto; i++) {
		cuco_buf_append(&raw, f->v[i].s, f->v[i].n);
		cuco_buf_puts(&raw, "\n");
	}
	out->len = 0;
	cuco_text_normalize(raw.data ? raw.data : "", raw.len, out);
	cuco_buf_free(&raw);
}

/* The first of lines [*i, end) that holds code (not blank, not only a
 * comment), its normal form in *b; end when none. */
static void next_code(const lines *f, size_t *i, size_t end, cuco_buf *b)
{
	for (; *i < end; ++*i) {
		normal_form(f, *i, *i + 1, b);
		if (b->len > 0)
			return;
	}
}

/* The first parent line of [pi, pend) whose code the reply's [ni, nend)
 * does not have, blank and comment lines skipped; pend when none. */
static size_t first_change(const lines *file, size_t pi, size_t pend, const lines *nf,
	size_t ni, size_t nend)
{
	cuco_buf a = { 0 }, b = { 0 };
	for (;; pi++, ni++) {
		next_code(file, &pi, pend, &a);
		next_code(nf, &ni, nend, &b);
		if (pi >= pend || ni >= nend)
			break;
		if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
			break;
	}
	cuco_buf_free(&a);
	cuco_buf_free(&b);
	return pi;
}

/* Compare the frames segment by segment: CUCO_OK when the code outside
 * the blocks is the parent's (*cosmetic when comments, blank lines or
 * whitespace differ), CUCO_EDATA naming the first line that changed. */
static int compare_frames(const lines *file, const cuco_block *r, size_t nr, const lines *nf,
	const cuco_block *nrg, bool *cosmetic, cuco_err *err)
{
	cuco_buf a = { 0 }, b = { 0 };
	int rc = CUCO_OK;
	size_t pi = 0, ni = 0;
	for (size_t k = 0; k <= nr && rc == CUCO_OK; k++) {
		size_t pend = k < nr ? r[k].start + 1 : file->n;
		size_t nend = k < nr ? nrg[k].start + 1 : nf->n;
		bool exact = pend - pi == nend - ni;
		for (size_t i = 0; exact && pi + i < pend; i++)
			exact = same(file->v[pi + i].s, rtrim(file->v[pi + i]), nf->v[ni + i].s,
				rtrim(nf->v[ni + i]));
		if (!exact) {
			normal_form(file, pi, pend, &a);
			normal_form(nf, ni, nend, &b);
			*cosmetic = true;
			if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
				size_t at = first_change(file, pi, pend, nf, ni, nend);
				char q[96] = "";
				if (at < pend)
					quote(file->v[at], q, sizeof q);
				rc = cuco_errf(err, CUCO_EDATA, "full rewrite changes parent line %zu (`%s`), "
					"outside every EVOLVE-BLOCK; keep that code as it is (comments, blank lines "
					"and whitespace there may differ)", (at < pend ? at : pend) + 1, q);
			}
		}
		if (k < nr) {
			pi = r[k].end;
			ni = nrg[k].end;
		}
	}
	cuco_buf_free(&a);
	cuco_buf_free(&b);
	return rc;
}

/* The parent's frame with new insides for its blocks, in order: the
 * frame byte for byte, each inside's lines with the parent's line ends. */
static void splice(const lines *file, const cuco_block *r, size_t nr, const lines *inside,
	const char *eol, bool final_nl, cuco_patched *out)
{
	cuco_buf b = { 0 };
	size_t from = 0;
	for (size_t k = 0; k <= nr; k++) {
		size_t upto = k < nr ? r[k].start + 1 : file->n;
		for (size_t i = from; i < upto; i++) {
			cuco_buf_append(&b, file->v[i].s, file->v[i].n);
			if (i + 1 < file->n || final_nl)
				cuco_buf_puts(&b, eol);
		}
		if (k == nr)
			break;
		for (size_t i = 0; i < inside[k].n; i++) {
			cuco_buf_append(&b, inside[k].v[i].s, inside[k].v[i].n);
			cuco_buf_puts(&b, eol);
		}
		from = r[k].end;
	}
	if (!b.data)
		cuco_buf_append(&b, "", 0);
	out->text = b.data;
	out->len = b.len;
}

/* A full rewrite of a file with EVOLVE-BLOCKs must keep the code outside
 * them; comments, blank lines and whitespace there may differ (published
 * systems splice the new blocks into the parent's frame; a model often
 * retouches a comment or the file's last line). The parent's frame is
 * kept byte for byte and the new blocks' insides are put into it. */
static int apply_full(const lines *file, const cuco_block *r, size_t nr, const cuco_reply *reply,
	const char *eol, bool final_nl, cuco_patched *out, cuco_err *err)
{
	const char *code = reply->code;
	if (nr == 0) {
		out->text = cuco_xstrdup(code);
		out->len = strlen(code);
		return CUCO_OK;
	}
	lines nf;
	split(code, strlen(code), &nf);
	cuco_block *nrg;
	size_t nnr;
	int rc = cuco_text_blocks(code, strlen(code), "reply", &nrg, &nnr, err);
	if (rc != CUCO_OK) {
		free(nf.v);
		return rc;
	}
	if (nnr != nr) {
		free(nf.v);
		free(nrg);
		return cuco_errf(err, CUCO_EDATA, "full rewrite has %zu EVOLVE-BLOCKs where the parent has "
			"%zu; keep the markers and the code outside them", nnr, nr);
	}
	rc = compare_frames(file, r, nr, &nf, nrg, &out->frame_kept, err);
	if (rc == CUCO_OK) {
		lines *inside = cuco_xmalloc(nr * sizeof *inside);
		for (size_t k = 0; k < nr; k++)
			inside[k] = (lines){ nf.v + nrg[k].start + 1, nrg[k].end - nrg[k].start - 1 };
		splice(file, r, nr, inside, eol, final_nl, out);
		free(inside);
	}
	free(nf.v);
	free(nrg);
	return rc;
}

/* The parent with each block's inside replaced by the reply's text for it:
 * as many blocks as the parent has, none holding a marker. */
static int apply_blocks(const lines *file, const cuco_block *r, size_t nr, const cuco_reply *reply,
	const char *eol, bool final_nl, cuco_patched *out, cuco_err *err)
{
	if (nr == 0)
		return cuco_errf(err, CUCO_EDATA, "the parent has no EVOLVE-BLOCK for a block's new text; "
			"give SEARCH/REPLACE hunks or the whole file");
	if ((size_t)reply->nblocks != nr)
		return cuco_errf(err, CUCO_EDATA, "the reply gives %d block%s where the parent has %zu "
			"EVOLVE-BLOCK%s; give each block's new text, in order", reply->nblocks,
			reply->nblocks == 1 ? "" : "s", nr, nr == 1 ? "" : "s");
	lines *inside = cuco_xcalloc(nr, sizeof *inside);
	int rc = CUCO_OK;
	for (size_t k = 0; k < nr && rc == CUCO_OK; k++) {
		split(reply->blocks[k], strlen(reply->blocks[k]), &inside[k]);
		for (size_t i = 0; i < inside[k].n && rc == CUCO_OK; i++)
			if (cuco_text_names_marker(inside[k].v[i].s, inside[k].v[i].n))
				rc = cuco_errf(err, CUCO_EDATA, "block %zu's new text holds an EVOLVE-BLOCK marker "
					"(its line %zu); give only the lines between the markers", k + 1, i + 1);
	}
	if (rc == CUCO_OK)
		splice(file, r, nr, inside, eol, final_nl, out);
	for (size_t k = 0; k < nr; k++)
		free(inside[k].v);
	free(inside);
	return rc;
}

/* A directive-only reply: the parent's code as it is. */
static int keep_parent(const char *parent, size_t len, cuco_patched *out)
{
	out->text = cuco_xmalloc(len + 1);
	memcpy(out->text, parent, len);
	out->text[len] = '\0';
	out->len = len;
	return CUCO_OK;
}

int cuco_patch_apply(const char *parent, size_t len, const cuco_reply *reply,
	const cuco_workload *wl, cuco_patched *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	lines file;
	split(parent, len, &file);
	const char *nl = memchr(parent, '\n', len);
	const char *eol = nl && nl > parent && nl[-1] == '\r' ? "\r\n" : "\n";
	bool final_nl = len > 0 && parent[len - 1] == '\n';
	cuco_block *r;
	size_t nr;
	int rc = cuco_text_blocks(parent, len, "parent", &r, &nr, err);
	if (rc == CUCO_OK) {
		if (reply->kind == CUCO_REPLY_FULL)
			rc = apply_full(&file, r, nr, reply, eol, final_nl, out, err);
		else if (reply->kind == CUCO_REPLY_BLOCKS)
			rc = apply_blocks(&file, r, nr, reply, eol, final_nl, out, err);
		else if (reply->kind == CUCO_REPLY_DIRECTIVE)
			rc = keep_parent(parent, len, out);
		else if (reply->nhunks == 0)
			rc = cuco_errf(err, CUCO_EDATA, "reply holds no hunk");
		else
			rc = apply_hunks(&file, r, nr, reply, wl, eol, final_nl, out, err);
	}
	free(file.v);
	free(r);
	return rc;
}

void cuco_patched_free(cuco_patched *p)
{
	free(p->text);
	free(p->levels);
	memset(p, 0, sizeof *p);
}
