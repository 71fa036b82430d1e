// kv-cache-transfer seed: prefill's GPU writes the KV pages straight into
// the decode rank's paged pool (a symmetric window) through LSA pointers,
// scattering them by the block table on the way, while the next layers'
// projections run on the multiprocessors the copy leaves free.
//
// Directive (defines from the manifest):
//   backend     LSA (NVLink stores) | GIN (RDMA put per page + signal; needs a NIC)
//   issuer      the coop that copies pages and meets its peer at a barrier: cta | warp | thread
//   placement   layerwise (layer l's pages move while layer l+1 computes)
//               | after (all layers computed, then one transfer)
//   sync        barrier (a push kernel per group of layers, launched when the
//               group's compute is done, LSA barriers at entry and exit)
//               | flag (one persistent push kernel; a local flag says a
//               group is computed, a flag per coop on the decode rank says
//               it has landed)
//   granularity CUCO_LAYERS_PER_PUSH: layers per push
//   knobs       CUCO_COMM_CTAS, CUCO_THREADS (the push kernel's shape)
#include "kv.cuh"
#include "cuco_lsa.cuh"

// EVOLVE-BLOCK-START
#ifndef CUCO_LAYERS_PER_PUSH
#define CUCO_LAYERS_PER_PUSH 1
#endif

static const int groups = LAYERS / CUCO_LAYERS_PER_PUSH;
static const size_t group_pages = (size_t)CUCO_LAYERS_PER_PUSH * kv_pages;

// This coop's share of copying pages [first, first+n) of the KV into the
// peer's pool at the slots the block table gives.
__device__ static void copy_pages(char *peer_pool, const char *kv, const int *table, size_t first, size_t n)
{
	const size_t per_page = kv_page_bytes / sizeof(uint4), total = n * per_page;
	const size_t stride = (size_t)cuco_coop_count() * cuco_coop_width();
	for (size_t i = (size_t)cuco_coop_index() * cuco_coop_width() + cuco_coop_lane(); i < total; i += stride) {
		size_t page = first + i / per_page, v = i % per_page;
		((uint4 *)(peer_pool + (size_t)table[page] * kv_page_bytes))[v] =
			((const uint4 *)(kv + page * kv_page_bytes))[v];
	}
}

// One group of layers; the decode rank runs it too (send = false), to meet
// the barriers: when it ends there, the group has landed.
__global__ void __launch_bounds__(CUCO_THREADS) push_group(ncclDevComm dc, ncclWindow_t pool, const char *kv,
	const int *table, int group, bool send, int peer)
{
	cuco_coop coop;
	ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
	bar.sync(coop, cuda::memory_order_acquire);  // decode is done with what we overwrite
	if (send)
		copy_pages((char *)ncclGetLsaPointer(pool, 0, peer), kv, table, group * group_pages, group_pages);
	bar.sync(coop, cuda::memory_order_acq_rel);
}

// Persistent: every group, in order, as prefill marks it computed.
__global__ void __launch_bounds__(CUCO_THREADS) push_all(ncclDevComm dc, ncclWindow_t pool, ncclWindow_t flags,
	const char *kv, const int *table, uint32_t *ready, uint32_t epoch, bool send, int peer)
{
	cuco_coop coop;
	{
		ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
		bar.sync(coop, cuda::memory_order_acquire);
	}
	const uint32_t me = cuco_coop_index(), n = cuco_coop_count();
	char *peer_pool = (char *)ncclGetLsaPointer(pool, 0, peer);
	for (int g = 0; g < groups; g++) {
		const size_t flag_off = ((size_t)g * n + me) * sizeof(uint32_t);
		if (coop.thread_rank() == 0)
			cuco_flag_wait(send ? ready + g : (uint32_t *)ncclGetLocalPointer(flags, flag_off), epoch);
		coop.sync();
		if (send) {
			copy_pages(peer_pool, kv, table, g * group_pages, group_pages);
			cuco_flag_signal(coop, (uint32_t *)ncclGetLsaPointer(flags, flag_off, peer), epoch);
		}
	}
}

// Prefill marks group g computed (after its GEMMs, in stream order).
__global__ void raise_ready(uint32_t *ready, int g, uint32_t epoch)
{
	__threadfence();
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(ready[g]).store(epoch, cuda::memory_order_release);
}

#if CUCO_BACKEND_GIN
// GIN: one put per page with a signal; decode waits for all of them.
__global__ void push_gin(ncclDevComm dc, ncclWindow_t pool, ncclWindow_t kv, const int *table, int group, bool send,
	int peer)
{
	ncclGin gin(dc, 0);
	const uint64_t base = gin.readSignal(0);
	ncclBarrierSession<ncclCoopCta> bar(ncclCoopCta(), ncclTeamTagWorld(), gin, 0);
	bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::Relaxed);
	const ncclTeam world = ncclTeamWorld(dc);
	if (send && threadIdx.x == 0)
		for (size_t page = group * group_pages; page < (group + 1) * group_pages; page++)
			gin.put(world, peer, pool, (size_t)table[page] * kv_page_bytes, kv, page * kv_page_bytes,
				kv_page_bytes, ncclGin_SignalInc{0});
	if (!send)
		gin.waitSignal(ncclCoopCta(), 0, base + group_pages);
	gin.flush(ncclCoopCta());
	bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Relaxed);
}
#endif

