// flash-attention-cp seed: the KV block travels round the ring by the GPUs
// themselves. A push kernel on a few CTAs writes the current block straight
// into the next rank's receive buffer (a symmetric window) through LSA
// pointers while the step's attention runs on the multiprocessors left
// free; the block moves in chunks of keys, and the next step can start on
// a chunk as soon as it has landed (online softmax merges any key order).
// Or (kv=peer) nothing moves first: one attention launch reads every rank's
// block where it lies, the others' over NVLink straight from their windows,
// which no host-orchestrated ring can do.
//
// Directive (defines from the manifest):
//   backend     LSA (NVLink stores) | GIN (RDMA put with a signal; needs a NIC)
//   issuer      the coop that copies and meets its peer at a barrier: cta | warp | thread
//   placement   overlap (step j+1 waits for the whole block)
//               | pipelined (step j+1 works chunk by chunk as they land)
//               | after (pass the block, then compute: no overlap)
//   sync        barrier (one push kernel per chunk, LSA barriers at entry and exit)
//   granularity CUCO_CHUNKS: chunks of keys per block
//   knobs       CUCO_KV_PUSH | _PEER (read the others' blocks in place),
//               CUCO_COMM_CTAS, CUCO_THREADS, and the attention kernel's
//               CUCO_ATTN_* (fa.cuh)
#include "fa.cuh"
#include "cuco_lsa.cuh"

// EVOLVE-BLOCK-START
#ifndef CUCO_CHUNKS
#define CUCO_CHUNKS 1
#endif
#ifndef CUCO_PLACEMENT_PIPELINED
#define CUCO_PLACEMENT_PIPELINED 0
#endif

static const int chunk_keys = SEQ / CUCO_CHUNKS;
static const size_t chunk_bytes = (size_t)chunk_keys * HEADS * HDIM * sizeof(__nv_bfloat16);
static_assert(chunk_keys % fa_cfg::BN == 0, "a chunk must be whole slots of attn_block_n keys: fewer chunks");

// Copy chunk c of the block at src_off (K and V parts) into the next rank's
// window at dst_off.
__global__ void __launch_bounds__(CUCO_THREADS) push_chunk(ncclDevComm dc, ncclWindow_t win, size_t src_off,
	size_t dst_off, int c)
{
	cuco_coop coop;
	ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
	bar.sync(coop, cuda::memory_order_acquire);  // the next rank no longer reads what we overwrite
	const int next = (dc.lsaRank + 1) % dc.lsaSize;
	const size_t half = fa_kv_bytes / 2, off = (size_t)c * chunk_bytes;
	for (size_t part = 0; part < fa_kv_bytes; part += half)  // K, then V
		cuco_coop_copy(ncclGetLsaPointer(win, dst_off + part + off, next),
			ncclGetLocalPointer(win, src_off + part + off), chunk_bytes);
	bar.sync(coop, cuda::memory_order_acq_rel);  // the chunk from the previous rank has landed
}

#if CUCO_BACKEND_GIN
__global__ void push_chunk_gin(ncclDevComm dc, ncclWindow_t win, size_t src_off, size_t dst_off, int c)
{
	ncclGin gin(dc, 0);
	const uint64_t base = gin.readSignal(0);
	ncclBarrierSession<ncclCoopCta> bar(ncclCoopCta(), ncclTeamTagWorld(), gin, 0);
	bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::Relaxed);
	const ncclTeam world = ncclTeamWorld(dc);
	const size_t half = fa_kv_bytes / 2, off = (size_t)c * chunk_bytes;
	if (threadIdx.x == 0)
		for (size_t part = 0; part < fa_kv_bytes; part += half)
			gin.put(world, (world.rank + 1) % world.nRanks, win, dst_off + part + off, win, src_off + part + off,
				chunk_bytes, ncclGin_SignalInc{0});
	gin.waitSignal(ncclCoopCta(), 0, base + 2);
	gin.flush(ncclCoopCta());
	bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Relaxed);
}
#endif

// The window holds three blocks: mine, and two receive buffers.
static size_t block_off(int b) { return (size_t)b * fa_kv_bytes; }

struct schedule {
	cuco_ctx *c;
	fa_problem *p;
	cuco_sym win;
	ncclDevComm dc;
	cuco_side side;
	cudaEvent_t computed, landed[CUCO_CHUNKS];
	fa_plan<fa_cfg> peer;  // kv=peer: one launch over every rank's block
};

#if CUCO_KV_PEER
// kv=peer: every rank's block is ready (and every reader of the previous
// launch done with it) when all ranks have passed this barrier.
__global__ void lsa_ready(ncclDevComm dc)
{
	ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), dc, ncclTeamTagLsa(), 0);
	bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
}

// Where each rank's window holds `off`, as this GPU addresses it.
__global__ void lsa_pointers(ncclWindow_t win, size_t off, int n, const void **out)
{
	for (int r = 0; r < n; r++)
		out[r] = ncclGetLsaPointer(win, off, r);
}

// One launch over every rank's block in ring order from mine, each read
// through the LSA pointer of its owner's window.
static fa_plan<fa_cfg> peer_plan(schedule *s)
{
	const int R = s->c->nranks;
	if (R > FA_MAX_SEGMENTS)
		cuco_environment_exit("kv=peer attends to at most %d ranks' blocks in one launch", FA_MAX_SEGMENTS);
	const void **dev = nullptr, *host[FA_MAX_SEGMENTS];
	CUCO_CUDA(cudaMalloc(&dev, R * sizeof *dev));
	lsa_pointers<<<1, 1>>>(s->win.win, block_off(0), R, dev);  // each rank's own block
	CUCO_LAUNCHED();
	CUCO_CUDA(cudaMemcpy(host, dev, R * sizeof *dev, cudaMemcpyDeviceToHost));
	CUCO_CUDA(cudaFree(dev));
	fa_call call = fa_call_for(s->p, true, true, 0);
	for (int j = 0; j < R; j++)
		call.seg[j] = fa_segment_of(host[(s->c->rank - j + R) % R], 0, SEQ);
	call.nseg = R;
	return fa_prepare<fa_cfg>(call);
}
#endif

