/* engine.h — the engine (engine*.c).
 *
 * Runs a search in background threads: measures the baseline and the seed
 * (every session, a resumed one too), then a pool of workers — `jobs`
 * evaluation slots, and for a strategy that calls models up to its
 * concurrency (`llm_jobs`) proposals in the making at once — takes
 * proposals from the strategy, screens them (cuco_eval_candidate, one
 * measurement each) and records every status, result and event in the
 * store; keeps a baseline per slot of the evaluator (docs/cluster.md),
 * re-measured there every `baseline_every` benchmarks on it, watches for
 * a noisy machine, applies the store's command queue, and at the end
 * confirms the `rebench_top` best screens on fresh paired rounds
 * (docs/trust.md): only a contender whose interval lies above 1 against
 * the baseline and against the best so far is crowned. A screening's
 * speedup = the latest baseline median of this session on the
 * candidate's slot / the candidate's median; a confirmed one is the
 * rounds' estimate with its interval; score = speedup. An evaluation the
 * environment failed gives its budget slot back; three in a row end the
 * run with CUCO_EENV.
 */
#ifndef CUCO_ENGINE_H
#define CUCO_ENGINE_H

#include "core.h"
#include "engine/strategy.h"
#include "eval/eval.h"
#include "vocab/vocab.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cuco_store cuco_store;  /* a run's store (store.h), opaque here */

/* A run's false-crown rate: the most often a run crowns a best that is
 * not faster (docs/trust.md). */
#define CUCO_TRUST_ALPHA 0.005

struct cuco_engine_config {
	char strategy[16];      /* "tune" (default) or a registered strategy */
	char tuner[16];         /* random | anneal (default) | ils */
	int budget;             /* strategy candidates over the whole run, resumed
	                           sessions included; 0 = no limit */
	double minutes;         /* this session's wall-clock limit; 0 = none */
	char size[32];          /* problem size; "" = the workload's default */
	uint64_t seed;          /* RNG seed of the strategy */
	int jobs;               /* evaluation workers (2) */
	int llm_jobs;           /* --llm-jobs: model calls in flight at once, over the
	                           config's [llm] concurrency (4); 0 = the config's */
	int baseline_every;     /* re-measure the baseline every K benchmarks (8) */
	int rebench_top;        /* contenders confirmed at the end: the best N screens (3) */
	FILE *progress;         /* one line per evaluated candidate; NULL = none */
	bool drop_stale;        /* holding the run's lock, drop what an earlier session left
	                           unapplied (engine.h's lock); false: apply all pending */
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
	/* The config file as the command read it (config.h): the strategies'
	 * models and knobs. NULL = the defaults. Must outlive the engine. */
	const struct cuco_config *config;
};

void cuco_engine_config_init(cuco_engine_config *cfg);

typedef struct cuco_engine cuco_engine;

/* One engine drives a run at a time: two would both resume the same
 * unfinished candidates and evaluate them twice. cuco_engine_start takes
 * an flock on RUN/run.lock (CUCO_RUN_LOCK, with its pid, which viewers
 * read) and holds it until cuco_engine_join; the kernel drops it when the
 * process ends however it ends, so a killed session never blocks its
 * resume. Holding it, the start first drops the pause, resume and stop
 * commands an earlier session left unapplied when cfg->drop_stale says
 * (cuco_command_drop_stale), and says so on cfg->progress.
 * Whether an engine could drive run_dir now: CUCO_EENV naming the session
 * that drives it, for a front end to refuse before it prepares anything
 * (the start decides). */
int cuco_engine_can_drive(const char *run_dir, cuco_err *err);
/* Take the run's lock, record the run's meta and its baseline and seed
 * rows (once per run directory), then start the search in background
 * threads, driving strat (cfg->strategy names it; NULL: an unknown name,
 * refused). */
int cuco_engine_start(cuco_store *st, const cuco_workload *wl, const cuco_strategy *strat,
	const cuco_engine_config *cfg, cuco_engine **out, cuco_err *err);
/* Readable after every event the engine appends (drain it). */
int cuco_engine_wake_fd(const cuco_engine *e);
/* Where the progress lines go from now on (cfg->progress at the start):
 * a foreground run whose screen was left prints them from then on. */
void cuco_engine_set_progress(cuco_engine *e, FILE *progress);
/* Finish evaluations in flight, then end (no confirmation: nothing new
 * is crowned; a later session on the run directory confirms). */
void cuco_engine_request_stop(cuco_engine *e);
bool cuco_engine_done(const cuco_engine *e);
/* Whether a stop was asked (cuco_engine_request_stop, a stop command):
 * the run ended before its own end, or before its confirmation, and the
 * same command resumes it. Ask before cuco_engine_join. */
bool cuco_engine_interrupted(cuco_engine *e);
/* Wait for the end and free. CUCO_OK, or the error that ended the run
 * (CUCO_EENV when the baseline could not run in this environment). */
int cuco_engine_join(cuco_engine *e, cuco_err *err);

/* A file of a workload's folder (its baseline, its seed), read whole. */
int cuco_workload_file(const cuco_workload *wl, const char *file, char **text, size_t *len,
	cuco_err *err);

#endif
