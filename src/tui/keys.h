/* keys.h — every action of the screen, in one table.
 *
 * The same table binds keys, builds the `?` help and the hint bar, so the
 * help can never list a key that does nothing or miss one that does.
 * X(action, key, alternative key (0: none), the key's name (the hint bar's,
 *   and the one prose uses: "c clears it"), the other keys' names (appended
 *   for the help: "k" " Up"), hint label (NULL: not in the hint bar), panes
 *   it applies to, group, help text). docs/cuco.1's SCREEN KEYS lists the
 *   same (a test checks).
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

/* Groups, in the order the hint bar offers them: what a person does
 * first, then ways of looking, then moving about, then the screen itself. */
enum { TUI_G_ACT, TUI_G_VIEW, TUI_G_MOVE, TUI_G_APP, TUI_G_COUNT };

#define TUI_ACTIONS(X) \
	X(PIN,         'p', 0,         "p",     "",       "pin",     TUI_IN_CAND,   TUI_G_ACT, "pin or unpin the candidate (kept as a parent, never dropped)") \
	X(REJECT,      'x', 0,         "x",     "",       "reject",  TUI_IN_CAND,   TUI_G_ACT, "reject the candidate, with a reason; on a rejected one, take the rejection back") \
	X(EDIT,        'e', 0,         "e",     "",       "edit",    TUI_IN_CAND,   TUI_G_ACT, "edit its source in $VISUAL/$EDITOR; the result is evaluated as a human candidate") \
	X(HINT,        'H', 0,         "H",     "",       "hint",    TUI_IN_CAND | TUI_IN_ISLANDS, TUI_G_ACT, "send a hint to the candidate's island (strategies that write prompts)") \
	X(PAUSE,       ' ', 0,         "Space", "",       "pause",   TUI_IN_ALL,    TUI_G_ACT, "pause or resume the search (also the end-of-run re-timing)") \
	X(MARK,        'm', 0,         "m",     "",       "mark",    TUI_IN_CAND,   TUI_G_ACT, "mark the candidate: the diff then compares against it") \
	X(EXPORT,      'E', 0,         "E",     "",       "export",  TUI_IN_CAND,   TUI_G_ACT, "write the candidate's source to a file") \
	X(SOURCE,      'v', 0,         "v",     "",       "source",  TUI_IN_CAND,   TUI_G_VIEW, "view the candidate's whole source") \
	X(TOGGLE,      '\n', KEY_ENTER, "Enter", "",       "fold",    TUI_IN_TREE,   TUI_G_VIEW, "fold or unfold the candidate's subtree") \
	X(ZOOM,        'z', 0,         "z",     "",       "zoom",    TUI_IN_ALL,    TUI_G_VIEW, "zoom the focused pane to the whole screen, or back") \
	X(SEARCH,      '/', 0,         "/",     "",       "search",  TUI_IN_TREE,   TUI_G_VIEW, "search ids, origins, statuses, directives, notes, models and failures") \
	X(SEARCH_NEXT, 'n', 0,         "n",     "",       NULL,      TUI_IN_TREE,   TUI_G_VIEW, "the next match of the search") \
	X(SEARCH_PREV, 'N', 0,         "N",     "",       NULL,      TUI_IN_TREE,   TUI_G_VIEW, "the previous match of the search") \
	X(SORT,        '>', KEY_F(6),  ">",     " F6",    "order",   TUI_IN_TREE,   TUI_G_VIEW, "order the list: lineage tree, speedup, latency, newest first (cycles)") \
	X(FILTER_ISLAND, 'i', 0,       "i",     "",       "island",  TUI_IN_TREE | TUI_IN_ISLANDS, TUI_G_VIEW, "filter the tree by island (cycles)") \
	X(FILTER_STATUS, 's', 0,       "s",     "",       "status",  TUI_IN_TREE,   TUI_G_VIEW, "filter the tree by status (cycles through those present)") \
	X(FILTER_ORIGIN, 'o', 0,       "o",     "",       "origin",  TUI_IN_TREE,   TUI_G_VIEW, "filter the tree by origin (cycles through those present)") \
	X(FILTER_CLEAR, 'c', 0,        "c",     "",       NULL,      TUI_IN_TREE,   TUI_G_VIEW, "clear every filter") \
	X(EXPLAIN,     't', 0,         "t",     "",       "explain", TUI_IN_ALL,    TUI_G_VIEW, "explain what the focused pane shows (directives, phases, failures)") \
	X(UP,          'k', KEY_UP,    "k",     " Up",    NULL,      TUI_IN_ALL,    TUI_G_MOVE, "move up / scroll up") \
	X(DOWN,        'j', KEY_DOWN,  "j",     " Down",  NULL,      TUI_IN_ALL,    TUI_G_MOVE, "move down / scroll down") \
	X(PAGE_UP,     TUI_CTRL('u'), KEY_PPAGE, "C-u",   " PgUp",  NULL, TUI_IN_ALL, TUI_G_MOVE, "half a page up") \
	X(PAGE_DOWN,   TUI_CTRL('d'), KEY_NPAGE, "C-d",   " PgDn",  NULL, TUI_IN_ALL, TUI_G_MOVE, "half a page down") \
	X(TOP,         'g', KEY_HOME,  "g",     " Home",  NULL,      TUI_IN_ALL,    TUI_G_MOVE, "go to the first line") \
	X(BOTTOM,      'G', KEY_END,   "G",     " End",   NULL,      TUI_IN_ALL,    TUI_G_MOVE, "go to the last line (in the log: follow new events)") \
	X(PARENT,      'u', 0,         "u",     "",       "parent",  TUI_IN_TREE,   TUI_G_MOVE, "jump to the parent of the selected candidate") \
	X(BEST,        'b', 0,         "b",     "",       "best",    TUI_IN_TREE,   TUI_G_MOVE, "jump to the best candidate") \
	X(NEXT_FAIL,   'f', 0,         "f",     "",       NULL,      TUI_IN_TREE,   TUI_G_MOVE, "jump to the next failed candidate") \
	X(FOCUS_NEXT,  '\t', 'l',      "Tab",   " l",     "pane",    TUI_IN_ALL,    TUI_G_MOVE, "focus the next pane, in the order of the layout") \
	X(FOCUS_PREV,  KEY_BTAB, 'h',  "S-Tab", " h",     NULL,      TUI_IN_ALL,    TUI_G_MOVE, "focus the previous pane") \
	X(HELP,        '?', KEY_F(1),  "?",     " F1",    "help",    TUI_IN_ALL,    TUI_G_APP, "this help") \
	X(REDRAW,      TUI_CTRL('l'), 0, "C-l",   "",       NULL,      TUI_IN_ALL,    TUI_G_APP, "redraw the whole screen") \
	X(QUIT,        'q', KEY_F(10), "q",     " F10",   "quit",    TUI_IN_ALL,    TUI_G_APP, "quit (a detached search keeps running)")

typedef enum tui_action {
	TUI_ACT_NONE,
#define X(a, k1, k2, name, more, label, ctx, group, help) TUI_ACT_##a,
	TUI_ACTIONS(X)
#undef X
	TUI_ACT_COUNT
} tui_action;

typedef struct tui_binding {
	int key, alt;
	const char *name;    /* the key's, as prose and the hint bar write it */
	const char *names;   /* every key's, for the help */
	const char *label;
	unsigned context;
	int group;           /* TUI_G_* */
	const char *help;
} tui_binding;

/* The action bound to a key, or TUI_ACT_NONE. */
tui_action tui_key_action(int key);
const tui_binding *tui_binding_of(tui_action a);
/* The name of the key bound to an action, for prose: "%s clears it". */
const char *tui_key_name(tui_action a);
/* The help text: one line per action under its group's heading, in the
 * table's order. */
void tui_keys_help(cuco_buf *out);
const char *tui_group_name(int group);

#endif
