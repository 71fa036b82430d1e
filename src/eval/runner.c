/* runner.c — how a built program is launched: as is, under mpirun (one
 * host or a hostfile), under srun, or on another host over ssh. The result
 * is one argument vector, run as the stage's child, so the stage's limits
 * and kills cover the launcher and everything it starts. Only ssh needs a
 * shell (it copies, runs and cleans up, and the far side's sshd runs the
 * command through one anyway); there every word is quoted. Also which
 * cores a local run's ranks are bound to, so that compiles can keep off
 * them. */
#include "eval/eval_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool eval_which(const char *prog, char *path, size_t size)
{
	if (strchr(prog, '/')) {
		cuco_strlcpy(path, prog, size);
		return access(prog, X_OK) == 0;
	}
	const char *env = getenv("PATH");
	for (const char *p = env ? env : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");
		char full[PATH_MAX];
		snprintf(full, sizeof full, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", prog);
		if (access(full, X_OK) == 0) {
			cuco_strlcpy(path, full, size);
			return true;
		}
		p += len + (p[len] == ':');
	}
	return false;
}

/* mpirun's options for this runner; as root Open MPI refuses to start
 * without the explicit permission. */
static void mpirun_prefix(const eval_launch *l, eval_argv *out)
{
	eval_argv_push(out, l->launcher);
	if (l->as_root)
		eval_argv_push(out, "--allow-run-as-root");
	if (l->kind == CUCO_RUNNER_HOSTFILE) {
		eval_argv_push(out, "--hostfile");
		eval_argv_push(out, l->hostfile);
	} else {
		/* More ranks than cores is normal on a laptop; do not refuse. A rank
		 * per core keeps one rank's timing off another's core; with fewer
		 * cores than ranks binding is impossible, and Open MPI would refuse. */
		eval_argv_push(out, "--oversubscribe");
		eval_argv_push(out, "--bind-to");
		eval_argv_push(out, l->bind ? "core" : "none");
	}
	if (l->ticket) {  /* for ranks on other hosts: local ones inherit it */
		cuco_buf name = { 0 };
		cuco_buf_printf(&name, "%.*s", (int)strcspn(l->ticket, "="), l->ticket);
		eval_argv_push(out, "-x");
		eval_argv_push(out, name.data);
		cuco_buf_free(&name);
	}
	if (l->preload) {
		/* The ranks only: mpirun itself needs no counting. */
		cuco_buf pre = { 0 };
		cuco_buf_printf(&pre, "LD_PRELOAD=%s", l->preload);
		eval_argv_push(out, "-x");
		eval_argv_push(out, pre.data);
		cuco_buf_free(&pre);
	}
	char n[16];
	snprintf(n, sizeof n, "%d", l->ranks);
	eval_argv_push(out, "-np");
	eval_argv_push(out, n);
}

/* user@host[:port] → the ssh destination and its -p / -P option. */
static void split_host(const char *spec, char *host, size_t size, char *port, size_t psize)
{
	cuco_strlcpy(host, spec, size);
	port[0] = '\0';
	char *colon = strrchr(host, ':');
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		cuco_strlcpy(port, colon + 1, psize);
		*colon = '\0';
	}
}

static void ssh_command(const eval_launch *l, char *const *prog, const char *binary,
	const char *const *extras, int nextras, cuco_buf *out)
{
	char host[256], port[16];
	split_host(l->ssh_host, host, sizeof host, port, sizeof port);
	const char *opts = l->ssh_options ? l->ssh_options : "";
	cuco_buf ssh = { 0 }, scp = { 0 }, remote = { 0 }, setup = { 0 };
	/* Options are the user's own words (e.g. "-i key -o ..."): not quoted. */
	cuco_buf_puts(&ssh, "ssh -o BatchMode=yes");
	cuco_buf_puts(&scp, "scp -q -o BatchMode=yes");
	if (*opts) {
		cuco_buf_printf(&ssh, " %s", opts);
		cuco_buf_printf(&scp, " %s", opts);
	}
	if (*port) {
		cuco_buf_printf(&ssh, " -p %s", port);
		cuco_buf_printf(&scp, " -P %s", port);
	}
	cuco_buf_puts(&ssh, " ");
	eval_shell_quote(&ssh, host);

	cuco_buf_printf(&setup, "mkdir -p %s", l->remote_dir);
	cuco_buf_printf(&remote, "cd %s && timeout -k 2 %.0f ", l->remote_dir, ceil(l->remote_limit_s));
	if (l->ticket) {  /* ssh passes no environment */
		cuco_buf_puts(&remote, "env ");
		eval_shell_quote(&remote, l->ticket);
		cuco_buf_puts(&remote, " ");
	}
	if (l->mpi)
		cuco_buf_printf(&remote, "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
			"mpirun --oversubscribe -np %d ", l->ranks);
	cuco_buf join = { 0 };
	eval_argv_join(prog, &join);
	cuco_buf_puts(&remote, join.data);
	cuco_buf_free(&join);

	cuco_buf_printf(out, "%s ", ssh.data);
	eval_shell_quote(out, setup.data);
	cuco_buf_puts(out, " || { echo 'cuco-ssh: cannot reach the host' >&2; exit 255; }; ");
	cuco_buf_printf(out, "%s ", scp.data);
	eval_shell_quote(out, binary);
	for (int i = 0; i < nextras; i++) {
		cuco_buf_puts(out, " ");
		eval_shell_quote(out, extras[i]);
	}
	cuco_buf_puts(out, " ");
	cuco_buf_printf(out, "%s:%s/", host, l->remote_dir);
	cuco_buf_puts(out, " || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; ");
	cuco_buf_printf(out, "%s ", ssh.data);
	eval_shell_quote(out, remote.data);
	cuco_buf_printf(out, "; rc=$?; %s 'rm -rf %s'; exit $rc", ssh.data, l->remote_dir);
	cuco_buf_free(&ssh);
	cuco_buf_free(&scp);
	cuco_buf_free(&remote);
	cuco_buf_free(&setup);
}

