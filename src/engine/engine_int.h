/* engine_int.h — inside the engine: its state and what its files share.
 *
 *   engine.c         the public API, the driver thread, the run's state flags
 *   engine_pool.c    the workers and their queue; proposals
 *   engine_eval.c    evaluating a candidate; the baseline policy
 *   engine_record.c  store transactions: events, statuses, results, the best
 *   engine_port.c    the port strategies write the store through
 *   engine_cmd.c     the command queue (pin, reject, edit, pause, stop, hint)
 *   engine_trust.c   the noise watch; the paired confirmation that crowns a best
 *   engine_setup.c   the run's lock, its first write, a resumed run's state, the replay
 *   engine_slots.c   each slot's own baseline; the slots' state in the store,
 *                    their faults as events
 *
 * Locks: `lock` guards the state below it and the progress stream;
 * `strat_lock` serialises calls into the strategy. Neither is held during
 * an evaluation, and `lock` is never held while taking `strat_lock`.
 * Store writes are serialised by LMDB itself.
 */
#ifndef CUCO_ENGINE_INT_H
#define CUCO_ENGINE_INT_H

#include "engine/engine.h"
#include "store/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_JOBS 16
#define MAX_LLM_JOBS CUCO_MAX_CONCURRENCY  /* model calls in flight at once, at most */
#define POLL_S 0.2          /* command queue polling while workers run */
#define ENGINE_DRIFT_WINDOW 8  /* baseline medians the noise watch judges drift over */

/* The noise watch (engine_trust.c). */
typedef struct engine_noise {
	double base_us[ENGINE_DRIFT_WINDOW];  /* the latest baseline medians, a ring */
	int base_slot[ENGINE_DRIFT_WINDOW];   /* and the slot of each */
	int nbase;
	double start, last;      /* cuco_mono() at the run's start and at the last sample */
	double cpu_last;         /* this process's CPU seconds then, its stages' included */
	double own;              /* its CPU use in cores, averaged as the load average is */
	bool noisy;              /* said once */
} engine_noise;

/* A slot of the evaluator's pool (eval.h) as the engine keeps it: a
 * speedup divides the latest good baseline median of the slot the
 * candidate was measured on, never another's (docs/cluster.md). */
typedef struct engine_slot {
	double baseline_us;   /* NAN until the baseline ran here */
	int benched;          /* benchmarks here since that one */
	bool due, busy;       /* a re-measure is due here / being taken */
} engine_slot;

