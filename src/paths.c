/* paths.c — where cuco's own files are: the config file and the folders
 * of workloads and themes (core.h, "where cuco's files are").
 *
 * DESIGN: one function finds them all, once per process, from the
 * environment and the executable's own place, so that an installed cuco
 * works from any folder with no variable set and wherever its prefix is
 * (`meson install --prefix ~/.local`, or a tree copied elsewhere): the
 * data are looked for beside the executable first (PREFIX/bin/cuco reads
 * PREFIX/share/cuco; a build tree's cuco reads its source tree), then in
 * the data folder the build was configured for. The person's own folders
 * come before cuco's (the XDG Base Directory specification): the current
 * folder's workloads/ and themes/, $XDG_DATA_HOME/cuco; the system's
 * after ($XDG_DATA_DIRS). $CUCO_WORKLOADS and $CUCO_THEMES come from
 * env.h's one reading; HOME and the XDG variables are read here, the one
 * place that uses them to find cuco's own files. Every reader (workloads, themes, the fast
 * path's examples, the config readers, `cuco doctor`) takes them from
 * here. */
#include "core.h"
#include "env.h"

#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by meson (src/meson.build); these defaults only serve a compile
 * outside it. */
#ifndef CUCO_PREFIX
#define CUCO_PREFIX "/usr/local"
#endif
#ifndef CUCO_BINDIR
#define CUCO_BINDIR "bin"
#endif
#ifndef CUCO_DATADIR
#define CUCO_DATADIR "share"
#endif
#ifndef CUCO_MANDIR
#define CUCO_MANDIR "share/man"
#endif
#ifndef CUCO_BUILD_ROOT
#define CUCO_BUILD_ROOT ""
#endif
#ifndef CUCO_SOURCE_ROOT
#define CUCO_SOURCE_ROOT ""
#endif

/* As arrays, so that an empty one is tested as data, not as a constant. */
static const char build_root[] = CUCO_BUILD_ROOT, source_root[] = CUCO_SOURCE_ROOT;

static pthread_mutex_t paths_lock = PTHREAD_MUTEX_INITIALIZER;
static cuco_paths paths;
static bool paths_read;

static bool is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A variable's value when it is set and not "". */
static const char *env_set(const char *v)
{
	return v && *v ? v : NULL;
}

/* Append a folder, given printf-style, to a list, unless it is there
 * already (the same folder reached twice: an installed prefix that is
 * also in $XDG_DATA_DIRS). */
