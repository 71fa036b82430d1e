// cuco_ref_frame.cuh — what the trusted frames of the refereed one-GPU
// workloads share (cuco_rows_ref_frame.cu, attention's ref_frame.cu): the
// stage's side of the referee's channel. A frame includes it once, after
// its problem's header.
//
// The frame runs in the program's process, so the program can reach all
// of it: nothing the verdict rests on is here. ref_frame_attach makes the
// CUDA context (no GPU: it says so and leaves), maps this rank's channel
// file (../common/cuco_channel.h), says it is attached and waits for the
// referee's go; the frame then opens the referee's device arrays by their
// IPC handles (ref_frame_array) into its problems and prepares the
// program; ref_frame_steps says it is ready and, step by step, waits for
// the release, enqueues the step (every set's launch) on the frame's
// stream, waits for that stream and says the step is done. The referee
// draws the inputs, times the step, captures what it checks on its own
// context (which waits for anything still running on the GPU) and checks
// it (../common/cuco_referee.c, docs/trust.md).
//
// Exit status: 0 after the referee's STOP, 2 when the channel is missing
// or malformed, 69 without a usable GPU, 1 when a CUDA call failed.
#pragma once
#include "cuco_chan_rank.h"
#include "cuco_gpu_step.h"

enum { REF_FRAME_ATTACH_TRIES = 6000 };  // 10 ms apart: the referee makes its CUDA context first

// A program without set-up defines no cuco_prepare: this one stands in.
extern "C" __attribute__((weak)) void *cuco_prepare(const cuco_problem *)
{
	return nullptr;
}

extern "C" [[noreturn]] void cuco_die(const char *file, int line, const char *what, const char *call)
{
	fprintf(stderr, "%s:%d: %s in %s\n", file, line, what, call);
	fflush(stderr);
	exit(1);
}

[[noreturn]] static void ref_frame_fail(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, "frame: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(code);
}

// The CUDA context and the referee's channel (at most max_arrays inputs
// and outputs), once it says go.
static cuco_chan *ref_frame_attach(int argc, char **argv, uint32_t max_arrays)
{
	if (argc > 1)
		ref_frame_fail(2, "takes no arguments (the referee sets the steps), not '%s'", argv[1]);
	cudaError_t e = cudaFree(nullptr);
	if (e != cudaSuccess)
		ref_frame_fail(69, "no GPU to run on: %s", cudaGetErrorString(e));
	const char *why = nullptr;
	char path[4096];
	cuco_chan *chan = cuco_chan_attach(0, 1, max_arrays, REF_FRAME_ATTACH_TRIES, &why, path, sizeof path);
	if (!chan)
		ref_frame_fail(2, why, path);
	cuco_chan_put(&chan->state, CUCO_CHAN_ATTACHED);
	cuco_chan_await(&chan->go, 0);
	return chan;
}

// The referee's array a, of `want` bytes, opened in this context.
static void *ref_frame_array(const cuco_chan_array *a, size_t want)
{
	cudaIpcMemHandle_t h;
	void *p = nullptr;
	if (!a->device || a->bytes != want)
		ref_frame_fail(2, "channel: array %s is not the device array of this size the frame expects", a->name);
	memcpy(&h, a->handle, sizeof h);
	CUCO_CUDA(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
	return p;
}

// Ready (the program prepared), then every step until the referee's STOP:
// step(s) enqueues a step's launches on s.
template <class Step>
static void ref_frame_steps(cuco_chan *chan, cudaStream_t s, Step step)
{
	CUCO_CUDA(cudaDeviceSynchronize());
	cuco_chan_put(&chan->state, CUCO_CHAN_READY);
	for (uint32_t seen = 0;;) {
		uint32_t r = seen = cuco_chan_await(&chan->release, seen);
		if (r == CUCO_CHAN_STOP)
			break;
		step(s);
		CUCO_CUDA(cudaStreamSynchronize(s));
		cuco_chan_put(&chan->state, CUCO_CHAN_DONE + r - 1);
	}
}
