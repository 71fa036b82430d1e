/* theme.c — reading themes/NAME.theme over the built-in dark theme. */
#include "tui/theme.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THEME_MAX_BYTES (64 * 1024)

static const char *const element_keys[TUI_EL_COUNT] = {
#define X(e, key, def, mono) key,
	TUI_ELEMENTS(X)
#undef X
};

static const char *const element_defaults[TUI_EL_COUNT] = {
#define X(e, key, def, mono) def,
	TUI_ELEMENTS(X)
#undef X
};

static const char *const element_mono[TUI_EL_COUNT] = {
#define X(e, key, def, mono) mono,
	TUI_ELEMENTS(X)
#undef X
};

/* The eight ANSI names; "bright-" adds 8. */
static const char *const colour_names[8] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

static int parse_colour(const char *word, short *out)
{
	if (strcmp(word, "default") == 0 || strcmp(word, "none") == 0) {
		*out = TUI_COLOR_DEFAULT;
		return CUCO_OK;
	}
	int base = 0;
	if (strncmp(word, "bright-", 7) == 0) {
		base = 8;
		word += 7;
	}
	int i = cuco_name_index(colour_names, 8, word);
	if (i >= 0) {
		*out = (short)(base + i);
		return CUCO_OK;
	}
	if (base)
		return CUCO_EDATA;
	if (strncmp(word, "color", 5) == 0)
		word += 5;
	char *end = NULL;
	long n = strtol(word, &end, 10);
	if (!*word || *end || n < 0 || n > 255)
		return CUCO_EDATA;
	*out = (short)n;
	return CUCO_OK;
}

/* Parse one value: "[fg] [on bg] [bold] [reverse] [underline] [dim]" where a
 * colour is a name (red, bright-red, default, …) or colorN / N (0..255). */
static int tui_style_parse(const char *text, tui_style *out, cuco_err *err)
{
	tui_style s = { TUI_COLOR_DEFAULT, TUI_COLOR_DEFAULT, 0 };
	char buf[256];
	if (!cuco_strlcpy(buf, text, sizeof buf))
		return cuco_errf(err, CUCO_EDATA, "style too long: %.40s…", text);
	bool want_bg = false, have_fg = false;
	for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "bold") == 0)
			s.attrs |= TUI_ATTR_BOLD;
		else if (strcmp(w, "reverse") == 0)
			s.attrs |= TUI_ATTR_REVERSE;
		else if (strcmp(w, "underline") == 0)
			s.attrs |= TUI_ATTR_UNDERLINE;
		else if (strcmp(w, "dim") == 0)
			s.attrs |= TUI_ATTR_DIM;
		else if (strcmp(w, "on") == 0)
			want_bg = true;
		else if (want_bg) {
			if (parse_colour(w, &s.bg) != CUCO_OK)
				return cuco_errf(err, CUCO_EDATA, "'%s' is not a colour", w);
			want_bg = false;
		} else if (!have_fg) {
			if (parse_colour(w, &s.fg) != CUCO_OK)
				return cuco_errf(err, CUCO_EDATA, "'%s' is not a colour or attribute", w);
			have_fg = true;
		} else
			return cuco_errf(err, CUCO_EDATA, "'%s': a second foreground colour", w);
	}
	if (want_bg)
		return cuco_errf(err, CUCO_EDATA, "'on' without a background colour");
	*out = s;
	return CUCO_OK;
}

void tui_theme_default(tui_theme *t)
{
	memset(t, 0, sizeof *t);
	cuco_strlcpy(t->name, "dark", sizeof t->name);
	for (int i = 0; i < TUI_EL_COUNT; i++)
		tui_style_parse(element_defaults[i], &t->el[i], NULL);
}

void tui_theme_mono(tui_theme *t)
{
	memset(t, 0, sizeof *t);
	cuco_strlcpy(t->name, "monochrome", sizeof t->name);
	for (int i = 0; i < TUI_EL_COUNT; i++)
		tui_style_parse(element_mono[i], &t->el[i], NULL);
}

