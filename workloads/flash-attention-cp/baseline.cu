// flash-attention-cp baseline: ring attention as the usual implementations
// write it. While step j computes on the current KV block, a grouped
// ncclSend/ncclRecv on a second stream passes that block to the next rank
// and receives the next one from the previous rank (double-buffered).
#include "fa.cuh"

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	fa_problem p = fa_setup(&c);
	const int R = c.nranks, next = (c.rank + 1) % R, prev = (c.rank + R - 1) % R;
	void *own, *recv[2];
	for (void **b : {&own, &recv[0], &recv[1]})
		CUCO_CUDA(cudaMalloc(b, fa_kv_bytes));
	fa_fill_kv(own, c.rank);
	cudaStream_t comm;
	cudaEvent_t fork, joined, landed, computed;
	CUCO_CUDA(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking));
	for (cudaEvent_t *e : {&fork, &joined, &landed, &computed})
		CUCO_CUDA(cudaEventCreateWithFlags(e, cudaEventDisableTiming));

	auto pass = [&](const void *cur, void *into, cudaStream_t s) {
		CUCO_NCCL(ncclGroupStart());
		CUCO_NCCL(ncclSend(cur, fa_kv_bytes, ncclChar, next, c.comm, s));
		CUCO_NCCL(ncclRecv(into, fa_kv_bytes, ncclChar, prev, c.comm, s));
		CUCO_NCCL(ncclGroupEnd());
	};
	auto ring = [&] {
		CUCO_CUDA(cudaEventRecord(fork, c.stream));
		CUCO_CUDA(cudaStreamWaitEvent(comm, fork, 0));
		const void *cur = own;
		for (int j = 0; j < R; j++) {
			if (j + 1 < R) {
				pass(cur, recv[j % 2], comm);
				CUCO_CUDA(cudaEventRecord(landed, comm));
			}
			fa_step(&p, cur, 0, SEQ, j == 0, j + 1 == R, c.stream, 0);
			if (j + 1 < R) {
				// The next receive overwrites the block this step read.
				CUCO_CUDA(cudaEventRecord(computed, c.stream));
				CUCO_CUDA(cudaStreamWaitEvent(comm, computed, 0));
				CUCO_CUDA(cudaStreamWaitEvent(c.stream, landed, 0));
				cur = recv[j % 2];
			}
		}
		CUCO_CUDA(cudaEventRecord(joined, comm));
		CUCO_CUDA(cudaStreamWaitEvent(c.stream, joined, 0));
	};
	auto compute = [&] {
		for (int j = 0; j < R; j++)
			fa_step(&p, own, 0, SEQ, j == 0, j + 1 == R, c.stream, 0);
	};
	auto comm_alone = [&] {
		const void *cur = own;
		for (int j = 0; j + 1 < R; j++) {
			pass(cur, recv[j % 2], c.stream);
			cur = recv[j % 2];
		}
	};

	cuco_run r = cuco_bench(&c, a, fa_data(&c, &p, own), ring);
	double t_comp = cuco_time_phase(&c, a, compute), t_comm = cuco_time_phase(&c, a, comm_alone);
	cuco_report_overlap(&c, r, t_comp, t_comm, fa_bytes(&c), fa_flops(&c));
	CUCO_CUDA(cudaStreamSynchronize(c.stream));
	for (void *b : {own, recv[0], recv[1]})
		CUCO_CUDA(cudaFree(b));
	fa_teardown(&p);
	cuco_finish(&c);
	return 0;
}
