/* daemons.h — real engines the runner tests start and stop themselves:
 * an sshd on loopback addresses with throwaway keys, and a Slurm cluster
 * (munged, slurmctld, two slurmd) in a private folder on fresh ports. */
#ifndef CUCO_TEST_EVAL_DAEMONS_H
#define CUCO_TEST_EVAL_DAEMONS_H

#include <stdbool.h>
#include <sys/types.h>

/* A free TCP port on loopback, -1 when none. */
int free_port(void);
/* Write dir/cuco/config, for a `cuco` started with XDG_CONFIG_HOME=dir. */
void config_home(const char *dir, const char *text);

typedef struct sshd {
	char dir[256];
	pid_t pid;
	int port;
	char options[640];  /* ssh's words to reach it: -i KEY -o ... (no -p) */
} sshd;

/* Start sshd listening on each of the addresses (NULL-terminated, e.g.
 * 127.0.0.2: all of 127/8 is this machine). NULL when it listens, else
 * the reason it could not start. */
const char *sshd_start(sshd *s, const char *const *addresses);
void sshd_stop(sshd *s);

typedef struct slurm {
	char dir[256];       /* slurm.conf, munge/, state/, spool/, log/ */
	char conf[300];      /* what $SLURM_CONF must name for srun & co. */
	pid_t munged, slurmctld, slurmd[2];
	int ctld_port;
} slurm;

/* Two nodes, n1 and n2, of two CPUs each, both on this machine (one
 * slurmd per node on its own port), in partition "cuco" with
 * MpiDefault=pmix. Sets $SLURM_CONF. NULL when both nodes are idle,
 * else why not (packages missing, a daemon that did not start). */
const char *slurm_start(slurm *s);
/* Stop the daemons (and every job: scancel first), unset $SLURM_CONF,
 * remove the folder. */
void slurm_stop(slurm *s);
/* `squeue -h` lines of the private cluster once jobs that just ended have
 * left it: 0 when nothing is queued. COMPLETING mostly lasts a moment,
 * but a step cancelled within a tenth of a second of its launch leaves
 * its slurmstepd waiting 60 s for srun's I/O ("Abandoning IO 60 secs
 * after job shutdown initiated" in the node's log; slurmstepd's own wait,
 * which EioTimeout does not set in Slurm 22.05), and its job completing
 * until then: so this waits up to 75 s. */
int slurm_queued(void);

#endif