void eval_launch_argv(const eval_launch *l, char *const *prog, const char *binary,
	const char *const *extras, int nextras, eval_argv *out)
{
	char n[16];
	cuco_buf script = { 0 };
	switch (l->kind) {
	case CUCO_RUNNER_LOCAL:
	case CUCO_RUNNER_HOSTFILE:
		if (l->mpi) {
			mpirun_prefix(l, out);
		} else if (l->preload) {
			/* The program only, through env(1): cuco's own process is not
			 * counted. */
			cuco_buf pre = { 0 };
			cuco_buf_printf(&pre, "LD_PRELOAD=%s", l->preload);
			eval_argv_push(out, "env");
			eval_argv_push(out, pre.data);
			cuco_buf_free(&pre);
		}
		break;
	case CUCO_RUNNER_SLURM:
		snprintf(n, sizeof n, "%d", l->ranks);
		eval_argv_push(out, l->launcher);
		eval_argv_push(out, "-n");
		eval_argv_push(out, n);
		break;
	case CUCO_RUNNER_SSH:
		ssh_command(l, prog, binary, extras, nextras, &script);
		eval_argv_push(out, "/bin/sh");
		eval_argv_push(out, "-c");
		eval_argv_push(out, script.data);
		cuco_buf_free(&script);
		return;
	}
	eval_argv_append(out, prog);
}

/* ---- the device set ----------------------------------------------------------- */

typedef struct cpu_core {
	long package, core;   /* sysfs topology ids */
	int first;            /* the lowest CPU of the core */
} cpu_core;

static long topology_id(const char *sysfs, int cpu, const char *name, long fallback)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/cpu%d/topology/%s", sysfs, cpu, name);
	FILE *f = fopen(path, "r");
	long v = fallback;
	if (f && fscanf(f, "%ld", &v) != 1)
		v = fallback;
	if (f)
		fclose(f);
	return v;
}

static int first_of_package(const cpu_core *cores, int n, long package)
{
	for (int i = 0; i < n; i++)
		if (cores[i].package == package)
			return cores[i].first;  /* cores[] is in CPU order: the first seen is lowest */
	return INT_MAX;
}

/* hwloc's order, which Open MPI's --bind-to core follows: packages by their
 * lowest CPU, then cores by theirs. */
static int core_order(const cpu_core *a, const cpu_core *b, const cpu_core *all, int n)
{
	int pa = first_of_package(all, n, a->package), pb = first_of_package(all, n, b->package);
	return pa != pb ? (pa > pb) - (pa < pb) : (a->first > b->first) - (a->first < b->first);
}

bool eval_device_cpus(const char *sysfs, const cpu_set_t *allowed, int ranks, cpu_set_t *device)
{
	cpu_core cores[CPU_SETSIZE];
	int n = 0, cpu_core_of[CPU_SETSIZE];
	CPU_ZERO(device);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, allowed))
			continue;
		/* Without sysfs every CPU counts as a core of its own. */
		long package = topology_id(sysfs, cpu, "physical_package_id", 0);
		long core = topology_id(sysfs, cpu, "core_id", cpu);
		int k = 0;
		while (k < n && !(cores[k].package == package && cores[k].core == core))
			k++;
		if (k == n)
			cores[n++] = (cpu_core){ package, core, cpu };
		cpu_core_of[cpu] = k;
	}
	if (ranks < 1 || n < ranks)
		return false;
	/* The ranks' cores: the first `ranks` in that order. */
	bool chosen[CPU_SETSIZE] = { false };
	for (int r = 0; r < ranks; r++) {
		int best = -1;
		for (int k = 0; k < n; k++)
			if (!chosen[k] && (best < 0 || core_order(&cores[k], &cores[best], cores, n) < 0))
				best = k;
		chosen[best] = true;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, allowed) && chosen[cpu_core_of[cpu]])
			CPU_SET(cpu, device);
	return true;
}
