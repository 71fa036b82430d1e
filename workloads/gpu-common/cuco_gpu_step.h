// cuco_gpu_step.h — what a one-GPU program (family cuda) is: declarations
// only (docs/workloads.md, "Framed programs").
//
// The program (a baseline, a seed, a candidate) is one translation unit
// with no main(). It defines cuco_launch, and cuco_prepare when it needs
// set-up. Its workload's frame (the workload's frame.cu, on the harness of
// cuco_gpu.h and cuco_gpu_frame.cuh), compiled apart and linked with the
// program's object, gives it main(), the problem's buffers and
// cuco_die(); it takes the evaluator's ticket before any of the program's
// code runs, fills fresh inputs, calls the program, checks and times it,
// and seals the verdict. No text of the program comes before or after a
// line of it.
//
// struct cuco_problem is the workload's buffers, defined by the header
// its programs include (cuco_rows.cuh for the row-wise kernels,
// attention.cuh). Their contents are the frame's: inputs drawn fresh for
// the verified runs, outputs poisoned before checked ones.
//
// Before it is linked, the program's object may be checked against what a
// program may define and import; these two names, extern "C", are what
// the frame calls.
#pragma once
#include "cuco_cuda.h"

struct cuco_problem;

extern "C" {

// Before any launch, with the problem's buffers in place (their contents
// are not there yet): plans, handles, scratch memory. Returns the
// program's state, handed to every launch on those buffers. Optional:
// without it the state is NULL. A frame with several problems (the sets
// of a refereed step) calls it once for each whose plan may hold its
// buffers (attention's ref_frame.cu), or once on the first (the row-wise
// frame, cuco_rows_ref_frame.cu).
void *cuco_prepare(const cuco_problem *p);

// One step on p's inputs into its outputs, all of its work enqueued on s:
// it may fork to other streams but joins them back to s before it returns
// (the frame's events on s time it; work left outside is refused).
void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s);

}
