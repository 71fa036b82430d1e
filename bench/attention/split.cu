// split.cu — the fused kernel's paths that the attention workload does not
// take, checked by its harness (fresh inputs, poisoned output, the
// double-precision reference): the keys in two launches with the state
// carried between them (flash-attention-cp's ring steps, SPLIT=1), and in
// two segments of one launch (its kv=peer reads, SPLIT=2). MMA=1 takes
// mma.sync instead of wgmma. A program of the attention workload's kind,
// linked with its frame (workloads/attention/frame.cu); split.sh builds
// and runs both.
#include "attention.cuh"
#include "cuco_attn.cuh"

#if MMA
typedef fa_config<HDIM, 8, 64, 2, false, FA_SERIAL> cfg;
#else
typedef fa_config<HDIM, 8, 128, 2, true, FA_SERIAL> cfg;
#endif

// The plans of one step: one launch, or two with the state between them.
struct split_plans {
	fa_plan<cfg> first, second;
	int launches;
};

extern "C" void *cuco_prepare(const cuco_problem *p)
{
	fa_call c = {};
	c.q = p->q;
	c.queries = SEQ;
	c.heads = HEADS;
	c.out = p->out;
	CUCO_CUDA(cudaMalloc(&c.acc, at_q_elems * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&c.ml, (size_t)SEQ * HEADS * sizeof(float2)));
	const fa_kv kv = {p->k, p->v, KEYS};
	split_plans *plans = new split_plans;  // lives as long as the program
#if SPLIT == 1
	fa_call first = c, second = c;
	first.seg[0] = {kv, 0, KEYS / 2};
	first.nseg = 1;
	first.flags = FA_STATE_OUT;
	second.seg[0] = {kv, KEYS / 2, KEYS / 2};
	second.nseg = 1;
	second.flags = FA_STATE_IN;
	plans->first = fa_prepare<cfg>(first);
	plans->second = fa_prepare<cfg>(second);
	plans->launches = 2;
#else
	c.seg[0] = {kv, KEYS / 2, KEYS / 2};  // the later keys first: any order merges
	c.seg[1] = {kv, 0, KEYS / 2};
	c.nseg = 2;
	plans->first = fa_prepare<cfg>(c);
	plans->launches = 1;
#endif
	return plans;
}

extern "C" void cuco_launch(void *state, const cuco_problem *, cudaStream_t s)
{
	const split_plans *plans = (const split_plans *)state;
	fa_launch(plans->first, s);
	if (plans->launches == 2)
		fa_launch(plans->second, s);
}
