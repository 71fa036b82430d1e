/* engine.h — the engine (engine*.c).
 *
 * Runs a search in background threads: measures the baseline and the seed
 * (every session, a resumed one too), then a pool of `jobs` workers takes
 * proposals from the strategy, evaluates them (cuco_eval_candidate) and
 * records every status, result and event in the store; keeps a baseline
 * per slot of the evaluator (docs/cluster.md), re-measured there every
 * `baseline_every` benchmarks on it, benchmarks a new best again right
 * after a fresh baseline measurement on its slot before announcing it,
 * applies the store's command queue, and at the end re-times the best few
 * in paired (baseline, candidate) rounds on their slots, ending on the
 * best's pair. Speedup = the latest baseline median of this session on the
 * candidate's slot / the candidate's median; score = speedup. An
 * evaluation the environment failed gives its budget slot back; three in
 * a row end the run with CUCO_EENV.
 */
#ifndef CUCO_AGENTS_ENGINE_H
#define CUCO_AGENTS_ENGINE_H

#include "agents/strategy.h"
#include "core.h"
#include "eval/eval.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cuco_engine_config {
	char strategy[16];      /* "tune" (default) or a registered strategy */
	char tuner[16];         /* random | anneal (default) | ils */
	int budget;             /* strategy candidates over the whole run, resumed
	                           sessions included; 0 = no limit */
	double minutes;         /* this session's wall-clock limit; 0 = none */
	char size[32];          /* problem size; "" = the workload's default */
	uint64_t seed;          /* RNG seed of the strategy */
	int jobs;               /* evaluation workers (2) */
	int baseline_every;     /* re-measure the baseline every K benchmarks (8) */
	int rebench_top;        /* re-time the best N at the end (3) */
	FILE *progress;         /* one line per evaluated candidate; NULL = none */
	cuco_eval_config eval;  /* run_dir, size and jobs are filled from above */
	/* LLM strategies: `--llm PROVIDER:MODEL[@URL][*WEIGHT]` specs replacing
	 * the config file's models (cuco_llm_use_specs), and the run's model
	 * budgets; 0 = none. The specs must outlive the engine. */
	int nllm_specs;
	char *const *llm_specs;
	int generations;        /* --generations: evolve's generations and beam's
	                           iterations, over the config's knobs; 0 = theirs */
	int ranks;              /* --ranks: run the workload on this many ranks
	                           instead of its manifest's; 0 = the manifest's */
	double max_cost_usd;
	int64_t max_tokens;
};

void cuco_engine_config_init(cuco_engine_config *cfg);

typedef struct cuco_engine cuco_engine;

/* Record the run's meta and its baseline and seed rows (once per run
 * directory), then start the search in background threads. */
int cuco_engine_start(cuco_store *st, const cuco_workload *wl, const cuco_engine_config *cfg,
	cuco_engine **out, cuco_err *err);
/* Readable after every event the engine appends (drain it). */
int cuco_engine_wake_fd(const cuco_engine *e);
/* Finish evaluations in flight, then end (no final re-timing). */
void cuco_engine_request_stop(cuco_engine *e);
bool cuco_engine_done(const cuco_engine *e);
/* Wait for the end and free. CUCO_OK, or the error that ended the run
 * (CUCO_EENV when the baseline could not run in this environment). */
int cuco_engine_join(cuco_engine *e, cuco_err *err);

#endif
