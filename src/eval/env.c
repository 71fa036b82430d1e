/* env.c — the environment a stage gets: only what compilers, MPI, CUDA and
 * NCCL read, named in one table, not cuco's own minus a list of secret
 * names (issue 18: a token under an unremarkable name, GH_PAT, reached the
 * candidate). docs/workloads.md shows the same table. */
#include "eval/eval_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* A variable passes when its name is one of these, or starts with one
 * marked as a prefix. */
static const struct {
	const char *name;
	bool prefix;
} allowed[] = {
	/* the system: finding programs and libraries, the user, the locale */
	{ "PATH", false }, { "HOME", false }, { "USER", false }, { "LOGNAME", false },
	{ "LANG", false }, { "LANGUAGE", false }, { "LC_", true }, { "TZ", false },
	/* compilers and linkers */
	{ "LD_LIBRARY_PATH", false }, { "LIBRARY_PATH", false }, { "CPATH", false },
	{ "C_INCLUDE_PATH", false }, { "CPLUS_INCLUDE_PATH", false }, { "PKG_CONFIG_PATH", false },
	/* CUDA, its compiler, NCCL, the container runtime's GPU selection */
	{ "CUDA_", true }, { "NVCC_", true }, { "NCCL_", true }, { "NVIDIA_", true },
	/* Open MPI and what it is built on; OpenMP */
	{ "OMPI_", true }, { "OPAL_", true }, { "PMIX_", true }, { "PRTE_", true },
	{ "HWLOC_", true }, { "UCX_", true }, { "OMP_", true }, { "GOMP_", true },
	/* the Slurm runner's srun */
	{ "SLURM_", true },
};

/* Even an allowed or named variable is dropped when its name says it holds
 * a secret (NCCL_…_TOKEN, a key named in CUCO_PASS_ENV by mistake). */
bool eval_env_secret(const char *name)
{
	static const char *const parts[] = { "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
		"CREDENTIAL", "AUTH", NULL };
	static const char *const names[] = { "DATABASE_URL", "PGPASSFILE", "NETRC" };
	/* The ssh runner needs the agent; the socket is not a secret itself. */
	if (strcmp(name, "SSH_AUTH_SOCK") == 0)
		return false;
	if (cuco_name_index(names, sizeof names / sizeof names[0], name) >= 0)
		return true;
	for (int i = 0; parts[i]; i++)
		if (strcasestr(name, parts[i]))
			return true;
	return false;
}

/* Whether name is one of the words of list (blank, comma or colon separated). */
static bool listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list ? list : ""; *p;) {
		p += strspn(p, " \t,:");
		size_t n = strcspn(p, " \t,:");
		if (n == len && strncmp(p, name, n) == 0)
			return true;
		p += n;
	}
	return false;
}

/* Whether a variable of that name reaches a stage: the allowlist's names
 * and prefixes, the names in $CUCO_PASS_ENV, SSH_AUTH_SOCK for the ssh
 * and hostfile runners; never a name that looks like a secret (eval_env_secret). */
static bool eval_env_allowed(const char *name, bool ssh_agent, const char *pass_env)
{
	if (eval_env_secret(name))
		return false;
	if (strcmp(name, "SSH_AUTH_SOCK") == 0)
		return ssh_agent;
	if (strcmp(name, "TMPDIR") == 0 || strcmp(name, "NCCL_NVLS_ENABLE") == 0)
		return false;  /* set by cuco */
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		if (allowed[i].prefix ? strncmp(name, allowed[i].name, strlen(allowed[i].name)) == 0
				: strcmp(name, allowed[i].name) == 0)
			return true;
	return listed(pass_env, name);
}

/* Set for every stage whatever the user's environment says: NVLink
 * multicast (NVLS) is never used by cuco's kernels, and NCCL's NVLS setup
 * failed on the GPU machines we measured (shared/GPU-MACHINE.md). */
static const char forced_nvls[] = "NCCL_NVLS_ENABLE=0";

/* Set for a stage whose filter denies process_vm_readv (seccomp.c): Open
 * MPI's shared-memory transport would copy large messages with it (CMA),
 * fail ("Read -1, expected N, errno = 1"), and fall back only after the
 * error. Copying through the shared memory itself needs no such call:
 * 4.x's vader BTL and 5.x's sm BTL (its smsc framework) are told so. */
static const char *const filtered_env[] = {
	"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_smsc=^cma", NULL,
};

/* Whether entry NAME=... names one of extra's variables. */
static bool replaced(const char *name, size_t len, const char *const *extra)
{
	for (size_t i = 0; extra && extra[i]; i++)
		if (strncmp(extra[i], name, len) == 0 && extra[i][len] == '=')
			return true;
	return false;
}

char **eval_stage_env(const char *tmpdir, bool ssh_agent, bool filtered, const char *const *extra,
	const char *pass_env)
{
	size_t n = 0, nextra = 0;
	while (environ[n])
		n++;
	while (extra && extra[nextra])
		nextra++;
	char **env = cuco_xcalloc(n + nextra + 3 + sizeof filtered_env / sizeof filtered_env[0], sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char name[256];
		size_t len = strcspn(environ[i], "=");
		if (len >= sizeof name || !environ[i][len])
			continue;
		memcpy(name, environ[i], len);
		name[len] = '\0';
		if (eval_env_allowed(name, ssh_agent, pass_env) && !replaced(name, len, extra)
				&& !(filtered && replaced(name, len, filtered_env)))
			env[k++] = cuco_xstrdup(environ[i]);
	}
	/* cuco's own entries (the harness's ticket) pass whatever their names. */
	for (size_t i = 0; i < nextra; i++)
		env[k++] = cuco_xstrdup(extra[i]);
	env[k++] = cuco_xstrdup(forced_nvls);
	for (size_t i = 0; filtered && filtered_env[i]; i++)
		env[k++] = cuco_xstrdup(filtered_env[i]);
	if (tmpdir && *tmpdir) {
		cuco_buf b = { 0 };
		cuco_buf_printf(&b, "TMPDIR=%s", tmpdir);
		env[k++] = b.data;
	}
	return env;
}

void eval_stage_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}
