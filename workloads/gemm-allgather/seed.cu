// gemm-allgather seed: the all-gather moved by the GPUs themselves (NCCL
// Device API), overlapped with the same cuBLAS GEMM as the baseline.
//
// X lives in a symmetric window. Each rank pushes its own token columns
// into every peer's copy of X through LSA (NVLink load/store) pointers,
// on a few CTAs of a communication stream, while the GEMM of the columns
// it already holds runs on the multiprocessors left free. The peers'
// columns are multiplied as they arrive, chunk by chunk.
//
// Directive (defines from the manifest):
//   backend     LSA (NVLink stores) | GIN (RDMA put + signal; needs a NIC)
//   issuer      which coop copies and meets at barriers: cta | warp | thread
//   placement   overlap (own columns' GEMM alongside the push, then the rest)
//               | pipelined (peers' columns GEMM'd chunk by chunk as they land)
//               | after (push all, then one GEMM: no overlap)
//   sync        barrier (one push kernel per chunk, LSA barriers at entry and
//               exit; the kernel's end means the chunk has landed here)
//               | flag (one push kernel for all chunks; a flag per coop and
//               chunk raised on the peer, awaited by a tiny kernel before
//               each chunk's GEMM)
//   granularity CUCO_CHUNKS: chunks each rank's columns are pushed in
//   knobs       CUCO_COMM_CTAS, CUCO_THREADS (the push kernel's shape)
#include "gemm_ag.cuh"
#include "cuco_lsa.cuh"

// EVOLVE-BLOCK-START
#ifndef CUCO_CHUNKS
#define CUCO_CHUNKS 1
#endif
#if !defined(CUCO_PLACEMENT_PIPELINED) && !defined(CUCO_PLACEMENT_AFTER)
#define CUCO_PLACEMENT_OVERLAP 1
#endif

// Push bytes [off, off+len) of my window to the same place in every peer's.
__global__ void __launch_bounds__(CUCO_THREADS) push_barrier(ncclDevComm dc, ncclWindow_t win, size_t off, size_t len)
{
	cuco_coop coop;
	ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
	bar.sync(coop, cuda::memory_order_acquire);  // no peer still reads the X we overwrite
	const void *src = ncclGetLocalPointer(win, off);
	for (int k = 1; k < dc.lsaSize; k++)
		cuco_coop_copy(ncclGetLsaPointer(win, off, (dc.lsaRank + k) % dc.lsaSize), src, len);
	bar.sync(coop, cuda::memory_order_acq_rel);  // every peer's chunk has landed here
}

// All chunks in one launch; after its share of chunk k each coop raises
// flag[k][coop] on every peer to `epoch`.
__global__ void __launch_bounds__(CUCO_THREADS) push_flags(ncclDevComm dc, ncclWindow_t win, ncclWindow_t flags,
	size_t off, size_t chunk, int nchunks, uint32_t epoch)
{
	cuco_coop coop;
	{
		ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
		bar.sync(coop, cuda::memory_order_acquire);
	}
	const size_t flag_off = (size_t)cuco_coop_index() * sizeof(uint32_t);
	for (int c = 0; c < nchunks; c++) {
		size_t o = off + (size_t)c * chunk;
		const void *src = ncclGetLocalPointer(win, o);
		for (int k = 1; k < dc.lsaSize; k++) {
			int peer = (dc.lsaRank + k) % dc.lsaSize;
			cuco_coop_copy(ncclGetLsaPointer(win, o, peer), src, chunk);
			uint32_t *f = (uint32_t *)ncclGetLsaPointer(flags,
				flag_off + (size_t)c * cuco_coop_count() * sizeof(uint32_t), peer);
			cuco_flag_signal(coop, f, epoch);
		}
	}
}

// Wait until every coop of every peer has raised its flag for chunk c.
__global__ void wait_flags(uint32_t *flags, int ncoops, int c, uint32_t epoch)
{
	for (int i = threadIdx.x; i < ncoops; i += blockDim.x)
		cuco_flag_wait(flags + (size_t)c * ncoops + i, epoch);
	__syncthreads();
}

#if CUCO_BACKEND_GIN
// GIN: one thread puts my chunk into every peer's window with a signal; the
// chunk from each peer has landed once my signal has grown by nranks-1.
__global__ void push_gin(ncclDevComm dc, ncclWindow_t win, size_t off, size_t len)
{
	ncclGin gin(dc, 0);
	const uint64_t base = gin.readSignal(0);  // before the barrier: no peer has signalled yet
	ncclBarrierSession<ncclCoopCta> bar(ncclCoopCta(), ncclTeamTagWorld(), gin, 0);
	bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::Relaxed);
	const ncclTeam world = ncclTeamWorld(dc);
	if (threadIdx.x == 0)
		for (int k = 1; k < world.nRanks; k++)
			gin.put(world, (world.rank + k) % world.nRanks, win, off, win, off, len, ncclGin_SignalInc{0});
	gin.waitSignal(ncclCoopCta(), 0, base + world.nRanks - 1);
	gin.flush(ncclCoopCta());
	bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Relaxed);
}
#endif

struct schedule {
	cuco_ctx *c;
	ga_problem *p;
	cuco_sym X, flags;
	ncclDevComm dc;
	int ncoops;
	uint32_t epoch = 0;
	cuco_side side;
	cudaEvent_t landed[CUCO_CHUNKS];
};

static int chunk_cols(const schedule *s) { return s->p->cols / CUCO_CHUNKS; }

