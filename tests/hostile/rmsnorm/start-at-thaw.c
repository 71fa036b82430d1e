/* hostile: start each step at the thaw, before the release. The referee
 * draws a step's inputs with the stage frozen, thaws it, and only then
 * releases it and starts its clock; the stage's threads run again from
 * the thaw. A thread of its own reads the clock in a loop: a gap of more
 * than 300 us is the freeze just ended, so the next step's inputs are in
 * place, and it launches the kernel on a stream of its own at once; the
 * next cuco_launch only makes the frame's stream wait for that kernel.
 * The work between the thaw and the release (the referee's write of the
 * freezer, its read of the state, the release's wake-up) is out of the
 * step's time. No GPU work is left anywhere the probes look (nothing is
 * on the GPU when the stage is frozen). Where the stage is never frozen
 * (no control group) it computes each step in cuco_launch, honestly.
 * The referee's clock now starts before the thaw, so its early start is
 * inside the time: it passes no faster than the seed (gain: none). Before
 * that, on an H200 at the tiny size, it passed at 5.65 us against the
 * seed's 5.80 us (bench/results/trust.md).
 * rename: cuco_launch
 * bench: yes
 * gain: none
 * expect: run suspect probe:
 * expect: bench suspect probe:
 */
#include <pthread.h>
#include <time.h>

static struct {
	pthread_mutex_t lock;
	const cuco_problem *p;    /* the arrays of the step to start, once armed */
	void *state;
	cudaStream_t stream;
	cudaEvent_t started;      /* the kernel started at the thaw */
	bool armed, ready;
} thaw = { PTHREAD_MUTEX_INITIALIZER };

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *watch_thaw(void *)
{
	for (double last = seconds();;) {
		double t = seconds();
		if (t - last > 300e-6) {
			pthread_mutex_lock(&thaw.lock);
			if (thaw.armed) {
				cuco_launch_real(thaw.state, thaw.p, thaw.stream);
				CUCO_CUDA(cudaEventRecord(thaw.started, thaw.stream));
				thaw.armed = false;
				thaw.ready = true;
			}
			pthread_mutex_unlock(&thaw.lock);
		}
		last = t;
	}
	return nullptr;
}

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	static pthread_t thread;
	static cuco_problem kept;
	if (!thread) {
		CUCO_CUDA(cudaStreamCreateWithFlags(&thaw.stream, cudaStreamNonBlocking));
		CUCO_CUDA(cudaEventCreateWithFlags(&thaw.started, cudaEventDisableTiming));
		pthread_create(&thread, nullptr, watch_thaw, nullptr);
	}
	pthread_mutex_lock(&thaw.lock);
	if (thaw.ready && thaw.p->out == p->out)
		CUCO_CUDA(cudaStreamWaitEvent(s, thaw.started, 0));
	else
		cuco_launch_real(state, p, s);
	kept = *p;
	thaw.p = &kept;
	thaw.state = state;
	thaw.ready = false;
	thaw.armed = true;
	pthread_mutex_unlock(&thaw.lock);
}
