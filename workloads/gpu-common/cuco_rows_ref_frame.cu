// cuco_rows_ref_frame.cu — the trusted frame of a refereed single-GPU
// row-wise workload (rmsnorm, softmax, swiglu): main(), the referee's
// device buffers, and the calls into the program (cuco_gpu_step.h), on
// the stage's side of the referee's channel (cuco_ref_frame.cuh).
// Compiled apart from the program, at the workload's sizes, and linked
// with its checked object.
//
// It opens the referee's device arrays into the problem's buffers
// (cuco_rows.cuh), runs the program's cuco_prepare (on the first set),
// and then, step by step, calls cuco_launch once for each of the sets the
// arrays hold (K of them, each with inputs and outputs of its own:
// cuco_rows_referee.cuh says why).
#include "cuco_rows.cuh"
#include "cuco_ref_frame.cuh"

#include <vector>

int main(int argc, char **argv)
{
	cuco_chan *chan = ref_frame_attach(argc, argv, 2);  // x, w; y

	// The arrays hold K sets, one after another: y's size says K.
	const size_t set_out = (size_t)ROWS * COLS * sizeof(elem_t), out_bytes = chan->out[0].bytes;
	if (chan->nout != 1 || chan->nin < 1 || out_bytes < set_out || out_bytes % set_out != 0)
		ref_frame_fail(2, "channel: %s", "not the rows problem's arrays");
	const size_t sets = out_bytes / set_out, in_bytes = chan->in[0].bytes, set_in = in_bytes / sets;
	if (in_bytes % sets != 0 || set_in % ((size_t)ROWS * sizeof(elem_t)) != 0)
		ref_frame_fail(2, "channel: %s", "the input is not ROWS rows a set");
	const elem_t *x = (const elem_t *)ref_frame_array(&chan->in[0], in_bytes);
	const elem_t *w = chan->nin > 1 ? (const elem_t *)ref_frame_array(&chan->in[1], sets * COLS * sizeof(elem_t))
		: nullptr;
	elem_t *y = (elem_t *)ref_frame_array(&chan->out[0], out_bytes);
	std::vector<cuco_problem> p(sets);
	for (size_t k = 0; k < sets; k++)
		p[k] = { x + k * (set_in / sizeof(elem_t)), w ? w + k * COLS : nullptr,
			y + k * (set_out / sizeof(elem_t)) };
	cudaStream_t s;
	CUCO_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	void *state = cuco_prepare(&p[0]);
	ref_frame_steps(chan, s, [&](cudaStream_t on) {
		for (const cuco_problem &set : p)
			cuco_launch(state, &set, on);
	});
	return 0;
}
