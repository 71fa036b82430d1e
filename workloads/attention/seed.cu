// attention seed: the fused kernel of ../gpu-common/cuco_attn.cuh
// (FlashAttention-2/3 style), at one point of its design space.
//
// Directive (defines from the manifest):
//   backend     CUCO_BACKEND_WGMMA (Hopper warpgroup MMA, sm_90a)
//               | _MMA (mma.sync m16n8k16)
//   issuer      tma: one thread of a producer warp drives the copy engine
//   placement   CUCO_PLACEMENT_PINGPONG (the next slot's Q·K^T and this
//               slot's P·V run during this slot's softmax, the two
//               warpgroups taking turns to issue) | _SERIAL | _PIPELINED
//               (pingpong without turns); all but serial wgmma only
//   sync        mbarrier: full/empty barriers per shared-memory slot
//   granularity CUCO_BLOCK_N: keys per slot
//   knobs       CUCO_WARPS (consumer warps; 16 query rows each),
//               CUCO_STAGES (shared-memory slots of K and V)
//
// A candidate may change anything inside the block, its own kernel included.
// No main(): the workload's frame (frame.cu), linked with this program,
// calls cuco_prepare once and cuco_launch once per step
// (../gpu-common/cuco_gpu_step.h).
#include "attention.cuh"
#include "cuco_attn.cuh"

// EVOLVE-BLOCK-START
#ifndef CUCO_WARPS
#define CUCO_WARPS 8
#endif
#ifndef CUCO_BLOCK_N
#define CUCO_BLOCK_N 128
#endif
#ifndef CUCO_STAGES
#define CUCO_STAGES 3
#endif
#if defined(CUCO_BACKEND_MMA)
#define AT_WGMMA false
#else
#define AT_WGMMA true
#endif
#if defined(CUCO_PLACEMENT_SERIAL) || !AT_WGMMA
#define AT_OVERLAP FA_SERIAL
#elif defined(CUCO_PLACEMENT_PIPELINED)
#define AT_OVERLAP FA_PIPELINED
#else
#define AT_OVERLAP FA_PINGPONG
#endif

typedef fa_config<HDIM, CUCO_WARPS, CUCO_BLOCK_N, CUCO_STAGES, AT_WGMMA, AT_OVERLAP> at_cfg;

extern "C" void *cuco_prepare(const cuco_problem *p)
{
	fa_call c = {};
	c.q = p->q;
	c.queries = SEQ;
	c.heads = HEADS;
	c.seg[0] = {{p->k, p->v, KEYS}, 0, KEYS};
	c.nseg = 1;
	c.out = p->out;
	return new fa_plan<at_cfg>(fa_prepare<at_cfg>(c));  // lives as long as the program
}

extern "C" void cuco_launch(void *plan, const cuco_problem *, cudaStream_t s)
{
	fa_launch(*(const fa_plan<at_cfg> *)plan, s);
}
// EVOLVE-BLOCK-END
