/* tuner.h — the directive tuner (tune.c).
 *
 * The search that needs no LLM: it moves through the workload's design
 * space (every directive dimension and knob, cuco_workload.dims) keeping
 * the seed's source and changing only directive values. A configuration is
 * keyed by its canonical text ("backend=rma;issuer=one;…" over every
 * dimension in manifest order) and is never proposed twice; invalid points
 * (cuco_directive_valid) are never proposed at all. Not locked: the caller
 * serialises calls.
 */
#ifndef CUCO_STRATEGIES_TUNER_H
#define CUCO_STRATEGIES_TUNER_H

#include "core.h"
#include "eval/eval.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The search algorithms: X(enum, name in the config and --tuner).
 * RANDOM: uniform sampling, the reference; ANNEAL: simulated annealing,
 * best under ~100 evaluations; ILS: greedy iterated local search, best
 * from ~200. */
#define CUCO_TUNER_ALGOS(X) X(RANDOM, "random") X(ANNEAL, "anneal") X(ILS, "ils")

typedef enum cuco_tuner_algo {
#define X(e, name) CUCO_TUNER_##e,
	CUCO_TUNER_ALGOS(X)
#undef X
} cuco_tuner_algo;

const char *cuco_tuner_algo_name(cuco_tuner_algo a);
int cuco_tuner_algo_parse(const char *name, cuco_tuner_algo *out);

typedef struct cuco_tuner cuco_tuner;

/* horizon: the evaluations expected in all (the budget), which sets the
 * annealing schedule; 0 = 100. seed seeds the tuner's own RNG. */
int cuco_tuner_new(const cuco_workload *wl, cuco_tuner_algo algo, uint64_t seed, int horizon,
	cuco_tuner **out, cuco_err *err);
void cuco_tuner_free(cuco_tuner *t);
/* The canonical key of a directive over this design space. */
void cuco_tuner_key(const cuco_tuner *t, const cuco_directive *d, char *buf, size_t size);
bool cuco_tuner_seen(const cuco_tuner *t, const cuco_directive *d);
/* The next configuration: an unseen valid point built on base (the seed's
 * directive) and *parent, the id of the evaluated candidate it mutates
 * (0 when drawn from scratch). CUCO_ENOTFOUND when nothing is left. */
int cuco_tuner_propose(cuco_tuner *t, const cuco_directive *base, cuco_directive *out,
	uint64_t *parent);
/* Learn an evaluated configuration: its candidate id and score (higher is
 * better; NAN for a failure). Also how a resumed run rebuilds the seen set:
 * replay every stored candidate in id order. A later call for the same key
 * replaces the score (a re-measure). */
void cuco_tuner_observe(cuco_tuner *t, const cuco_directive *d, uint64_t id, double score);
/* Never use this candidate as a parent again (a person rejected it). */
void cuco_tuner_forbid(cuco_tuner *t, uint64_t id);
size_t cuco_tuner_seen_count(const cuco_tuner *t);
/* Valid and invalid points of the whole space (saturates at SIZE_MAX). */
size_t cuco_tuner_space_size(const cuco_tuner *t);
/* Simulated annealing's acceptance probability of a move from score cur to
 * score next at temperature temp: 1 when not worse, exp(-relative loss /
 * temp) when worse, 0 when next failed (NAN), 1 when cur failed. */
double cuco_tune_accept_prob(double cur, double next, double temp);

#endif
