/* runner.c — where a built program runs and how it is launched there: on
 * this machine as is or under mpirun, on a host (group) of a hostfile
 * under mpirun --host, on a Slurm node (group) under srun, or on another
 * host over ssh. The result is one argument vector, run as the stage's
 * child, so the stage's limits and kills cover the launcher and everything
 * it starts. Only ssh needs a shell (it copies, runs and cleans up, and
 * the far side's sshd runs the command through one anyway); there every
 * word is quoted. On other hosts `timeout` holds the program (each rank)
 * to its limit, since the launcher may first wait (a Slurm queue, ssh
 * connecting, mpirun starting its daemons over ssh). Over ssh every stage
 * copies into a new folder of a random name (none a process left on the
 * host could have made first); a refereed stage's referee gets one of its
 * own, and where the ssh user is root there the ranks become the stage
 * user (setpriv) in a group made for them, as the referee's host said
 * (eval_ssh_referee, eval_ssh_stage), so that nothing of the referee's is
 * theirs to replace, read or signal, and the gaps between steps freeze.
 *
 * Also here: the [runner] settings as the config file and `--runner`
 * give them, the slots each runner offers, the checks `cuco doctor`
 * shows, and which cores a local run's ranks are bound to, so that
 * compiles can keep off them. */
#include "eval/eval_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_HOSTS 256
#define KILL_AFTER_S 2  /* the far side's timeout -k */

static void collect(const char *line, size_t len, void *arg)
{
	cuco_buf *b = arg;
	if (b && b->len < 65536) {
		cuco_buf_append(b, line, len);
		cuco_buf_puts(b, "\n");
	}
}

int eval_query(char *const *argv, double wall_s, cuco_buf *out)
{
	eval_limits lim = { .wall_s = wall_s, .grace_s = 1, .fsize_mb = 1, .max_procs = 64,
		.log_cap = 1, .pass_env = cuco_env_get()->pass_env };
	eval_stage st;
	cuco_err err = { 0 };
	if (eval_stage_run(argv, "/", "/dev/null", &lim, collect, out, &st, &err) != CUCO_OK)
		return -1;
	return st.timed_out || st.signal ? -1 : st.exit_code;
}

void eval_first_line(const char *text, char *buf, size_t size)
{
	while (*text == '\n' || *text == ' ')
		text++;
	size_t n = strcspn(text, "\n");
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), text);
}

/* ---- the [runner] settings ---------------------------------------------------- */

static const char *const runner_names[] = {
#define X(e, name) name,
	CUCO_RUNNERS(X)
#undef X
};
#define RUNNER_COUNT (sizeof runner_names / sizeof runner_names[0])

const char *cuco_runner_name(cuco_runner_kind kind)
{
	return (unsigned)kind < RUNNER_COUNT ? runner_names[kind] : "?";
}

bool cuco_runner_parse(const char *text, cuco_runner_kind *out)
{
	int i = cuco_name_index(runner_names, RUNNER_COUNT, text);
	if (i >= 0)
		*out = (cuco_runner_kind)i;
	return i >= 0;
}

static bool count(const char *v, int min, int max, int *out)
{
	char *end;
	errno = 0;
	long l = strtol(v, &end, 10);
	if (!*v || *end || errno || l < min || l > max)
		return false;
	*out = (int)l;
	return true;
}

/* A Slurm name (partition, account): what sbatch accepts, nothing a shell
 * would read. */
static bool slurm_name(const char *v)
{
	if (!*v)
		return false;
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return false;
	return true;
}

static bool set_text(char *dst, size_t size, const char *v, char *why, size_t wsize)
{
	if (strlen(v) >= size) {
		snprintf(why, wsize, "longer than %zu characters", size - 1);
		return false;
	}
	for (const char *p = v; *p; p++)
		if (iscntrl((unsigned char)*p)) {
			snprintf(why, wsize, "a control character");
			return false;
		}
	cuco_strlcpy(dst, v, size);
	return true;
}

