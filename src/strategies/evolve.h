/* evolve.h — islands (evolve.c): the pure rules, exposed for tests. */
#ifndef CUCO_STRATEGIES_EVOLVE_H
#define CUCO_STRATEGIES_EVOLVE_H

#include "core.h"
#include "engine/strategy.h"
#include "eval/eval.h"
#include "strategies/search.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Selection weights of n candidates of one island: weighted gives
 * sigmoid(lambda * (score - median) / MAD) / (1 + children), with MAD the
 * median absolute deviation (a zero MAD counts as 1); power-law gives
 * rank^-alpha, rank 1 the best. NAN scores count as the median. */
void cuco_parent_weights(cuco_parent_rule rule, double lambda, double alpha,
	const double *scores, const int *children, size_t n, double *w);
/* The index that a draw u in [0,1) picks from weights w (sum > 0). */
size_t cuco_pick_index(const double *w, size_t n, double u);
/* Whether generation g (from 0) of `total` explores. */
bool cuco_evolve_exploring(const cuco_evolve_config *c, int g, int total);
/* The operator (CUCO_OP_*) and temperature for generation g from two
 * draws in [0,1): u picks the operator, v the temperature. */
int cuco_evolve_operator(const cuco_evolve_config *c, int g, int total, double u, double v,
	double *temperature);

typedef struct cuco_member {
	uint64_t id;
	int island;
	int generation;
	double score;        /* NAN unless done and correct */
	bool pinned;
} cuco_member;

/* Plan one migration: from each island max(1, rate × members) random
 * correct members of generation > 0 move to a random other island. The
 * island's best, and pinned members, never move. Returns the moves written
 * to out (at most n). rng is a splitmix64 state. */
size_t cuco_migration_plan(const cuco_member *m, size_t n, int islands, double rate,
	uint64_t *rng, cuco_move *out);

#endif
