/* env.c — cuco's own environment variables, and the world's it reads,
 * read once (env.h). */
#include "env.h"
#include "core.h"

#include <pthread.h>
#include <stdlib.h>

static const cuco_env_var vars[] = {
#define VAR_ROW(name, field, type, def, help) { #name, type, def, help },
	CUCO_ENV_VARS(VAR_ROW)
#undef VAR_ROW
};

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static cuco_env env;
static bool env_read;

const cuco_env_var *cuco_env_vars(size_t *n)
{
	*n = sizeof vars / sizeof vars[0];
	return vars;
}

/* A variable's value, copied; NULL when it is not set. A def (cuco's own
 * variables) stands for "" too, when it is a value, not prose in
 * brackets; NULL (the world's) keeps "" as it is. */
static const char *read_var(const char *name, const char *def)
{
	const char *v = getenv(name);
	if (v && (*v || !def))
		return cuco_xstrdup(v);
	return def && def[0] != '(' ? cuco_xstrdup(def) : NULL;
}

static void read_all(void)
{
#define VAR_READ(name, field, type, def, help) \
	free((char *)env.field); \
	env.field = read_var(#name, def);
#define WORLD_READ(name, field) VAR_READ(name, field, , NULL, )
	CUCO_ENV_VARS(VAR_READ)
	CUCO_WORLD_VARS(WORLD_READ)
#undef WORLD_READ
#undef VAR_READ
	env_read = true;
}

const cuco_env *cuco_env_get(void)
{
	pthread_mutex_lock(&env_lock);
	if (!env_read)
		read_all();
	pthread_mutex_unlock(&env_lock);
	return &env;
}

void cuco_env_reread(void)
{
	pthread_mutex_lock(&env_lock);
	read_all();
	pthread_mutex_unlock(&env_lock);
}

const char *cuco_tmp_dir(void)
{
	const char *tmp = cuco_env_get()->tmpdir;
	return tmp && *tmp ? tmp : "/tmp";
}
