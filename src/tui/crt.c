/* crt.c — terminal setup, colours, glyphs and terminal restoration.
 *
 * Termination signals only set a flag: the loop sees it (poll returns
 * EINTR) and leaves through the normal path, restoring the terminal. Crash
 * signals restore the terminal from the handler, as htop does, and then
 * re-raise with the default action so the core dump and exit status stay
 * honest; endwin() is not async-signal-safe, but a dying process with the
 * terminal left in raw mode is worse. */
#include "tui/crt.h"
#include "env.h"

#include <term.h>

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const tui_glyphs glyphs_utf8 = {
	.branch = "├─", .last = "└─", .vert = "│ ", .blank = "  ",
	.folded = "▸", .unfolded = "▾", .leaf = "─",
	.pin = "★", .mark = "◆", .best = "▲", .more = "…", .arrow = "→", .sep = "·",
	.status = { "○", "◔", "◑", "◕", "●", "✗", "⊘" },
	.fill = { "█", "▓", "▒", "░", "▞", "▪" }, .unaccounted = "·",
};

static const tui_glyphs glyphs_ascii = {
	.branch = "|-", .last = "`-", .vert = "| ", .blank = "  ",
	.folded = "+", .unfolded = "-", .leaf = "-",
	.pin = "*", .mark = "M", .best = "^", .more = "~", .arrow = "->", .sep = "-",
	.status = { ".", "c", "r", "b", "o", "X", "/" },
	.fill = { "#", "=", "~", "!", "%", ":" }, .unaccounted = ".",
};

/* Whether curses owns the terminal: read by the crash handler. */
static volatile sig_atomic_t curses_active;
static volatile sig_atomic_t interrupted;
static SCREEN *screen;  /* the one the UI thread made; freed by tui_crt_done */
static bool clear_on_exit;

