/* store.h — the run's store: one LMDB environment per run directory.
 *
 * The store is the single source of truth and also the bus between the
 * search engine (writer), the screen and the CLI (readers, and writers of
 * commands only). LMDB's MVCC means readers never block the writer, and a
 * second process may open the same run directory while a search runs.
 *
 * Records are JSON (cJSON) so mdb_dump and `cuco show` stay readable; the
 * fields are documented in docs/store.md. Alongside them the store keeps
 * a compact binary summary per candidate, which is what listing and the
 * lineage view read (100 000 candidates in a few milliseconds).
 *
 * Transactions: every write runs inside cuco_store_write(), which calls the
 * given function in one LMDB write transaction and, when the map is full,
 * aborts, grows the map and calls it again — so the function must only
 * write through the txn and be safe to repeat. Reads run inside
 * cuco_store_read(). Keep both short: the screen reads while the engine
 * writes. Functions taking a cuco_txn return CUCO_OK, CUCO_ENOTFOUND or
 * CUCO_EDATA/CUCO_EENV with the message in the txn's error (see
 * cuco_txn_err), which cuco_store_write/read hand back to their caller.
 *
 * Caveats (LMDB's): one store handle per run directory per process; do not
 * use a handle in a child after fork(); a read or write txn belongs to the
 * thread that runs the callback.
 */
#ifndef CUCO_STORE_H
#define CUCO_STORE_H

#include "core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CUCO_SCHEMA_VERSION 1
#define CUCO_HASH_LEN 32      /* hex digits of a content hash (XXH3-128) */
#define CUCO_MAX_PARENTS 2
#define CUCO_MAX_KNOBS 16
#define CUCO_MAX_PHASES 8

/* ---- enums ------------------------------------------------------------- */

typedef enum cuco_origin {
	CUCO_ORIGIN_BASELINE,
	CUCO_ORIGIN_SEED,
	CUCO_ORIGIN_FASTPATH,
	CUCO_ORIGIN_LLM_DIFF,
	CUCO_ORIGIN_LLM_FULL,
	CUCO_ORIGIN_LLM_CROSS,
	CUCO_ORIGIN_TUNE,
	CUCO_ORIGIN_HUMAN,
	CUCO_ORIGIN_BEAM_PLAN,
	CUCO_ORIGIN_COUNT
} cuco_origin;

typedef enum cuco_status {
	CUCO_STATUS_QUEUED,
	CUCO_STATUS_COMPILING,
	CUCO_STATUS_RUNNING,
	CUCO_STATUS_BENCHMARKING,
	CUCO_STATUS_DONE,
	CUCO_STATUS_FAILED,
	CUCO_STATUS_REJECTED,
	CUCO_STATUS_COUNT
} cuco_status;

/* Why an evaluation failed, the one table of classes the evaluator
 * assigns and every reader explains: X(enum, name in records, what it
 * means). A candidate's error_class holds the name. */
#define CUCO_FAIL_CLASSES(X) \
	X(COMPILE_ERROR, "compile-error", "the source did not compile; the excerpt is the " \
		"compiler's output.") \
	X(CRASH, "crash", "the program died (signal or non-zero exit) while running.") \
	X(WRONG_ANSWER, "wrong-answer", "it ran but its result differs from the reference beyond " \
		"the tolerance: usually a missing synchronization or a wrong offset.") \
	X(TIMEOUT, "timeout", "it ran past the stage's time limit and was killed with its process " \
		"group: in distributed kernels usually a deadlock (a wait nobody signals).") \
	X(PROTOCOL, "protocol", "it ran but did not print the result line the harness protocol " \
		"asks for.") \
	X(ENVIRONMENT, "environment", "the machine lacked something (compiler, mpirun, GPU): not " \
		"the candidate's fault.")

typedef enum cuco_fail_class {
#define X(e, name, help) CUCO_FAIL_##e,
	CUCO_FAIL_CLASSES(X)
#undef X
	CUCO_FAIL_COUNT
} cuco_fail_class;

const char *cuco_fail_name(cuco_fail_class f);  /* "wrong-answer", …; "?" out of range */
const char *cuco_fail_help(cuco_fail_class f);
int cuco_fail_parse(const char *name, cuco_fail_class *out);  /* CUCO_OK or CUCO_EDATA */

const char *cuco_origin_name(cuco_origin o);  /* "llm-diff", … */
const char *cuco_status_name(cuco_status s);  /* "queued", … */
int cuco_origin_parse(const char *name, cuco_origin *out);  /* CUCO_OK or CUCO_EDATA */
int cuco_status_parse(const char *name, cuco_status *out);

/* ---- records ----------------------------------------------------------- */

