// attention's trusted frame under the referee (referee.cu): main(), the
// referee's device arrays, and the calls into the program
// (cuco_gpu_step.h), on the stage's side of the referee's channel
// (../gpu-common/cuco_ref_frame.cuh). Compiled apart from the program, at
// the workload's sizes, and linked with its checked object.
//
// The arrays hold K sets, each with Q, K, V and an output of its own
// (referee.cu says why). A program's cuco_prepare may plan for its
// buffers (the seed encodes the copy engine's tensor maps of them), so
// the frame calls it once for each set, before the first step, and each
// set's launch gets that set's state: a step is cuco_launch once a set.
// It also gives the programs cuco_tensor_map_encode (cuco_tensor_map.h):
// a refereed program may not look up the driver's functions itself.
//
// (frame.cu is the native frame, with the check in the program's process,
// which bench/attention/split.sh still links its programs with.)
#include "attention.cuh"
#include "cuco_ref_frame.cuh"
#define CUCO_TENSOR_MAP_DEFINE 1
#include "cuco_tensor_map.h"

#include <vector>

int main(int argc, char **argv)
{
	cuco_chan *chan = ref_frame_attach(argc, argv, 3);  // q, k, v; out

	// Q, K, V and the output, K sets each, one after another: out's size says K.
	const size_t q_bytes = at_q_elems * sizeof(__nv_bfloat16), kv_bytes = at_kv_elems * sizeof(__nv_bfloat16),
		out_bytes = chan->out[0].bytes, sets = out_bytes / q_bytes;
	if (chan->nin != 3 || chan->nout != 1 || sets < 1 || out_bytes % q_bytes != 0)
		ref_frame_fail(2, "channel: %s", "not attention's arrays (q, k, v; out)");
	const __nv_bfloat16 *q = (const __nv_bfloat16 *)ref_frame_array(&chan->in[0], sets * q_bytes),
		*k = (const __nv_bfloat16 *)ref_frame_array(&chan->in[1], sets * kv_bytes),
		*v = (const __nv_bfloat16 *)ref_frame_array(&chan->in[2], sets * kv_bytes);
	__nv_bfloat16 *out = (__nv_bfloat16 *)ref_frame_array(&chan->out[0], out_bytes);
	std::vector<cuco_problem> p(sets);
	std::vector<void *> state(sets);
	for (size_t i = 0; i < sets; i++) {
		p[i] = { q + i * at_q_elems, k + i * at_kv_elems, v + i * at_kv_elems, out + i * at_q_elems };
		state[i] = cuco_prepare(&p[i]);
	}
	cudaStream_t s;
	CUCO_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	ref_frame_steps(chan, s, [&](cudaStream_t on) {
		for (size_t i = 0; i < sets; i++)
			cuco_launch(state[i], &p[i], on);
	});
	return 0;
}
