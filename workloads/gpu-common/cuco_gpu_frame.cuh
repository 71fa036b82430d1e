// cuco_gpu_frame.cuh — what the one-GPU frames share (each workload's
// frame.cu: main(), the problem's buffers, inputs, check and report, on
// this harness). A frame is compiled apart from the program and linked
// with its object (cuco_gpu_step.h says what the program defines).
//
// The frame's main() runs before any of the program's code: its first
// call, cuco_frame_init, takes the evaluator's ticket from its file in the
// stage's folder (../common/cuco_trust.h, CUCO_FRAME), so the key is in no
// environment. The frame still runs in the program's process, as the
// harness always has: the program can reach its memory, and what the
// verdict rests on there is defence in depth (docs/workloads.md, "Trust").
#pragma once

#ifdef CUCO_TRUST_H
#error "cuco_gpu_frame.cuh must come before any other harness header: the frame takes the ticket its own way"
#endif
#define CUCO_FRAME 1
#include "cuco_gpu.h"
#include "cuco_gpu_step.h"

// A program without set-up defines no cuco_prepare: this one stands in.
extern "C" __attribute__((weak)) void *cuco_prepare(const cuco_problem *)
{
	return nullptr;
}

// The frame's first call: the ticket, then the device and the main stream.
static inline cuco_ctx cuco_frame_init(int *argc, char ***argv)
{
	const char *why = cuco_take_ticket_file();
	if (why)
		cuco_environment_exit("%s", why);
	return cuco_init(argc, argv);
}