#if CUCO_KV_PEER
static void ring(schedule *s)
{
	lsa_ready<<<1, 128, 0, s->c->stream>>>(s->dc);
	CUCO_LAUNCHED();
	fa_launch(s->peer, s->c->stream);
}
#else
static void push(schedule *s, int from, int to, int c, cudaStream_t st)
{
#if CUCO_BACKEND_GIN
	push_chunk_gin<<<1, 32, 0, st>>>(s->dc, s->win.win, block_off(from), block_off(to), c);
#else
	push_chunk<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, st>>>(s->dc, s->win.win, block_off(from), block_off(to), c);
#endif
	CUCO_LAUNCHED();
}

static void ring(schedule *s)
{
	const int R = s->c->nranks, part = std::max(8, s->p->sms - CUCO_COMM_CTAS);
	cudaStream_t main = s->c->stream;
	const char *base = (const char *)s->win.ptr;
	int cur = 0;  // block the step reads: mine first, then receive buffer 1 + j%2
#if CUCO_PLACEMENT_AFTER
	for (int j = 0; j < R; j++) {
		if (j + 1 < R)
			for (int ch = 0; ch < CUCO_CHUNKS; ch++)
				push(s, cur, 1 + j % 2, ch, main);
		fa_step(s->p, base + block_off(cur), 0, SEQ, j == 0, j + 1 == R, main, 0);
		cur = 1 + j % 2;
	}
#else
	cudaStream_t comm = s->side.stream;
	cuco_side_fork(s->c, s->side);
	for (int j = 0; j < R; j++) {
		const bool more = j + 1 < R;
		if (more)
			for (int ch = 0; ch < CUCO_CHUNKS; ch++) {
				push(s, cur, 1 + j % 2, ch, comm);
				CUCO_CUDA(cudaEventRecord(s->landed[ch], comm));
			}
		if (j == 0 || !CUCO_PLACEMENT_PIPELINED) {
			fa_step(s->p, base + block_off(cur), 0, SEQ, j == 0, !more, main, more ? part : 0);
		} else {
			for (int ch = 0; ch < CUCO_CHUNKS; ch++) {
				CUCO_CUDA(cudaStreamWaitEvent(main, s->landed[ch], 0));
				fa_step(s->p, base + block_off(cur), ch * chunk_keys, chunk_keys, false, !more && ch + 1 == CUCO_CHUNKS,
					main, more ? part : 0);
			}
		}
		if (more) {
			// The next push overwrites the block this step read.
			cuco_after(comm, main, s->computed);
			// Pipelined, the next step waits chunk by chunk, unless it pushes
			// too and so records these events anew first.
			if (!CUCO_PLACEMENT_PIPELINED || j + 2 < R)
				for (int ch = 0; ch < CUCO_CHUNKS; ch++)
					CUCO_CUDA(cudaStreamWaitEvent(main, s->landed[ch], 0));
			cur = 1 + j % 2;
		}
	}
	cuco_side_join(s->c, s->side);
#endif
}
#endif
// EVOLVE-BLOCK-END

int main(int argc, char **argv)
{
	static_assert(SEQ % CUCO_CHUNKS == 0, "CUCO_CHUNKS must divide SEQ");
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	fa_problem p = fa_setup(&c);
	schedule s;
	s.c = &c;
	s.p = &p;
	s.win = cuco_sym_alloc(&c, 3 * fa_kv_bytes);
	fa_fill_kv(s.win.ptr, c.rank);
	s.dc = cuco_devcomm_for(&c, cuco_coops(CUCO_COMM_CTAS, CUCO_THREADS), cuco_gin, 1);
	s.side = cuco_side_new();
	s.computed = cuco_event();
	for (cudaEvent_t &e : s.landed)
		e = cuco_event();
#if CUCO_KV_PEER
	s.peer = peer_plan(&s);
#endif

	auto compute = [&] {
		for (int j = 0; j < c.nranks; j++)
			fa_step(&p, s.win.ptr, 0, SEQ, j == 0, j + 1 == c.nranks, c.stream, 0);
	};
	auto comm = [&] {
#if CUCO_KV_PEER
		lsa_ready<<<1, 128, 0, c.stream>>>(s.dc);  // the rest of its communication is inside the attention
		CUCO_LAUNCHED();
#else
		for (int j = 0, cur = 0; j + 1 < c.nranks; cur = 1 + j % 2, j++)
			for (int ch = 0; ch < CUCO_CHUNKS; ch++)
				push(&s, cur, 1 + j % 2, ch, c.stream);
#endif
	};
	cuco_run r = cuco_bench(&c, a, fa_data(&c, &p, s.win.ptr), [&] { ring(&s); });
	double t_comp = cuco_time_phase(&c, a, compute), t_comm = cuco_time_phase(&c, a, comm);
	cuco_report_overlap(&c, r, t_comp, t_comm, fa_bytes(&c), fa_flops(&c));

	CUCO_CUDA(cudaStreamSynchronize(c.stream));
	CUCO_NCCL(ncclDevCommDestroy(c.comm, &s.dc));
	fa_teardown(&p);
	cuco_sym_free(&c, &s.win);
	cuco_finish(&c);
	return 0;
}
