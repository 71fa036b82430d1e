/* sizes.h — cpu-gemm-allgather's problem size, for the program (kernels.h)
 * and its referee (referee.c) alike; a size's defines (-DM=...) override. */
#ifndef CPU_GEMM_ALLGATHER_SIZES_H
#define CPU_GEMM_ALLGATHER_SIZES_H

#ifndef M
#define M 4096
#endif
#ifndef K
#define K 1024
#endif
#ifndef N
#define N 4
#endif
#endif