typedef struct cuco_knob {
	char name[32];
	char value[64];
} cuco_knob;

/* The five directive dimensions, the one table every part reads (the
 * record's JSON, manifests' design spaces, the screen, prompts), in the
 * order every view shows them: X(enum, field of cuco_directive, what it
 * means — the words the screen teaches when a workload gives none). */
#define CUCO_DIRECTIVE_DIMS(X) \
	X(BACKEND, backend, "how bytes move between ranks. GPU: LSA = load/store into a peer's " \
		"memory over NVLink; GIN = the GPU itself issues network puts. CPU: msg = two-sided " \
		"send/recv, rma = one-sided put (GIN's analogue), shm = direct load/store in a shared " \
		"window (LSA's analogue).") \
	X(ISSUER, issuer, "who starts each transfer: one thread, a warp, a whole CTA (GPU), or " \
		"one rank thread versus several (CPU). More issuers spread the work but add " \
		"coordination.") \
	X(PLACEMENT, placement, "where communication sits relative to compute: after it, " \
		"interleaved with it chunk by chunk, or prefetched ahead so it overlaps the next step.") \
	X(SYNC, sync, "the scope of synchronization that makes data visible: a fence over " \
		"everything, per-chunk flags, or a narrower epoch (e.g. PSCW). Narrow scopes wait less.") \
	X(GRANULARITY, granularity, "the chunk size (or count) the transfer is cut into. Small " \
		"chunks overlap better but pay more per-message overhead.")

typedef enum cuco_dirdim {
#define X(e, field, help) CUCO_DIRDIM_##e,
	CUCO_DIRECTIVE_DIMS(X)
#undef X
	CUCO_DIRDIM_COUNT
} cuco_dirdim;

/* The optimization directive a candidate states before its code. */
typedef struct cuco_directive {
	/* One field per dimension: backend (GIN | LSA on GPUs; msg | rma | shm
	 * on CPUs), issuer, placement, sync, granularity (chunk size as text,
	 * "64KiB", "4"). */
#define X(e, field, help) char field[32];
	CUCO_DIRECTIVE_DIMS(X)
#undef X
	int nknobs;
	cuco_knob knobs[CUCO_MAX_KNOBS];  /* free knobs: name = value */
} cuco_directive;

const char *cuco_dirdim_name(cuco_dirdim d);  /* "backend", …; "?" out of range */
const char *cuco_dirdim_help(cuco_dirdim d);
/* The dimension of that name, or -1 (a knob, or nothing). */
int cuco_dirdim_find(const char *name);
/* A directive's value of one dimension ("" when unset). */
const char *cuco_directive_get(const cuco_directive *d, cuco_dirdim dim);
/* Value of a directive field or knob by name ("" if unset). */
const char *cuco_directive_value(const cuco_directive *d, const char *name);
/* Set a field or a knob (added when new); CUCO_EDATA when the value or the
 * name is too long or the knobs are full. */
int cuco_directive_set(cuco_directive *d, const char *name, const char *value);

typedef struct cuco_phase {
	char name[24];  /* compute, comm, sync, exposed_comm, host, … */
	double us;
} cuco_phase;

typedef struct cuco_candidate {
	uint64_t id;              /* monotonic from 1; 0 asks cuco_cand_put to assign */
	int nparents;
	uint64_t parents[CUCO_MAX_PARENTS];
	int island;               /* -1 when outside any island (baseline) */
	int generation;
	cuco_origin origin;
	cuco_status status;
	cuco_directive directive;
	char source_hash[CUCO_HASH_LEN + 1];  /* into the sources table */
	char prompt_hash[CUCO_HASH_LEN + 1];  /* "" when no LLM wrote it */
	char reply_hash[CUCO_HASH_LEN + 1];
	char failed_stage[16];    /* compile | run | bench, "" unless failed */
	char error_class[24];     /* a cuco_fail_name, "" unless failed */
	char error_excerpt[2048]; /* tail of the failing stage's output */
	double score;             /* higher is better; NAN when none */
	double latency_min_us;
	double latency_median_us; /* NAN when not measured */
	double latency_p90_us;
	int samples;
	double spread;            /* (max-min)/min of the timed repetitions */
	int nphases;
	cuco_phase phases[CUCO_MAX_PHASES];
	double max_error;         /* numerical error against the reference */
	double speedup;           /* baseline median / this median, same run; NAN if unknown */
	double peak_fraction;     /* fraction of the hardware peak; NAN if unknown */
	bool pinned;
	char reject_reason[256];
	char model[64];
	int64_t tokens_prompt;
	int64_t tokens_completion;
	double cost_usd;
	double created;           /* wall-clock seconds */
	double updated;
	char note[512];           /* the author's one-line description */
	char slot[64];            /* the slot its latest measurement ran on ("local",
	                             a host, a Slurm node); "" before any */
} cuco_candidate;

