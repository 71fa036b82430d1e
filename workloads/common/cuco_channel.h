/* cuco_channel.h — the channel between one rank of a workload program
 * and the referee (cuco_referee.c), which decides the verdict in a process
 * of its own (docs/trust.md, "The referee").
 *
 * One file per rank, on a tmpfs the referee makes and the stage is shown:
 * this header, then the rank's input arrays and output arrays, each
 * aligned to a page (a GPU workload's arrays are device memory instead,
 * named by their IPC handles here). The referee writes the inputs and reads the outputs;
 * the rank's frame (cuco_frame.c) maps the file and hands the arrays to
 * the program. The referee unlinks every file once all ranks have mapped
 * theirs, before any candidate code runs, so no rank can open another's.
 *
 * The handshake, each word written by one side and futex-waited on by
 * the other (FUTEX_WAIT on a shared mapping: no private flag):
 *
 *   rank:    state = ATTACHED  (mapped)
 *   referee: go = 1            (every rank attached; files unlinked)
 *   rank:    state = READY     (the program's setup ran)
 *   referee: release = s + 1   (step s's inputs are in place) ...
 *   rank:    state = DONE + s  (step s ran)                     ... repeat
 *   referee: release = STOP    (no more steps: tear down and leave)
 *
 * Nothing a rank writes here is believed but its outputs, which the
 * referee checks against its own reference, and the time it says DONE,
 * which the referee reads on its own clock. The phases and host calls
 * below are the program's own account, shown as such.
 *
 * Plain C11 that also compiles as C++; trusted: never included into a
 * candidate's object (cuco_step.h is what a candidate sees). */
#ifndef CUCO_CHANNEL_H
#define CUCO_CHANNEL_H

#include <stdint.h>

#define CUCO_CHAN_MAGIC 0x6e61686363756375ull  /* "cucuchan" */
#define CUCO_CHAN_VERSION 2u
#define CUCO_CHAN_ENV "CUCO_CHANNEL"            /* the folder of the rank files */
#define CUCO_CHAN_ARRAYS 8
#define CUCO_CHAN_PAGE 4096u
#define CUCO_CHAN_PHASES 3
#define CUCO_CHAN_HANDLE 64                    /* a legacy CUDA IPC handle's bytes */

enum {
	CUCO_CHAN_ATTACHED = 1,
	CUCO_CHAN_READY = 2,
	CUCO_CHAN_DONE = 3,                 /* + the step */
};
#define CUCO_CHAN_STOP 0xffffffffu

/* An array is in the file (offset), or, for a GPU workload, in device
 * memory the referee allocated on its own context and shares by a CUDA
 * IPC handle (device: offset unused). */
typedef struct cuco_chan_array {
	uint64_t offset;                    /* from the start of the file */
	uint64_t bytes;
	uint32_t per_step;                  /* inputs: drawn afresh for every step */
	uint32_t device;                    /* in device memory: open handle */
	char name[20];
	unsigned char handle[CUCO_CHAN_HANDLE];
} cuco_chan_array;

/* A control word on a cache line of its own. */
typedef struct cuco_chan_word {
	uint32_t v;                         /* accessed with __atomic builtins only */
	char pad[60];
} cuco_chan_word;

typedef struct cuco_chan {
	uint64_t magic;
	uint32_t version, rank, nranks;
	uint32_t nin, nout;
	uint32_t warmup;                    /* steps before the timed ones */
	uint32_t steps;                     /* warm-up and timed */
	uint32_t pad0;
	uint64_t bytes;                     /* of the whole file */
	cuco_chan_array in[CUCO_CHAN_ARRAYS], out[CUCO_CHAN_ARRAYS];
	cuco_chan_word go, release, state;
	/* The program's own account (its frame writes them after every timed
	 * step): seconds in each phase summed over timed steps, host calls
	 * the interposer counted, "name=N ..." of them (-1: not counted). */
	double phase[CUCO_CHAN_PHASES];
	int64_t host_calls;
	char host_calls_by[256];
} cuco_chan;

#endif
