// moe-dispatch-combine seed: the GPUs move the rows themselves. Dispatch
// writes each token's row straight into its expert's rank's receive window
// through LSA pointers (no pack, no copies to self through NCCL); combine
// reads each token's expert results from the experts' ranks' output windows
// and sums them in one pass (no unpack). Rows are handled in groups of
// local experts, so a group's experts can compute while the next group's
// rows are still arriving.
//
// Directive (defines from the manifest):
//   backend     LSA (NVLink loads/stores) | GIN (RDMA puts with signals, both
//               ways; needs a NIC)
//   issuer      the coop that moves rows and meets its peer at a barrier: cta | warp | thread
//   placement   pipelined (dispatch, experts and combine of expert groups
//               overlap on two streams) | sequential (dispatch all, compute,
//               combine all)
//   sync        barrier (LSA barriers at kernel entry and exit; the only
//               sync here: combine reads what peers' experts wrote)
//   granularity CUCO_GROUPS: groups of local experts
//   knobs       CUCO_COMM_CTAS, CUCO_THREADS
#include "moe.cuh"
#include "cuco_lsa.cuh"

// EVOLVE-BLOCK-START
#ifndef CUCO_GROUPS
#define CUCO_GROUPS 1
#endif

// Group g: local experts [g*el/CUCO_GROUPS, (g+1)*el/CUCO_GROUPS) of every rank.
__global__ void __launch_bounds__(CUCO_THREADS) dispatch(ncclDevComm dc, ncclWindow_t recv, const __nv_bfloat16 *X,
	const int *expert, const int *dest, const int *drow, int el, int le0, int le1)
{
	cuco_coop coop;
	ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
	bar.sync(coop, cuda::memory_order_acquire);  // peers no longer read last layer's rows
	for (int i = cuco_coop_index(); i < TOKENS * TOPK; i += cuco_coop_count()) {
		if (!moe_in_group(expert[i], el, le0, le1))
			continue;
		const uint4 *src = (const uint4 *)(X + (size_t)(i / TOPK) * HIDDEN);
		uint4 *dst = (uint4 *)ncclGetLsaPointer(recv, (size_t)drow[i] * moe_row_bytes, dest[i]);
		for (int v = cuco_coop_lane(); v < HIDDEN / 8; v += cuco_coop_width())
			dst[v] = src[v];
	}
	bar.sync(coop, cuda::memory_order_acq_rel);  // every row of the group has landed
}

// Pull each token's results of the group from the experts' ranks.
__global__ void __launch_bounds__(CUCO_THREADS) combine(ncclDevComm dc, ncclWindow_t y, float *out, const float *w,
	const int *expert, const int *dest, const int *drow, int el, int le0, int le1)
{
	cuco_coop coop;
	ncclLsaBarrierSession<cuco_coop> bar(coop, dc, ncclTeamTagLsa(), cuco_coop_index());
	bar.sync(coop, cuda::memory_order_acquire);  // peers' experts of the group are done
	for (int t = cuco_coop_index(); t < TOKENS; t += cuco_coop_count())
		moe_combine_token(out, w, expert, el, le0, le1, t, cuco_coop_lane(), cuco_coop_width(), [&](int tt, int k) {
			int i = tt * TOPK + k;
			return (const __nv_bfloat16 *)ncclGetLsaPointer(y, (size_t)drow[i] * moe_row_bytes, dest[i]);
		});
	bar.sync(coop, cuda::memory_order_relaxed);
}

#if CUCO_BACKEND_GIN
// GIN dispatch: one thread puts each row of the group to its expert's rank;
// a rank's group has arrived when its signal grew by the group's rows.
__global__ void dispatch_gin(ncclDevComm dc, ncclWindow_t recv, ncclWindow_t xwin, const int *expert, const int *dest,
	const int *drow, int el, int le0, int le1, long rows_in)
{
	ncclGin gin(dc, 0);
	const uint64_t base = gin.readSignal(0);
	ncclBarrierSession<ncclCoopCta> bar(ncclCoopCta(), ncclTeamTagWorld(), gin, 0);
	bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::Relaxed);
	const ncclTeam world = ncclTeamWorld(dc);
	if (threadIdx.x == 0)
		for (int i = 0; i < TOKENS * TOPK; i++)
			if (moe_in_group(expert[i], el, le0, le1))
				gin.put(world, dest[i], recv, (size_t)drow[i] * moe_row_bytes, xwin,
					(size_t)(i / TOPK) * moe_row_bytes, moe_row_bytes, ncclGin_SignalInc{0});
	gin.waitSignal(ncclCoopCta(), 0, base + rows_in);
	gin.flush(ncclCoopCta());
	bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Relaxed);
}

