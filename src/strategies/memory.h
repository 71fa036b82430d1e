/* memory.h — the optimization memory (memory.c).
 *
 * AccelOpt's summarizer input: a beam iteration's samples, grouped by plan;
 * per plan the best sample if any beat its parent, else the worst. Of
 * those, positives (speedup > positive) best first fill at most half of
 * max_new; negatives (speedup < 1/negative) most harmful first fill the
 * rest. A negative pair is flipped — the child is the slow one and its
 * parent the fast one — so the memory says "undo this".
 */
#ifndef CUCO_STRATEGIES_MEMORY_H
#define CUCO_STRATEGIES_MEMORY_H

#include "core.h"
#include "engine/strategy.h"
#include "strategies/search.h"
#include "vocab/vocab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cuco_beam_sample {
	uint64_t id;
	uint64_t parent;
	int plan;                /* plan number within the iteration */
	double speedup;          /* parent latency / child latency; NAN when failed */
} cuco_beam_sample;

typedef struct cuco_memory_pair {
	uint64_t slow, fast;     /* candidate ids */
	double speedup;          /* ≥ 1: fast over slow */
	bool negative;           /* flipped: "undo this" */
} cuco_memory_pair;

size_t cuco_memory_pairs(const cuco_beam_sample *s, size_t n, const cuco_beam_config *c,
	cuco_memory_pair *out);
/* Which of nold entries survive next to nnew fresh ones in a memory of
 * `capacity`: a uniform random sample of max(0, capacity - nnew) of them
 * (AccelOpt's construct_experience). Writes their indexes to keep,
 * ascending, and returns how many. */
size_t cuco_memory_survivors(size_t nold, size_t nnew, size_t capacity, uint64_t *rng,
	size_t *keep);
/* Add fresh entries (ids assigned) and delete the old ones that do not
 * survive, through the port: the old ones read, then one write (the beam,
 * under the strategy lock, is the memory's one writer). workload "" or
 * shared: every workload's entries compete for the capacity. */
int cuco_memory_update(const cuco_port *port, const char *workload, bool shared, cuco_memory *fresh,
	size_t nfresh, size_t capacity, uint64_t *rng, cuco_err *err);
/* The memory as the planner reads it: one lesson per entry. */
int cuco_memory_render(const cuco_reader *r, const char *workload, bool shared, cuco_buf *out);

#endif
