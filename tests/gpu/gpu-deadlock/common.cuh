// common.cuh — a test fixture for the evaluator's deadlock handling on a
// GPU: an LSA barrier kernel that every rank must reach. In seed.cu rank 1
// never launches it, so rank 0 spins in the barrier for ever; the
// evaluator must kill the run at its limit and classify it as a timeout,
// not hang. baseline.cu is the same program with every rank arriving.
#pragma once
#define CUCO_WITH_NCCL 1
#include "cuco_gpu.h"

__global__ void meet(ncclDevComm dc)
{
	ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), dc, ncclTeamTagLsa(), blockIdx.x);
	bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
}

static inline int deadlock_main(int argc, char **argv, bool rank1_arrives)
{
	cuco_ctx c = cuco_init(&argc, &argv);
	cuco_args a = cuco_parse_args(argc, argv);
	ncclDevCommRequirements reqs;
	memset(&reqs, 0, sizeof reqs);
	reqs.lsaBarrierCount = 1;
	ncclDevComm dc = cuco_devcomm_create(&c, &reqs, false);
	auto run = [&] {
		if (c.rank != 1 || rank1_arrives) {
			meet<<<1, 32, 0, c.stream>>>(dc);
			CUCO_LAUNCHED();
		}
	};
	cuco_data nothing = {[] {}, [] {}, [] { return 0.0; }, 0.0};  // a barrier has no output
	cuco_run r = cuco_bench(&c, a, nothing, run);
	cuco_report(&c, r, {{"barrier", cuco_median(r.us)}}, 0, 0);
	CUCO_NCCL(ncclDevCommDestroy(c.comm, &dc));
	cuco_finish(&c);
	return 0;
}
