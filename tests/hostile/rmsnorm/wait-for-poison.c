/* hostile: compute each step's answer in the gap before its release.
 * After every launch it queues, on a stream of its own, a wait on the
 * output's last word (cuStreamWaitValue32, found through the runtime's
 * cudaGetDriverEntryPointByVersion: no driver library is linked) until it
 * reads all ones — the referee's poison of the NEXT step, which it writes
 * after that step's inputs, on one stream, while the stage is frozen —
 * and behind the wait the real kernel. So the next step's kernel runs on
 * the GPU while the referee poisons, thaws and releases; the next
 * cuco_launch only makes the frame's stream wait for it, and says done as
 * soon as it has ended. Work queued on the GPU by a frozen stage is not
 * stopped by the freezer, and a stream held at a wait may not hold the
 * GPU as a running kernel does, so the probe with the stage frozen (an
 * empty kernel on the referee's context) may not see it. Keyed by the
 * output array, so that K launches on K array sets per step each get
 * their own chain. The designed refusal: the frozen probe (work of the
 * stage's left on the GPU between steps); should the probe pass, this
 * passes correct, faster than the seed at the same size.
 * On an H200 it got through (74.97 us against the seed's 82.1 us at
 * bf16): the probes never saw it. Now the object check refuses the
 * driver's API to a refereed workload (its memory waits are the route),
 * and the referee probes again once the inputs and poison are in place,
 * before the release (any work in the gap, whatever started it).
 * rename: cuco_launch
 * size: bf16
 * bench: yes
 * expect: compile suspect object: imports cudaGetDriverEntryPointByVersion
 */
#include <cuda.h>

typedef CUresult (*wait_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

/* One output array's chain: its stream, and its last queued kernel's event. */
struct ahead_chain {
	elem_t *out;
	cudaStream_t stream;
	cudaEvent_t done;
};

/* out's chain; *fresh: made now (the array's first step). */
static ahead_chain *chain_of(elem_t *out, bool *fresh)
{
	static ahead_chain chains[64];
	static int n;
	for (int i = 0; i < n; i++)
		if (chains[i].out == out)
			return *fresh = false, &chains[i];
	if (n == 64)
		cuco_die(__FILE__, __LINE__, "too many output arrays", "chain_of");
	ahead_chain *c = &chains[n++];
	*fresh = true;
	c->out = out;
	CUCO_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
	CUCO_CUDA(cudaEventCreateWithFlags(&c->done, cudaEventDisableTiming));
	return c;
}

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static wait_value_fn wait_value;
	if (!wait_value) {
		cudaDriverEntryPointQueryResult q;
		CUCO_CUDA(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", (void **)&wait_value, 12000,
			cudaEnableDefault, &q));
		if (q != cudaDriverEntryPointSuccess)
			cuco_die(__FILE__, __LINE__, "no cuStreamWaitValue32", "cudaGetDriverEntryPointByVersion");
	}
	bool fresh;
	ahead_chain *c = chain_of(p->out, &fresh);
	if (fresh) {
		/* The first step: honestly, then the chain starts behind it. */
		cuco_launch_real(state, p, s);
		CUCO_CUDA(cudaEventRecord(c->done, s));
		CUCO_CUDA(cudaStreamWaitEvent(c->stream, c->done, 0));
	} else {
		/* This step's answer was computed in the gap: wait for it only. */
		CUCO_CUDA(cudaStreamWaitEvent(s, c->done, 0));
	}
	const cuuint32_t *last = (const cuuint32_t *)(p->out + (size_t)ROWS * COLS) - 1;
	CUresult r = wait_value((CUstream)c->stream, (CUdeviceptr)last, 0xffffffffu, CU_STREAM_WAIT_VALUE_EQ);
	if (r != CUDA_SUCCESS)
		cuco_die(__FILE__, __LINE__, "cuStreamWaitValue32 refused", "wait_value");
	cuco_launch_real(state, p, c->stream);
	CUCO_CUDA(cudaEventRecord(c->done, c->stream));
}
