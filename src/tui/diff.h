/* diff.h — a line diff (Myers' O(ND) greedy algorithm) shaped as a unified
 * diff with context, for the diff pane. Pure: no curses, no store. */
#ifndef CUCO_TUI_DIFF_H
#define CUCO_TUI_DIFF_H

#include <stddef.h>

typedef enum tui_diff_kind {
	TUI_DIFF_HUNK,     /* "@@ -a,b +c,d @@" */
	TUI_DIFF_CONTEXT,  /* ' ' */
	TUI_DIFF_DEL,      /* '-' */
	TUI_DIFF_ADD,      /* '+' */
} tui_diff_kind;

typedef struct tui_diff_line {
	tui_diff_kind kind;
	const char *text;  /* points into the compared texts (or the hunk header) */
	int len;           /* bytes, without the newline */
} tui_diff_line;

typedef struct tui_diff {
	tui_diff_line *lines;
	size_t n;
	int added, deleted;
	char *headers;       /* storage for the hunk header texts */
} tui_diff;

/* Diff old against new (both texts must outlive d). context: lines kept
 * around each change. Edit scripts longer than max_d fall back to a
 * whole-text replacement, so a wholly rewritten file stays cheap. */
void tui_diff_compute(tui_diff *d, const char *old, size_t old_len,
	const char *new, size_t new_len, int context, int max_d);
void tui_diff_free(tui_diff *d);

#endif
