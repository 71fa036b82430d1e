/* hostile: keep a thread of the program's own that, every 100 us, puts a
 * 3 ms kernel on a stream of its own: work the frame never waits for,
 * launched whenever the thread runs — after "done" too, into the gap
 * between steps, where it could see the next step's Q, K and V before the
 * release. The referee's capture at "done" waits for whatever runs then,
 * and its probes once the stage is frozen (after the step, and before the
 * next release) for whatever was launched after the capture; three probes
 * past the bound refuse the stage.
 * rename: cuco_launch
 * bench: yes
 * expect: run suspect probe:
 * expect: bench suspect probe:
 */
#include <pthread.h>
#include <unistd.h>

__global__ void stall_3ms_t(void)
{
	long long t0 = clock64();
	while (clock64() - t0 < 6000000ll)
		;
}

static void *busy(void *)
{
	cudaStream_t mine;
	CUCO_CUDA(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
	for (;;) {
		usleep(100);
		stall_3ms_t<<<1, 1, 0, mine>>>();
		CUCO_CUDA(cudaStreamSynchronize(mine));
	}
	return nullptr;
}

extern "C" void cuco_launch(void *plan, const cuco_problem *p, cudaStream_t s)
{
	static pthread_t thread;
	if (!thread)
		pthread_create(&thread, nullptr, busy, nullptr);
	cuco_launch_real(plan, p, s);
}
