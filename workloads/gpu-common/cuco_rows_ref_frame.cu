// cuco_rows_ref_frame.cu — the trusted frame of a refereed single-GPU
// row-wise workload (rmsnorm): main(), the referee's device buffers, and
// the calls into the program (cuco_gpu_step.h). Compiled apart from the
// program, at the workload's sizes, and linked with its checked object.
//
// The frame runs in the program's process, so the program can reach all
// of it: nothing the verdict rests on is here. It makes its CUDA context
// (no GPU: it says so and leaves), maps this rank's channel file
// (../common/cuco_channel.h), says it is attached, waits for the
// referee's go, opens the referee's device arrays by their IPC handles
// into the problem's buffers (cuco_rows.cuh), runs the program's
// cuco_prepare (on the first set), and then, step by step, waits for the
// release, calls cuco_launch on its stream once for each of the sets the
// arrays hold (K of them, each with inputs and outputs of its own:
// cuco_rows_referee.cuh says why), waits for that stream and says the step
// is done. The referee draws the inputs, times the step, captures the rows it
// checks on its own context (which waits for anything still running on
// the GPU) and checks them (../common/cuco_referee.c, docs/trust.md).
//
// Exit status: 0 after the referee's STOP, 2 when the channel is missing
// or malformed, 69 without a usable GPU, 1 when a CUDA call failed.
#include "cuco_chan_rank.h"
#include "cuco_rows.cuh"

#include <vector>

enum { ATTACH_TRIES = 6000 };  // 10 ms apart: the referee makes its CUDA context first

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

[[noreturn]] static void fail(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, "frame: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(code);
}

// The referee's array a, opened in this context.
static void *open_array(const cuco_chan_array *a, size_t want)
{
	cudaIpcMemHandle_t h;
	void *p = nullptr;
	if (!a->device || a->bytes != want)
		fail(2, "channel: array %s is not the device array of this size the frame expects", a->name);
	memcpy(&h, a->handle, sizeof h);
	CUCO_CUDA(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
	return p;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		fail(2, "takes no arguments (the referee sets the steps), not '%s'", argv[1]);
	cudaError_t e = cudaFree(nullptr);
	if (e != cudaSuccess)
		fail(69, "no GPU to run on: %s", cudaGetErrorString(e));
	const char *why = nullptr;
	char path[4096];
	cuco_chan *chan = cuco_chan_attach(0, 1, 2, ATTACH_TRIES, &why, path, sizeof path);
	if (!chan)
		fail(2, why, path);
	cuco_chan_put(&chan->state, CUCO_CHAN_ATTACHED);
	cuco_chan_await(&chan->go, 0);

	// The arrays hold K sets, one after another: y's size says K.
	const size_t set_out = (size_t)ROWS * COLS * sizeof(elem_t), out_bytes = chan->out[0].bytes;
	if (chan->nout != 1 || chan->nin < 1 || out_bytes < set_out || out_bytes % set_out != 0)
		fail(2, "channel: %s", "not the rows problem's arrays");
	const size_t sets = out_bytes / set_out, in_bytes = chan->in[0].bytes, set_in = in_bytes / sets;
	if (in_bytes % sets != 0 || set_in % ((size_t)ROWS * sizeof(elem_t)) != 0)
		fail(2, "channel: %s", "the input is not ROWS rows a set");
	const elem_t *x = (const elem_t *)open_array(&chan->in[0], in_bytes);
	const elem_t *w = chan->nin > 1 ? (const elem_t *)open_array(&chan->in[1], sets * COLS * sizeof(elem_t))
		: nullptr;
	elem_t *y = (elem_t *)open_array(&chan->out[0], out_bytes);
	std::vector<cuco_problem> p(sets);
	for (size_t k = 0; k < sets; k++)
		p[k] = { x + k * (set_in / sizeof(elem_t)), w ? w + k * COLS : nullptr,
			y + k * (set_out / sizeof(elem_t)) };
	cudaStream_t s;
	CUCO_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	void *state = cuco_prepare(&p[0]);
	CUCO_CUDA(cudaDeviceSynchronize());
	cuco_chan_put(&chan->state, CUCO_CHAN_READY);

	for (uint32_t seen = 0;;) {
		uint32_t r = seen = cuco_chan_await(&chan->release, seen);
		if (r == CUCO_CHAN_STOP)
			break;
		for (const cuco_problem &set : p)
			cuco_launch(state, &set, s);
		CUCO_CUDA(cudaStreamSynchronize(s));
		cuco_chan_put(&chan->state, CUCO_CHAN_DONE + r - 1);
	}
	return 0;
}
