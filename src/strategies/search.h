/* search.h — the LLM strategies' knobs (their table: config.c).
 *
 * Every knob of the LLM strategies, with the published defaults (CUCo's
 * slow path, ShinkaEvolve's selection, AccelOpt's beam). They are read from
 * the [evolve], [beam], [fastpath] and [sample] sections of the config file
 * (docs/configuration.md), as `key = value` lines, or set one by one as
 * "section.key" (e.g. "evolve.islands"); docs/strategies.md lists them.
 */
#ifndef CUCO_STRATEGIES_SEARCH_H
#define CUCO_STRATEGIES_SEARCH_H

#include "core.h"

#include <stdbool.h>

/* How a parent is drawn from its island: X(enum, name in the config file,
 * what it does). */
#define CUCO_PARENT_RULES(X) \
	X(WEIGHTED, "weighted", "sigmoid of score vs the island median, / (1 + children)") \
	X(POWER_LAW, "power_law", "p(rank r) ∝ r^-alpha over the island ranked by score")

typedef enum cuco_parent_rule {
#define X(e, name, help) CUCO_PARENT_##e,
	CUCO_PARENT_RULES(X)
#undef X
	CUCO_PARENT_RULE_COUNT
} cuco_parent_rule;

/* The mutation operators of an island, in this order in the probabilities. */
enum { CUCO_OP_FULL, CUCO_OP_DIFF, CUCO_OP_CROSS, CUCO_OP_COUNT };

typedef struct cuco_evolve_config {
	int islands;                    /* 2 */
	int generations;                /* 0 = the run's budget, or 60 without one */
	double explore_fraction;        /* 0.4: the first 40 % of generations explore */
	double explore_p[CUCO_OP_COUNT];    /* full .70, diff .15, cross .15 */
	double exploit_p[CUCO_OP_COUNT];    /* full .60, diff .25, cross .15 */
	double explore_temps[3];        /* 0.2, 0.5, 0.8: one drawn per call */
	double exploit_temps[3];        /* 0.0, 0.2, 0.5 */
	cuco_parent_rule parent_rule;   /* weighted */
	double lambda;                  /* sigmoid sharpness: 8 (CUCo's; ShinkaEvolve's 10) */
	double alpha;                   /* power-law exponent: 1 */
	int inspirations;               /* top candidates and archive shown: 3 */
	int failures;                   /* recent failures shown: 3 */
	int migration_interval;         /* generations between migrations: 8 */
	double migration_rate;          /* share of an island moved: 0.15 */
	int meta_interval;              /* generations between meta summaries: 8 */
	int meta_max;                   /* recommendations kept: 5 */
	int novelty_attempts;           /* new replies when a child duplicates: 3 */
	double tune_rate;               /* share of generations given to the directive
	                                   tuner, a cheap operator that needs no LLM: 0 */
	double directive_rate;          /* share of a templated program's generations given to
	                                   the directive-only operator (a model chooses a new
	                                   directive for the parent's code): 0.2 */
	bool repair;                    /* a failed LLM child gets one repair turn, told its
	                                   first error (a repair is not repaired): yes */
	bool fastpath;                  /* run the fast path first: yes */
} cuco_evolve_config;

typedef struct cuco_beam_config {
	int width;                      /* B: 6 */
	int plans;                      /* N plans per beam candidate: 12 */
	int samples;                    /* K executor samples per plan: 2 */
	int iterations;                 /* 15 */
	int max_new;                    /* memory entries per iteration: 8 */
	int capacity;                   /* memory entries kept: 16 */
	double positive;                /* a positive pair's speedup exceeds 1.04 */
	double negative;                /* a negative pair's is below 1/1.15 */
	bool shared_memory;             /* memory across workloads (AccelOpt: per task) */
} cuco_beam_config;

typedef struct cuco_fastpath_config {
	int stage_a_max;                /* iterations adding device infrastructure: 5 */
	int stage_b_max;                /* iterations making communication device-initiated: 10 */
} cuco_fastpath_config;

typedef struct cuco_sample_config {
	double temperature;             /* of every sample: 0.8 */
} cuco_sample_config;

typedef struct cuco_search_config {
	cuco_evolve_config evolve;
	cuco_beam_config beam;
	cuco_fastpath_config fastpath;
	cuco_sample_config sample;
} cuco_search_config;

/* The knobs' defaults, and one knob by "section.key" (CUCO_EDATA naming
 * the key and value), from the options table (config.c); the file is read
 * by cuco_config_load. */
void cuco_search_config_defaults(cuco_search_config *c);
int cuco_search_config_set(cuco_search_config *c, const char *key, const char *value,
	cuco_err *err);

#endif
