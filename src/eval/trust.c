/* trust.c — what the evaluator believes of a candidate, and why not
 * (docs/workloads.md, "Trust"). A candidate is untrusted code: it may
 * print a verdict of its own, skip work when it is not looked at, or say
 * its communication is device-initiated while it calls host collectives.
 * Here are the evaluator's halves of the defences: the per-stage ticket
 * (the seal's key and the input seed) and its seal check, the source scan,
 * the host-call rules (the binary's symbols, the interposer's counts), and
 * the checks on the evaluator's own clocks and the workload's peak model.
 * The harness's halves are in workloads/common/cuco_harness.h and
 * workloads/gpu-common/cuco_gpu.h.
 *
 * Every refusal is one line that starts with the name of the defence that
 * caught it ("channel: ...", "host calls: ..."); the evaluator files it
 * under the failure class `suspect`. */
#include "eval/eval_int.h"
#include "eval/hostcalls.h"
#include "text.h"
#include "../../workloads/common/cuco_seal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---- the ticket --------------------------------------------------------------- */

void eval_ticket_new(eval_ticket *t)
{
	uint64_t r[3] = { 0 };
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		/* No kernel randomness: a weaker key, but still one per stage. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)getpid();
		for (int i = 0; i < 3; i++)
			r[i] = x = x * 6364136223846793005ull + 1442695040888963407ull;
	}
	t->k0 = r[0];
	t->k1 = r[1];
	t->seed = r[2];
	snprintf(t->env, sizeof t->env, CUCO_SEAL_ENV "=1:%016llx%016llx:%016llx",
		(unsigned long long)t->k0, (unsigned long long)t->k1, (unsigned long long)t->seed);
}

int eval_ticket_file(const eval_ticket *t, const char *dir, char *path, size_t size, cuco_err *err)
{
	snprintf(path, size, "%s/" CUCO_SEAL_FILE, dir);
	const char *text = t->env + strlen(CUCO_SEAL_ENV "=");
	size_t len = strlen(text);
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
	int saved = errno;
	if (fd >= 0 && close(fd) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (ok)
		return CUCO_OK;
	unlink(path);
	return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(saved ? saved : EIO));
}

bool eval_ticket_open(const eval_ticket *t, const char *sealed, const char **json)
{
	uint64_t tag;
	if (cuco_seal_hex(sealed, CUCO_SEAL_HEX, &tag) != 0 || sealed[CUCO_SEAL_HEX] != ' ')
		return false;
	*json = sealed + CUCO_SEAL_HEX + 1;
	return cuco_seal(t->k0, t->k1, *json, strlen(*json)) == tag;
}

/* ---- the source scan -------------------------------------------------------------- */

/* What candidate code may not name: ways to reach the seal's key or the
 * harness's state, or to run before the harness's constructor (priority
 * 101) takes the ticket. Identifiers are matched whole, outside comments
 * and strings; a prefix ends in '*'. The list names the obvious ways, not
 * every way (docs/trust.md): code in the harness's process can build a
 * path or find memory at run time without naming any of it. */
static const struct { const char *name, *why; } forbidden_names[] = {
	{ "getenv", "reads the environment, where the harness's key travels" },
	{ "secure_getenv", "reads the environment, where the harness's key travels" },
	{ "environ", "reads the environment, where the harness's key travels" },
	{ "_environ", "reads the environment, where the harness's key travels" },
	{ "__environ", "reads the environment, where the harness's key travels" },
	{ "setenv", "changes the environment the harness reads" },
	{ "putenv", "changes the environment the harness reads" },
	{ "unsetenv", "changes the environment the harness reads" },
	{ "clearenv", "changes the environment the harness reads" },
	{ "dlsym", "looks up symbols at run time (the harness's, the interposer's)" },
	{ "dlvsym", "looks up symbols at run time (the harness's, the interposer's)" },
	{ "dlopen", "loads code at run time" },
	{ "ptrace", "inspects processes" },
	{ "process_vm_readv", "reads another process's memory" },
	{ "process_vm_writev", "writes another process's memory" },
	{ "init_priority", "orders static initialisation before the harness's ticket" },
	{ "__init_priority__", "orders static initialisation before the harness's ticket" },
	{ "redefine_extname", "renames the symbol a function's calls bind to (the harness's calls too)" },
	{ "ifunc", "runs a resolver while the program loads, before the harness takes its ticket" },
	{ "__ifunc__", "runs a resolver while the program loads, before the harness takes its ticket" },
	{ "cuco_ticket*", "touches the harness's ticket" },
	{ "cuco_take_ticket", "touches the harness's ticket" },
	{ "cuco_seal*", "touches the harness's seal" },
	{ "cuco_emit", "prints the harness's verdict itself" },
	{ "cuco_inputs_seed", "changes the harness's input seed" },
	{ "cuco_scales", "changes the harness's repetition scales" },
	{ "cuco_count_*", "touches the host-call counter" },
	{ "cuco_watch*", "touches the harness's leftover checks" },
	{ "CUCO_SEAL*", "touches the harness's seal" },
};

/* Text that matters inside strings too. */
static const struct { const char *text, *why; } forbidden_text[] = {
	{ "/proc/", "reads /proc (the environment and memory of this and other processes)" },
	{ ".init_array", "places code before main() by section" },
	{ ".preinit_array", "places code before main() by section" },
	{ ".ctors", "places code before main() by section" },
	{ "CUCO_HARNESS", "names the variable that carries the harness's key" },
	{ "LD_PRELOAD", "names the preload that counts host calls" },
};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool is_word(const char *word, size_t len, const char *w)
{
	return len == strlen(w) && strncmp(word, w, len) == 0;
}

/* The forbidden identifier at the start of word (len chars), or -1. */
static int forbidden_ident(const char *word, size_t len)
{
	for (size_t i = 0; i < sizeof forbidden_names / sizeof forbidden_names[0]; i++) {
		const char *n = forbidden_names[i].name;
		size_t nl = strlen(n);
		bool prefix = n[nl - 1] == '*';
		if (prefix ? len >= nl - 1 && strncmp(word, n, nl - 1) == 0 : is_word(word, len, n))
			return (int)i;
	}
	return -1;
}

static size_t skip_blanks(const char *code, size_t i, size_t end)
{
	while (i < end && isspace((unsigned char)code[i]))
		i++;
	return i;
}

/* `constructor(N)`, the name ending at code + i: a constructor that asks
 * to run at priority N, which may be before the harness's. */
static bool prioritised_constructor(const char *code, size_t i, size_t len)
{
	i = skip_blanks(code, i, len);
	if (i >= len || code[i] != '(')
		return false;
	i = skip_blanks(code, i + 1, len);
	return i < len && isdigit((unsigned char)code[i]);
}

/* ---- the text as the compiler reads it ---------------------------------------- */

/* A program as the compiler's first two phases leave it (C11 5.1.1.2):
 * CR LF as one newline, and a backslash before a newline (blanks between
 * too: gcc and nvcc splice those) as nothing, so that no name, comment
 * delimiter or known line can be split or joined across lines behind the
 * scan's back. line[i] is the physical line that text[i] came from. */
typedef struct logical {
	char *text;
	size_t len;
	int *line;
} logical;

/* A backslash at i that splices: the offset of its newline, else 0. */
static size_t splice_at(const char *src, size_t i, size_t len)
{
	if (src[i] != '\\')
		return 0;
	size_t j = i + 1;
	while (j < len && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f' || src[j] == '\v'))
		j++;
	j += j + 1 < len && src[j] == '\r' && src[j + 1] == '\n';
	return j < len && src[j] == '\n' ? j : 0;
}

/* The logical text of src. What compilers or their modes read apart is
 * refused instead (the physical line into *bad, the reason into *what):
 * a lone CR, which gcc takes for a newline and the scan would not, a NUL,
 * which gcc reads as a blank (so `\`, NUL, newline splices), and a
 * trigraph, replaced under -std=c11 (??/ a backslash, ??' a caret, ??= a
 * '#') and not under gnu11 or C++17. */
static void logical_read(const char *src, size_t len, logical *l, int *bad, const char **what)
{
	l->text = cuco_xmalloc(len + 1);
	l->line = cuco_xmalloc((len + 1) * sizeof *l->line);
	l->len = 0;
	*bad = 0;
	int line = 1;
	for (size_t i = 0; i < len; i++) {
		size_t nl = splice_at(src, i, len);
		if (nl || (src[i] == '\r' && i + 1 < len && src[i + 1] == '\n')) {
			line += nl > 0;
			i = nl ? nl : i;
			continue;
		}
		if (!*bad && src[i] == '\r') {
			*bad = line;
			*what = "has a carriage return that ends no line: a compiler ends the line there";
		} else if (!*bad && src[i] == '\0') {
			*bad = line;
			*what = "has a NUL byte: gcc skips it, so a backslash before it may splice the lines";
		} else if (!*bad && src[i] == '?' && i + 2 < len && src[i + 1] == '?' && src[i + 2]
			&& strchr("=(/)'<>!-", src[i + 2])) {
			*bad = line;
			*what = "has a trigraph (??x): -std=c11 reads it as another character, other modes do not";
		}
		l->text[l->len] = src[i];
		l->line[l->len++] = line;
		line += src[i] == '\n';
	}
	l->text[l->len] = '\0';
	l->line[l->len] = line;
}

static void logical_free(logical *l)
{
	free(l->text);
	free(l->line);
}

/* ---- what the scan reads ---------------------------------------------------------- */

/* `##` (or `%:%:`) at code + i: a paste, whose name is in no text, but
 * for GNU's `, ## __VA_ARGS__` (a comma makes no name). */
static bool pastes(const char *code, size_t at, size_t i, size_t end)
{
	bool hashes = i + 1 < end && code[i] == '#' && code[i + 1] == '#';
	if (!hashes && !(i + 3 < end && strncmp(code + i, "%:%:", 4) == 0))
		return false;
	while (i > at && isspace((unsigned char)code[i - 1]))
		i--;
	return !(i > at && code[i - 1] == ',');
}

/* The end of the number that starts at code + i (a pp-number). */
static size_t number_end(const char *code, size_t i, size_t end)
{
	for (i++; i < end; i++)
		if (!ident_char(code[i]) && code[i] != '.'
			&& !((code[i] == '+' || code[i] == '-') && strchr("eEpP", code[i - 1])))
			break;
	return i;
}

/* Whether the name at code + i (n chars) opens a header name, <...>, that
 * holds what the scan reads as a comment or a quote and the compiler does
 * not (raw: the logical text, comments in place). */
static bool odd_header_name(const char *raw, const char *code, size_t i, size_t n, size_t end)
{
	static const char *const opens[] = { "include", "include_next", "import", "embed", "__has_include",
		"__has_include_next", "__has_embed" };
	bool opener = false;
	for (size_t k = 0; k < sizeof opens / sizeof opens[0]; k++)
		opener |= is_word(code + i, n, opens[k]);
	size_t j = skip_blanks(code, i + n, end);
	if (opener && j < end && code[j] == '(')
		j = skip_blanks(code, j + 1, end);
	if (!opener || j >= end || code[j] != '<')
		return false;
	for (j++; j < end && raw[j] != '>'; j++)
		if (raw[j] == '"' || raw[j] == '\'' || (raw[j] == '/' && (raw[j + 1] == '*' || raw[j + 1] == '/')))
			return true;
	return false;
}

/* The first forbidden name (as forbidden_ident) in the string literals of
 * the asm statement or label, _Pragma or alias or weakref attribute whose
 * keyword ends at code + i, read joined (adjacent literals are one): they
 * bind symbols by the names in them, `__asm__("cuco_" "ticket")` as the
 * harness's ticket, `_Pragma("redefine_extname f getenv")` or
 * `weakref("getenv")` f as getenv. A string a macro holds is not seen
 * (docs/trust.md). */
static int asm_name(const char *code, const char *text, size_t i, size_t len, char *name, size_t size)
{
	cuco_buf joined = { 0 };
	i = skip_blanks(code, i, len);
	while (i < len && (isalpha((unsigned char)code[i]) || code[i] == '_'))  /* volatile, goto, ... */
		for (i++; i < len && ident_char(code[i]); i++)
			;
	i = skip_blanks(code, i, len);
	size_t last = 0;  /* where the last literal ended */
	for (int depth = i < len && code[i] == '(' ? 1 : 0; depth > 0 && ++i < len;) {
		depth += (code[i] == '(') - (code[i] == ')');
		if (code[i] != '"')
			continue;
		if (!last || skip_blanks(code, last, i) != i)
			cuco_buf_append(&joined, " ", 1);
		for (last = i + 1; last < len && text[last] != '"' && text[last] != '\n'; last++) {
			size_t n = text[last] == '\\' && last + 1 < len ? 2 : 1;
			cuco_buf_append(&joined, text + last, n);
			last += n - 1;
		}
		last += last < len;
	}
	int f = -1;
	for (size_t j = 0; f < 0 && j < joined.len; j++) {
		size_t n = 0;
		while (j + n < joined.len && ident_char(joined.data[j + n]))
			n++;
		if (n > 0 && !isdigit((unsigned char)joined.data[j]) && (f = forbidden_ident(joined.data + j, n)) >= 0)
			snprintf(name, size, "%.*s", (int)n, joined.data + j);
		j += n;
	}
	cuco_buf_free(&joined);
	return f;
}

/* A program as the scan reads it. */
typedef struct view {
	const char *raw, *code, *text;  /* the logical text; quotes and comments blanked; comments */
	const int *lines;               /* per byte, its physical line */
	size_t len;
	const eval_known *known;        /* NULL: nothing known */
	const cuco_block *b;            /* the blocks, nb of them */
	size_t nb;
	bool own;                       /* what is around the blocks is the workload's own frame */
	size_t last_include;            /* where the last #include line starts; 0: none */
} view;

/* `#define X` or `#undef X` (the directive's name at code + i, n chars,
 * on the logical line from at): X's offset, else 0. */
static size_t macro_defined(const char *code, size_t at, size_t i, size_t n, size_t end)
{
	if (!is_word(code + i, n, "define") && !is_word(code + i, n, "undef"))
		return 0;
	size_t j = skip_blanks(code, at, i);
	if (j < i && code[j] == '#')
		j++;
	else if (j + 1 < i && code[j] == '%' && code[j + 1] == ':')
		j += 2;
	else
		return 0;
	if (skip_blanks(code, j, i) != i)
		return 0;
	j = skip_blanks(code, i + n, end);
	return j < end && ident_char(code[j]) ? j : 0;
}

/* A reserved name (`__x`, `_X`) but a feature test (`_GNU_SOURCE`,
 * `_FILE_OFFSET_BITS`, `__STDC_FORMAT_MACROS`): the library's headers
 * spell their insides so (`__builtin_isnan` under std::isnan), and a
 * program defines only the tests. */
static bool reserved_name(const char *name, size_t n)
{
	static const char *const tests[] = { "_FILE_OFFSET_BITS", "_TIME_BITS", "_REENTRANT",
		"_THREAD_SAFE", "__STDC_FORMAT_MACROS", "__STDC_LIMIT_MACROS", "__STDC_CONSTANT_MACROS",
		"__STDC_WANT_LIB_EXT1__" };
	if (n < 2 || name[0] != '_' || !(name[1] == '_' || isupper((unsigned char)name[1])))
		return false;
	if (n > 7 && strncmp(name + n - 7, "_SOURCE", 7) == 0)
		return false;
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
		if (is_word(name, n, tests[i]))
			return false;
	return true;
}

/* Whether the workload's own frame (v->own) uses name (n chars) after
 * offset from: on a line around the blocks, as an identifier. */
static bool frame_uses(const view *v, size_t from, const char *name, size_t n)
{
	size_t k = 0;
	for (const char *p = v->code + from; v->own && (p = memmem(p, v->len - (size_t)(p - v->code), name, n));
		p += n) {
		size_t at = (size_t)(p - v->code);
		while (k < v->nb && v->b[k].to <= at)
			k++;
		if (!ident_char(p[-1]) && !ident_char(p[n]) && !(k < v->nb && at >= v->b[k].from))
			return true;
	}
	return false;
}

static bool has_name(const cuco_buf *set, const char *name, size_t n)
{
	for (const char *p = set->data; p && (p = memmem(p, set->len - (size_t)(p - set->data), name, n));
		p += n)
		if ((p == set->data || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* A `#define` or `#undef` (the directive's name at v->code + i, n chars,
 * on the logical line [at, end)) that would rewrite the workload's own
 * code after it: above an #include, a name the workload's headers use or
 * a reserved one; in a block, a name its frame uses after it; never a knob
 * its own blocks define. The name's offset (its length into *xn), else 0. */
static size_t rewiring_macro(const view *v, size_t at, size_t i, size_t n, size_t end, size_t *xn)
{
	const char *code = v->code;
	const eval_known *k = v->known;
	size_t x = macro_defined(code, at, i, n, end);
	for (*xn = 0; x && ident_char(code[x + *xn]);)
		(*xn)++;
	if (!x || (k && has_name(&k->knobs, code + x, *xn)))
		return 0;
	bool above = i < v->last_include
		&& (reserved_name(code + x, *xn) || (k && has_name(&k->names, code + x, *xn)));
	return above || frame_uses(v, end, code + x, *xn) ? x : 0;
}

/* Whether the logical line [at, end) is an #include (#include_next,
 * #import, #embed) of what a macro names: `#include __FILE__`. */
static bool computed_include(const char *code, size_t at, size_t end)
{
	size_t i = skip_blanks(code, at, end), n = 0;
	if (i < end && code[i] == '#')
		i++;
	else if (i + 1 < end && code[i] == '%' && code[i + 1] == ':')
		i += 2;
	else
		return false;
	i = skip_blanks(code, i, end);
	while (i + n < end && ident_char(code[i + n]))
		n++;
	bool inc = is_word(code + i, n, "include") || is_word(code + i, n, "include_next")
		|| is_word(code + i, n, "import") || is_word(code + i, n, "embed");
	i = skip_blanks(code, i + n, end);
	return inc && i < end && code[i] != '"' && code[i] != '<';
}

/* Whether an #include of name (n chars, "..." or <...> alike: both search
 * the workload's folders) brings in a file the scan does not read and the
 * workload's own code does not include: a path of its own (absolute, or
 * with ..) or a file of the workload's folders (its baseline, say). A
 * system header is neither. */
static bool foreign_include(const eval_known *k, const char *name, size_t n)
{
	if (!k || has_name(&k->includes, name, n))
		return false;
	if (n == 0 || name[0] == '/' || memmem(name, n, "..", 2))
		return true;
	for (const char *d = k->dirs.data; d && *d; d = strchr(d, '\n') + 1) {
		char path[PATH_MAX + 200];
		snprintf(path, sizeof path, "%.*s/%.*s", (int)strcspn(d, "\n"), d, (int)n, name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* "source: line N what" into why; true. */
static bool refuse(char *why, size_t size, int line, const char *what)
{
	snprintf(why, size, "source: line %d %s", line, what);
	return true;
}

/* The name at v->code + i (n chars, on the logical line [at, end), the
 * physical line `line`): whether the scan refuses it, and why. */
static bool name_refused(const view *v, size_t at, size_t i, size_t n, size_t end, int line, char *why,
	size_t size)
{
	const char *code = v->code, *w = code + i;
	int f = forbidden_ident(w, n);
	char name[64], what[300];
	if (f >= 0) {
		snprintf(what, sizeof what, "uses %.*s: the code %s", (int)n, w, forbidden_names[f].why);
		return refuse(why, size, line, what);
	}
	static const char *const symbolic[] = { "asm", "__asm", "__asm__", "_Pragma", "alias", "__alias__",
		"weakref", "__weakref__" };
	bool binds = false;
	for (size_t k = 0; k < sizeof symbolic / sizeof symbolic[0]; k++)
		binds |= is_word(w, n, symbolic[k]);
	if (binds && (f = asm_name(code, v->text, i + n, v->len, name, sizeof name)) >= 0) {
		snprintf(what, sizeof what, "names %s in a string that binds symbols (%.*s): the code %s", name,
			(int)n, w, forbidden_names[f].why);
		return refuse(why, size, line, what);
	}
	if ((is_word(w, n, "constructor") || is_word(w, n, "__constructor__"))
		&& prioritised_constructor(code, i + n, v->len))
		return refuse(why, size, line, "declares a constructor with a priority: it could run before "
			"the harness takes its ticket");
	if (w[n] == '"' && (is_word(w, n, "R") || is_word(w, n, "LR") || is_word(w, n, "uR")
		|| is_word(w, n, "UR") || is_word(w, n, "u8R")))
		return refuse(why, size, line, "has a raw string literal: the scan reads its quotes as plain ones");
	if (odd_header_name(v->raw, code, i, n, end))
		return refuse(why, size, line, "has a header name (<...>) holding a comment or a quote: the "
			"compiler reads it whole, the scan as a comment or a quote");
	size_t xn = 0, x = rewiring_macro(v, at, i, n, end, &xn);
	if (x) {
		snprintf(what, sizeof what, "redefines %.*s before code that uses it (a header an #include "
			"after it brings in, or the workload's own frame): the macro would rewrite that code",
			(int)xn, code + x);
		return refuse(why, size, line, what);
	}
	return false;
}

/* Scan the logical line [at, end) of the program v; why names the
 * physical line of what it finds. Besides what the code may not name,
 * what the scan cannot read as every compiler does is refused (a paste, a
 * raw string, a digit separator, a header name with a comment or a quote
 * in it), and a macro that would rewrite the workload's own code. */
static bool scan_line(const view *v, size_t at, size_t end, char *why, size_t size)
{
	const char *code = v->code, *text = v->text, *name;
	size_t n = 0;
	bool local;
	char what[300];
	if (cuco_text_include(text + at, end - at, &name, &n, &local)) {
		if (foreign_include(v->known, name, n)) {
			snprintf(what, sizeof what, "includes %.*s, which the workload's own code does not: the scan "
				"does not read it", (int)n, name);
			return refuse(why, size, v->lines[at], what);
		}
	} else if (computed_include(code, at, end)) {
		return refuse(why, size, v->lines[at], "includes what a macro names: the scan cannot tell what "
			"it brings in");
	}
	for (size_t i = at; i < end; i++) {
		int line = v->lines[i];
		for (size_t t = 0; t < sizeof forbidden_text / sizeof forbidden_text[0]; t++)
			if (strncmp(text + i, forbidden_text[t].text, strlen(forbidden_text[t].text)) == 0) {
				snprintf(why, size, "source: line %d mentions \"%s\": the code %s", line,
					forbidden_text[t].text, forbidden_text[t].why);
				return true;
			}
		if (pastes(code, at, i, end))
			return refuse(why, size, line, "pastes tokens (##): the name it makes is in no text to read");
		if (!ident_char(code[i]) || (i > at && ident_char(code[i - 1])))
			continue;
		n = 0;
		if (isdigit((unsigned char)code[i])) {
			n = number_end(code, i, end);
			if (n < end && code[n] == '\'')
				return refuse(why, size, line, "has a digit separator ('): C++ reads it inside a number, "
					"C as a quote");
			i = n - 1;
			continue;
		}
		while (i + n < end && ident_char(code[i + n]))
			n++;
		if (name_refused(v, at, i, n, end, line, why, size))
			return true;
		i += n - 1;
	}
	return false;
}

/* ---- the workload's own frame --------------------------------------------------- */

/* The frame of a logical text: its lines around its blocks, comments
 * blanked (stripped: the text so), the blanks at their ends left out,
 * blank ones dropped, each ending in a newline. */
static void frame_of(const char *stripped, size_t len, const cuco_block *b, size_t nb, cuco_buf *out)
{
	size_t k = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(stripped + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - stripped) : len, from = at, n = end - at;
		while (k < nb && b[k].to <= at)
			k++;
		at = end + 1;
		if (k < nb && from >= b[k].from)
			continue;
		for (; n > 0 && isspace((unsigned char)stripped[from]); n--)
			from++;
		while (n > 0 && isspace((unsigned char)stripped[from + n - 1]))
			n--;
		if (n > 0)
			cuco_buf_printf(out, "%.*s\n", (int)n, stripped + from);
	}
	if (!out->data)
		cuco_buf_append(out, "", 0);
}

/* The identifiers of code (a stripped text, len bytes) from..to, into
 * set, one a line; with directives, only the names that `#define` or
 * `#undef` there. */
static void add_names(cuco_buf *set, const char *code, size_t from, size_t to, bool directives)
{
	for (size_t i = from, at = from; i < to; i++) {
		at = code[i] == '\n' ? i + 1 : at;
		if (!ident_char(code[i]) || (i > from && ident_char(code[i - 1])))
			continue;
		size_t n = 0;
		while (i + n < to && ident_char(code[i + n]))
			n++;
		size_t x = directives ? macro_defined(code, at, i, n, to) : i, xn = 0;
		while (x && ident_char(code[x + xn]))
			xn++;
		if (xn && !isdigit((unsigned char)code[x]))
			cuco_buf_printf(set, "%.*s\n", (int)xn, code + x);
		i += n - 1;
	}
}

void eval_known_add(eval_known *k, const char *text, size_t len)
{
	logical l;
	int bad;
	const char *what;
	logical_read(text, len, &l, &bad, &what);  /* the workload's own: read as it is */
	char *stripped = cuco_text_strip(l.text, l.len, false), *code = cuco_text_strip(l.text, l.len, true);
	cuco_block *b = NULL;
	size_t nb = 0;
	cuco_text_blocks(l.text, l.len, "program", &b, &nb, NULL);
	k->frames = cuco_xrealloc(k->frames, (k->nframes + 1) * sizeof *k->frames);
	k->frames[k->nframes] = (cuco_buf){ 0 };
	frame_of(stripped, l.len, b, nb, &k->frames[k->nframes++]);
	for (size_t i = 0; i < nb; i++)
		add_names(&k->knobs, code, b[i].from, b[i].to, true);
	free(b);
	free(code);
	free(stripped);
	logical_free(&l);
}

/* The names the local headers that path includes use (searched in its
 * folder, then dirs[], as the compiler searches "..."), and theirs, into
 * k->names (path's own too, with own), the headers' names as written into
 * k->includes; at most *budget files. */
static void add_header_names(eval_known *k, const char *path, const char *const *dirs, size_t ndirs,
	bool own, int *budget)
{
	char *text;
	size_t len;
	if (*budget <= 0 || cuco_read_file(path, 16u << 20, &text, &len, NULL) != CUCO_OK)
		return;
	(*budget)--;
	char *code = cuco_text_strip(text, len, true), inc[32][128];
	if (own)
		add_names(&k->names, code, 0, len, false);
	int n = 0;
	cuco_text_includes(text, len, inc, &n, 32);
	free(code);
	free(text);
	const char *slash = strrchr(path, '/');
	for (int i = 0; i < n; i++) {
		cuco_buf_printf(&k->includes, "%s\n", inc[i]);
		for (size_t d = 0; d <= ndirs; d++) {
			char next[PATH_MAX + 200];
			if (d == 0)
				snprintf(next, sizeof next, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, inc[i]);
			else
				snprintf(next, sizeof next, "%s/%s", dirs[d - 1], inc[i]);
			if (access(next, R_OK) == 0) {
				add_header_names(k, next, dirs, ndirs, true, budget);
				break;
			}
		}
	}
}

void eval_known_read(eval_known *k, const cuco_workload *wl)
{
	const char *files[] = { wl->baseline_file, wl->seed_file };
	/* The build's -I: the workload's folder and the folders of its extras. */
	char dirs[9][PATH_MAX];
	const char *dir[9];
	size_t ndirs = 0;
	dir[ndirs++] = wl->dir;
	for (int i = 0; i < wl->nextras && ndirs < 9; i++) {
		const char *slash = strrchr(wl->extras[i], '/');
		snprintf(dirs[ndirs], sizeof dirs[ndirs], "%s/%.*s", wl->dir, slash ? (int)(slash - wl->extras[i]) : 0,
			wl->extras[i]);
		dir[ndirs] = dirs[ndirs];
		ndirs++;
	}
	for (size_t d = 0; d < ndirs; d++)
		cuco_buf_printf(&k->dirs, "%s\n", dir[d]);
	int budget = 64;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[sizeof wl->dir + sizeof wl->seed_file + 2], *text;
		size_t len;
		cuco_err err = { 0 };
		snprintf(path, sizeof path, "%s/%s", wl->dir, files[i]);
		/* One that cannot be read lends no frame (cuco check says why). */
		if (*files[i] && cuco_read_file(path, 16u << 20, &text, &len, &err) == CUCO_OK) {
			eval_known_add(k, text, len);
			free(text);
			add_header_names(k, path, dir, ndirs, false, &budget);
		}
	}
}

void eval_known_free(eval_known *k)
{
	for (size_t i = 0; i < k->nframes; i++)
		cuco_buf_free(&k->frames[i]);
	free(k->frames);
	cuco_buf_free(&k->names);
	cuco_buf_free(&k->knobs);
	cuco_buf_free(&k->includes);
	cuco_buf_free(&k->dirs);
	memset(k, 0, sizeof *k);
}

/* Whether a frame is one of the known texts'. */
static bool known_frame(const eval_known *k, const cuco_buf *frame)
{
	for (size_t i = 0; k && i < k->nframes; i++)
		if (k->frames[i].len == frame->len && memcmp(k->frames[i].data, frame->data, frame->len) == 0)
			return true;
	return false;
}

bool eval_trust_scan(const char *src, size_t len, const eval_known *known, char *why, size_t size)
{
	/* What a search may change, the insides of the blocks the patcher
	 * sees (text.h), is read whole. So is what the model wrote around
	 * them: a fast-path attempt or a full rewrite is the model's program,
	 * outside its blocks too. Only the workload's own frame, all of it,
	 * is taken as it is: a line of it moved into a function of the
	 * candidate's, or after a line the candidate added, is the
	 * candidate's line (it may mean anything there). Lines are the
	 * compiler's: splices joined first. */
	logical l;
	int bad;
	const char *what;
	logical_read(src, len, &l, &bad, &what);
	if (bad) {
		snprintf(why, size, "source: line %d %s", bad, what);
		logical_free(&l);
		return true;
	}
	cuco_block *b = NULL;
	size_t nb = 0, k = 0;
	/* Markers the rule refuses leave no blocks: all of it is around them. */
	cuco_text_blocks(l.text, l.len, "program", &b, &nb, NULL);
	char *code = cuco_text_strip(l.text, l.len, true), *text = cuco_text_strip(l.text, l.len, false);
	cuco_buf frame = { 0 };
	frame_of(text, l.len, b, nb, &frame);
	bool own = known_frame(known, &frame), found = false;
	/* A macro the candidate defines may rewrite the workload's own code
	 * after it: what an #include brings in (its harness), or its frame. */
	view v = { l.text, code, text, l.line, l.len, known, b, nb, own, 0 };
	for (size_t at = 0; at < l.len;) {
		const char *nl = memchr(l.text + at, '\n', l.len - at);
		size_t end = nl ? (size_t)(nl - l.text) : l.len, n;
		const char *name;
		bool local;
		if (cuco_text_include(text + at, end - at, &name, &n, &local))
			v.last_include = at;
		at = end + 1;
	}
	for (size_t at = 0; at < l.len && !found;) {
		const char *nl = memchr(l.text + at, '\n', l.len - at);
		size_t end = nl ? (size_t)(nl - l.text) : l.len;
		while (k < nb && b[k].to <= at)
			k++;
		if (!own || (k < nb && at >= b[k].from))
			found = scan_line(&v, at, end, why, size);
		at = end + 1;
	}
	cuco_buf_free(&frame);
	free(b);
	free(code);
	free(text);
	logical_free(&l);
	return found;
}

/* ---- host calls ----------------------------------------------------------------------- */

enum { HOST_NCCL, HOST_MPI_COLL, HOST_MPI_P2P };
#define HOST_KIND_NCCL HOST_NCCL
#define HOST_KIND_MPI_COLL HOST_MPI_COLL
#define HOST_KIND_MPI_P2P HOST_MPI_P2P

static const struct { const char *name; int kind; } host_calls[] = {
#define ROW(kind, name, ret, params, args) { #name, HOST_KIND_##kind },
	CUCO_NCCL_CALLS(ROW)
	CUCO_MPI_CALLS(ROW)
#undef ROW
};

/* Backend values whose design is two-sided messages: MPI point-to-point
 * is their communication, not a host call they claim to have removed. */
static const struct { cuco_family family; const char *backend; } two_sided[] = {
	{ CUCO_FAMILY_CPU_MPI, "msg" },
};

/* Host calls the trusted harnesses make themselves: present in every
 * binary built with one, so not evidence in its symbols (the counter,
 * which sees only the steps, still counts them there). A program under
 * the compat protocol has no harness and no counted steps: every call in
 * its binary is evidence, and it needs none for its report, since each
 * rank prints its own lines and the protocol combines them. */
static bool harness_own(const cuco_workload *wl, const char *name)
{
	if (wl->protocol != CUCO_PROTO_NATIVE)
		return false;
	return strcmp(name, "MPI_Allreduce") == 0
		|| (wl->family == CUCO_FAMILY_CUDA_NCCL && strcmp(name, "MPI_Bcast") == 0);
}

void eval_trust_rules(const cuco_workload *wl, const cuco_directive *d, const char *src,
	size_t len, eval_trust *t)
{
	memset(t, 0, sizeof *t);
	t->claim.on = wl->family != CUCO_FAMILY_CUDA && cuco_text_marked(src, len);
	for (size_t i = 0; i < sizeof two_sided / sizeof two_sided[0]; i++)
		if (wl->family == two_sided[i].family && strcmp(d->backend, two_sided[i].backend) == 0)
			t->claim.p2p = true;
	snprintf(t->claim.what, sizeof t->claim.what, "backend=%s says %s", d->backend,
		wl->family == CUCO_FAMILY_CPU_MPI
			? (t->claim.p2p ? "two-sided messages and no collectives" : "one-sided communication")
			: "device-initiated communication");
}

/* Whether the claim rules out host call `name` (in the binary or not). */
static bool ruled_out(const cuco_workload *wl, const eval_trust *t, const char *name, bool binary)
{
	for (size_t i = 0; i < sizeof host_calls / sizeof host_calls[0]; i++) {
		if (strcmp(host_calls[i].name, name) != 0)
			continue;
		int k = host_calls[i].kind;
		if (binary && harness_own(wl, name))
			return false;
		if (wl->family == CUCO_FAMILY_CUDA_NCCL)
			return !binary || k == HOST_NCCL;
		return k == HOST_MPI_COLL || (k == HOST_MPI_P2P && !t->claim.p2p);
	}
	return false;
}

bool eval_trust_binary(const cuco_workload *wl, const eval_trust *t, const eval_elf *elf,
	char *why, size_t size)
{
	if (!t->claim.on)
		return false;
	char found[200] = "";
	size_t used = 0;
	for (int i = 0; i < elf->nundefined; i++)
		if (ruled_out(wl, t, elf->undefined[i], true) && used < sizeof found)
			used += (size_t)snprintf(found + used, sizeof found - used, "%s%s", used ? " " : "",
				elf->undefined[i]);
	if (*found) {
		snprintf(why, size, "host calls: the directive (%s) rules them out, but the built program "
			"links %s", t->claim.what, found);
		return true;
	}
	for (int i = 0; i < elf->ndefined; i++)
		if (ruled_out(wl, t, elf->defined[i], true)) {
			snprintf(why, size, "host calls: the built program defines %s itself (a static "
				"library the interposer cannot count)", elf->defined[i]);
			return true;
		}
	return false;
}

/* Calls from the harness's "name=N name=N ..." that the claim rules out. */
static long ruled_out_calls(const cuco_workload *wl, const eval_trust *t, const char *by,
	char *list, size_t size)
{
	long n = 0;
	size_t used = 0;
	list[0] = '\0';
	for (const char *p = by; *p;) {
		char name[64];
		long count = 0;
		int consumed = 0;
		if (sscanf(p, " %63[A-Za-z_]=%ld%n", name, &count, &consumed) != 2 || consumed <= 0)
			break;
		p += consumed;
		if (count > 0 && ruled_out(wl, t, name, false)) {
			n += count;
			if (used < size)
				used += (size_t)snprintf(list + used, size - used, "%s%s=%ld", used ? " " : "",
					name, count);
		}
	}
	return n;
}

/* The harness's wall clock is a median of the samples' host clocks; the
 * work-outside-the-timed-region rule asks for this many. One sample (a run
 * stage) is one moment: on one H200, another process's context held the GPU
 * for its time slice (about 2 ms, bench/gpu-timeslice) during an honest
 * 13 us kernel's only sample, and the rule refused the attention seed. A
 * program that works outside the timed region does so every repetition,
 * which the benchmark's many samples show. */
#define WALL_SAMPLES 3

/* ---- the verdict ------------------------------------------------------------------------- */

bool eval_trust_verdict(const cuco_workload *wl, const eval_trust *t, const eval_ticket *tk,
	const eval_parse *p, const eval_outcome *o, char *why, size_t size)
{
	int ranks = wl->family == CUCO_FAMILY_CUDA ? 1 : wl->ranks;
	/* A referee's verdict comes from a pipe no candidate holds, with no
	 * seal; the checks of a sealed one are for a harness in the
	 * candidate's own process. */
	bool refereed = wl->protocol == CUCO_PROTO_REFEREE;
	if (!tk && !refereed)
		return false;  /* compat: a foreign program's verdict has none of these */
	if (!refereed && *p->forged) {
		snprintf(why, size, "channel: %s", p->forged);
	} else if (!o->have_result || *o->environment) {
		return false;  /* a protocol or environment failure, told elsewhere */
	} else if (*o->suspect) {
		snprintf(why, size, "%s", o->suspect);
	} else if (!refereed && o->seed != tk->seed) {
		snprintf(why, size, "channel: the verdict is for inputs of seed %016llx, not this run's "
			"%016llx", (unsigned long long)o->seed, (unsigned long long)tk->seed);
	} else if (o->ranks != ranks) {
		snprintf(why, size, "channel: the verdict covers %d rank(s); the stage ran %d", o->ranks, ranks);
	} else if (!refereed && o->checks < 3) {
		snprintf(why, size, "verification: the verdict counts %d checked steps; the harness checks "
			"at least 3 (two verified runs and the post-loop step)", o->checks);
	} else if (!refereed && o->timing.samples >= WALL_SAMPLES && o->timing.median_us > 0 &&
			o->wall_us > 10 * o->timing.median_us && o->wall_us - o->timing.median_us > 1000) {
		snprintf(why, size, "timing: the latency reported (%.1f us) is far below the harness's wall "
			"clock per repetition (%.1f us): work outside the timed region", o->timing.median_us,
			o->wall_us);
	} else {
		char list[200];
		long n = t->claim.on && o->timing.host_calls > 0
			? ruled_out_calls(wl, t, o->host_calls_by, list, sizeof list) : 0;
		if (n == 0)
			return false;
		snprintf(why, size, "host calls: the directive (%s) rules them out, but the steps made %ld "
			"(%s)", t->claim.what, n, list);
	}
	return true;
}

bool eval_trust_leftovers(const eval_stage *st, char *why, size_t size)
{
	if (st->leftovers <= 0)
		return false;
	snprintf(why, size, "leftovers: %d process(es) of the stage were still running when it ended "
		"(killed): work outside the measurement", st->leftovers);
	return true;
}

/* ---- the evaluator's own clocks and the peak model ------------------------------------------ */

bool eval_trust_physics(double bound_s, double median_us, const char *model, char *why, size_t size)
{
	if (!(bound_s > 0) || !(median_us > 0) || median_us * 1e-6 >= bound_s)
		return false;
	snprintf(why, size, "physical minimum: %.3g us per repetition is below what the peak model "
		"allows (%.3g us: %s)", median_us, bound_s * 1e6, model);
	return true;
}

bool eval_trust_clock(double run_wall_s, double bench_wall_s, int warmup, int reps,
	double median_us, char *why, size_t size)
{
	/* The bench stage runs warmup + reps - 1 steps more than the run
	 * stage; what it took longer, less a generous allowance for start-up
	 * and the extra spot checks, is a floor under their true time. A
	 * benchmark with no run stage before it (a confirmation round of a
	 * cached build) has nothing to compare with: 0 s is no clock. */
	int extra = warmup + reps - 1;
	double slack = fmax(1.0, run_wall_s);
	if (extra < 1 || !(median_us > 0) || !(run_wall_s > 0) || bench_wall_s - run_wall_s <= slack)
		return false;
	double floor_s = (bench_wall_s - run_wall_s - slack) / extra;
	if (median_us * 1e-6 * 10 >= floor_s)
		return false;
	snprintf(why, size, "stage clock: the benchmark took %.2f s for %d more steps than the run stage "
		"(%.2f s), at least %.3g us a step, yet reports %.3g us", bench_wall_s, extra, run_wall_s,
		floor_s * 1e6, median_us);
	return true;
}

/* ---- the interposer ------------------------------------------------------------------------- */

/* The interposer fits a program that uses MPI or NCCL when every MPI or
 * NCCL library the interposer was linked with, the program needs too:
 * forwarding calls with another MPI's types would crash it. */
bool eval_trust_preload_fits(const eval_elf *prog, const eval_elf *lib)
{
	bool uses = eval_elf_needs(prog, "libmpi") || eval_elf_needs(prog, "libnccl");
	for (int i = 0; i < lib->nneeded; i++)
		if ((strncmp(lib->needed[i], "libmpi", 6) == 0 || strncmp(lib->needed[i], "libnccl", 7) == 0)
			&& !eval_elf_has(prog->needed, prog->nneeded, lib->needed[i]))
			return false;
	return uses;
}

/* Where the build or the installation put cuco-count.so: $CUCO_COUNT_LIB,
 * then the build tree, then beside the running executable's prefix
 * (an installed prefix moved elsewhere), then the configured one. */
static const char *interposer_source(const char *env, char *path, size_t size)
{
	if (env)
		return access(env, R_OK) == 0 ? env : NULL;
	if (*CUCO_COUNT_BUILD && access(CUCO_COUNT_BUILD, R_OK) == 0)
		return CUCO_COUNT_BUILD;
	if (cuco_installed_beside(CUCO_COUNT_REL, path, size) && access(path, R_OK) == 0)
		return path;
	return access(CUCO_COUNT_INSTALL, R_OK) == 0 ? CUCO_COUNT_INSTALL : NULL;
}

int eval_trust_interposer(const char *cache_root, const cuco_env *env, char *path, size_t size,
	eval_elf *elf, cuco_err *err)
{
	path[0] = '\0';
	memset(elf, 0, sizeof *elf);
	char beside[PATH_MAX];
	const char *from = interposer_source(env->count_lib, beside, sizeof beside);
	if (!from)
		return CUCO_OK;  /* not built (no Open MPI headers): nothing is counted */
	char *data;
	size_t len;
	int rc = cuco_read_file(from, 64u << 20, &data, &len, err);
	if (rc != CUCO_OK)
		return rc;
	/* In the run's cache, which the sandbox shows (read-only) to stages,
	 * named by its content so concurrent evaluators agree. */
	snprintf(path, size, "%s/cuco-count-%016llx.so", cache_root,
		(unsigned long long)cuco_seal(0, 0, data, len));
	if (access(path, R_OK) != 0)
		rc = cuco_write_file(path, data, len, err);
	free(data);
	if (rc == CUCO_OK)
		rc = eval_elf_read(path, elf, err);
	if (rc != CUCO_OK)
		path[0] = '\0';
	return rc;
}
