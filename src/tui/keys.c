/* keys.c — the binding table built from TUI_ACTIONS. */
#include "core.h"

#include <curses.h>

#include "tui/keys.h"

static const tui_binding bindings[TUI_ACT_COUNT] = {
	[TUI_ACT_NONE] = { 0, 0, "", "", NULL, 0, TUI_G_APP, "" },
#define X(a, k1, k2, name, more, label, ctx, group, help) \
	[TUI_ACT_##a] = { k1, k2, name, name more, label, ctx, group, help },
	TUI_ACTIONS(X)
#undef X
};

tui_action tui_key_action(int key)
{
	if (key == '\r')
		key = '\n';
	for (int a = 1; a < TUI_ACT_COUNT; a++)
		if (bindings[a].key == key || (bindings[a].alt && bindings[a].alt == key))
			return (tui_action)a;
	return TUI_ACT_NONE;
}

const tui_binding *tui_binding_of(tui_action a)
{
	return a > TUI_ACT_NONE && a < TUI_ACT_COUNT ? &bindings[a] : &bindings[TUI_ACT_NONE];
}

const char *tui_key_name(tui_action a)
{
	return tui_binding_of(a)->name;
}

const char *tui_group_name(int group)
{
	static const char *const names[TUI_G_COUNT] = {
		"Actions (stored with your name)", "Looking", "Moving", "The screen",
	};
	return group >= 0 && group < TUI_G_COUNT ? names[group] : "";
}

void tui_keys_help(cuco_buf *out)
{
	for (int a = 1; a < TUI_ACT_COUNT; a++) {
		if (a == 1 || bindings[a].group != bindings[a - 1].group)
			cuco_buf_printf(out, "%s%s:\n", a > 1 ? "\n" : "", tui_group_name(bindings[a].group));
		cuco_buf_printf(out, "  %-11s %s\n", bindings[a].names, bindings[a].help);
	}
}
