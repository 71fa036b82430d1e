/* fuzz_theme — the theme reader on arbitrary text: a theme file is the
 * user's or a download, and the screen must take it or refuse it with one
 * line naming file:line, never crash. Whatever it takes, every colour is
 * one the terminal layer can map (0..255 or the terminal's default). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/theme.h"

static void check_style(const tui_style *s)
{
	if (s->fg < TUI_COLOR_DEFAULT || s->fg > 255 || s->bg < TUI_COLOR_DEFAULT || s->bg > 255)
		abort();
	if (s->attrs & ~(unsigned)(TUI_ATTR_BOLD | TUI_ATTR_REVERSE | TUI_ATTR_UNDERLINE | TUI_ATTR_DIM))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	tui_theme t;
	tui_theme_default(&t);
	cuco_err err;
	if (tui_theme_parse(&t, text, "fuzz.theme", &err) != CUCO_OK && strchr(err.msg, '\n'))
		abort();
	if (!memchr(t.name, '\0', sizeof t.name))
		abort();
	for (int i = 0; i < TUI_EL_COUNT; i++)
		check_style(&t.el[i]);
	free(text);
	return 0;
}