static int parse_line(tui_theme *t, char *line, const char *where, int lineno, cuco_err *err)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	line = cuco_trim(line);
	if (!*line)
		return CUCO_OK;
	char *eq = strchr(line, '=');
	if (!eq)
		return cuco_errf(err, CUCO_EDATA, "%s:%d: expected 'element = colour'", where, lineno);
	*eq = '\0';
	char *key = cuco_trim(line), *value = cuco_trim(eq + 1);
	if (strcmp(key, "name") == 0) {
		cuco_strlcpy(t->name, value, sizeof t->name);
		return CUCO_OK;
	}
	if (strcmp(key, "background") == 0) {
		if (strcmp(value, "dark") != 0 && strcmp(value, "light") != 0)
			return cuco_errf(err, CUCO_EDATA, "%s:%d: background: '%s' is not dark or light", where,
				lineno, value);
		t->light = strcmp(value, "light") == 0;
		return CUCO_OK;
	}
	for (int i = 0; i < TUI_EL_COUNT; i++) {
		if (strcmp(key, element_keys[i]) != 0)
			continue;
		cuco_err e = { 0 };
		if (tui_style_parse(value, &t->el[i], &e) != CUCO_OK)
			return cuco_errf(err, CUCO_EDATA, "%s:%d: %s: %s", where, lineno, key, e.msg);
		return CUCO_OK;
	}
	return cuco_errf(err, CUCO_EDATA, "%s:%d: unknown element '%s'", where, lineno, key);
}

int tui_theme_parse(tui_theme *t, const char *text, const char *where, cuco_err *err)
{
	char *copy = cuco_xstrdup(text);
	int rc = CUCO_OK, lineno = 0;
	for (char *line = copy, *next; line && rc == CUCO_OK; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		rc = parse_line(t, line, where, ++lineno, err);
	}
	free(copy);
	return rc;
}

/* A name no theme folder holds: the ones they do, and the nearest. */
static int theme_not_found(const char *name, cuco_err *err)
{
	const cuco_paths *p = cuco_paths_get();
	char *names[64];
	size_t n = 0;
	cuco_buf known = { 0 };
	for (int i = 0; i < p->nthemes; i++) {
		DIR *d = opendir(p->themes[i].path);
		struct dirent *e;
		while (d && (e = readdir(d)) && n < sizeof names / sizeof names[0]) {
			size_t len = strlen(e->d_name);
			if (len <= 6 || strcmp(e->d_name + len - 6, ".theme") != 0)
				continue;
			char *one = cuco_xstrdup(e->d_name);
			one[len - 6] = '\0';
			if (cuco_buf_add_once(&known, one))
				names[n++] = one;
			else
				free(one);
		}
		if (d)
			closedir(d);
	}
	const char *near = cuco_nearest(name, (const char *const *)names, n);
	cuco_buf list = { 0 };
	for (size_t i = 0; i < n; i++)
		cuco_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
	if (near)
		cuco_errf(err, CUCO_EDATA, "theme '%s': not found; did you mean %s?", name, near);
	else if (n)
		cuco_errf(err, CUCO_EDATA, "theme '%s': not found; there are %s", name, list.data);
	else
		cuco_errf(err, CUCO_EDATA, "theme '%s': not found, and no theme folder has any "
			"(cuco doctor says where they are looked for)", name);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	cuco_buf_free(&list);
	cuco_buf_free(&known);
	return CUCO_EDATA;
}

/* A name is looked up in the theme folders; a path is read as given. */
static bool is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 6 && strcmp(s + n - 6, ".theme") == 0);
}

int tui_theme_load(tui_theme *t, const char *name_or_path, cuco_err *err)
{
	tui_theme_default(t);
	char path[1024];
	char *text = NULL;
	size_t len = 0;
	if (is_path(name_or_path)) {
		if (cuco_read_text(name_or_path, THEME_MAX_BYTES, &text, &len, err) != CUCO_OK)
			return CUCO_EDATA;
		cuco_strlcpy(path, name_or_path, sizeof path);
	} else {
		const cuco_paths *p = cuco_paths_get();
		for (int i = 0; i < p->nthemes && !text; i++) {
			if ((size_t)snprintf(path, sizeof path, "%s/%s.theme", p->themes[i].path,
					     name_or_path) >= sizeof path)
				continue;  /* a path this long cannot name a theme file here */
			cuco_err why = { 0 };
			int rc = cuco_read_text(path, THEME_MAX_BYTES, &text, &len, &why);
			if (rc == CUCO_EDATA)  /* found, but not a theme: say so, not "not found" */
				return cuco_errf(err, CUCO_EDATA, "%s", why.msg);
			if (rc != CUCO_OK)
				text = NULL;
		}
		if (!text)
			return theme_not_found(name_or_path, err);
	}
	cuco_strlcpy(t->name, name_or_path, sizeof t->name);
	int rc = tui_theme_parse(t, text, path, err);
	free(text);
	return rc;
}
