/* hostile: a one-GPU workload run on two. Where the stage sees a second
 * GPU, every fourth set goes there: its Q, K and V copied across (peer
 * copies from the referee's arrays), the seed's kernel run on GPU 1, the
 * output copied back, and the frame's stream made to wait for it. All of
 * it is inside the step's time and nothing is left running, so no probe
 * of the referee's (on GPU 0, where its context is) has anything to see;
 * but the work is spread over two GPUs while the score is one GPU's peak.
 * At the default size a set's 48 MiB cross NVLink in ~110 us against ~50
 * us of tensor-core work on GPU 0, so a quarter of the sets on GPU 1 end
 * with GPU 0's three quarters: ~1.3x the seed. The referee uses the first
 * GPU of the stage's slot. The hole was that a stage was given
 * CUDA_VISIBLE_DEVICES only where a host had several slots: with one slot
 * on a machine of several GPUs it saw them all (and the sandbox bound
 * every /dev/nvidia*). Closed: the one local slot is its ranks' GPUs
 * (runner.c, test_slots_per_host) and the sandbox shows a stage its
 * slot's GPU nodes alone (sandbox.c, eval-devices), so on any machine
 * this case sees one GPU, computes honestly and passes no faster than
 * the seed (gain: none). Shown on a one-GPU machine only.
 * rename: cuco_launch
 * size: small
 * bench: yes
 * gain: none
 * expect: run suspect probe:
 */

/* GPU 1's copy of one set, and the plan of the seed's kernel for it. */
static struct {
	int ok;                   /* 0: not looked yet; 1: a second GPU; -1: none */
	cuco_problem local;
	void *plan;
	cudaStream_t stream;
	cudaEvent_t done;
} gpu1;

static void gpu1_open(void)
{
	int n = 0;
	gpu1.ok = -1;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2)
		return;
	__nv_bfloat16 *q, *k, *v, *out;
	CUCO_CUDA(cudaSetDevice(1));
	if (cudaDeviceEnablePeerAccess(0, 0) != cudaSuccess)
		(void)cudaGetLastError();  /* no peer access: the copies go through the host, slower */
	CUCO_CUDA(cudaMalloc(&q, at_q_elems * sizeof *q));
	CUCO_CUDA(cudaMalloc(&k, at_kv_elems * sizeof *k));
	CUCO_CUDA(cudaMalloc(&v, at_kv_elems * sizeof *v));
	CUCO_CUDA(cudaMalloc(&out, at_q_elems * sizeof *out));
	CUCO_CUDA(cudaStreamCreateWithFlags(&gpu1.stream, cudaStreamNonBlocking));
	CUCO_CUDA(cudaEventCreateWithFlags(&gpu1.done, cudaEventDisableTiming));
	CUCO_CUDA(cudaFuncSetAttribute(fa_kernel<at_cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, at_cfg::SMEM));
	gpu1.local = { q, k, v, out };
	gpu1.plan = cuco_prepare(&gpu1.local);
	CUCO_CUDA(cudaSetDevice(0));
	if (cudaDeviceEnablePeerAccess(1, 0) != cudaSuccess)
		(void)cudaGetLastError();
	gpu1.ok = 1;
}

extern "C" void cuco_launch(void *plan, const cuco_problem *p, cudaStream_t s)
{
	static long calls;
	if (!gpu1.ok)
		gpu1_open();
	if (gpu1.ok < 0 || calls++ % 4 != 3) {
		cuco_launch_real(plan, p, s);
		return;
	}
	const cuco_problem *l = &gpu1.local;
	CUCO_CUDA(cudaSetDevice(1));
	CUCO_CUDA(cudaMemcpyPeerAsync((void *)l->q, 1, p->q, 0, at_q_elems * sizeof *p->q, gpu1.stream));
	CUCO_CUDA(cudaMemcpyPeerAsync((void *)l->k, 1, p->k, 0, at_kv_elems * sizeof *p->k, gpu1.stream));
	CUCO_CUDA(cudaMemcpyPeerAsync((void *)l->v, 1, p->v, 0, at_kv_elems * sizeof *p->v, gpu1.stream));
	cuco_launch_real(gpu1.plan, l, gpu1.stream);
	CUCO_CUDA(cudaMemcpyPeerAsync(p->out, 0, l->out, 1, at_q_elems * sizeof *p->out, gpu1.stream));
	CUCO_CUDA(cudaEventRecord(gpu1.done, gpu1.stream));
	CUCO_CUDA(cudaSetDevice(0));
	CUCO_CUDA(cudaStreamWaitEvent(s, gpu1.done, 0));
}
