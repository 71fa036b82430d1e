/* reply.h — replies (reply.c) and patches (patch.c).
 *
 * A reply states its directive first, then its code as SEARCH/REPLACE
 * hunks, one fenced full file, or CUCo's tagged form:
 *
 *   DIRECTIVE:
 *   backend: rma
 *   granularity: 8
 *
 *   <NAME>short_name</NAME>
 *   <DESCRIPTION>why</DESCRIPTION>
 *   <DIFF>
 *   <<<<<<< SEARCH
 *   old lines
 *   =======
 *   new lines
 *   >>>>>>> REPLACE
 *   </DIFF>                       (or <CODE>full file</CODE>)
 *
 * The directive may also be written as cuco prints it
 * (`backend: rma/one/interleave/flag/8 tile=64`, `DIRECTIVE: backend: rma,
 * sync: flag`); each EVOLVE-BLOCK's new text may come in <BLOCK> tags; a
 * reply with a directive and no code is a directive-only child; and a
 * reply may be the JSON object a server's structured output writes
 * ({"directive": {…}, "name", "description", then "edits": [{"search",
 * "replace"} or {"function", "text"}], "blocks": […] or "code"}).
 * docs/replies.md has them all.
 */
#ifndef CUCO_MODELS_REPLY_H
#define CUCO_MODELS_REPLY_H

#include "core.h"
#include "eval/eval.h"

#include <stdbool.h>
#include <stddef.h>

/* What a reply's change comes as, the kind a prompt asks for and a reply
 * is read as: X(enum, its key in a JSON reply (NULL: none), what it is). */
#define CUCO_REPLY_KINDS(X) \
	X(DIFF, "edits", "SEARCH/REPLACE hunks") \
	X(FULL, "code", "the whole file") \
	X(BLOCKS, "blocks", "each EVOLVE-BLOCK's new text, in order") \
	X(DIRECTIVE, NULL, "a directive and no code: the parent's code, a new directive")

typedef enum cuco_reply_kind {
#define X(e, key, help) CUCO_REPLY_##e,
	CUCO_REPLY_KINDS(X)
#undef X
	CUCO_REPLY_KIND_COUNT
} cuco_reply_kind;

/* "edits", "code", "blocks"; NULL for a directive alone or out of range. */
const char *cuco_reply_json_key(cuco_reply_kind k);

typedef struct cuco_hunk {
	char *search;   /* lines, each ending in '\n'; a function's name when function */
	char *replace;
	int line;       /* of the SEARCH marker in the reply, from 1 */
	bool function;  /* replace is the whole new definition of the function named */
} cuco_hunk;

typedef struct cuco_reply {
	cuco_reply_kind kind;
	char name[64];
	char description[512];
	bool has_directive;
	bool directive_refused;    /* the refusal is the directive's (out of a failed parse) */
	cuco_directive directive;  /* the base with the stated fields over it; after a
	                              refused directive, what was read of it */
	int nhunks;
	cuco_hunk *hunks;
	int set_aside;             /* hunks that only restated the directive (`sync: flag`) */
	bool echoed;               /* the reply form's own placeholder edit was set aside */
	char *code;                /* FULL: the whole file */
	int nblocks;
	char **blocks;             /* BLOCKS: each block's new text (lines between its markers) */
} cuco_reply;

/* Parse a reply. base is the directive fields not stated keep (the
 * parent's); with a workload the directive is required, its names must be
 * dimensions and the result must lie in the design space
 * (cuco_directive_valid). wl may be NULL (no directive check). */
int cuco_reply_parse(const char *text, const cuco_workload *wl, const cuco_directive *base,
	cuco_reply *out, cuco_err *err);
/* The same, and a reply with a directive and no code is a directive-only
 * child (CUCO_REPLY_DIRECTIVE). Only for a reply known to be whole (its
 * finish reason says it stopped by itself): a reply cut off after its
 * directive looks just like one. */
int cuco_reply_parse_any(const char *text, const cuco_workload *wl, const cuco_directive *base,
	cuco_reply *out, cuco_err *err);
void cuco_reply_free(cuco_reply *r);

