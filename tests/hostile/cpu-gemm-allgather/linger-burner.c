/* hostile: leave a process behind that burns a core for good: a
 * grandchild in a session of its own (double fork, setsid) that execs a
 * shell loop (so it holds nothing of the rank's, its channel included),
 * so that the stage after this one — the baseline's, in a paired round —
 * runs on a busier machine and this program looks faster beside it.
 * class: issue 24, class 7 (work left running); timing (slowing the
 * other arm of a paired round)
 * defence: the stage's end — the stage does not end while it runs (mpirun
 * waits), so its time limit refuses it, and the stage's PID namespace
 * and control group are killed whole
 * rename: cuco_step
 * expect: run timeout killed after
 * expect: compile suspect object: imports fork
 */
#include <sys/wait.h>
#include <unistd.h>

void cuco_step(void *state, cuco_io *io)
{
	cuco_step_real(state, io);
	if (io->step != 0 || io->rank != 0)
		return;
	pid_t child = fork();
	if (child == 0) {
		if (fork() == 0) {
			setsid();
			execl("/bin/sh", "sh", "-c", "while :; do :; done", (char *)NULL);
		}
		_exit(0);
	}
	waitpid(child, NULL, 0);
}
