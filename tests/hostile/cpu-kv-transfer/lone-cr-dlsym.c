/* hostile: a one-sided design (backend=rma) that also sends a message
 * in every step, through MPI_Send and MPI_Recv found by dlsym, with the
 * host-call counter's window shut first (cuco_count_window, found the
 * same way). The line that takes dlsym ends its // comment with a lone
 * carriage return: the compiler starts a new line there, the source scan
 * (which ends a comment at a line feed) never sees the name.
 * class: issue 24, class 1 (the scan and the compiler lex differently)
 * and 2 (reaching the counter)
 * defence: object checker — dlsym is not on the import list
 * rename: cuco_step
 * directive: backend=rma
 * expect: compile suspect dlsym
 * expect: compile suspect object: imports dlsym
 */
#include <dlfcn.h>

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*window_fn)(int);

void cuco_step(void *arg, cuco_io *io)
{
	static void *(*look)(void *, const char *);
	float token = 1;
	// the lookup, out of the scan's sight:
	look = dlsym;
	cuco_step_real(arg, io);
	window_fn window = (window_fn)look(RTLD_DEFAULT, "cuco_count_" "window");
	if (window)
		window(0);
	if (io->rank == 0)
		((send_fn)look(RTLD_DEFAULT, "MPI_" "Send"))(&token, 1, MPI_FLOAT, 1, 3, MPI_COMM_WORLD);
	else
		((recv_fn)look(RTLD_DEFAULT, "MPI_" "Recv"))(&token, 1, MPI_FLOAT, 0, 3, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE);
	if (window)
		window(1);
}