struct cuco_engine {
	cuco_store *st;
	const cuco_workload *wl;
	cuco_engine_config cfg;
	const cuco_strategy *strat;
	void *strat_state;
	cuco_port port;         /* the strategy's writes (engine_port.c) */
	pthread_mutex_t strat_lock;
	cuco_evaluator *ev;
	char *baseline_src, *seed_src;
	size_t baseline_len, seed_len;
	char seed_hash[CUCO_HASH_LEN + 1];  /* "" when the workload has no seed */
	cuco_directive seed_dir;
	cuco_hardware hw;       /* this machine, as this session found it */
	cuco_peak peak;         /* what the fraction of peak is of (meta "peak") */
	uint64_t baseline_id, seed_id;
	uint64_t session;       /* this session: its run-start event's seq */
	bool seed_done;         /* measured by an earlier session */
	int wake[2];
	int run_lock;           /* RUN/run.lock, flocked while this engine lives */
	pthread_t driver;
	pthread_t workers[MAX_JOBS + MAX_LLM_JOBS];
	int nworkers;
	atomic_bool done;
	atomic_bool calls_off;  /* no model call starts; those in flight give up */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool paused, stop, exhausted;
	bool baseline_fresh;    /* a baseline measurement is in force for this session */
	double resume_us;       /* a resumed run's baseline in force (engine_slots_init): */
	char resume_slot[64];   /*   its median, the slot it ran on (a candidate's slot), */
	int resume_benched;     /*   the benchmarks since */
	int proposed;           /* strategy candidates over the whole run */
	engine_slot *slots;     /* one per slot of the evaluator */
	int nslots;
	int env_fails;          /* environment failures in a row */
	int model_fails;        /* proposals in a row whose model call gave up */
	double model_ok_at;     /* cuco_mono() of the last answered call, or of the start */
	double model_outage_s;  /* no answer this long pauses the run for the model */
	bool model_down;        /* paused for the model: a model-down event was stored */
	int active;             /* workers still running */
	int llm_jobs;           /* proposals at once (the strategy's concurrency);
	                           0: proposed by the worker that evaluates it */
	int proposing;          /* proposals being made or evaluated */
	int evaluating;         /* evaluation slots taken, at most cfg.jobs */
	uint64_t strat_seq;     /* moves when a proposal ends or a result lands */
	uint64_t busy_seq;      /* strat_seq when the strategy last said CUCO_EBUSY */
	bool busy;              /* and has not proposed since */
	unsigned cancel_epoch;  /* moves whenever calls in flight are cancelled */
	uint64_t best_id;        /* the crowned best (the baseline until one is) */
	double best_score;
	double best_lo, best_hi; /* its interval */
	int best_rounds;
	int confirmations;       /* of this run directory, each taking its share of alpha */
	cuco_confirmation confirmed;  /* this session's: what its confirmations did */
	bool confirm_done;       /* its confirmation ran to its end */
	uint64_t rng;            /* the rounds' order */
	engine_noise noise;
	uint64_t *backlog;         /* stored candidates to evaluate before proposing */
	size_t nbacklog, backlog_cap;
	double deadline;        /* cuco_mono() limit; 0 = none */
	const char *end_reason;
	bool interrupted;       /* a person or a signal asked it to stop */
	char end_text[256];     /* an end reason the strategy gave */
	int rc;                 /* what ended the run, with err */
	cuco_err err;
};

/* ---- the run's state (engine.c) ---- */

/* The port the strategy writes through (engine_port.c). */
void engine_port_init(cuco_engine *e);
/* A new island's record: exploring, no members, no best. */
void engine_island_new(int id, cuco_island *isl);

void engine_wake(cuco_engine *e);
/* End the run with an error (the first one wins). */
void engine_fail(cuco_engine *e, const cuco_err *err);
bool engine_stopping(cuco_engine *e);
/* Whether this thread holds e->lock: for CUCO_ASSERT on the functions
 * below that say "under e->lock" (it may wait for another holder). */
bool engine_locked(cuco_engine *e);
/* Wait on e->cond (holding e->lock) for at most `seconds`. */
void engine_wait(cuco_engine *e, double seconds);
/* Cancel the model calls in flight and start none (under e->lock):
 * a stop, a pause, the time limit or a failure. */
void engine_calls_off(cuco_engine *e);

/* ---- store transactions (engine_record.c) ---- */