// GIN combine, first half: put each result row of the group back to its
// token's rank (no get in 2.28), into `back` at the pair's slot.
__global__ void return_gin(ncclDevComm dc, ncclWindow_t back, ncclWindow_t y, const int *origin_rank,
	const int *origin_pair, long row0, long rows, long pairs_back)
{
	ncclGin gin(dc, 0);
	const uint64_t base = gin.readSignal(1);
	ncclBarrierSession<ncclCoopCta> bar(ncclCoopCta(), ncclTeamTagWorld(), gin, 0);
	bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::Relaxed);
	const ncclTeam world = ncclTeamWorld(dc);
	if (threadIdx.x == 0)
		for (long r = row0; r < row0 + rows; r++)
			gin.put(world, origin_rank[r], back, (size_t)origin_pair[r] * moe_row_bytes, y, (size_t)r * moe_row_bytes,
				moe_row_bytes, ncclGin_SignalInc{1});
	gin.waitSignal(ncclCoopCta(), 1, base + pairs_back);
	gin.flush(ncclCoopCta());
	bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Relaxed);
}

// Second half: sum the returned rows locally.
__global__ void combine_local(float *out, const __nv_bfloat16 *back, const float *w, const int *expert, int el, int le0,
	int le1)
{
	for (int t = blockIdx.x; t < TOKENS; t += gridDim.x)
		moe_combine_token(out, w, expert, el, le0, le1, t, threadIdx.x, blockDim.x,
			[&](int tt, int k) { return back + (size_t)(tt * TOPK + k) * HIDDEN; });
}
#endif

struct schedule {
	cuco_ctx *c;
	moe_problem *p;
	cuco_sym recv, y, xsym, back;
	ncclDevComm dc;
	cuco_side side;
	cudaEvent_t landed[CUCO_GROUPS], computed[CUCO_GROUPS];
};

static int le_lo(const schedule *s, int g) { return g * s->p->el / CUCO_GROUPS; }
static int le_hi(const schedule *s, int g) { return (g + 1) * s->p->el / CUCO_GROUPS; }

#if CUCO_BACKEND_GIN
// Rows of group g in my receive buffer.
static long group_rows(const schedule *s, int g)
{
	long rows = 0;
	for (int le = le_lo(s, g); le < le_hi(s, g); le++)
		rows += s->p->exp_rows[le];
	return rows;
}
#endif

static void send_rows(schedule *s, int g, cudaStream_t st)
{
	moe_problem *p = s->p;
#if CUCO_BACKEND_GIN
	dispatch_gin<<<1, 32, 0, st>>>(s->dc, s->recv.win, s->xsym.win, p->expert_d, p->dest_d, p->drow_d, p->el,
		le_lo(s, g), le_hi(s, g), group_rows(s, g));
#else
	dispatch<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, st>>>(s->dc, s->recv.win, p->X, p->expert_d, p->dest_d, p->drow_d,
		p->el, le_lo(s, g), le_hi(s, g));
#endif
	CUCO_LAUNCHED();
}

static void return_rows(schedule *s, int g, cudaStream_t st)
{
	moe_problem *p = s->p;
#if CUCO_BACKEND_GIN
	long pairs_back = 0;
	for (size_t i = 0; i < p->expert.size(); i++)
		pairs_back += moe_in_group(p->expert[i], p->el, le_lo(s, g), le_hi(s, g));
	return_gin<<<1, 32, 0, st>>>(s->dc, s->back.win, s->y.win, p->origin_rank_d, p->origin_pair_d,
		p->exp_start[le_lo(s, g)], group_rows(s, g), pairs_back);
	CUCO_LAUNCHED();
	combine_local<<<1024, 256, 0, st>>>(p->out, (const __nv_bfloat16 *)s->back.ptr, p->w_d, p->expert_d, p->el,
		le_lo(s, g), le_hi(s, g));
#else
	combine<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, st>>>(s->dc, s->y.win, p->out, p->w_d, p->expert_d, p->dest_d,
		p->drow_d, p->el, le_lo(s, g), le_hi(s, g));
#endif
	CUCO_LAUNCHED();
}

static void experts(schedule *s, int g, cudaStream_t st, int sms)
{
	for (int le = le_lo(s, g); le < le_hi(s, g); le++)
		moe_expert(s->p, le, (const __nv_bfloat16 *)s->recv.ptr, (__nv_bfloat16 *)s->y.ptr, st, sms);
}

