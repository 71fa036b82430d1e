/* hostile: a one-sided design (backend=rma) that calls MPI_Allgather
 * through a pointer from dlsym, spelled by token pasting so the source
 * scan never sees the name, with the host-call counter's window shut
 * first (cuco_count_window, found the same way): neither the binary's
 * imports nor the counter shows the collective.
 * class: issue 24, class 1 (token pasting) and 2 (reaching the counter)
 * defence: object checker — dlsym is not on the import list
 * rename: cuco_step
 * directive: backend=rma
 * expect: compile suspect dlsym
 * expect: compile suspect object: imports dlsym
 */
#include <dlfcn.h>
#define CUCO_GLUE(a, b) a##b

void cuco_step(void *state, cuco_io *io)
{
	typedef int (*gather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
	typedef int (*window_fn)(int);
	void *(*look)(void *, const char *) = CUCO_GLUE(dl, sym);
	window_fn window = (window_fn)look(RTLD_DEFAULT, "cuco_count_" "window");
	gather_fn gather = (gather_fn)look(RTLD_DEFAULT, "MPI_" "Allgather");
	float mine = (float)io->rank, all[64];
	cuco_step_real(state, io);
	if (window)
		window(0);
	if (gather)
		gather(&mine, 1, MPI_FLOAT, all, 1, MPI_FLOAT, MPI_COMM_WORLD);
	if (window)
		window(1);
}