void engine_first_line(const char *text, char *buf, size_t size);
void engine_event_init(cuco_event *ev, cuco_event_kind kind, uint64_t cand, const char *author);
void engine_event(cuco_engine *e, cuco_event_kind kind, uint64_t cand, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int engine_get(cuco_engine *e, uint64_t id, cuco_candidate *out, cuco_err *err);
void engine_set_status(cuco_engine *e, uint64_t id, cuco_status status);
/* An evaluation's result as a measurement of candidate id in this session,
 * a screening whose speedup is against baseline_us (NAN: it is the
 * baseline itself), of this kind (measure, baseline, confirm, …). */
void engine_measurement_of(const cuco_engine *e, uint64_t id, const cuco_eval_result *r,
	double baseline_us, const char *kind, cuco_measurement *m);
/* Append an evaluation's result to candidate id as a measurement of this
 * session, against baseline_us (NAN: it is the baseline), with an event of
 * this kind (the measurement's word: its name, "measure" for a status);
 * an error ends the run. */
int engine_record(cuco_engine *e, uint64_t id, const cuco_eval_result *res, double baseline_us,
	cuco_event_kind kind, cuco_candidate *out);
/* One progress line; call with e->lock held. */
void engine_progress(cuco_engine *e, const cuco_candidate *c, const char *what);
/* Crown c the best, its island's champion, with a "best" event saying text. */
int engine_crown_txn(cuco_txn *txn, const cuco_candidate *c, const char *text);
/* The best from the store, into e->best_id/best_score. */
void engine_refresh_best(cuco_engine *e);

/* ---- evaluation (engine_eval.c) ---- */

enum { ENGINE_BASE_FIRST = 1, ENGINE_BASE_QUIET = 2 };  /* engine_measure_baseline's flags */

bool engine_counts_for_budget(const cuco_candidate *c);
/* The same as a round of a confirmation (cuco_eval_remeasure_on), on that
 * slot. */
int engine_remeasure(cuco_engine *e, int slot, const char *src, size_t len,
	const cuco_directive *d, cuco_eval_result *res);
/* Measure the baseline on a slot (-1: any) and make it that slot's
 * reference. */
int engine_measure_baseline(cuco_engine *e, int slot, unsigned flags);
/* Hand a finished candidate to the strategy (under strat_lock). */
void engine_observe(cuco_engine *e, const cuco_candidate *c);
void engine_evaluate_stored(cuco_engine *e, uint64_t id);

/* ---- proposals and workers (engine_pool.c) ---- */

typedef struct engine_insert_arg {
	cuco_candidate c;       /* in: the proposal; out: as stored */
	const char *source;     /* NULL: c.source_hash names it */
	size_t len;
	cuco_event_kind event;  /* kind of the event to add */
	const char *author;
	char text[512];
	const cuco_call *calls; /* the model calls behind it, stored linked to it */
	size_t ncalls;
} engine_insert_arg;

/* Insert a new candidate (a proposal or a person's edit) with its event. */
int engine_insert_txn(cuco_txn *txn, void *arg);
void *engine_worker(void *arg);

/* ---- commands (engine_cmd.c) ---- */

void engine_poll_commands(cuco_engine *e);

/* ---- trust (engine_trust.c) ---- */

void engine_noise_start(cuco_engine *e);
/* Every good baseline measurement: the first time it finds the machine
 * noisy it says so, once, in the event log, the log and the progress. */
void engine_noise_baseline(cuco_engine *e, const cuco_eval_result *res);
/* Confirm the best `rebench_top` screens on fresh paired rounds; crown
 * what passes, and look again at a crown they measure (the run's end). */
void engine_confirm(cuco_engine *e);
/* How this session's confirmation ended, as meta "confirmation" keeps it. */
void engine_confirm_outcome(cuco_engine *e, cuco_confirmation *out);

/* ---- slots (engine_slots.c) ---- */

/* The table, one entry per slot of e->ev, no baseline yet. */
void engine_slots_init(cuco_engine *e);
/* A slot's index by name (a candidate's stored slot), -1 when none. */
int engine_slot_index(cuco_engine *e, const char *name);
/* Claim slot s's next baseline measurement for this thread (under
 * e->lock); false when another thread is measuring it already. */
bool engine_claim_baseline(cuco_engine *e, int s);
/* A slot whose baseline is due, claimed (under e->lock); -1 when none. */
int engine_claim_due(cuco_engine *e);
/* A baseline measured on its slot (under e->lock): the slot's reference
 * from now on. */
void engine_slot_baseline(cuco_engine *e, const cuco_eval_result *res);
/* A candidate measured on slot s (under e->lock): after baseline_every
 * benchmarks there the slot's baseline is due again. */
void engine_slot_benched(cuco_engine *e, int s, bool counts);

/* The evaluator's slot_changed: an event for a fault, the state to meta. */
void engine_slot_changed(void *arg, const cuco_slot_info *slot, const char *text);

/* ---- setup and resume (engine_setup.c) ---- */

/* Take the run's lock (engine.h) into *fd and, holding it, drop the
 * commands an earlier session left unapplied when cfg->drop_stale says. */
int engine_lock(cuco_store *st, const cuco_engine_config *cfg, int *fd, cuco_err *err);
/* Read the workload's files and write the run's first transaction. */
int engine_setup(cuco_engine *e, cuco_err *err);
/* Every stored candidate and acknowledged hint into the strategy. */
int engine_replay(cuco_engine *e, cuco_err *err);
void engine_free(cuco_engine *e);

#endif
