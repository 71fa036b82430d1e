/* keys.h — every action of the screen, in one table.
 *
 * The same table binds keys, builds the `?` help and the hint bar, so the
 * help can never list a key that does nothing or miss one that does.
 * X(action, key, alternative key (0: none), key names for the help,
 *   hint label (NULL: not in the hint bar), panes it applies to, help text)
 */
#ifndef CUCO_TUI_KEYS_H
#define CUCO_TUI_KEYS_H

#include "core.h"

#include <stddef.h>

/* Panes, as bits, for the context column. */
enum {
	TUI_IN_ISLANDS = 1 << 0,
	TUI_IN_TREE = 1 << 1,
	TUI_IN_DIFF = 1 << 2,
	TUI_IN_PHASES = 1 << 3,
	TUI_IN_DETAIL = 1 << 4,
	TUI_IN_LOG = 1 << 5,
	TUI_IN_ALL = 0x3f,
	TUI_IN_CAND = TUI_IN_TREE | TUI_IN_DIFF | TUI_IN_PHASES | TUI_IN_DETAIL,
};

#define TUI_CTRL(c) ((c) & 0x1f)

#define TUI_ACTIONS(X) \
	X(UP,          'k', KEY_UP,    "k Up",       NULL,      TUI_IN_ALL,    "move up / scroll up") \
	X(DOWN,        'j', KEY_DOWN,  "j Down",     NULL,      TUI_IN_ALL,    "move down / scroll down") \
	X(PAGE_UP,     TUI_CTRL('u'), KEY_PPAGE, "C-u PgUp", NULL, TUI_IN_ALL, "half a page up") \
	X(PAGE_DOWN,   TUI_CTRL('d'), KEY_NPAGE, "C-d PgDn", NULL, TUI_IN_ALL, "half a page down") \
	X(TOP,         'g', KEY_HOME,  "g Home",     NULL,      TUI_IN_ALL,    "go to the first line") \
	X(BOTTOM,      'G', KEY_END,   "G End",      NULL,      TUI_IN_ALL,    "go to the last line") \
	X(FOCUS_NEXT,  '\t', 0,        "Tab",        "pane",    TUI_IN_ALL,    "focus the next pane") \
	X(FOCUS_PREV,  KEY_BTAB, 0,    "S-Tab",      NULL,      TUI_IN_ALL,    "focus the previous pane") \
	X(ZOOM,        'z', 0,         "z",          "zoom",    TUI_IN_ALL,    "zoom the focused pane to the whole screen, or back") \
	X(TOGGLE,      '\n', KEY_ENTER, "Enter",     "fold",    TUI_IN_TREE,   "fold or unfold the candidate's subtree") \
	X(PARENT,      'u', 0,         "u",          "parent",  TUI_IN_TREE,   "jump to the parent of the selected candidate") \
	X(BEST,        'b', 0,         "b",          "best",    TUI_IN_TREE,   "jump to the best candidate") \
	X(NEXT_FAIL,   'f', 0,         "f",          "next fail", TUI_IN_TREE, "jump to the next failed candidate") \
	X(SEARCH,      '/', 0,         "/",          "search",  TUI_IN_TREE,   "search ids, origins, statuses, directives and notes") \
	X(SEARCH_NEXT, 'n', 0,         "n",          NULL,      TUI_IN_TREE,   "repeat the last search") \
	X(FILTER_ISLAND, 'i', 0,       "i",          "island",  TUI_IN_TREE | TUI_IN_ISLANDS, "filter the tree by island (cycles)") \
	X(FILTER_STATUS, 's', 0,       "s",          "status",  TUI_IN_TREE,   "filter the tree by status (cycles)") \
	X(FILTER_ORIGIN, 'o', 0,       "o",          "origin",  TUI_IN_TREE,   "filter the tree by origin (cycles)") \
	X(FILTER_CLEAR, 'c', 0,        "c",          NULL,      TUI_IN_TREE,   "clear every filter") \
	X(PIN,         'p', 0,         "p",          "pin",     TUI_IN_CAND,   "pin or unpin the candidate (kept as a parent, never dropped)") \
	X(REJECT,      'x', 0,         "x",          "reject",  TUI_IN_CAND,   "reject the candidate, with a reason") \
	X(EDIT,        'e', 0,         "e",          "edit",    TUI_IN_CAND,   "edit its source in $VISUAL/$EDITOR; the result is evaluated as a human candidate") \
	X(HINT,        'h', 0,         "h",          "hint",    TUI_IN_CAND | TUI_IN_ISLANDS, "send a hint to the candidate's island") \
	X(MARK,        'm', 0,         "m",          "mark",    TUI_IN_CAND,   "mark the candidate: the diff then compares against it") \
	X(EXPORT,      'E', 0,         "E",          "export",  TUI_IN_CAND,   "write the candidate's source to a file") \
	X(EXPLAIN,     't', 0,         "t",          "explain", TUI_IN_ALL,    "explain what the focused pane shows (directives, phases, failures)") \
	X(PAUSE,       ' ', 0,         "Space",      "pause",   TUI_IN_ALL,    "pause or resume the search") \
	X(HELP,        '?', KEY_F(1),  "? F1",       "help",    TUI_IN_ALL,    "this help") \
	X(REDRAW,      TUI_CTRL('l'), 0, "C-l",      NULL,      TUI_IN_ALL,    "redraw the whole screen") \
	X(QUIT,        'q', KEY_F(10), "q F10",      "quit",    TUI_IN_ALL,    "quit (a detached search keeps running)")

typedef enum tui_action {
	TUI_ACT_NONE,
#define X(a, k1, k2, names, label, ctx, help) TUI_ACT_##a,
	TUI_ACTIONS(X)
#undef X
	TUI_ACT_COUNT
} tui_action;

typedef struct tui_binding {
	int key, alt;
	const char *names;
	const char *label;
	unsigned context;
	const char *help;
} tui_binding;

/* The action bound to a key, or TUI_ACT_NONE. */
tui_action tui_key_action(int key);
const tui_binding *tui_binding_of(tui_action a);
/* The help text: one line per action, grouped as the table orders them. */
void tui_keys_help(cuco_buf *out);

#endif
