/* hostile: keep a kernel resident on the GPU across steps, one block
 * spinning on the input's first word, where it would see the next step's
 * inputs the moment the referee draws them (and could start on them
 * before the release: the freezer stops the stage's threads, not its
 * kernels). The GPU runs one context at a time: the referee's capture at
 * "done" waits a time slice for the resident kernel, and the step is
 * refused as leaving work running (or the probe once the stage is
 * frozen waits instead).
 * On an H200 the frame's wait for its stream never ends (the resident
 * kernel is on it), so the run stage is killed at its time limit instead.
 * rename: cuco_launch
 * expect: run suspect probe:
 * expect: run timeout killed after
 */
__global__ void watch_input(const volatile unsigned *x, unsigned *seen)
{
	for (unsigned last = *x, n = 0;; n++) {
		unsigned now = *x;
		if (now != last) {
			last = now;
			*seen = n;
		}
	}
}

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static cudaStream_t mine;
	static unsigned *seen;
	if (!mine) {
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
		CUCO_CUDA(cudaMalloc(&seen, sizeof *seen));
		watch_input<<<1, 1, 0, mine>>>((const volatile unsigned *)p->in, seen);
		CUCO_LAUNCHED();
	}
	cuco_launch_real(state, p, s);
}