/* Fixed-size digest of a candidate, kept in its own table in the same
 * transaction as the record; what listings and the lineage tree read. */
typedef struct cuco_summary {
	uint64_t id;
	uint64_t parents[CUCO_MAX_PARENTS];  /* 0 = none */
	int32_t island;
	int32_t generation;
	uint8_t origin;
	uint8_t status;
	uint8_t pinned;
	uint8_t pad;
	double score;
	double latency_median_us;
	double speedup;
} cuco_summary;

typedef struct cuco_event {
	uint64_t seq;        /* monotonic from 1 */
	double time;
	char kind[24];       /* candidate, status, best, pin, reject, edit, hint,
	                        pause, resume, run-start, run-end, error, … */
	uint64_t candidate;  /* 0 when about none */
	char author[32];     /* "engine", "tuner", or user@host for a person */
	char text[512];
} cuco_event;

typedef enum cuco_command_kind {
	CUCO_CMD_PIN, CUCO_CMD_UNPIN, CUCO_CMD_REJECT, CUCO_CMD_EDIT,
	CUCO_CMD_HINT, CUCO_CMD_PAUSE, CUCO_CMD_RESUME, CUCO_CMD_STOP,
	CUCO_CMD_COUNT
} cuco_command_kind;
const char *cuco_command_name(cuco_command_kind k);
int cuco_command_parse(const char *name, cuco_command_kind *out);

/* A human action queued for the engine, acknowledged when applied. */
typedef struct cuco_command {
	uint64_t seq;
	double time;
	cuco_command_kind kind;
	uint64_t candidate;     /* target (pin, reject, edit: the parent) */
	int island;             /* hint: target island, -1 for all */
	char author[32];
	char text[1024];        /* reject reason, hint text */
	char source_hash[CUCO_HASH_LEN + 1];  /* edit: the edited source */
	bool acked;
	double ack_time;
	char ack_result[256];   /* what the engine did, or why it refused */
} cuco_command;

typedef struct cuco_island {
	int id;
	char phase[16];           /* explore | exploit */
	int generation;
	int members;
	uint64_t champion;        /* 0 when none yet */
	double best_score;
	double best_speedup;
	double last_improvement;  /* wall-clock time of the last new champion */
	int migrations;
} cuco_island;

/* AccelOpt optimization memory: a slow→fast pair and its lesson. */
typedef struct cuco_memory {
	uint64_t id;
	char workload[64];
	char slow_hash[CUCO_HASH_LEN + 1];
	char fast_hash[CUCO_HASH_LEN + 1];
	double speedup;
	bool negative;
	char summary[2048];
} cuco_memory;

/* ---- environment ------------------------------------------------------- */

typedef struct cuco_store cuco_store;
typedef struct cuco_txn cuco_txn;

enum {
	CUCO_STORE_CREATE = 1 << 0,  /* create the run directory and store if absent */
	CUCO_STORE_RDONLY = 1 << 1,  /* readers that never write (ls, show) */
};

/* Open RUN/store. Refuses, writing nothing, a directory that holds no store
 * (without CREATE), a file that is not LMDB, an LMDB that is not a cuco
 * store, a schema newer than CUCO_SCHEMA_VERSION, or a corrupt store. */
int cuco_store_open(const char *dir, unsigned flags, cuco_store **out, cuco_err *err);
void cuco_store_close(cuco_store *st);
const char *cuco_store_dir(const cuco_store *st);

