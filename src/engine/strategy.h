/* strategy.h — search strategies: the interface the engine drives.
 *
 * A strategy proposes candidates and learns their results; the engine owns
 * threads, the evaluator, the store and the command queue. The engine
 * calls every function of a strategy holding the strategy lock (env.lock),
 * never while holding its own state lock. A strategy that calls models
 * says how many proposals may be in the making at once (concurrency); its
 * propose() then releases the lock while it waits on a model and takes it
 * again to commit what came back (search_int.h does both), so other
 * proposals, results and hints go on meanwhile: a proposal is planned
 * under the lock, its model called with no lock held, and committed under
 * the lock. After such a wait a strategy re-reads its state rather than
 * trusting what it saw before. A strategy reads and writes the store only
 * through the engine's port (env.port), so each of its writes wakes the
 * screen and a test can run it with no store. Register a strategy by adding it to the table
 * in strategies.c (strategies.h); the caller hands it to cuco_engine_start.
 */
#ifndef CUCO_ENGINE_STRATEGY_H
#define CUCO_ENGINE_STRATEGY_H

#include "core.h"
#include "eval/eval.h"
#include "vocab/vocab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cuco_engine_config cuco_engine_config;

/* Proposals in the making at once (model calls in flight), at most: a
 * strategy's concurrency, --llm-jobs and the config's [llm] concurrency. */
#define CUCO_MAX_CONCURRENCY 16

/* A candidate moving between islands (evolve's migration). */
typedef struct cuco_move {
	uint64_t id;
	int from, to;
} cuco_move;

/* The islands as a strategy writes them (port.islands): islands 0..n-1
 * in the store, each made, exploring, when missing; every one's phase
 * set when phase is not NULL; the candidates moved, with the islands'
 * members and migrations; and, when text is not "", an event by author:
 * a phase event when phase is set, else a migration. */
typedef struct cuco_port_islands {
	int n;
	const char *phase;
	const cuco_move *moves;
	size_t nmoves;
	const char *author, *text;
} cuco_port_islands;

/* A model call, and its reply's text (NULL when none came). */
typedef struct cuco_port_call {
	cuco_call call;
	char *reply;
} cuco_port_call;

/* The engine's port (engine_port.c): a strategy reads and writes the
 * run's store only through it. Every write is one write transaction,
 * after which the screen wakes (docs/architecture.md, "What wakes the
 * screen"); every read is one read transaction. A test hands a strategy a
 * port of its own. */
typedef struct cuco_port {
	void *ctx;
	/* ---- reads ---- */
	/* Candidate id into c (c may be NULL) and, when text is not NULL, its
	 * source (malloc'd); CUCO_ENOTFOUND when it is not stored (yet). */
	int (*candidate)(void *ctx, uint64_t id, cuco_candidate *c, char **text, size_t *len,
		cuco_err *err);
	/* Every stored candidate from id `from` on, in id order, until fn
	 * returns nonzero. */
	int (*candidates)(void *ctx, uint64_t from, int (*fn)(const cuco_candidate *, void *),
		void *arg, cuco_err *err);
	/* A stored text by its hash (malloc'd). */
	int (*source)(void *ctx, const char *hash, char **text, size_t *len, cuco_err *err);
	/* The meta record `name`, its JSON (malloc'd); NULL when there is none. */
	int (*meta)(void *ctx, const char *name, char **json, cuco_err *err);
	/* Run fn in one read transaction, the records given through a reader
	 * (vocab.h): for the readers that take one (the model stack's prompt
	 * builder, the memory's render). */
	int (*read)(void *ctx, int (*fn)(const cuco_reader *, void *), void *arg, cuco_err *err);
	/* ---- writes ---- */
	/* An event in the run's log; with a meta record `name` (its JSON) in
	 * the same transaction when name is not NULL. */
	int (*event)(void *ctx, const char *name, const char *json, cuco_event_kind kind,
		const char *author, uint64_t candidate, const char *text, cuco_err *err);
	/* Model calls, each reply's text in the sources, linked to no
	 * candidate; with r, linked to the refusal r, stored with its prompt
	 * and transcript texts (NULL or "": none) and a refusal event. */
	int (*calls)(void *ctx, const cuco_refusal *r, const char *prompt, const char *transcript,
		const cuco_port_call *v, size_t n, cuco_err *err);
	/* The islands, and candidates moving between them (cuco_port_islands). */
	int (*islands)(void *ctx, const cuco_port_islands *a, cuco_err *err);
	/* The optimization memory (the beam's): the entries named in drop
	 * deleted and the fresh ones added, their ids set. */
	int (*memory)(void *ctx, const uint64_t *drop, size_t ndrop, cuco_memory *fresh,
		size_t nfresh, cuco_err *err);
	/* The texts behind a proposal: its prompt and transcript, their
	 * hashes set in c, and each call's reply, its hash set in the call
	 * (the engine stores the calls with the candidate). */
	int (*texts)(void *ctx, const char *prompt, const char *transcript, cuco_candidate *c,
		cuco_port_call *v, size_t n, cuco_err *err);
} cuco_port;

