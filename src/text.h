/* text.h — the rules of program text: where a program's EVOLVE-BLOCKs
 * are, its text without comments, its normal form, the files it
 * includes. One reading for everyone who asks: the trust scan, `cuco
 * init`, the patcher, the lean view, the prompts, the fast path and the
 * islands see the same blocks, the same comments and the same includes.
 *
 * DESIGN — the marker rule (tests/core/test_text.c pins it):
 *   - Lines are separated by '\n' only. A '\r' before it belongs to the
 *     line ending; a lone '\r' ends nothing (old Mac text is one line).
 *   - A marker line is a line that holds EVOLVE-BLOCK-START or
 *     EVOLVE-BLOCK-END anywhere: in a comment, a string or code, indented
 *     or not, inside #if 0 or not. Nothing is preprocessed; the whole
 *     line is the marker, so code on it belongs to the frame.
 *   - A block is a START line, the lines after it, and the next END line.
 *     Its inside is the lines strictly between the two; a search may
 *     change only those.
 *   - Refused (the file then has no blocks): a START inside an open block
 *     (nesting), an END with no open block, a START never closed, a line
 *     holding both words.
 *   - A program is marked when any of its lines is a marker line. A marked
 *     program whose markers are refused has no blocks: whoever needs
 *     blocks refuses it (the patcher, `cuco init --seed`, the fast path's
 *     stage B), and the trust scan, which reads blocks whole and the rest
 *     but for the workload's own lines, reads such a program as one
 *     without markers: all of it outside blocks. A marked program
 *     of a communicating family claims device-initiated communication
 *     (eval_trust_rules), its markers well formed or not.
 *   - New text a model writes (a REPLACE's changed lines, a block's new
 *     text) may not hold EVOLVE-BLOCK- at all, marker or not.
 *
 * Comments are C's: a line comment to the line's end, a block comment to
 * its first close (an unclosed one to the text's end). A quote ('…' or
 * "…") runs to its closing quote or to the line's end, with backslash
 * escapes; C++ raw strings and digit separators are not known.
 * Stripping keeps every offset: comments (and, when asked, the insides
 * of quotes) become spaces, newlines stay.
 *
 * An #include is read from its own line (the first character that is not
 * blank, comments gone, is '#'): `# include "name"` or `<name>`. */
#ifndef CUCO_TEXT_H
#define CUCO_TEXT_H

#include "core.h"

#include <stdbool.h>
#include <stddef.h>

#define CUCO_MARK_START "EVOLVE-BLOCK-START"
#define CUCO_MARK_END "EVOLVE-BLOCK-END"
#define CUCO_MARK_STEM "EVOLVE-BLOCK-"  /* what new text may not hold */

typedef enum cuco_marker {
	CUCO_MARKER_NONE,
	CUCO_MARKER_START,
	CUCO_MARKER_END,
	CUCO_MARKER_BOTH,  /* a line holding both words: refused */
} cuco_marker;

/* What one line (n bytes, without its '\n') is. */
cuco_marker cuco_text_marker(const char *line, size_t n);
/* Whether a line of new text holds CUCO_MARK_STEM. */
bool cuco_text_names_marker(const char *line, size_t n);
/* Whether any line of text is a marker line. */
bool cuco_text_marked(const char *text, size_t len);

/* One EVOLVE-BLOCK. */
typedef struct cuco_block {
	size_t start, end;  /* its marker lines, counted from 0 */
	size_t from, to;    /* its inside's bytes: after the START line, up to the END line */
} cuco_block;

/* The blocks of text, in order (*out malloc'd, NULL when none).
 * CUCO_EDATA, "WHO: line N: …" in err (which may be NULL), when the rule
 * refuses the markers; then *out is NULL and *n 0. */
int cuco_text_blocks(const char *text, size_t len, const char *who, cuco_block **out, size_t *n,
	cuco_err *err);
/* How many blocks text has: 0 when none, or when its markers are refused. */
size_t cuco_text_nblocks(const char *text, size_t len);

/* A copy of src (len bytes, NUL added, malloc'd) with comments as spaces,
 * and with the insides and closing quote of quotes as spaces too when
 * blank_quotes; newlines kept, so offsets and lines still agree. */
char *cuco_text_strip(const char *src, size_t len, bool blank_quotes);
/* Text with comments dropped and whitespace runs folded into one space,
 * appended to out: what the duplicate checks (a model's reply, a person's
 * edit, with the directive) and a full rewrite's frame check compare. */
void cuco_text_normalize(const char *text, size_t len, cuco_buf *out);

/* Whether a line (n bytes) is an #include of "name" or <name>: then the
 * name is *len bytes at *name, and *local says it is quoted. */
bool cuco_text_include(const char *line, size_t n, const char **name, size_t *len, bool *local);
/* The local includes ("…") of a text, appended to names[*n] when not
 * there yet, up to max. */
void cuco_text_includes(const char *text, size_t len, char (*names)[128], int *n, int max);

/* One function of a text: a definition at file scope (a name, its
 * parameters and a body: `static void produce(layer *l, int c) {`, or a
 * function-like #define), or a call inside a body (a name and `(`; not
 * after `.`, `->` or `::`, nor a keyword or a type's name). Read from the
 * text with comments and quotes blanked; nothing is preprocessed, so both
 * branches of an #if count, and a definition a macro makes is not seen. */
typedef struct cuco_text_fn {
	char name[64];
	char in[64];    /* a call: the function whose body holds it; "" when none */
	int line;       /* from 1 */
	bool defined;
} cuco_text_fn;

/* The definitions and calls of text, in order (*out malloc'd; NULL when
 * none); how many. */
size_t cuco_text_functions(const char *text, size_t len, cuco_text_fn **out);

#endif
