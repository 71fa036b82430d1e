/* cuco_cpu_directive.h — the CPU seeds' directive, shared by every cpu-*
 * workload: each dimension arrives as -D<DEFINE>_<VALUE>=1 (docs/workloads.md);
 * without any, the seed builds at its own default point. */
#ifndef CUCO_CPU_DIRECTIVE_H
#define CUCO_CPU_DIRECTIVE_H

#if !defined(CUCO_BACKEND_MSG) && !defined(CUCO_BACKEND_RMA) && !defined(CUCO_BACKEND_SHM)
#define CUCO_BACKEND_MSG 1
#endif
#if !defined(CUCO_ISSUER_ONE) && !defined(CUCO_ISSUER_SEVERAL)
#define CUCO_ISSUER_ONE 1
#endif
#if !defined(CUCO_PLACEMENT_AFTER) && !defined(CUCO_PLACEMENT_INTERLEAVE) && \
	!defined(CUCO_PLACEMENT_PREFETCH)
#define CUCO_PLACEMENT_AFTER 1
#endif
#if !defined(CUCO_SYNC_FENCE) && !defined(CUCO_SYNC_FLAG) && !defined(CUCO_SYNC_PSCW)
#define CUCO_SYNC_FENCE 1
#endif
#ifndef CUCO_CHUNKS
#define CUCO_CHUNKS 1
#endif
#if defined(CUCO_SYNC_PSCW) && !defined(CUCO_BACKEND_RMA)
#error "sync=pscw is an RMA epoch: it needs backend=rma"
#endif

#endif
