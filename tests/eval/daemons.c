/* daemons.c — an sshd and a two-node Slurm cluster, private to one test:
 * their own folder, keys and fresh ports, started as this process's
 * children and stopped by it, so that tests running at the same time
 * never meet. */
#include "daemons.h"

#include "core.h"
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0
		|| getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return ntohs(a.sin_port);
}

void config_home(const char *dir, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/cuco", dir);
	cuco_mkdir_p(path, NULL);
	snprintf(path, sizeof path, "%s/cuco/config", dir);
	cuco_write_file(path, text, strlen(text), NULL);
}

static bool port_open(const char *address, int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, address, &a.sin_addr);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static int shellf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int shellf(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Fork and exec argv with stdout and stderr to log; the child's pid. A
 * daemon dies with the test (PR_SET_PDEATHSIG), even one that crashed
 * before its teardown: none outlives it on a shared machine. */
static pid_t spawn(const char *log, char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (!freopen(log, "a", stderr) || !freopen(log, "a", stdout) || !freopen("/dev/null", "r", stdin))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void stop_child(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

/* Whether a child has exited already (reaped). */
static bool exited(pid_t *pid)
{
	if (*pid > 0 && waitpid(*pid, NULL, WNOHANG) == *pid) {
		*pid = 0;
		return true;
	}
	return *pid <= 0;
}

/* ---- sshd ------------------------------------------------------------------- */

const char *sshd_start(sshd *s, const char *const *addresses)
{
	make_tmpdir(s->dir, sizeof s->dir);
	if (access("/usr/sbin/sshd", X_OK) != 0)
		return "/usr/sbin/sshd is not installed";
	if (shellf("ssh-keygen -q -t ed25519 -N '' -f %s/host_key && "
		"ssh-keygen -q -t ed25519 -N '' -f %s/user_key && cp %s/user_key.pub %s/authorized_keys",
		s->dir, s->dir, s->dir, s->dir) != 0)
		return "ssh-keygen failed";
	mkdir("/run/sshd", 0755);  /* privilege separation needs it; harmless if it exists */
	s->port = free_port();
	cuco_buf text = { 0 };
	cuco_buf_printf(&text, "Port %d\n", s->port);
	for (int i = 0; addresses[i]; i++)
		cuco_buf_printf(&text, "ListenAddress %s\n", addresses[i]);
	cuco_buf_printf(&text, "HostKey %s/host_key\nAuthorizedKeysFile %s/authorized_keys\n"
		"PidFile %s/sshd.pid\nStrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\n"
		"KbdInteractiveAuthentication no\nUsePAM no\nSubsystem sftp internal-sftp\nLogLevel ERROR\n"
		"MaxStartups 64\n", s->dir, s->dir, s->dir);
	char cfg[300], log[300];
	snprintf(cfg, sizeof cfg, "%s/sshd_config", s->dir);
	snprintf(log, sizeof log, "%s/sshd.log", s->dir);
	cuco_write_file(cfg, text.data, text.len, NULL);
	cuco_buf_free(&text);
	snprintf(s->options, sizeof s->options, "-i %s/user_key -o StrictHostKeyChecking=no "
		"-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR", s->dir);
	s->pid = spawn(log, (char *const[]){ "/usr/sbin/sshd", "-D", "-e", "-f", cfg, NULL });
	for (int i = 0; i < 300; i++) {
		bool all = true;
		for (int k = 0; addresses[k] && all; k++)
			all = port_open(addresses[k], s->port);
		if (all)
			return NULL;
		if (exited(&s->pid))
			return "sshd exited at start (see its log)";
		usleep(10000);
	}
	return "sshd did not listen within 3 s";
}

void sshd_stop(sshd *s)
{
	stop_child(&s->pid);
	rm_rf(s->dir);
}

/* ---- Slurm ------------------------------------------------------------------ */

static const char *const slurm_programs[] = { "/usr/sbin/munged", "/usr/sbin/mungekey",
	"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/srun", "/usr/bin/sinfo", NULL };

static void slurm_conf(const slurm *s, int node_ports[2])
{
	char host[256] = "localhost";
	gethostname(host, sizeof host - 1);
	cuco_buf t = { 0 };
	/* Two nodes on this machine: one slurmd each, told apart by port. */
	cuco_buf_printf(&t,
		"ClusterName=cucotest\nSlurmctldHost=%s(127.0.0.1)\nSlurmctldPort=%d\nSlurmdPort=%d\n"
		"AuthType=auth/munge\nAuthInfo=socket=%s/munge/sock\nCredType=cred/munge\n"
		"SlurmUser=root\nSlurmdUser=root\nStateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool/%%n\n"
		"SlurmctldPidFile=%s/ctld.pid\nSlurmdPidFile=%s/spool/%%n.pid\n"
		"SlurmctldLogFile=%s/log/ctld.log\nSlurmdLogFile=%s/log/%%n.log\n"
		"ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSchedulerType=sched/builtin\n"
		"SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nReturnToService=2\n"
		"MpiDefault=pmix\nJobAcctGatherType=jobacct_gather/none\n"
		"AccountingStorageType=accounting_storage/none\nSwitchType=switch/none\n"
		"SlurmdParameters=config_overrides\nKillWait=2\nMinJobAge=600\n",
		host, s->ctld_port, node_ports[0], s->dir, s->dir, s->dir, s->dir, s->dir, s->dir, s->dir);
	for (int i = 0; i < 2; i++)
		cuco_buf_printf(&t, "NodeName=n%d NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=2 "
			"State=UNKNOWN\n", i + 1, host, node_ports[i]);
	cuco_buf_puts(&t, "PartitionName=cuco Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP\n");
	cuco_write_file(s->conf, t.data, t.len, NULL);
	cuco_buf_free(&t);
	/* PMIx's folders would otherwise be /tmp/spmix_appdir_<uid>_<job>,
	 * shared with every other test cluster numbering its jobs from 1. */
	char path[300], text[400];
	snprintf(path, sizeof path, "%s/mpi.conf", s->dir);
	int n = snprintf(text, sizeof text, "PMIxCliTmpDirBase=%s/pmix\n", s->dir);
	cuco_write_file(path, text, (size_t)n, NULL);
}

static int idle_nodes(void)
{
	int status;
	char *out = capture_output("sinfo -h -N -o '%N %T' 2>/dev/null", &status);
	int idle = 0;
	for (char *p = out; p && (p = strstr(p, " idle")); p++)
		idle++;
	free(out);
	return idle;
}

const char *slurm_start(slurm *s)
{
	memset(s, 0, sizeof *s);
	for (int i = 0; slurm_programs[i]; i++)
		if (access(slurm_programs[i], X_OK) != 0)
			return "Debian's slurmctld, slurmd, slurm-client and munge are not installed "
				"(scripts/setup installs them)";
	make_tmpdir(s->dir, sizeof s->dir);
	snprintf(s->conf, sizeof s->conf, "%s/slurm.conf", s->dir);
	if (shellf("cd %s && mkdir -p munge state spool/n1 spool/n2 log pmix && chmod 700 munge && "
		"mungekey -c -k munge/munge.key -b 1024 && chmod 600 munge/munge.key", s->dir) != 0)
		return "mungekey could not make a key";
	s->ctld_port = free_port();
	int node_ports[2] = { free_port(), free_port() };
	slurm_conf(s, node_ports);
	setenv("SLURM_CONF", s->conf, 1);
	char key[300], sock[300], pidf[300], seed[300], mlog[300], log[300];
	snprintf(key, sizeof key, "--key-file=%s/munge/munge.key", s->dir);
	snprintf(sock, sizeof sock, "--socket=%s/munge/sock", s->dir);
	snprintf(pidf, sizeof pidf, "--pid-file=%s/munge/pid", s->dir);
	snprintf(seed, sizeof seed, "--seed-file=%s/munge/seed", s->dir);
	snprintf(mlog, sizeof mlog, "--log-file=%s/munge/log", s->dir);
	snprintf(log, sizeof log, "%s/log/daemons.out", s->dir);
	s->munged = spawn(log, (char *const[]){ "/usr/sbin/munged", "-F", "-f", key, sock, pidf, seed,
		mlog, NULL });
	char sockpath[300];
	snprintf(sockpath, sizeof sockpath, "%s/munge/sock", s->dir);
	for (int i = 0; i < 300 && access(sockpath, F_OK) != 0 && !exited(&s->munged); i++)
		usleep(10000);
	if (access(sockpath, F_OK) != 0)
		return "munged did not start (see munge/log)";
	s->slurmctld = spawn(log, (char *const[]){ "/usr/sbin/slurmctld", "-D", "-i", "-f", s->conf, NULL });
	for (int i = 0; i < 2; i++)
		s->slurmd[i] = spawn(log, (char *const[]){ "/usr/sbin/slurmd", "-D", "-f", s->conf, "-N",
			i ? "n2" : "n1", NULL });
	for (int i = 0; i < 300; i++) {
		if (idle_nodes() == 2)
			return NULL;
		if (exited(&s->slurmctld) || exited(&s->slurmd[0]) || exited(&s->slurmd[1]))
			return "a Slurm daemon exited at start (see log/ in the cluster's folder)";
		usleep(100000);
	}
	return "the two slurmd nodes were not idle within 30 s";
}

static int queued_now(void)
{
	int status, n = 0;
	char *out = capture_output("squeue -h 2>/dev/null", &status);
	for (char *p = out; p && *p; p++)
		n += *p == '\n';
	free(out);
	return n;
}

int slurm_queued(void)
{
	int n = queued_now();
	for (int i = 0; i < 750 && n > 0; i++) {
		usleep(100000);
		n = queued_now();
	}
	return n;
}

/* Whether a process holds a file below dir open (its log, its spool). */
static bool holds_below(const char *pid, const char *dir)
{
	char fds[64];
	snprintf(fds, sizeof fds, "/proc/%.32s/fd", pid);
	DIR *d = opendir(fds);
	struct dirent *e;
	bool found = false;
	while (d && !found && (e = readdir(d))) {
		char link[384], target[512];
		snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n > 0) {
			target[n] = '\0';
			found = strncmp(target, dir, strlen(dir)) == 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* A slurmstepd whose step was cancelled mid-PMIx can hang on after its
 * slurmd is gone; this cluster's (their log is in its folder) go too. */
static void kill_stepds(const char *dir)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], name[64] = "";
		snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof name, f))
			name[0] = '\0';
		fclose(f);
		if (strncmp(name, "slurmstepd", 10) == 0 && holds_below(e->d_name, dir))
			kill(atoi(e->d_name), SIGKILL);
	}
	if (d)
		closedir(d);
}

void slurm_stop(slurm *s)
{
	if (s->slurmctld > 0) {
		shellf("scancel --user=$(id -un) >/dev/null 2>&1");
		slurm_queued();
	}
	for (int i = 0; i < 2; i++)
		stop_child(&s->slurmd[i]);
	stop_child(&s->slurmctld);
	stop_child(&s->munged);
	if (*s->dir)
		kill_stepds(s->dir);
	unsetenv("SLURM_CONF");
	if (*s->dir && !getenv("CUCO_KEEP_SLURM"))
		rm_rf(s->dir);
}