bool cuco_runner_config_set(cuco_runner_config *c, const char *key, const char *v, char *why,
	size_t size)
{
	int n;
	char *end;
	if (strcmp(key, "kind") == 0) {
		if (!cuco_runner_parse(v, &c->kind)) {
			snprintf(why, size, "%.40s: not local, hostfile, slurm or ssh", v);
			return false;
		}
		return true;
	}
	if (strcmp(key, "hostfile") == 0)
		return set_text(c->hostfile, sizeof c->hostfile, v, why, size);
	if (strcmp(key, "hosts") == 0)
		return set_text(c->hosts, sizeof c->hosts, v, why, size);
	if (strcmp(key, "options") == 0) {
		cuco_argv words = { 0 };
		cuco_err err = { 0 };
		bool ok = eval_expand(v, NULL, &words, &err) == CUCO_OK;
		cuco_argv_free(&words);
		if (!ok)
			snprintf(why, size, "%.40s: %s", v, err.msg);
		return ok && set_text(c->options, sizeof c->options, v, why, size);
	}
	if (strcmp(key, "partition") == 0 || strcmp(key, "account") == 0) {
		char *dst = key[0] == 'p' ? c->partition : c->account;
		if (!slurm_name(v) || strlen(v) >= sizeof c->partition) {
			snprintf(why, size, "%.40s: not a Slurm name (letters, digits, _ . -; up to %zu)", v,
				sizeof c->partition - 1);
			return false;
		}
		cuco_strlcpy(dst, v, sizeof c->partition);
		return true;
	}
	static const struct { const char *key; size_t off; int min, max; const char *what; } ints[] = {
		{ "hosts_per_slot", offsetof(cuco_runner_config, hosts_per_slot), 1, MAX_HOSTS, "hosts" },
		{ "slots_per_host", offsetof(cuco_runner_config, slots_per_host), 1, CUCO_MAX_SLOTS, "slots" },
		{ "slots", offsetof(cuco_runner_config, max_slots), 1, CUCO_MAX_SLOTS, "slots" },
		{ "time_limit", offsetof(cuco_runner_config, time_limit_min), 1, 525600, "minutes" },
		{ "gpus_per_task", offsetof(cuco_runner_config, gpus_per_task), 1, 64, "GPUs" },
		{ "retire_after", offsetof(cuco_runner_config, retire_after), 1, 1000, "failures" },
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (strcmp(key, ints[i].key) == 0) {
			if (count(v, ints[i].min, ints[i].max, &n)) {
				*(int *)((char *)c + ints[i].off) = n;
				return true;
			}
			snprintf(why, size, "%.40s: not %d to %d %s", v, ints[i].min, ints[i].max, ints[i].what);
			return false;
		}
	if (strcmp(key, "retry_after") == 0) {
		errno = 0;
		double d = strtod(v, &end);
		if (*v && !*end && !errno && d > 0 && d <= 86400) {
			c->retry_after_s = d;
			return true;
		}
		snprintf(why, size, "%.40s: not a number of seconds in (0, 86400]", v);
		return false;
	}
	snprintf(why, size, "unknown key in [runner] (kind, hostfile, hosts, hosts_per_slot, "
		"slots_per_host, slots, partition, account, time_limit, gpus_per_task, options, retry_after, "
		"retire_after)");
	return false;
}

/* ---- commands ------------------------------------------------------------------- */

static void push_printf(cuco_argv *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void push_printf(cuco_argv *out, const char *fmt, ...)
{
	char word[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(word, sizeof word, fmt, ap);
	va_end(ap);
	cuco_argv_push(out, word);
}

/* [runner] options: the user's words, split and quoted as the shell
 * would (checked when they were set), and no shell reads them. */
static void push_options(cuco_argv *out, const char *options)
{
	cuco_err err = { 0 };
	cuco_argv words = { 0 };
	if (eval_expand(options, NULL, &words, &err) == CUCO_OK)
		cuco_argv_append(out, words.v);
	cuco_argv_free(&words);
}

/* `timeout` on the far side: each rank held to the program's own limit. */
static void push_timeout(const eval_launch *l, cuco_argv *out)
{
	cuco_argv_push(out, "timeout");
	cuco_argv_push(out, "-k");
	push_printf(out, "%d", KILL_AFTER_S);
	push_printf(out, "%.0f", ceil(l->limit_s));
}

/* mpirun's options for this runner; as root Open MPI refuses to start
 * without the explicit permission. */
static void mpirun_prefix(const eval_launch *l, cuco_argv *out)
{
	cuco_argv_push(out, l->launcher);
	bool hostfile = l->kind == CUCO_RUNNER_HOSTFILE;
	if (hostfile && *l->slot->gpus) {
		cuco_argv_push(out, "-x");
		push_printf(out, "CUDA_VISIBLE_DEVICES=%s", l->slot->gpus);
	}
	if (l->as_root)
		cuco_argv_push(out, "--allow-run-as-root");
	if (hostfile) {
		cuco_argv_push(out, "--host");
		cuco_argv_push(out, l->slot->hosts);
	} else {
		/* More ranks than cores is normal on a laptop; do not refuse. A rank
		 * per core keeps one rank's timing off another's core; with fewer
		 * cores than ranks binding is impossible, and Open MPI would refuse. */
		cuco_argv_push(out, "--oversubscribe");
		cuco_argv_push(out, "--bind-to");
		cuco_argv_push(out, l->bind ? "core" : "none");
	}
	if (l->ticket) {  /* for ranks on other hosts: local ones inherit it */
		cuco_argv_push(out, "-x");
		push_printf(out, "%.*s", (int)strcspn(l->ticket, "="), l->ticket);
	}
	if (l->tag_output)
		cuco_argv_push(out, "--tag-output");
	if (l->preload) {  /* the ranks only: mpirun itself needs no counting */
		cuco_argv_push(out, "-x");
		push_printf(out, "LD_PRELOAD=%s", l->preload);
	}
	push_options(out, l->rc->options);
	cuco_argv_push(out, "-np");
	push_printf(out, "%d", l->ranks);
	if (hostfile)
		push_timeout(l, out);
}

/* srun onto the slot's nodes, alone there. Outside an allocation each
 * stage is a job: the partition and account apply, and --exclusive gives
 * it the nodes whole, unless a node holds several slots (then Slurm gives
 * each job its own GPUs, gpus_per_task); inside one it is a step, and
 * --exclusive keeps steps off each other's CPUs and GPUs. --time is
 * Slurm's backstop should srun itself be lost. srun passes the stage's
 * environment (the harness's ticket) on to the ranks. */
static void srun_prefix(const eval_launch *l, cuco_argv *out)
{
	const cuco_runner_config *rc = l->rc;
	int nodes = 1;
	for (const char *p = l->slot->hosts; *p; p++)
		nodes += *p == ',';
	int minutes = rc->time_limit_min > 0 ? rc->time_limit_min
		: (int)ceil((l->limit_s + KILL_AFTER_S) / 60.0) + 1;
	cuco_argv_push(out, l->launcher);
	push_printf(out, "--nodes=%d", nodes);
	push_printf(out, "--ntasks=%d", l->ranks);
	if (l->in_allocation || rc->slots_per_host <= 1)
		cuco_argv_push(out, "--exclusive");
	cuco_argv_push(out, "--kill-on-bad-exit=1");
	push_printf(out, "--nodelist=%s", l->slot->hosts);
	push_printf(out, "--job-name=%s", l->job_name);
	if (!l->in_allocation && *rc->partition)
		push_printf(out, "--partition=%s", rc->partition);
	if (!l->in_allocation && *rc->account)
		push_printf(out, "--account=%s", rc->account);
	push_printf(out, "--time=%d", minutes);
	if (rc->gpus_per_task > 0)
		push_printf(out, "--gpus-per-task=%d", rc->gpus_per_task);
	push_options(out, rc->options);
	push_timeout(l, out);
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

/* The slot's host: its ssh and scp commands (the user's options, not
 * quoted: they are the user's own words, e.g. "-i key -o ..."), and the
 * destination as scp names it. */
typedef struct ssh_to {
	cuco_buf ssh, scp;
	char host[256];
} ssh_to;

static void ssh_to_open(const eval_launch *l, ssh_to *t)
{
	char port[16];
	split_host(l->slot->hosts, t->host, sizeof t->host, port, sizeof port);
	const char *opts = l->rc->options;
	t->ssh = t->scp = (cuco_buf){ 0 };
	cuco_buf_puts(&t->ssh, "ssh -o BatchMode=yes");
	cuco_buf_puts(&t->scp, "scp -q -o BatchMode=yes");
	if (*opts) {
		cuco_buf_printf(&t->ssh, " %s", opts);
		cuco_buf_printf(&t->scp, " %s", opts);
	}
	if (*port) {
		cuco_buf_printf(&t->ssh, " -p %s", port);
		cuco_buf_printf(&t->scp, " -P %s", port);
	}
	cuco_buf_puts(&t->ssh, " ");
	cuco_shell_quote(&t->ssh, t->host);
}

static void ssh_to_close(ssh_to *t)
{
	cuco_buf_free(&t->ssh);
	cuco_buf_free(&t->scp);
}

/* "ssh HOST 'mkdir -m 700 DIR' || ...; scp FILES HOST:DIR/ || ...; ": a
 * new folder made there (a name that exists, which another user could have
 * placed, with links to follow, is refused) and the files copied into it,
 * or the script ends 255. */
static void ssh_copy(const ssh_to *t, const char *dir, const char *binary, const char *const *extras,
	int nextras, cuco_buf *out)
{
	cuco_buf setup = { 0 };
	cuco_buf_printf(&setup, "mkdir -m 700 %s", dir);
	cuco_buf_printf(out, "%s ", t->ssh.data);
	cuco_shell_quote(out, setup.data);
	cuco_buf_puts(out, " || { echo 'cuco-ssh: cannot reach the host, or make a new folder there' >&2; "
		"exit 255; }; ");
	cuco_buf_printf(out, "%s ", t->scp.data);
	cuco_shell_quote(out, binary);
	for (int i = 0; i < nextras; i++) {
		cuco_buf_puts(out, " ");
		cuco_shell_quote(out, extras[i]);
	}
	cuco_buf_puts(out, " ");
	cuco_buf_printf(out, "%s:%s/", t->host, dir);
	cuco_buf_puts(out, " || { echo 'cuco-ssh: cannot copy the program' >&2; exit 255; }; ");
	cuco_buf_free(&setup);
}

/* "env CUDA_VISIBLE_DEVICES=... [ticket] " where there is any: ssh passes
 * no environment. */
static void ssh_env(const eval_launch *l, const char *ticket, cuco_buf *remote)
{
	if (!*l->slot->gpus && !ticket)
		return;
	cuco_buf_puts(remote, "env ");
	if (*l->slot->gpus)
		cuco_buf_printf(remote, "CUDA_VISIBLE_DEVICES=%s ", l->slot->gpus);
	if (ticket) {
		cuco_shell_quote(remote, ticket);
		cuco_buf_puts(remote, " ");
	}
}

/* A refereed stage where its host said so (eval_ssh_stage): the folder
 * given to the stage user, the shell in the stage's group before anything
 * of the stage starts, and setpriv to become that user. */
static void ssh_far_prefix(const eval_launch *l, cuco_buf *remote)
{
	const eval_ssh_stage *f = l->far;
	if (f && f->drop)
		cuco_buf_printf(remote, "chown -R %u:%u %s && ", f->uid, f->gid, l->remote_dir);
	cuco_buf_printf(remote, "cd %s && ", l->remote_dir);
	if (f && *f->cgroup)
		cuco_buf_printf(remote, "{ echo $$ > %s/cgroup.procs || { echo 'cuco-ssh: cannot move the "
			"stage into its cgroup' >&2; exit 255; }; } && ", f->cgroup);
}

static void ssh_command(const eval_launch *l, char *const *prog, const char *binary,
	const char *const *extras, int nextras, cuco_buf *out)
{
	ssh_to t;
	ssh_to_open(l, &t);
	cuco_buf remote = { 0 };
	ssh_far_prefix(l, &remote);
	ssh_env(l, l->ticket, &remote);
	if (l->far && l->far->drop)
		cuco_buf_printf(&remote, "setpriv --reuid %u --regid %u --clear-groups --no-new-privs -- ", l->far->uid,
			l->far->gid);
	cuco_buf_printf(&remote, "timeout -k %d %.0f ", KILL_AFTER_S, ceil(l->limit_s));
	if (l->mpi)
		cuco_buf_printf(&remote, "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
			"mpirun --oversubscribe%s -np %d ", l->tag_output ? " --tag-output" : "", l->ranks);
	cuco_argv_join(prog, &remote);

	ssh_copy(&t, l->remote_dir, binary, extras, nextras, out);
	cuco_buf_printf(out, "%s ", t.ssh.data);
	cuco_shell_quote(out, remote.data);
	cuco_buf_printf(out, "; rc=$?; %s 'rm -rf %s'; exit $rc", t.ssh.data, l->remote_dir);
	ssh_to_close(&t);
	cuco_buf_free(&remote);
}

/* The stage user there: CUCO_STAGE_USER, a name or a uid; else a uid
 * and gid of the stage's own, fresh for it, drawn from the STAGE_IDS
 * (2^24) above STAGE_ID0, which no account there has (getent), so that
 * no other stage there, beside it on another slot or left by an earlier
 * one, is the same user ("u=UID && g=GID"); or the script ends 255 naming
 * why. */
#define STAGE_ID0 "0x40000000"
#define STAGE_IDS "0x1000000"
static void ssh_stage_user(const char *want, cuco_buf *remote)
{
	if (!want) {
		cuco_buf_puts(remote, "{ u=$((" STAGE_ID0 " + $(od -An -N4 -tu4 /dev/urandom) % " STAGE_IDS ")) && "
			"g=$u && ! getent passwd \"$u\" >/dev/null; } || { echo 'cuco-ssh: no fresh uid for the stage "
			"on the host' >&2; exit 255; }");
	} else if (strspn(want, "0123456789") == strlen(want)) {
		cuco_buf_printf(remote, "u=%s && g=$(id -g %s 2>/dev/null || echo %s)", want, want, want);
	} else {
		cuco_buf_puts(remote, "{ u=$(id -u -- ");
		cuco_shell_quote(remote, want);
		cuco_buf_puts(remote, " 2>/dev/null) && g=$(id -g -- ");
		cuco_shell_quote(remote, want);
		cuco_buf_puts(remote, ") || { echo ");
		cuco_buf msg = { 0 };
		cuco_buf_printf(&msg, "cuco-ssh: CUCO_STAGE_USER=%s: no such user on the host (as root there, a "
			"refereed stage's ranks run as it)", want);
		cuco_shell_quote(remote, msg.data);
		cuco_buf_free(&msg);
		cuco_buf_puts(remote, " >&2; exit 255; }; }");
	}
}

#define STAGE_TAG "CUCO_SSH_STAGE "
#define CGROUP_V2 "/sys/fs/cgroup/"
#define CGROUP_V1 "/sys/fs/cgroup/freezer/"

/* As root there: the stage user's ids (u, g), the channel folder passed
 * by its group alone as locally (referee.c's channel_dir), and unless
 * cgroups are off a group for the stage named as the channel: under a
 * cgroup v2 hierarchy's top, else a v1 freezer's, where it can be made
 * and freezes (k: v2, v1 or none). Then the line eval_ssh_stage_parse
 * reads, and the referee's --owner in "$@". Not root: the same line,
 * "- - none". */
static void ssh_far_setup(const eval_launch *l, const char *chan, cuco_buf *remote)
{
	const char *name = strrchr(chan, '/') + 1;
	cuco_buf_puts(remote, "set -- && k=none && if [ \"$(id -u)\" = 0 ]; then ");
	ssh_stage_user(l->stage_user, remote);
	cuco_buf_printf(remote, " && { [ \"$u\" = 0 ] || { chgrp \"$g\" %s && chmod 710 %s && "
		"set -- --owner \"$u:$g\"; }; }", chan, chan);
	if (l->cgroups)
		cuco_buf_printf(remote, " && if [ \"$(stat -f -c %%T /sys/fs/cgroup)\" = cgroup2fs ]; then "
			"c=" CGROUP_V2 "%s f=cgroup.freeze v=v2; else c=" CGROUP_V1 "%s f=freezer.state v=v1; fi "
			"&& if mkdir \"$c\" 2>/dev/null; then if [ -e \"$c/$f\" ]; then k=$v; else rmdir \"$c\"; fi; fi",
			name, name);
	cuco_buf_puts(remote, "; else u=- g=-; fi && echo \"" STAGE_TAG "$u $g $k\" && ");
}

bool eval_ssh_stage_parse(const char *line, const char *chan, eval_ssh_stage *far)
{
	char u[16], g[16], k[8];
	if (strncmp(line, STAGE_TAG, strlen(STAGE_TAG)) != 0
			|| sscanf(line + strlen(STAGE_TAG), "%15s %15s %7s", u, g, k) != 3)
		return false;
	memset(far, 0, sizeof *far);
	bool ids = strspn(u, "0123456789") == strlen(u) && strspn(g, "0123456789") == strlen(g) && *u && *g;
	far->uid = ids ? (unsigned)strtoul(u, NULL, 10) : 0;
	far->gid = ids ? (unsigned)strtoul(g, NULL, 10) : 0;
	far->root = ids;
	far->drop = ids && far->uid != 0;
	far->v2 = strcmp(k, "v2") == 0;
	if (far->v2 || strcmp(k, "v1") == 0)
		snprintf(far->cgroup, sizeof far->cgroup, "%s%s", far->v2 ? CGROUP_V2 : CGROUP_V1,
			strrchr(chan, '/') + 1);
	return true;
}

void eval_ssh_referee(const eval_launch *l, const char *binary, const char *sum, char *const *args,
	const char *chan, cuco_buf *script, cuco_buf *cleanup)
{
	ssh_to t;
	ssh_to_open(l, &t);
	const char *base = strrchr(binary, '/') ? strrchr(binary, '/') + 1 : binary;
	char dir[256];
	snprintf(dir, sizeof dir, "%s-referee", l->remote_dir);
	cuco_buf remote = { 0 }, check = { 0 };
	/* What runs is what was copied, checked just before the exec: as root
	 * there its folder is root's alone; as another user, that user's, whose
	 * processes (a stage's) may replace the file, so this narrows the
	 * window, no more (docs/trust.md, "Over ssh"). */
	cuco_buf_printf(&check, "%s  %s", sum, base);
	cuco_buf_printf(&remote, "cd %s && { echo ", dir);
	cuco_shell_quote(&remote, check.data);
	cuco_buf_puts(&remote, " | sha256sum -c --status || { echo 'cuco-ssh: the referee on the host is not "
		"the one copied' >&2; exit 255; }; } && mkdir -m 700 ");
	cuco_shell_quote(&remote, chan);
	cuco_buf_puts(&remote, " && ");
	ssh_far_setup(l, chan, &remote);
	cuco_buf_puts(&remote, "exec ");
	ssh_env(l, NULL, &remote);
	cuco_buf_puts(&remote, "./");
	cuco_shell_quote(&remote, base);
	cuco_buf_puts(&remote, " ");
	cuco_argv_join(args, &remote);
	cuco_buf_puts(&remote, " \"$@\"");

	ssh_copy(&t, dir, binary, NULL, 0, script);
	cuco_buf_printf(script, "exec %s ", t.ssh.data);
	cuco_shell_quote(script, remote.data);
	cuco_buf_free(&remote);
	cuco_buf_free(&check);
	/* The stage's group, where one was made: emptied (what the stage left
	 * running there dies with it), removed. At once by cgroup.kill where
	 * the kernel has it; else killed while frozen, so that nothing in it
	 * forks while the list is read, then thawed to die; then whatever a
	 * race left, listed and killed again. Then, where the stage ran as a
	 * uid of its own (the channel's group is its gid, the same number, in
	 * the fresh range), what it left at the top of the host's shared
	 * folders, which would pin the host's memory or disk. */
	const char *name = strrchr(chan, '/') + 1;
	cuco_buf_puts(&remote, "u=$(stat -c %g ");
	cuco_shell_quote(&remote, chan);
	cuco_buf_printf(&remote, " 2>/dev/null); rm -rf %s %s ", dir, l->remote_dir);
	cuco_shell_quote(&remote, chan);
	cuco_buf_printf(&remote, "; for c in " CGROUP_V2 "%s " CGROUP_V1 "%s; do [ -d $c ] || continue; "
		"if [ -e $c/cgroup.kill ]; then echo 1 > $c/cgroup.kill; else "
		"echo 1 > $c/cgroup.freeze 2>/dev/null || echo FROZEN > $c/freezer.state; "
		"p=$(cat $c/cgroup.procs); [ -n \"$p\" ] && kill -9 $p; "
		"echo 0 > $c/cgroup.freeze 2>/dev/null || echo THAWED > $c/freezer.state; fi; "
		"for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do p=$(cat $c/cgroup.procs); "
		"[ -z \"$p\" ] && break; kill -9 $p; sleep 0.1; done; rmdir $c; done; "
		"[ \"${u:-0}\" -ge $((" STAGE_ID0 ")) ] 2>/dev/null && find /tmp /var/tmp /dev/shm -xdev "
		"-mindepth 1 -maxdepth 1 -user \"$u\" -exec rm -rf {} + 2>/dev/null; true", name, name);
	cuco_buf_printf(cleanup, "%s ", t.ssh.data);
	cuco_shell_quote(cleanup, remote.data);
	ssh_to_close(&t);
	cuco_buf_free(&remote);
}
void eval_launch_argv(const eval_launch *l, char *const *prog, const char *binary,
	const char *const *extras, int nextras, cuco_argv *out)
{
	cuco_buf script = { 0 };
	const char *gpus = l->visible && *l->visible ? l->visible : l->slot->gpus;
	switch (l->kind) {
	case CUCO_RUNNER_LOCAL:
		/* The slot's GPUs, and without mpirun the interposer, through env(1):
		 * cuco's own process is not counted. */
		if (*gpus || (l->preload && !l->mpi))
			cuco_argv_push(out, "env");
		if (*gpus)
			push_printf(out, "CUDA_VISIBLE_DEVICES=%s", gpus);
		if (l->preload && !l->mpi)
			push_printf(out, "LD_PRELOAD=%s", l->preload);
		if (l->mpi)
			mpirun_prefix(l, out);
		break;
	case CUCO_RUNNER_HOSTFILE:
		/* mpirun even for one rank: it is what gets the program to the host. */
		mpirun_prefix(l, out);
		break;
	case CUCO_RUNNER_SLURM:
		srun_prefix(l, out);
		break;
	case CUCO_RUNNER_SSH:
		ssh_command(l, prog, binary, extras, nextras, &script);
		cuco_argv_push(out, "/bin/sh");
		cuco_argv_push(out, "-c");
		cuco_argv_push(out, script.data);
		cuco_buf_free(&script);
		return;
	}
	cuco_argv_append(out, prog);
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

/* ---- slots ---------------------------------------------------------------------- */

/* The ssh hosts, one slot each: user@host[:port] stays whole. */
static int ssh_slots(const cuco_runner_config *c, cuco_slot_spec *out, int max, int *n, cuco_err *err)
{
	*n = 0;
	char list[sizeof c->hosts];
	cuco_strlcpy(list, c->hosts, sizeof list);
	char *save = NULL;
	for (char *h = strtok_r(list, ", ", &save); h; h = strtok_r(NULL, ", ", &save)) {
		if (*n >= max)
			return cuco_errf(err, CUCO_EDATA, "ssh runner: more than %d hosts", max);
		if (strlen(h) >= sizeof out->name || strchr(h, '\'') || strchr(h, '"'))
			return cuco_errf(err, CUCO_EDATA, "ssh runner: host %.80s: not user@host[:port]", h);
		for (int i = 0; i < *n; i++)
			if (strcmp(out[i].hosts, h) == 0)
				return cuco_errf(err, CUCO_EDATA, "ssh runner: %s is listed twice", h);
		cuco_strlcpy(out[*n].name, h, sizeof out->name);
		cuco_strlcpy(out[*n].hosts, h, sizeof out->hosts);
		out[*n].gpus[0] = '\0';
		(*n)++;
	}
	if (*n == 0)
		return cuco_errf(err, CUCO_EUSAGE, "ssh runner: no host given ([runner] hosts or --hosts)");
	return CUCO_OK;
}

/* The GPUs a host's slots share out, as CUDA_VISIBLE_DEVICES names them:
 * here, the ones this process sees; on another host, its first ones. */
static int host_gpus(const cuco_runner_config *c, int need, char (*ids)[32], cuco_err *err)
{
	int n = 0;
	const char *visible = cuco_env_get()->visible_gpus;
	if (c->kind == CUCO_RUNNER_LOCAL && visible && *visible) {
		char list[1024];
		cuco_strlcpy(list, visible, sizeof list);
		char *save = NULL;
		for (char *g = strtok_r(list, ",", &save); g && n < need; g = strtok_r(NULL, ",", &save))
			cuco_strlcpy(ids[n++], cuco_trim(g), sizeof ids[0]);
	} else {
		int have = need;
		if (c->kind == CUCO_RUNNER_LOCAL) {
			have = cuco_hardware_get()->ngpus;
		}
		for (; n < need && n < have; n++)
			snprintf(ids[n], sizeof ids[0], "%d", n);
	}
	if (n < need)
		return cuco_errf(err, CUCO_EENV, "slots_per_host: %d GPU sets of the workload's ranks need %d "
			"GPUs here; %d are visible", c->slots_per_host, need, n);
	return CUCO_OK;
}

/* The one local slot is given the first GPUs its ranks use, where there
 * are as many, so that a stage is shown those GPUs alone (their nodes in
 * the sandbox, CUDA_VISIBLE_DEVICES) and cannot compute on the others
 * while the referee watches one; a CPU workload's ranks on a machine of
 * fewer GPUs keep an empty set, as before. */
static int whole_host(const cuco_runner_config *c, int ranks, cuco_slot_spec *slot)
{
	char (*ids)[32] = cuco_xcalloc((size_t)ranks, sizeof *ids);
	cuco_err ignored = { 0 };
	if (host_gpus(c, ranks, ids, &ignored) == CUCO_OK) {
		cuco_buf set = { 0 };
		for (int r = 0; r < ranks; r++)
			cuco_buf_printf(&set, "%s%s", r ? "," : "", ids[r]);
		cuco_strlcpy(slot->gpus, set.data, sizeof slot->gpus);
		cuco_buf_free(&set);
	}
	free(ids);
	return CUCO_OK;
}

/* Each host (group) slots_per_host times, "n1/0", "n1/1", each with its own
 * `ranks` GPUs; Slurm chooses a step's GPUs itself (gpus_per_task). */
static int split_hosts(const cuco_runner_config *c, int ranks, cuco_slot_spec *out, int max, int *n,
	cuco_err *err)
{
	int k = c->slots_per_host;
	if (k <= 1 && c->kind == CUCO_RUNNER_LOCAL)
		return whole_host(c, ranks, out);
	if (k <= 1)
		return CUCO_OK;
	if (c->kind == CUCO_RUNNER_SLURM && c->gpus_per_task <= 0)
		return cuco_errf(err, CUCO_EUSAGE, "slots_per_host: set gpus_per_task too, so that Slurm gives "
			"each slot's jobs GPUs of their own");
	if (*n * k > max)
		return cuco_errf(err, CUCO_EDATA, "slots_per_host: %d hosts x %d is more than %d slots", *n, k, max);
	char (*ids)[32] = cuco_xcalloc((size_t)(k * ranks), sizeof *ids);
	int rc = c->kind == CUCO_RUNNER_SLURM ? CUCO_OK : host_gpus(c, k * ranks, ids, err);
	cuco_slot_spec *hosts = cuco_xcalloc((size_t)*n, sizeof *hosts);
	memcpy(hosts, out, (size_t)*n * sizeof *hosts);
	for (int h = 0; rc == CUCO_OK && h < *n; h++)
		for (int j = 0; j < k; j++) {
			cuco_slot_spec *s = &out[h * k + j];
			*s = hosts[h];
			snprintf(s->name, sizeof s->name, "%.50s/%d", hosts[h].name, j);
			cuco_buf set = { 0 };
			for (int r = 0; c->kind != CUCO_RUNNER_SLURM && r < ranks; r++)
				cuco_buf_printf(&set, "%s%s", r ? "," : "", ids[j * ranks + r]);
			cuco_strlcpy(s->gpus, set.data ? set.data : "", sizeof s->gpus);
			cuco_buf_free(&set);
		}
	if (rc == CUCO_OK)
		*n *= k;
	free(hosts);
	free(ids);
	return rc;
}

int cuco_runner_slots(const cuco_runner_config *c, int ranks, cuco_slot_spec *out, int max,
	int *n, char *where, size_t wsize, cuco_err *err)
{
	if (c->max_slots > 0 && c->max_slots < max)
		max = c->max_slots;
	*n = 0;
	int rc = CUCO_OK, nhosts = 0;
	eval_host *hosts = NULL;
	switch (c->kind) {
	case CUCO_RUNNER_LOCAL:
		memset(&out[0], 0, sizeof out[0]);
		cuco_strlcpy(out[0].name, "local", sizeof out->name);
		*n = 1;
		snprintf(where, wsize, "this machine");
		return split_hosts(c, ranks, out, max, n, err);
	case CUCO_RUNNER_SSH:
		snprintf(where, wsize, "the ssh hosts");
		rc = ssh_slots(c, out, max, n, err);
		return rc == CUCO_OK ? split_hosts(c, ranks, out, max, n, err) : rc;
	case CUCO_RUNNER_HOSTFILE:
		if (!*c->hostfile)
			return cuco_errf(err, CUCO_EUSAGE, "hostfile runner: no hostfile given "
				"([runner] hostfile or --hostfile)");
		hosts = cuco_xcalloc(MAX_HOSTS, sizeof *hosts);
		snprintf(where, wsize, "the hosts of %s", c->hostfile);
		rc = eval_hostfile_read(c->hostfile, hosts, MAX_HOSTS, &nhosts, err);
		break;
	case CUCO_RUNNER_SLURM:
		hosts = cuco_xcalloc(MAX_HOSTS, sizeof *hosts);
		rc = eval_slurm_nodes(c, hosts, MAX_HOSTS, &nhosts, where, wsize, err);
		break;
	}
	int per_slot = c->hosts_per_slot > 0 ? c->hosts_per_slot : c->kind == CUCO_RUNNER_SLURM ? 1 : 0;
	if (rc == CUCO_OK)
		rc = eval_hosts_to_slots(hosts, nhosts, per_slot, ranks, c->kind, out, max, n, err);
	if (rc == CUCO_OK)
		rc = split_hosts(c, ranks, out, max, n, err);
	free(hosts);
	return rc;
}

/* ---- doctor's checks ------------------------------------------------------------ */

typedef void (*report_fn)(const char *what, bool ok, const char *detail, void *arg);

/* A command answers with status 0; detail: its first line, or why not. */
static bool answers(char *const *argv, char *detail, size_t size)
{
	cuco_buf out = { 0 }, cmd = { 0 };
	int status = eval_query(argv, 20, &out);
	char line[256];
	eval_first_line(out.data ? out.data : "", line, sizeof line);
	cuco_argv_join(argv, &cmd);
	if (status == 0)
		snprintf(detail, size, "%s", *line ? line : "ok");
	else
		snprintf(detail, size, "`%s` %s%s%s", cmd.data, status < 0 ? "did not end" : "failed",
			*line ? ": " : "", line);
	cuco_buf_free(&cmd);
	cuco_buf_free(&out);
	return status == 0;
}

static bool resolves(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (res)
		freeaddrinfo(res);
	return rc == 0;
}

/* Every host of the slots resolves by name; detail names the first that does not. */
static bool slots_resolve(const cuco_slot_spec *s, int n, bool ssh, char *detail, size_t size)
{
	for (int i = 0; i < n; i++) {
		char list[sizeof s->hosts];
		cuco_strlcpy(list, s[i].hosts, sizeof list);
		char *save = NULL;
		for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
			char host[256], port[16];
			char *at = ssh ? strrchr(h, '@') : NULL;
			split_host(at ? at + 1 : h, host, sizeof host, port, sizeof port);
			if (!ssh) {
				char *colon = strrchr(host, ':');  /* mpirun's host:slots */
				if (colon)
					*colon = '\0';
			}
			if (!resolves(host)) {
				snprintf(detail, size, "%s does not resolve", host);
				return false;
			}
		}
	}
	return true;
}

int cuco_runner_check(const cuco_runner_config *c, int ranks, report_fn report, void *arg)
{
	int failed = 0;
	char detail[640], path[PATH_MAX];
	const char *launcher = c->kind == CUCO_RUNNER_SLURM ? "srun" : c->kind == CUCO_RUNNER_SSH ? "ssh"
		: cuco_env_get()->mpirun;
	bool found = cuco_which(launcher, path, sizeof path);
	if (c->kind == CUCO_RUNNER_SLURM && found) {
		char *version[] = { path, "--version", NULL };
		found = answers(version, detail, sizeof detail);
		report("srun", found, detail, arg);
		failed += !found;
		char *sinfo[] = { "sinfo", "-h", "-o", "%P %a %D %T", NULL };
		bool ok = answers(sinfo, detail, sizeof detail);
		report("sinfo", ok, detail, arg);
		failed += !ok;
	} else {
		snprintf(detail, sizeof detail, "%.600s", found ? path : "not on PATH");
		report(launcher, found, detail, arg);
		failed += !found;
	}
	cuco_slot_spec *slots = cuco_xcalloc(CUCO_MAX_SLOTS, sizeof *slots);
	int n = 0;
	char where[256];
	cuco_err err = { 0 };
	bool ok = cuco_runner_slots(c, ranks, slots, CUCO_MAX_SLOTS, &n, where, sizeof where, &err) == CUCO_OK;
	if (ok) {
		int len = snprintf(detail, sizeof detail, "%d from %s:", n, where);
		for (int i = 0; i < n && len > 0 && (size_t)len < sizeof detail; i++)
			len += snprintf(detail + len, sizeof detail - (size_t)len, " %s", slots[i].name);
	} else {
		snprintf(detail, sizeof detail, "%s", err.msg);
	}
	report("slots", ok, detail, arg);
	failed += !ok;
	if (ok && (c->kind == CUCO_RUNNER_HOSTFILE || c->kind == CUCO_RUNNER_SSH)) {
		bool named = slots_resolve(slots, n, c->kind == CUCO_RUNNER_SSH, detail, sizeof detail);
		if (named)
			snprintf(detail, sizeof detail, "every host resolves");
		report("hosts", named, detail, arg);
		failed += !named;
	}
	free(slots);
	/* Not a fault of the runner's: what becomes of refereed workloads. */
	if (c->kind == CUCO_RUNNER_SSH)
		snprintf(detail, sizeof detail, "refereed workloads: the referee runs on each host beside its "
			"stage's ranks, as the ssh user, in an ssh session of its own; as root there, the ranks run as "
			"the stage user (CUCO_STAGE_USER, else a uid of each stage's own), the referee's files are root's, and a cgroup "
			"made there freezes the gaps between steps; as another user there, stages and referee share a "
			"uid, no freezer: its verdict is defence in depth (docs/trust.md)");
	else
		snprintf(detail, sizeof detail, "refereed workloads are refused: the %s runner may spread a "
			"stage's ranks over hosts, and the referee must share one with all of them",
			cuco_runner_name(c->kind));
	report("referee", true, detail, arg);
	return failed;
}
