// moe-dispatch-combine baseline: what a user writes today. Pack my tokens'
// rows by destination, dispatch with grouped ncclSend/ncclRecv (one pair
// per rank and expert, so each expert's rows arrive contiguous), run the
// experts, send the results back the same way, then sum each token's rows
// with the router's weights. All on one stream.
#include "moe.cuh"

__global__ void pack(__nv_bfloat16 *send, const __nv_bfloat16 *X, const int *srow)
{
	for (int i = blockIdx.x; i < TOKENS * TOPK; i += gridDim.x) {
		const uint4 *src = (const uint4 *)(X + (size_t)(i / TOPK) * HIDDEN);
		uint4 *dst = (uint4 *)(send + (size_t)srow[i] * HIDDEN);
		for (int v = threadIdx.x; v < HIDDEN / 8; v += blockDim.x)
			dst[v] = src[v];
	}
}

__global__ void unpack_combine(float *out, const __nv_bfloat16 *back, const int *srow, const float *w, const int *expert)
{
	for (int t = blockIdx.x; t < TOKENS; t += gridDim.x)
		moe_combine_token(out, w, expert, 1, 0, 1, t,  /* every expert: one group of one */ threadIdx.x, blockDim.x,
			[&](int tt, int k) { return back + (size_t)srow[tt * TOPK + k] * HIDDEN; });
}

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	moe_problem p = moe_setup(&c);
	const int R = c.nranks;
	__nv_bfloat16 *send, *recv, *y, *back;
	for (__nv_bfloat16 **b : {&send, &back})
		CUCO_CUDA(cudaMalloc(b, (size_t)TOKENS * TOPK * moe_row_bytes));
	for (__nv_bfloat16 **b : {&recv, &y})
		CUCO_CUDA(cudaMalloc(b, (size_t)std::max(1L, p.max_rows) * moe_row_bytes));

	// One send/recv per (rank, expert) segment; the segments between a pair
	// of ranks are matched in the same (expert) order on both sides.
	auto exchange = [&](const __nv_bfloat16 *from, __nv_bfloat16 *to, bool forward) {
		CUCO_NCCL(ncclGroupStart());
		for (int d = 0; d < R; d++)
			for (int le = 0; le < p.el; le++) {
				size_t sc = p.send_cnt[(size_t)d * p.el + le], so = p.send_off[(size_t)d * p.el + le];
				size_t rc = p.recv_cnt[(size_t)le * R + d], ro = p.recv_off[(size_t)le * R + d];
				const __nv_bfloat16 *sbuf = forward ? from + so * HIDDEN : from + ro * HIDDEN;
				__nv_bfloat16 *rbuf = forward ? to + ro * HIDDEN : to + so * HIDDEN;
				size_t scount = (forward ? sc : rc) * HIDDEN, rcount = (forward ? rc : sc) * HIDDEN;
				if (scount)
					CUCO_NCCL(ncclSend(sbuf, scount, ncclBfloat16, d, c.comm, c.stream));
				if (rcount)
					CUCO_NCCL(ncclRecv(rbuf, rcount, ncclBfloat16, d, c.comm, c.stream));
			}
		CUCO_NCCL(ncclGroupEnd());
	};
	auto experts = [&] {
		for (int le = 0; le < p.el; le++)
			moe_expert(&p, le, recv, y, c.stream, 0);
	};
	auto comm = [&] {
		pack<<<1024, 256, 0, c.stream>>>(send, p.X, p.srow_d);
		CUCO_LAUNCHED();
		exchange(send, recv, true);
		exchange(y, back, false);
		unpack_combine<<<1024, 256, 0, c.stream>>>(p.out, back, p.srow_d, p.w_d, p.expert_d);
		CUCO_LAUNCHED();
	};
	auto layer = [&] {
		CUCO_CUDA(cudaMemsetAsync(p.out, 0, (size_t)TOKENS * HIDDEN * sizeof(float), c.stream));
		pack<<<1024, 256, 0, c.stream>>>(send, p.X, p.srow_d);
		CUCO_LAUNCHED();
		exchange(send, recv, true);
		experts();
		exchange(y, back, false);
		unpack_combine<<<1024, 256, 0, c.stream>>>(p.out, back, p.srow_d, p.w_d, p.expert_d);
		CUCO_LAUNCHED();
	};

	cuco_run r = cuco_bench(&c, a, moe_data(&c, &p, y, (size_t)std::max(1L, p.max_rows) * moe_row_bytes), layer);
	double t_comp = cuco_time_phase(&c, a, experts), t_comm = cuco_time_phase(&c, a, comm);
	cuco_report_overlap(&c, r, t_comp, t_comm, moe_bytes(&p, c.rank), moe_flops(&p));
	for (__nv_bfloat16 *b : {send, recv, y, back})
		CUCO_CUDA(cudaFree(b));
	moe_teardown(&p);
	cuco_finish(&c);
	return 0;
}