// Push chunk `ch` of my columns (all chunks when ch < 0) on stream st.
static void push(schedule *s, int ch, cudaStream_t st)
{
	size_t col0 = (size_t)s->c->rank * s->p->cols, cb = ga_col_bytes();
	size_t len = (size_t)chunk_cols(s) * cb, off = col0 * cb + (ch < 0 ? 0 : ch) * len;
	if (ch < 0)
		len *= CUCO_CHUNKS;
#if CUCO_BACKEND_GIN
	push_gin<<<1, 32, 0, st>>>(s->dc, s->X.win, off, len);
#else
	push_barrier<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, st>>>(s->dc, s->X.win, off, len);
#endif
	CUCO_LAUNCHED();
}

// GEMM of every peer's chunk ch, on at most `sms` multiprocessors.
static void gemm_peers(schedule *s, int ch, int sms)
{
	for (int k = 1; k < s->c->nranks; k++) {
		int peer = (s->c->rank + k) % s->c->nranks;
		ga_gemm(s->p, (const __nv_bfloat16 *)s->X.ptr, peer * s->p->cols + ch * chunk_cols(s),
			chunk_cols(s), s->c->stream, sms);
	}
}

// Make chunk ch's arrival known to the main stream.
static void await_chunk(schedule *s, int ch)
{
#if CUCO_SYNC_FLAG
	wait_flags<<<1, 256, 0, s->c->stream>>>((uint32_t *)s->flags.ptr, s->ncoops, ch, s->epoch);
	CUCO_LAUNCHED();
#else
	CUCO_CUDA(cudaStreamWaitEvent(s->c->stream, s->landed[ch], 0));
#endif
}

static void layer(schedule *s)
{
	const int part = std::max(8, s->p->sms - CUCO_COMM_CTAS);  // SMs the GEMM may use meanwhile
	const __nv_bfloat16 *X = (const __nv_bfloat16 *)s->X.ptr;
	s->epoch++;
#if CUCO_PLACEMENT_AFTER
	push(s, -1, s->c->stream);
	ga_gemm(s->p, X, 0, TOKENS, s->c->stream, 0);
#else
	cuco_side_fork(s->c, s->side);
#if CUCO_SYNC_FLAG
	push_flags<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, s->side.stream>>>(s->dc, s->X.win, s->flags.win,
		(size_t)s->c->rank * s->p->cols * ga_col_bytes(), (size_t)chunk_cols(s) * ga_col_bytes(),
		CUCO_CHUNKS, s->epoch);
	CUCO_LAUNCHED();
#else
	for (int ch = 0; ch < CUCO_CHUNKS; ch++) {
		push(s, ch, s->side.stream);
		CUCO_CUDA(cudaEventRecord(s->landed[ch], s->side.stream));
	}
#endif
	ga_gemm(s->p, X, s->c->rank * s->p->cols, s->p->cols, s->c->stream, part);
#if CUCO_PLACEMENT_PIPELINED
	for (int ch = 0; ch < CUCO_CHUNKS; ch++) {
		await_chunk(s, ch);
		gemm_peers(s, ch, ch + 1 < CUCO_CHUNKS ? part : 0);
	}
#else
	for (int ch = 0; ch < CUCO_CHUNKS; ch++)
		await_chunk(s, ch);
	for (int ch = 0; ch < CUCO_CHUNKS; ch++)
		gemm_peers(s, ch, 0);
#endif
	cuco_side_join(s->c, s->side);
#endif
}
// EVOLVE-BLOCK-END

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	schedule s;
	s.c = &c;
	s.X = cuco_sym_alloc(&c, ga_x_bytes());
	ga_problem p = ga_setup(&c, (__nv_bfloat16 *)s.X.ptr);
	s.p = &p;
	if (p.cols % CUCO_CHUNKS)
		cuco_die(__FILE__, __LINE__, "token columns per rank do not split into CUCO_CHUNKS", "main");
	s.ncoops = cuco_coops(CUCO_COMM_CTAS, CUCO_THREADS);
	s.flags = cuco_sym_alloc(&c, std::max<size_t>(4096, (size_t)s.ncoops * CUCO_CHUNKS * sizeof(uint32_t)));
	CUCO_CUDA(cudaMemset(s.flags.ptr, 0, s.flags.bytes));
	s.dc = cuco_devcomm_for(&c, s.ncoops, cuco_gin, 1);
	s.side = cuco_side_new();
	for (cudaEvent_t &e : s.landed)
		e = cuco_event();

	cuco_run r = cuco_bench(&c, a, ga_data(&c, &p, (__nv_bfloat16 *)s.X.ptr), [&] { layer(&s); });
	double t_comp = cuco_time_phase(&c, a, [&] {
		ga_gemm(&p, (const __nv_bfloat16 *)s.X.ptr, 0, TOKENS, c.stream, 0);
	});
	double t_comm = cuco_time_phase(&c, a, [&] { push(&s, -1, c.stream); });
	cuco_report_overlap(&c, r, t_comp, t_comm, ga_bytes(&c), ga_flops());

	CUCO_CUDA(cudaStreamSynchronize(c.stream));
	CUCO_NCCL(ncclDevCommDestroy(c.comm, &s.dc));
	cuco_sym_free(&c, &s.flags);
	ga_teardown(&p);
	cuco_sym_free(&c, &s.X);
	cuco_finish(&c);
	return 0;
}
