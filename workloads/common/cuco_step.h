/* cuco_step.h — what a refereed CPU workload program is: declarations only.
 *
 * The program (a baseline, a seed, a candidate) is one translation unit
 * with no main(). It defines the three functions below; the trusted frame
 * (cuco_frame.c, compiled apart and linked with it) gives it main(), MPI
 * and its inputs and outputs, and calls them. The referee, a process of
 * its own that never runs the program's code, draws every step's inputs,
 * times the step on its own clock and checks the outputs
 * (docs/trust.md, "The referee").
 *
 * Before it is linked, the program's object is checked: it may define
 * only these names as globals (others are made local), import only what
 * its family's list allows, and run nothing before main()
 * (docs/trust.md, "The candidate's object"). */
#ifndef CUCO_STEP_H
#define CUCO_STEP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUCO_IO_MAX 8

/* This rank's view of one step. The inputs are the referee's, fresh for
 * every step where the workload says so; the outputs are poisoned before
 * every step, so only what the step writes counts. */
typedef struct cuco_io {
	int rank, nranks;
	int step;                        /* from 0 over warm-up and timed steps */
	int nin, nout;
	const void *in[CUCO_IO_MAX];
	size_t in_bytes[CUCO_IO_MAX];
	void *out[CUCO_IO_MAX];
	size_t out_bytes[CUCO_IO_MAX];
} cuco_io;

/* ---- defined by the program -------------------------------------------------- */

/* Once, after MPI_Init: allocate what the steps need (windows, buffers),
 * into *state. The arrays of io are in place (their contents are not
 * yet). Non-zero: the program cannot run (say why on stderr). */
int cuco_setup(cuco_io *io, void **state);
/* One step on io's current inputs into its outputs. */
void cuco_step(void *state, cuco_io *io);
/* Once, before MPI_Finalize. */
void cuco_teardown(void *state, cuco_io *io);
/* Optional: the thread level MPI_Init_thread asks for (default
 * MPI_THREAD_SINGLE; a helper thread that calls MPI needs MULTIPLE). */
extern const int cuco_mpi_thread;

/* ---- given by the frame ----------------------------------------------------------- */

/* The program's own account of where a step's time goes, for people:
 * begin/end pairs of one phase must not nest; different phases may. Only
 * the calling thread's time counts. The referee's clock, not this, is the
 * step's time. */
typedef enum cuco_phase_id { CUCO_PH_COMPUTE, CUCO_PH_COMM, CUCO_PH_SYNC, CUCO_PH_COUNT } cuco_phase_id;

void cuco_phase_begin(cuco_phase_id p);
void cuco_phase_end(cuco_phase_id p);

#ifdef __cplusplus
}
#endif

#endif