int cuco_store_write(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err);
int cuco_store_read(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err);
/* The message of the last failure inside this txn. */
const char *cuco_txn_errmsg(const cuco_txn *txn);
/* Record an error in the txn from a callback's own check; returns code. */
int cuco_txn_fail(cuco_txn *txn, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Bytes of the current map and of the data in it (for bench and doctor). */
void cuco_store_sizes(cuco_store *st, size_t *map_bytes, size_t *used_bytes);

/* ---- inside a transaction ----------------------------------------------- */

/* Insert or replace. id 0 assigns the next id into c->id; c->created is
 * set when 0, c->updated always. Keeps summary and children in step. */
int cuco_cand_put(cuco_txn *txn, cuco_candidate *c);
int cuco_cand_get(cuco_txn *txn, uint64_t id, cuco_candidate *out);
uint64_t cuco_cand_last_id(cuco_txn *txn);  /* 0 when empty */
/* Calls fn for each candidate in id order from id `from`; fn returning
 * non-zero stops the walk and is returned. */
int cuco_cand_each(cuco_txn *txn, uint64_t from,
	int (*fn)(const cuco_candidate *, void *), void *arg);

/* Apply a person's pin, unpin or reject to a candidate's record — the one
 * rule the CLI, the screen and the engine share: a rejected candidate is
 * unpinned and keeps the reason; the baseline (every speedup's reference)
 * cannot be rejected, a rejected candidate cannot be pinned. Returns
 * CUCO_OK when applied; CUCO_EDATA or CUCO_ENOTFOUND when refused, with
 * the reason in why and the txn still usable; another code when the store
 * failed. */
int cuco_cand_mark(cuco_txn *txn, cuco_command_kind kind, uint64_t id, const char *reason,
	char *why, size_t whylen);

/* All summaries in id order; *out is malloc'd. */
int cuco_summary_all(cuco_txn *txn, cuco_summary **out, size_t *n);
int cuco_summary_get(cuco_txn *txn, uint64_t id, cuco_summary *out);
/* Children ids of a candidate, ascending; *out malloc'd (NULL when none). */
int cuco_children(cuco_txn *txn, uint64_t parent, uint64_t **out, size_t *n);
/* The best done, non-rejected candidate by score (ties: lower latency). */
int cuco_best(cuco_txn *txn, cuco_summary *out);

/* Content-addressed text (sources, prompts, replies): deduplicated. */
int cuco_source_put(cuco_txn *txn, const char *text, size_t len, char hash[CUCO_HASH_LEN + 1]);
int cuco_source_get(cuco_txn *txn, const char *hash, char **text, size_t *len);
/* The same in a read transaction of its own, for callers holding none. */
int cuco_source_read(cuco_store *st, const char *hash, char **text, size_t *len, cuco_err *err);
/* The hash cuco_source_put would give, without a transaction. */
void cuco_source_hash(const char *text, size_t len, char hash[CUCO_HASH_LEN + 1]);

int cuco_event_add(cuco_txn *txn, cuco_event *ev);  /* assigns seq and time when 0 */
int cuco_event_each(cuco_txn *txn, uint64_t from_seq,
	int (*fn)(const cuco_event *, void *), void *arg);
uint64_t cuco_event_last_seq(cuco_txn *txn);

int cuco_command_add(cuco_txn *txn, cuco_command *cmd);  /* assigns seq and time */
/* Unacknowledged commands in order. */
int cuco_command_each_pending(cuco_txn *txn,
	int (*fn)(const cuco_command *, void *), void *arg);
/* Every command in order, acknowledged or not. */
int cuco_command_each(cuco_txn *txn, int (*fn)(const cuco_command *, void *), void *arg);
int cuco_command_ack(cuco_txn *txn, uint64_t seq, const char *result);
int cuco_command_get(cuco_txn *txn, uint64_t seq, cuco_command *out);

int cuco_island_put(cuco_txn *txn, const cuco_island *isl);
int cuco_island_get(cuco_txn *txn, int id, cuco_island *out);
int cuco_island_each(cuco_txn *txn, int (*fn)(const cuco_island *, void *), void *arg);

int cuco_memory_add(cuco_txn *txn, cuco_memory *m);  /* assigns id */
int cuco_memory_del(cuco_txn *txn, uint64_t id);
int cuco_memory_each(cuco_txn *txn, int (*fn)(const cuco_memory *, void *), void *arg);

/* meta: string key → JSON text (schema, workload, strategy, config, hardware). */
int cuco_meta_put(cuco_txn *txn, const char *key, const char *json);
int cuco_meta_get(cuco_txn *txn, const char *key, char **json);  /* malloc'd */

/* ---- JSON forms (the record format; also what `--json` prints) ---------- */
struct cJSON;
struct cJSON *cuco_candidate_to_json(const cuco_candidate *c);
int cuco_candidate_from_json(const struct cJSON *j, cuco_candidate *out, cuco_err *err);
struct cJSON *cuco_directive_to_json(const cuco_directive *d);
int cuco_directive_from_json(const struct cJSON *j, cuco_directive *out, cuco_err *err);
/* Directive in short for one-line views: "LSA/warp/interleave/peer/64KiB". */
void cuco_directive_short(const cuco_directive *d, char *buf, size_t size);
const char *cuco_knob_get(const cuco_directive *d, const char *name);  /* NULL if absent */

/* ---- lineage ------------------------------------------------------------ */
/* Order summaries depth-first from the roots (children by id), as a tree
 * view shows them: order[i] indexes into sums, depth[i] is its depth.
 * Both arrays hold n entries; a candidate whose parent is missing is a root. */
void cuco_lineage_order(const cuco_summary *sums, size_t n, size_t *order, int *depth);

#endif