static void on_term(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void on_crash(int sig)
{
	if (curses_active) {
		curses_active = 0;
		endwin();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

bool tui_crt_interrupted(void)
{
	return interrupted != 0;
}

/* The signals the screen handles, and what the caller had (cuco run has
 * its own), put back when the screen ends. */
static const int handled[] = { SIGTERM, SIGHUP, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NHANDLED (int)(sizeof handled / sizeof handled[0])
static struct sigaction saved[NHANDLED];

static void install_signals(void)
{
	for (int i = 0; i < NHANDLED; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sigemptyset(&sa.sa_mask);
		bool crash = i >= 3;
		/* No SA_RESTART for the others: poll() must wake. */
		sa.sa_handler = crash ? on_crash : on_term;
		sa.sa_flags = crash ? SA_RESETHAND : 0;
		sigaction(handled[i], &sa, &saved[i]);
	}
}

static void restore_signals(void)
{
	for (int i = 0; i < NHANDLED; i++)
		sigaction(handled[i], &saved[i], NULL);
}

static void restore_at_exit(void)
{
	if (curses_active) {
		curses_active = 0;
		endwin();
	}
}

/* A 256-colour index on a terminal with fewer: the nearest of the eight
 * ANSI colours (bright ones lose brightness). A grey is meant to stand out
 * a little from the background, so as a foreground it goes to the far
 * side of it (white, which 8-colour terminals draw grey, over a dark
 * background; black over a light one) and as a background to its side.
 * A dark cube colour keeps its hue instead of turning black. */
static short fit_colour(short c, int colors, bool fg, bool light)
{
	if (c < 0 || c < colors)
		return c;
	bool grey = c == 8 || c >= 232;
	if (grey)
		return (short)(fg == light ? 0 : 7);
	if (c < 16)
		return (short)(c - 8);
	int v = c - 16, r = v / 36, g = (v / 6) % 6, b = v % 6;
	int top = r > g ? (r > b ? r : b) : (g > b ? g : b);
	int on = top >= 3 ? 3 : top > 0 ? top : 1;
	if (r == g && g == b)  /* the cube's own greys */
		return (short)(top == 0 ? 0 : fg == light ? 0 : 7);
	return (short)((r >= on) | (g >= on) << 1 | (b >= on) << 2);
}

static attr_t style_attrs(const tui_style *s)
{
	attr_t a = A_NORMAL;
	if (s->attrs & TUI_ATTR_BOLD)
		a |= A_BOLD;
	if (s->attrs & TUI_ATTR_REVERSE)
		a |= A_REVERSE;
	if (s->attrs & TUI_ATTR_UNDERLINE)
		a |= A_UNDERLINE;
	if (s->attrs & TUI_ATTR_DIM)
		a |= A_DIM;
	return a;
}

/* With fewer colours than the theme was written for, an element whose
 * background falls onto the terminal's own (a dim selection, the header)
 * would look like plain text: it takes its monochrome attributes too, so
 * its meaning survives as it does without colour. */
static void setup_colours(tui_crt *c, const tui_theme *t)
{
	tui_theme mono;
	tui_theme_mono(&mono);
	for (int i = 0; i < TUI_EL_COUNT; i++) {
		const tui_style *s = &t->el[i];
		attr_t a = style_attrs(s);
		if (c->color) {
			short fg = fit_colour(s->fg, c->colors, true, t->light);
			short bg = fit_colour(s->bg, c->colors, false, t->light);
			if (s->fg > 8 && s->fg < 16 && c->colors < 16)
				a |= A_BOLD;  /* the usual stand-in for a bright foreground */
			if (s->bg >= 0 && bg != s->bg && bg == (t->light ? 7 : 0))
				a |= style_attrs(&mono.el[i]);
			init_pair((short)(i + 1), fg, bg);
			a |= COLOR_PAIR(i + 1);
		}
		c->attr[i] = a;
	}
}

static bool no_color_env(void)
{
	const char *v = cuco_env_get()->no_color;
	return v && *v;  /* no-color.org: present and not empty */
}

int tui_crt_init(tui_crt *c, const char *theme_name, bool no_color, bool ascii, cuco_err *err)
{
	memset(c, 0, sizeof *c);
	setlocale(LC_ALL, "");
	c->utf8 = !ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	c->g = c->utf8 ? &glyphs_utf8 : &glyphs_ascii;
	no_color = no_color || no_color_env();

	tui_theme theme;
	if (no_color)
		tui_theme_mono(&theme);
	else if (theme_name) {
		if (tui_theme_load(&theme, theme_name, err) != CUCO_OK)
			return CUCO_EDATA;
	} else if (tui_theme_load(&theme, "dark", NULL) != CUCO_OK)
		tui_theme_default(&theme);  /* not installed: the built-in dark */

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return cuco_errf(err, CUCO_EENV, "the screen needs a terminal (use 'cuco ls' or 'cuco report' from scripts)");
	/* newterm, unlike initscr, returns an error instead of exiting. */
	const char *term = cuco_env_get()->term ? cuco_env_get()->term : "";
	if (!(screen = newterm(NULL, stdout, stdin)))
		return cuco_errf(err, CUCO_EENV, "TERM=%s: terminal type unknown to terminfo", term);
	/* A terminal that cannot place the cursor (TERM=dumb) would show a
	 * blank screen: refuse it with words instead. */
	const char *cup = tigetstr("cup");
	if (!cup || cup == (char *)-1) {
		endwin();
		delscreen(screen);
		screen = NULL;
		return cuco_errf(err, CUCO_EENV, "TERM=%s: the terminal cannot move the cursor, and the screen "
			"needs that; try TERM=xterm-256color, or 'cuco ls' and 'cuco report'", term);
	}
	/* Without an alternate screen (vt100) what was drawn stays after exit. */
	clear_on_exit = !tigetstr("smcup") || tigetstr("smcup") == (char *)-1;
	curses_active = 1;
	interrupted = 0;
	atexit(restore_at_exit);
	install_signals();
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	leaveok(stdscr, TRUE);
	set_escdelay(25);  /* Esc answers at once over SSH */
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);

	if (!no_color && has_colors()) {
		start_color();
		use_default_colors();
		c->color = true;
		c->colors = COLORS;
	}
	else
		tui_theme_mono(&theme);  /* without colours the attribute column carries the meaning */
	setup_colours(c, &theme);
	return CUCO_OK;
}

void tui_crt_done(void)
{
	if (curses_active) {
		curses_active = 0;
		if (clear_on_exit) {
			clear();
			refresh();
		}
		endwin();
	}
	if (screen) {
		delscreen(screen);
		screen = NULL;
		restore_signals();
	}
}

void tui_crt_suspend(void)
{
	def_prog_mode();
	endwin();
	curses_active = 0;
}

void tui_crt_resume(void)
{
	reset_prog_mode();
	curses_active = 1;
	clearok(curscr, TRUE);
	refresh();
}
