// split.cu — the fused kernel's paths that the attention workload does not
// take, checked by its harness (fresh inputs, poisoned output, the
// double-precision reference): the keys in two launches with the state
// carried between them (flash-attention-cp's ring steps, SPLIT=1), and in
// two segments of one launch (its kv=peer reads, SPLIT=2). MMA=1 takes
// mma.sync instead of wgmma. Built and run by split.sh.
#include "attention.cuh"
#include "cuco_attn.cuh"

#if MMA
typedef fa_config<HDIM, 8, 64, 2, false, FA_SERIAL> cfg;
#else
typedef fa_config<HDIM, 8, 128, 2, true, FA_SERIAL> cfg;
#endif

static at_launch prepare(const at_problem &p)
{
	fa_call c = {};
	c.q = p.q;
	c.queries = SEQ;
	c.heads = HEADS;
	c.out = p.out;
	CUCO_CUDA(cudaMalloc(&c.acc, at_q_elems * sizeof(float)));
	CUCO_CUDA(cudaMalloc(&c.ml, (size_t)SEQ * HEADS * sizeof(float2)));
	const fa_kv kv = {p.k, p.v, KEYS};
#if SPLIT == 1
	fa_call first = c, second = c;
	first.seg[0] = {kv, 0, KEYS / 2};
	first.nseg = 1;
	first.flags = FA_STATE_OUT;
	second.seg[0] = {kv, KEYS / 2, KEYS / 2};
	second.nseg = 1;
	second.flags = FA_STATE_IN;
	const fa_plan<cfg> a = fa_prepare<cfg>(first), b = fa_prepare<cfg>(second);
	return [a, b](cudaStream_t s) {
		fa_launch(a, s);
		fa_launch(b, s);
	};
#else
	c.seg[0] = {kv, KEYS / 2, KEYS / 2};  // the later keys first: any order merges
	c.seg[1] = {kv, 0, KEYS / 2};
	c.nseg = 2;
	const fa_plan<cfg> a = fa_prepare<cfg>(c);
	return [a](cudaStream_t s) { fa_launch(a, s); };
#endif
}

int main(int argc, char **argv)
{
	return at_main(argc, argv, SPLIT == 1 ? "split: two launches" : "split: two segments", prepare);
}
