/* hostile: compute on CPUs the stage was not given. The evaluator runs
 * ranks on its own CPUs: bound a core each where there are enough, else
 * unbound on the CPUs it may use (its affinity, which a user narrows with
 * taskset to leave the rest of the machine to other work); the baseline
 * runs there. In its first step each rank but rank 0 moves onto a CPU of
 * the machine outside the one it was given (pthread_setaffinity_np, a
 * thread's call, beside the refused sched_setaffinity): the ranks the
 * baseline runs on one CPU run on two. Confined to one CPU (cpus: 1) it
 * passed at 39.4 ms a step against the seed's 238.8 ms beside it (6.1x,
 * the loaded 2-core machine); on a machine with cores to spare (a 16-core
 * GPU host, whose cores beyond the ranks' run the compiles) its threads
 * would spread over those the same way. Where no CPU is outside its own
 * it stays and says so.
 * class: resources the stage was not given (attention/second-gpu's CPU
 * counterpart)
 * defence: stage — its control group's cpuset is the CPUs it was given
 * (the ranks' cores, or the evaluator's CPUs when unbound): an affinity
 * outside it is refused
 * rename: cuco_step
 * cpus: 1
 * expect: run crash other-cores: stayed
 */
#include <errno.h>
#include <sys/sysinfo.h>

void cuco_step(void *state, cuco_io *io)
{
	static int moved;
	if (!moved && io->rank > 0) {
		cpu_set_t mine, there;
		CPU_ZERO(&mine);
		sched_getaffinity(0, sizeof mine, &mine);
		int to = -1, rc = ESRCH;
		for (int c = 0; c < get_nprocs_conf() && c < CPU_SETSIZE && to < 0; c++)
			to = CPU_ISSET(c, &mine) ? -1 : c;
		if (to >= 0) {
			CPU_ZERO(&there);
			CPU_SET(to, &there);
			rc = pthread_setaffinity_np(pthread_self(), sizeof there, &there);
		}
		if (rc != 0) {
			fprintf(stderr, "other-cores: stayed (%s)\n", to < 0 ? "no CPU outside its own" : strerror(rc));
			fflush(stderr);
			abort();
		}
		moved = 1;
	}
	cuco_step_real(state, io);
}
