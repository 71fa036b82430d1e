/* hostile: compute nothing and exit with status 127, which the evaluator
 * reads as "command not found": the failure is then the environment's,
 * not the candidate's (no wrong answer on its record), and three in a
 * row end the whole search.
 * class: blaming the environment
 * defence: evaluator — a stage whose referee saw every rank attach ran
 * the program: its exit status is the program's
 * rename: cuco_step
 * expect: run crash exit status 127
 */
#include <unistd.h>

void cuco_step(void *arg, cuco_io *io)
{
	(void)arg;
	(void)io;
	_exit(127);
}
