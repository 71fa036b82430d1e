/* text.h — the rules of program text: its text without comments, its
 * normal form, the files it includes. One reading for everyone who asks:
 * the trust scan, the patcher, the lean view, the duplicate checks, the
 * analyzer and the prompts see the same comments and the same includes.
 *
 * DESIGN — comments are C's: a line comment to the line's end, a block comment to
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

#endif