typedef struct cuco_strategy_env {
	const cuco_port *port;       /* the run's store, read and written */
	const cuco_workload *wl;
	const cuco_engine_config *cfg;
	uint64_t baseline_id;
	uint64_t seed_id;            /* 0: the workload has no seed (search.h, search_start) */
	const cuco_directive *seed_directive;
	const char *seed_hash;       /* the seed's source in the store; "" when none */
	pthread_mutex_t *lock;       /* the strategy lock, held in every call */
	/* The cancel flag of every model call: the engine sets it when the run
	 * is stopped, paused, out of time or has failed (and clears it when a
	 * pause ends); a strategy sets it when the model budget is spent. No
	 * call starts while it is set. */
	atomic_bool *calls_off;
	double *model_outage_s;      /* out: the models' `outage` (llm_config.h), how long
	                                none may answer before the run waits for one */
	const cuco_hardware *hw;     /* this machine, detected once (cuco_hardware_get) */
} cuco_strategy_env;

typedef struct cuco_proposal {
	cuco_candidate cand;  /* origin, parents, island, generation, directive,
	                         note, model/tokens; the engine sets id and status */
	char *source;         /* malloc'd new text, or NULL when cand.source_hash
	                         names a stored source */
	size_t len;
	cuco_call *calls;     /* malloc'd: the model calls behind it, which the
	                         engine stores with it (their candidate set) */
	size_t ncalls;
} cuco_proposal;

typedef struct cuco_strategy {
	const char *name;
	int (*init)(const cuco_strategy_env *env, void **state, cuco_err *err);
	/* Proposals that may be in the making at once (the model calls in
	 * flight); 0, or NULL, when propose() never waits on a model: the
	 * engine then proposes only for a free evaluation slot. */
	int (*concurrency)(void *state);
	/* CUCO_OK with a proposal; CUCO_ENOTFOUND when nothing is left to
	 * propose; CUCO_EBUSY when nothing can be proposed until a result
	 * lands or another proposal ends (the engine asks again then);
	 * CUCO_EAGAIN when a model call gave up on a passing fault (asked
	 * again); another code to end the run with err. */
	int (*propose)(void *state, cuco_proposal *out, cuco_err *err);
	/* A finished candidate (done, failed or rejected), and at start every
	 * stored one in id order, so a resumed run knows its history. */
	void (*observe)(void *state, const cuco_candidate *c);
	/* A person's hint for an island (-1: all); NULL when the strategy has
	 * no prompts to put it in. */
	void (*hint)(void *state, int island, const char *text);
	void (*free)(void *state);
} cuco_strategy;

/* A repair child's note starts so (evolve's repair turn); `cuco report`
 * counts them. */
#define CUCO_REPAIR_NOTE "repair of #"

#endif