static void add(cuco_folder *list, int *n, const char *from, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(cuco_folder *list, int *n, const char *from, const char *fmt, ...)
{
	if (*n == CUCO_MAX_FOLDERS)
		return;
	cuco_folder f = { .from = from };
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(f.path, sizeof f.path, fmt, ap);
	va_end(ap);
	if (len <= 0 || (size_t)len >= sizeof f.path)
		return;
	char real[PATH_MAX], other[PATH_MAX];
	bool exists = realpath(f.path, real) != NULL;
	for (int i = 0; i < *n; i++)
		if (strcmp(list[i].path, f.path) == 0 ||
		    (exists && realpath(list[i].path, other) && strcmp(other, real) == 0))
			return;
	list[(*n)++] = f;
}

/* Each folder of a colon-separated list, with TAIL ("" or "/cuco/themes")
 * appended; an empty entry is none. */
static void add_each(cuco_folder *list, int *n, const char *from, const char *colon_list,
	const char *tail)
{
	while (colon_list && *colon_list) {
		int len = (int)strcspn(colon_list, ":");
		if (len > 0)
			add(list, n, from, "%.*s%s", len, colon_list, tail);
		colon_list += len + (colon_list[len] == ':');
	}
}

/* Where the running executable's prefix is: PREFIX when it is
 * PREFIX/<bindir>/cuco; for a cuco run from its build tree, the source
 * tree holds the data, and *in_build says so. False when neither. */
static bool exe_prefix(char *out, size_t size, bool *in_build)
{
	char exe[PATH_MAX], build[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';  /* exe is now its folder */
	*in_build = build_root[0] && realpath(build_root, build) && strcmp(build, exe) == 0;
	if (*in_build)
		return cuco_strlcpy(out, source_root, size);
	size_t blen = strlen(CUCO_BINDIR), elen = strlen(exe);
	if (CUCO_BINDIR[0] == '/' || elen <= blen || exe[elen - blen - 1] != '/' ||
	    strcmp(exe + elen - blen, CUCO_BINDIR) != 0)
		return false;
	exe[elen - blen - 1] = '\0';
	return cuco_strlcpy(out, exe, size);
}

/* PREFIX/<rel>, or rel itself when the build was configured with an
 * absolute folder. */
static void under(char *out, size_t size, const char *prefix, const char *rel)
{
	int len = rel[0] == '/' ? snprintf(out, size, "%s", rel) : snprintf(out, size, "%s/%s", prefix, rel);
	if (len < 0 || (size_t)len >= size)
		out[0] = '\0';  /* too long to be a folder: none */
}

/* The data folders' SUB (workloads or themes), after the current
 * folder's: the person's, cuco's own (beside the executable, then where
 * the build was configured to put them), the system's. */
static void add_data(cuco_folder *list, int *n, const char *sub)
{
	const cuco_env *env = cuco_env_get();
	const char *xdg = env_set(env->xdg_data_home), *home = env_set(env->home);
	if (xdg)
		add(list, n, "$XDG_DATA_HOME", "%s/cuco/%s", xdg, sub);
	else if (home)
		add(list, n, "~/.local/share", "%s/.local/share/cuco/%s", home, sub);
	char prefix[PATH_MAX], data[PATH_MAX];
	bool in_build = false, beside = exe_prefix(prefix, sizeof prefix, &in_build);
	if (beside && in_build) {
		add(list, n, "the source tree of this build", "%s/%s", prefix, sub);
	} else if (beside) {
		under(data, sizeof data, prefix, CUCO_DATADIR);
		add(list, n, "beside the executable", "%s/cuco/%s", data, sub);
	}
	under(data, sizeof data, CUCO_PREFIX, CUCO_DATADIR);
	add(list, n, "the configured prefix", "%s/cuco/%s", data, sub);
	char tail[64];
	snprintf(tail, sizeof tail, "/cuco/%s", sub);
	const char *sys = env_set(env->xdg_data_dirs);
	add_each(list, n, sys ? "$XDG_DATA_DIRS" : "/usr/local/share, /usr/share",
		sys ? sys : "/usr/local/share:/usr/share", tail);
}

/* The config file: the first that exists of the person's
 * ($XDG_CONFIG_HOME/cuco/config, else ~/.config/cuco/config) and the
 * system's ($XDG_CONFIG_DIRS, else /etc/xdg); none: the person's, where
 * one would be written. */
static void find_config(cuco_paths *p)
{
	cuco_folder list[CUCO_MAX_FOLDERS];
	int n = 0;
	const cuco_env *env = cuco_env_get();
	const char *xdg = env_set(env->xdg_config_home), *home = env_set(env->home);
	if (xdg)
		add(list, &n, "$XDG_CONFIG_HOME", "%s/cuco/config", xdg);
	else if (home)
		add(list, &n, "~/.config", "%s/.config/cuco/config", home);
	const char *sys = env_set(env->xdg_config_dirs);
	add_each(list, &n, sys ? "$XDG_CONFIG_DIRS" : "/etc/xdg", sys ? sys : "/etc/xdg",
		"/cuco/config");
	for (int i = 0; i < n && !p->config_found; i++)
		p->config_found = is_file(list[i].path);
	for (int i = 0; i < n; i++)
		if (!p->config_found || is_file(list[i].path)) {
			cuco_strlcpy(p->config, list[i].path, sizeof p->config);
			p->config_from = list[i].from;
			break;
		}
}

bool cuco_installed_beside(const char *rel, char *out, size_t size)
{
	char prefix[PATH_MAX];
	bool in_build = false;
	if (!exe_prefix(prefix, sizeof prefix, &in_build) || in_build || rel[0] == '/')
		return false;
	under(out, size, prefix, rel);
	return true;
}

/* The manual beside the executable, else where the build was configured
 * to put it, else the source tree's ("" when none is readable). */
static void find_manual(cuco_paths *p)
{
	char prefix[PATH_MAX], man[PATH_MAX], path[PATH_MAX + 32];
	bool in_build = false;
	p->manual[0] = '\0';
	p->manual_installed = false;
	if (exe_prefix(prefix, sizeof prefix, &in_build) && !in_build) {
		under(man, sizeof man, prefix, CUCO_MANDIR);
		snprintf(path, sizeof path, "%s/man1/cuco.1", man);
		p->manual_installed = is_file(path);
	}
	if (!p->manual_installed) {
		under(man, sizeof man, CUCO_PREFIX, CUCO_MANDIR);
		snprintf(path, sizeof path, "%s/man1/cuco.1", man);
		p->manual_installed = is_file(path);
	}
	if (!p->manual_installed && source_root[0])
		snprintf(path, sizeof path, "%s/docs/cuco.1", source_root);
	if (p->manual_installed || is_file(path))
		cuco_strlcpy(p->manual, path, sizeof p->manual);
}

static void find_all(cuco_paths *p)
{
	const cuco_env *env = cuco_env_get();
	memset(p, 0, sizeof *p);
	add_each(p->workloads, &p->nworkloads, "$CUCO_WORKLOADS", env->workloads, "");
	add(p->workloads, &p->nworkloads, "the current folder", "workloads");
	add_data(p->workloads, &p->nworkloads, "workloads");
	add_each(p->themes, &p->nthemes, "$CUCO_THEMES", env->themes, "");
	add(p->themes, &p->nthemes, "the current folder", "themes");
	add_data(p->themes, &p->nthemes, "themes");
	find_config(p);
	find_manual(p);
}

const cuco_paths *cuco_paths_get(void)
{
	pthread_mutex_lock(&paths_lock);
	if (!paths_read)
		find_all(&paths);
	paths_read = true;
	pthread_mutex_unlock(&paths_lock);
	return &paths;
}

void cuco_paths_reread(void)
{
	cuco_env_reread();
	pthread_mutex_lock(&paths_lock);
	find_all(&paths);
	paths_read = true;
	pthread_mutex_unlock(&paths_lock);
}

bool cuco_folder_exists(const cuco_folder *f)
{
	return is_dir(f->path);
}
