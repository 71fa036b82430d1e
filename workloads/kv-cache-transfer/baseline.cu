// kv-cache-transfer baseline: what serving stacks do today. After each
// layer's KV projection, prefill sends the layer's pages with one ncclSend
// per page inside a group; decode posts one ncclRecv per page into the slot
// its block table names. All on one stream, layer after layer.
#include "kv.cuh"

int main(int argc, char **argv)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	void *pool = nullptr, *kv = nullptr;
	CUCO_CUDA(cudaMalloc(&pool, kv_pool_bytes));
	CUCO_CUDA(cudaMalloc(&kv, kv_pool_bytes));
	kv_problem p = kv_setup(&c, kv);

	auto send_layer = [&](int l) {
		CUCO_NCCL(ncclGroupStart());
		for (int b = 0; b < kv_pages; b++) {
			if (p.prefill)
				CUCO_NCCL(ncclSend((char *)kv_layer(&p, l) + b * kv_page_bytes, kv_page_bytes, ncclChar,
					p.peer, c.comm, c.stream));
			else
				CUCO_NCCL(ncclRecv((char *)pool + (size_t)p.table[(size_t)l * kv_pages + b] * kv_page_bytes,
					kv_page_bytes, ncclChar, p.peer, c.comm, c.stream));
		}
		CUCO_NCCL(ncclGroupEnd());
	};
	auto compute = [&] {
		if (p.prefill)
			for (int l = 0; l < LAYERS; l++)
				kv_compute(&p, l, c.stream, 0);
	};
	auto transfer = [&] {
		for (int l = 0; l < LAYERS; l++)
			send_layer(l);
	};
	auto prefill = [&] {
		for (int l = 0; l < LAYERS; l++) {
			if (p.prefill)
				kv_compute(&p, l, c.stream, 0);
			send_layer(l);
		}
	};

	cuco_run r = cuco_bench(&c, a, kv_data(&c, &p, pool), prefill);
	double t_comp = cuco_time_phase(&c, a, compute);
	double t_comm = cuco_time_phase(&c, a, transfer);
	cuco_report_overlap(&c, r, t_comp, t_comm, kv_bytes(), kv_flops());
	kv_teardown(&p);
	CUCO_CUDA(cudaFree(pool));
	CUCO_CUDA(cudaFree(kv));
	cuco_finish(&c);
	return 0;
}