/* ---- patches (patch.c) ----------------------------------------------------
 * Every hunk is located in the same unedited parent and must match exactly
 * once; matching loosens in this order and stops at the first level that
 * finds anything. A reply applies all or nothing. When the parent has
 * EVOLVE-BLOCKs (the marker rule of text.h; a parent whose markers it
 * refuses is refused) only the lines between their markers may change
 * (a full rewrite may differ outside them in comments, blank lines and
 * whitespace: the parent's frame is kept); a file without markers may
 * change anywhere (the fast path's input). A hunk that changes nothing is
 * set aside beside others, and a reply of only such hunks is refused: its
 * REPLACE is its SEARCH, whitespace that parts no C tokens aside; or,
 * given the workload, every line it changes lies in an #if branch the
 * reply's directive does not build (cuco_lean_built). */

/* The levels, loosest last: X(enum, name in the transcript and `cuco patch
 * -v`, what it matches; docs/replies.md, "Applying hunks", lists them). */
#define CUCO_MATCH_LEVELS(X) \
	X(EXACT, "exact", "the lines as they are") \
	X(TRAILING_SPACE, "trailing-space", "trailing whitespace ignored") \
	X(INDENT, "indent", "plus one indentation shift for the whole hunk") \
	X(TYPOGRAPHY, "typography", "plus curly quotes, dashes, nbsp as ASCII") \
	X(SPACING, "spacing", "every run of whitespace, line breaks too, as one space: a SEARCH " \
		"that joined or split the parent's lines") \
	X(PART, "part-of-line", "a one-line SEARCH that is part of one parent line: its REPLACE " \
		"goes in its place within the line") \
	X(FUNCTION, "function", "no SEARCH: the hunk named a function, whose definition its text " \
		"replaces")

typedef enum cuco_match {
#define X(e, name, help) CUCO_MATCH_##e,
	CUCO_MATCH_LEVELS(X)
#undef X
	CUCO_MATCH_COUNT
} cuco_match;

const char *cuco_match_name(cuco_match m);  /* "exact", "trailing-space", … */

typedef struct cuco_patched {
	char *text;                /* the new file, malloc'd, NUL-terminated */
	size_t len;
	int nhunks;
	int unchanged;             /* of those, hunks whose REPLACE wrote their SEARCH back
	                              (whitespace aside), set aside beside the others */
	int unbuilt;               /* of those, hunks whose changed lines all lie in #if
	                              branches the reply's directive does not build, set
	                              aside beside the others */
	cuco_match *levels;        /* per hunk; NULL for a full rewrite */
	cuco_match loosest;
	bool frame_kept;           /* a full rewrite whose frame differed from the parent's
	                              in comments, blank lines or whitespace only: the
	                              parent's frame was kept */
} cuco_patched;

/* wl: the workload whose defines decide the parent's #if conditions under
 * reply's directive, when it states one; NULL: none is decided. */
int cuco_patch_apply(const char *parent, size_t len, const cuco_reply *reply,
	const cuco_workload *wl, cuco_patched *out, cuco_err *err);
/* The names of the functions defined inside the EVOLVE-BLOCKs of text (a
 * definition starts at column 0 and ends at the next `}` there), at most
 * max, in order; what a function's new text may name. */
int cuco_patch_functions(const char *text, size_t len, char (*names)[64], int max);
/* The lines of text an edit's SEARCH may be where a server's grammar holds
 * it to a list (the lean profile's schema): each line inside the
 * EVOLVE-BLOCKs, without its indentation and trailing space, that holds a
 * word and is no marker nor lean view's note, or, where its parentheses
 * stay open, its statement's lines joined by single spaces; each only
 * where the matcher finds it there alone, and where built (nbuilt flags
 * per line, cuco_lean_built; NULL: every line) says it is built; at most
 * max, in order, in *out (malloc'd strings in a malloc'd array; free with
 * cuco_patch_lines_free). Returns how many. */
size_t cuco_patch_search_lines(const char *text, size_t len, const bool *built, size_t nbuilt,
	size_t max, char ***out);
void cuco_patch_lines_free(char **v, size_t n);
/* Whether child, an edit of parent, still defines what it calls
 * (cuco_text_functions): CUCO_EDATA naming the function when a call names
 * one the parent defined and child does not ("the edit removed produce(),
 * which cuco_step still calls (line 240)"), or a new name joined of a
 * parent's function's name and other words (`parallelize_produce`) that
 * neither text nor known (the headers it includes; may be NULL) names: a
 * compile would fail on it. A library's function is no such name. */
int cuco_patch_calls(const char *parent, size_t plen, const char *child, size_t clen,
	const char *known, cuco_err *err);
void cuco_patched_free(cuco_patched *p);

#endif
