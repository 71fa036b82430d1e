// gemm-allgather baseline: what a user writes today, and the strongest
// baseline at hand — NCCL's host all-gather, then one cuBLAS GEMM over all
// tokens, in order on one stream.
#include "gemm_ag.cuh"

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	__nv_bfloat16 *X = nullptr;
	CUCO_CUDA(cudaMalloc(&X, ga_x_bytes()));
	ga_problem p = ga_setup(&c, X);
	const size_t count = (size_t)p.cols * HIDDEN;

	auto gather = [&] {
		CUCO_NCCL(ncclAllGather(X + (size_t)c.rank * count, X, count, ncclBfloat16, c.comm, c.stream));
	};
	auto compute = [&] { ga_gemm(&p, X, 0, TOKENS, c.stream, 0); };
	auto layer = [&] { gather(); compute(); };

	cuco_run r = cuco_bench(&c, a, ga_data(&c, &p, X), layer);
	double t_comp = cuco_time_phase(&c, a, compute), t_comm = cuco_time_phase(&c, a, gather);
	cuco_report_overlap(&c, r, t_comp, t_comm, ga_bytes(&c), ga_flops());
	ga_teardown(&p);
	CUCO_CUDA(cudaFree(X));
	cuco_finish(&c);
	return 0;
}
