/* env.c — cuco's own environment variables, and CUDA_VISIBLE_DEVICES,
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

/* A variable's value, copied; its default when it is not set or "" and
 * the default is a value, not prose in brackets. */
static const char *read_var(const char *name, const char *def)
{
	const char *v = getenv(name);
	if (v && *v)
		return cuco_xstrdup(v);
	return def[0] != '(' ? cuco_xstrdup(def) : NULL;
}

static void read_all(void)
{
#define VAR_READ(name, field, type, def, help) \
	free((char *)env.field); \
	env.field = read_var(#name, def);
	CUCO_ENV_VARS(VAR_READ)
#undef VAR_READ
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");  /* "" is a value: no GPU */
	free((char *)env.visible_gpus);
	env.visible_gpus = visible ? cuco_xstrdup(visible) : NULL;
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