struct schedule {
	cuco_ctx *c;
	kv_problem *p;
	cuco_sym kv, pool, flags;
	ncclDevComm dc;
	uint32_t *ready;
	uint32_t epoch = 0;
	cuco_side side;
	cudaEvent_t computed[LAYERS];
};

static void push(schedule *s, int g, cudaStream_t st)
{
#if CUCO_BACKEND_GIN
	push_gin<<<1, 32, 0, st>>>(s->dc, s->pool.win, s->kv.win, s->p->table_dev, g, s->p->prefill, s->p->peer);
#else
	push_group<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, st>>>(s->dc, s->pool.win, (const char *)s->kv.ptr,
		s->p->table_dev, g, s->p->prefill, s->p->peer);
#endif
	CUCO_LAUNCHED();
}

static void prefill(schedule *s)
{
	const bool pre = s->p->prefill;
	cudaStream_t main = s->c->stream;
	s->epoch++;
#if CUCO_PLACEMENT_AFTER
	for (int l = 0; pre && l < LAYERS; l++)
		kv_compute(s->p, l, main, 0);
	for (int g = 0; g < groups; g++)
		push(s, g, main);
#else
	const int part = std::max(8, s->p->sms - CUCO_COMM_CTAS);
	cuco_side_fork(s->c, s->side);
#if CUCO_SYNC_FLAG
	push_all<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, s->side.stream>>>(s->dc, s->pool.win, s->flags.win,
		(const char *)s->kv.ptr, s->p->table_dev, s->ready, s->epoch, pre, s->p->peer);
	CUCO_LAUNCHED();
	for (int g = 0; pre && g < groups; g++) {
		for (int l = g * CUCO_LAYERS_PER_PUSH; l < (g + 1) * CUCO_LAYERS_PER_PUSH; l++)
			kv_compute(s->p, l, main, part);
		raise_ready<<<1, 1, 0, main>>>(s->ready, g, s->epoch);
		CUCO_LAUNCHED();
	}
#else
	for (int g = 0; g < groups; g++) {
		if (pre) {
			for (int l = g * CUCO_LAYERS_PER_PUSH; l < (g + 1) * CUCO_LAYERS_PER_PUSH; l++)
				kv_compute(s->p, l, main, g + 1 < groups ? part : 0);
			cuco_after(s->side.stream, main, s->computed[g]);
		}
		push(s, g, s->side.stream);
	}
#endif
	cuco_side_join(s->c, s->side);
#endif
}

// CUDA loads kernels lazily, and loading one waits for the kernels running
// on the device: the persistent push kernel, spinning on a flag that a
// not-yet-loaded kernel would raise, would wait for ever. Load them first.
static void load_kernels(schedule *s)
{
	cudaFuncAttributes attr;
	CUCO_CUDA(cudaFuncGetAttributes(&attr, raise_ready));
	const int part = std::max(8, s->p->sms - CUCO_COMM_CTAS);
	for (int sms : {0, part})  // cuBLAS may pick another kernel for fewer SMs
		for (int l = 0; s->p->prefill && l < LAYERS; l++)
			kv_compute(s->p, l, s->c->stream, sms);
	CUCO_CUDA(cudaStreamSynchronize(s->c->stream));
}
// EVOLVE-BLOCK-END

int main(int argc, char **argv)
{
	static_assert(LAYERS % CUCO_LAYERS_PER_PUSH == 0, "CUCO_LAYERS_PER_PUSH must divide LAYERS");
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	schedule s;
	s.c = &c;
	s.kv = cuco_sym_alloc(&c, kv_pool_bytes);
	s.pool = cuco_sym_alloc(&c, kv_pool_bytes);
	int ncoops = cuco_coops(CUCO_COMM_CTAS, CUCO_THREADS);
	s.flags = cuco_sym_alloc(&c, std::max<size_t>(4096, (size_t)ncoops * groups * sizeof(uint32_t)));
	CUCO_CUDA(cudaMemset(s.flags.ptr, 0, s.flags.bytes));
	CUCO_CUDA(cudaMalloc(&s.ready, groups * sizeof(uint32_t)));
	CUCO_CUDA(cudaMemset(s.ready, 0, groups * sizeof(uint32_t)));
	kv_problem p = kv_setup(&c, s.kv.ptr);
	s.p = &p;
	s.dc = cuco_devcomm_for(&c, ncoops, cuco_gin, 1);
	s.side = cuco_side_new();
	for (cudaEvent_t &e : s.computed)
		e = cuco_event();

	auto compute = [&] {
		for (int l = 0; p.prefill && l < LAYERS; l++)
			kv_compute(&p, l, c.stream, 0);
	};
	auto transfer = [&] {
		for (int g = 0; g < groups; g++)
			push(&s, g, c.stream);
	};
	load_kernels(&s);
	cuco_run r = cuco_bench(&c, a, kv_data(&c, &p, s.pool.ptr), [&] { prefill(&s); });
	double t_comp = cuco_time_phase(&c, a, compute), t_comm = cuco_time_phase(&c, a, transfer);
	cuco_report_overlap(&c, r, t_comp, t_comm, kv_bytes(), kv_flops());

	CUCO_CUDA(cudaStreamSynchronize(c.stream));
	CUCO_NCCL(ncclDevCommDestroy(c.comm, &s.dc));
	kv_teardown(&p);
	CUCO_CUDA(cudaFree(s.ready));
	cuco_sym_free(&c, &s.flags);
	cuco_sym_free(&c, &s.pool);
	cuco_sym_free(&c, &s.kv);
	cuco_finish(&c);
	return 0;
}
