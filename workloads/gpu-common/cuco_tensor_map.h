// cuco_tensor_map.h — the driver's cuTensorMapEncodeTiled (the bulk copy
// engine's tensor maps) for a GPU program, given by its harness: a
// refereed program may not import the driver's API past the runtime
// (src/eval/objcheck.c: cudaGetDriverEntryPoint* would reach its stream
// memory waits), so the trusted side looks the function up and the
// program calls it here, with the driver function's own arguments.
//
// Declared for every program; defined once, where CUCO_TENSOR_MAP_DEFINE
// is set before this header: by a framed program's frame (attention's),
// by an unframed program's harness header (flash-attention-cp's fa.cuh).
#pragma once
#include "cuco_cuda.h"

#include <cuda.h>           // CUtensorMap (the driver's types; the function comes through the runtime)
#include <cudaTypedefs.h>   // PFN_cuTensorMapEncodeTiled

extern "C" CUresult cuco_tensor_map_encode(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
	void *base, const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
	const cuuint32_t *elem_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
	CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob);

#ifdef CUCO_TENSOR_MAP_DEFINE
extern "C" CUresult cuco_tensor_map_encode(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
	void *base, const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
	const cuuint32_t *elem_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
	CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
	static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
	if (!fn) {
		cudaDriverEntryPointQueryResult q;
		CUCO_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&fn, 12000,
			cudaEnableDefault, &q));
		if (q != cudaDriverEntryPointSuccess || !fn)
			cuco_die(__FILE__, __LINE__, "the driver has no cuTensorMapEncodeTiled", "cuco_tensor_map_encode");
	}
	return fn(map, type, rank, base, dims, strides, box, elem_strides, interleave, swizzle, l2, oob);
}
#endif
