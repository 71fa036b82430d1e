/* sizes.h — cpu-kv-transfer's problem size, for the program (kv.h) and
 * its referee (referee.c) alike; a size's defines (-DNB=...) override. */
#ifndef CPU_KV_TRANSFER_SIZES_H
#define CPU_KV_TRANSFER_SIZES_H

#ifndef NB
#define NB 128          /* blocks in the request */
#endif
#ifndef BT
#define BT 16           /* tokens per block */
#endif
#ifndef H
#define H 4             /* heads */
#endif
#ifndef D
#define D 64            /* dims per head */
#endif
#ifndef DM
#define DM 16           /* hidden width the prefill projects from */
#endif
#define HD (H * D)

#endif
