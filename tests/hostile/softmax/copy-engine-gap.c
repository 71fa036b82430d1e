/* hostile: leave work on the GPU's copy engines past "done", into the
 * gap. From the second step on (the first counts the sets), a step's last
 * launch also queues, behind its kernel, on a stream of the program's own
 * that the frame never waits for, 2 GiB of device-to-device copies (about
 * 1-2 ms of a copy engine), which start at "done" and run on, through
 * the freeze and into the referee's drawing of the next inputs, where a
 * copy could read them before the release. The referee's capture at
 * "done" and its probes with the stage frozen are kernels: they wait for
 * the stage's work on the compute engine (one context at a time), but a
 * copy engine has time slices of its own, so a kernel of the referee's may
 * run beside the copies without waiting for them. Designed refusal: a
 * probe waiting past the bound (`probe:`), should the copies hold it up;
 * if not, this passes correct, its copies untimed and unseen: work of the
 * stage's on the GPU between steps. (Copies compute nothing, so what they
 * can do there is move bytes: the next inputs, read early.)
 * rename: cuco_launch
 * bench: yes
 * expect: run suspect probe:
 * expect: bench suspect probe:
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static cudaStream_t mine;
	static cudaEvent_t last_kernel;
	static char *scratch;
	static const elem_t *first;
	static long calls, sets;  /* sets: 0 until the second step starts */
	const size_t half = 512ull << 20;
	if (!mine) {
		CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
		CUCO_CUDA(cudaEventCreateWithFlags(&last_kernel, cudaEventDisableTiming));
		CUCO_CUDA(cudaMalloc(&scratch, 2 * half));
		first = p->in;
	}
	if (p->in == first && calls > 0 && !sets)
		sets = calls;
	cuco_launch_real(state, p, s);
	if (!sets || ++calls % sets != 0) {
		calls += !sets;
		return;
	}
	CUCO_CUDA(cudaEventRecord(last_kernel, s));
	CUCO_CUDA(cudaStreamWaitEvent(mine, last_kernel, 0));
	for (int i = 0; i < 4; i++)
		CUCO_CUDA(cudaMemcpyAsync(scratch + (i % 2) * half, scratch + (1 - i % 2) * half, half,
			cudaMemcpyDeviceToDevice, mine));
}