static void layer(schedule *s)
{
	cudaStream_t main = s->c->stream;
	CUCO_CUDA(cudaMemsetAsync(s->p->out, 0, (size_t)TOKENS * HIDDEN * sizeof(float), main));
#if CUCO_PLACEMENT_SEQUENTIAL
	for (int g = 0; g < CUCO_GROUPS; g++)
		send_rows(s, g, main);
	for (int g = 0; g < CUCO_GROUPS; g++)
		experts(s, g, main, 0);
	for (int g = 0; g < CUCO_GROUPS; g++)
		return_rows(s, g, main);
#else
	const int part = std::max(8, s->p->sms - CUCO_COMM_CTAS);
	cudaStream_t comm = s->side.stream;
	cuco_side_fork(s->c, s->side);
	for (int g = 0; g < CUCO_GROUPS; g++) {
		send_rows(s, g, comm);
		CUCO_CUDA(cudaEventRecord(s->landed[g], comm));
	}
	for (int g = 0; g < CUCO_GROUPS; g++) {
		CUCO_CUDA(cudaStreamWaitEvent(main, s->landed[g], 0));
		experts(s, g, main, g + 1 < CUCO_GROUPS ? part : 0);
		CUCO_CUDA(cudaEventRecord(s->computed[g], main));
	}
	for (int g = 0; g < CUCO_GROUPS; g++) {
		CUCO_CUDA(cudaStreamWaitEvent(comm, s->computed[g], 0));
		return_rows(s, g, comm);
	}
	cuco_side_join(s->c, s->side);
#endif
}
// EVOLVE-BLOCK-END

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	moe_problem p = moe_setup(&c);
	if (p.el % CUCO_GROUPS)
		cuco_die(__FILE__, __LINE__, "CUCO_GROUPS must divide the experts per rank", "main");
	schedule s;
	s.c = &c;
	s.p = &p;
	const size_t rows_bytes = (size_t)std::max(1L, p.max_rows) * moe_row_bytes;
	const size_t pair_bytes = (size_t)TOKENS * TOPK * moe_row_bytes;
	s.recv = cuco_sym_alloc(&c, rows_bytes);
	s.y = cuco_sym_alloc(&c, rows_bytes);
#if CUCO_BACKEND_GIN
	s.xsym = cuco_sym_alloc(&c, (size_t)TOKENS * moe_row_bytes);  // GIN puts read from a window
	s.back = cuco_sym_alloc(&c, pair_bytes);
	CUCO_CUDA(cudaMemcpy(s.xsym.ptr, p.X, (size_t)TOKENS * moe_row_bytes, cudaMemcpyDeviceToDevice));
#else
	(void)pair_bytes;
#endif
	s.dc = cuco_devcomm_for(&c, cuco_coops(CUCO_COMM_CTAS, CUCO_THREADS), cuco_gin, 2);
	s.side = cuco_side_new();
	for (int g = 0; g < CUCO_GROUPS; g++) {
		s.landed[g] = cuco_event();
		s.computed[g] = cuco_event();
	}

	auto compute = [&] {
		for (int g = 0; g < CUCO_GROUPS; g++)
			experts(&s, g, c.stream, 0);
	};
	auto comm = [&] {
		for (int g = 0; g < CUCO_GROUPS; g++)
			send_rows(&s, g, c.stream);
		for (int g = 0; g < CUCO_GROUPS; g++)
			return_rows(&s, g, c.stream);
	};
	std::function<void()> refill = nullptr;
#if CUCO_BACKEND_GIN
	refill = [&] { CUCO_CUDA(cudaMemcpy(s.xsym.ptr, p.X, (size_t)TOKENS * moe_row_bytes, cudaMemcpyDeviceToDevice)); };
#endif
	cuco_run r = cuco_bench(&c, a, moe_data(&c, &p, s.y.ptr, rows_bytes, refill), [&] { layer(&s); });
	double t_comp = cuco_time_phase(&c, a, compute), t_comm = cuco_time_phase(&c, a, comm);
	cuco_report_overlap(&c, r, t_comp, t_comm, moe_bytes(&p, c.rank), moe_flops(&p));

	CUCO_CUDA(cudaStreamSynchronize(c.stream));
	CUCO_NCCL(ncclDevCommDestroy(c.comm, &s.dc));
#if CUCO_BACKEND_GIN
	cuco_sym_free(&c, &s.xsym);
	cuco_sym_free(&c, &s.back);
#endif
	cuco_sym_free(&c, &s.recv);
	cuco_sym_free(&c, &s.y);
	moe_teardown(&p);
	cuco_finish(&c);
	return 0;
}
