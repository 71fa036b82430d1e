/* store.h — the run's store: one LMDB environment per run directory.
 *
 * The store is the single source of truth and also the bus between the
 * search engine (writer), the screen and the CLI (readers, and writers of
 * commands only). LMDB's MVCC means readers never block the writer, and a
 * second process may open the same run directory while a search runs.
 *
 * Records are JSON (cJSON) so mdb_dump and `cuco show` stay readable: their
 * structs and JSON forms are the vocabulary's (vocab/vocab.h, included
 * here), the fields documented in docs/store.md. Alongside them the store keeps
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

#include "vocab/vocab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CUCO_SCHEMA_VERSION 2   /* 2: measurements appended, never overwritten */
#define CUCO_SCHEMA_OLDEST 1    /* the oldest this cuco reads (and upgrades) */

/* ---- environment ------------------------------------------------------- */

typedef struct cuco_store cuco_store;
typedef struct cuco_txn cuco_txn;

enum {
	CUCO_STORE_CREATE = 1 << 0,  /* create the run directory and store if absent */
	CUCO_STORE_RDONLY = 1 << 1,  /* readers that never write (ls, show) */
};

/* Open RUN/store. Refuses, writing nothing, a directory that holds no store
 * (without CREATE), a file that is not LMDB, an LMDB that is not a cuco
 * store, a schema version outside CUCO_SCHEMA_OLDEST..CUCO_SCHEMA_VERSION, or
 * a truncated or corrupt store (docs/store.md: what is checked, and when);
 * opened for writing, a store of an older schema is upgraded. */
int cuco_store_open(const char *dir, unsigned flags, cuco_store **out, cuco_err *err);
void cuco_store_close(cuco_store *st);
const char *cuco_store_dir(const cuco_store *st);

int cuco_store_write(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err);
int cuco_store_read(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err);
/* Run fn in one read transaction, the records given through the
 * vocabulary's reader (vocab.h): for the parts above the store, which read
 * without seeing LMDB. What fn refuses (its code, the reader's err) is
 * handed back as a callback's is. */
int cuco_store_view(cuco_store *st, int (*fn)(const cuco_reader *, void *), void *arg,
	cuco_err *err);
/* Record an error in the txn from a callback's own check; returns code. */
int cuco_txn_fail(cuco_txn *txn, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Bytes of the current map and of the data in it (for bench and doctor). */
void cuco_store_sizes(cuco_store *st, size_t *map_bytes, size_t *used_bytes);

/* ---- inside a transaction ----------------------------------------------- */

/* Insert or replace. id 0 assigns the next id into c->id; c->created is
 * set when 0, c->updated always. Keeps summary and children in step. A
 * done record's status never goes back: it may only be rejected
 * (CUCO_EDATA otherwise; measurements go through cuco_measure_add). */
int cuco_cand_put(cuco_txn *txn, cuco_candidate *c);
int cuco_cand_get(cuco_txn *txn, uint64_t id, cuco_candidate *out);
uint64_t cuco_cand_last_id(cuco_txn *txn);  /* 0 when empty */
/* Calls fn for each candidate in id order from id `from`; fn returning
 * non-zero stops the walk and is returned. */
int cuco_cand_each(cuco_txn *txn, uint64_t from,
	int (*fn)(const cuco_candidate *, void *), void *arg);

/* ---- a person's actions (action.c) ------------------------------------------
 * The one set of rules for what a person does, shared by the screen, the
 * CLI and the engine:
 *   pin       not a rejected candidate;
 *   unpin     any candidate;
 *   reject    not the baseline (every speedup's reference); unpins, keeps
 *             the reason (which may be empty);
 *   unreject  gives back the status its record reached (done, failed, or
 *             queued to be evaluated); a candidate not rejected is left as is;
 *   edit      the parent and the edited source (stored first) must exist, and
 *             not be a candidate already under the parent's directive (the
 *             same edit saved twice, as a model's reply that reproduces a
 *             candidate is refused);
 *   hint      a text, for island N or every island (-1);
 *   pause, resume, stop: about the run, always accepted.
 * Marks (pin, unpin, reject, unreject) change the candidate's record; each
 * is idempotent, so the engine applying a queued mark again changes nothing. */

/* Check cmd against the rules and apply a mark to the record. CUCO_OK when
 * accepted (*out, when given, is the candidate after it); CUCO_EDATA or
 * CUCO_ENOTFOUND when refused, with the reason in why and the txn still
 * usable (the engine acknowledges the refusal); another code when the
 * store failed. */
int cuco_action_apply(cuco_txn *txn, const cuco_command *cmd, cuco_candidate *out, char *why,
	size_t whylen);
/* A person's action from the screen or the CLI, in one transaction:
 * cuco_action_apply, then the command queued for the engine (cmd->seq and
 * time are set) and an event of the command's kind naming cmd->author.
 * A refusal is CUCO_EDATA with the reason as the txn's error. */
int cuco_person_act(cuco_txn *txn, cuco_command *cmd);
/* What a session does first, holding the run's lock: a pause, resume or
 * stop left pending from before it (sent to a session that ended before
 * applying it) was never meant for this one, and is acknowledged as
 * dropped, with an event; one kept on purpose (next_session) stays for
 * the engine to apply. *dropped (may be NULL) counts them. */
int cuco_command_drop_stale(cuco_txn *txn, int *dropped);

/* Append a measurement to candidate m->candidate (assigning m->seq and,
 * when 0, m->time) and apply the one rule of measurements: an ok one is in
 * force (the record takes its numbers, speedup and score, and is done
 * unless rejected). A failed one of the baseline, or one the environment
 * failed, leaves a record that has a measurement in force as it is (the
 * earlier one stays in force) and marks one that has none failed; any
 * other failure is the program's own and in force (the record failed, its
 * numbers none, unless rejected), whatever passed before. out (may be
 * NULL) receives the record as written. */
int cuco_measure_add(cuco_txn *txn, cuco_measurement *m, cuco_candidate *out);
/* Calls fn for each measurement of a candidate, oldest first (candidate
 * 0: every candidate's, in id order); fn returning non-zero stops the walk
 * and is returned. */
int cuco_measure_each(cuco_txn *txn, uint64_t candidate,
	int (*fn)(const cuco_measurement *, void *), void *arg);
/* How many measurements a candidate has. */
int cuco_measure_count(cuco_txn *txn, uint64_t candidate, uint32_t *n);

/* All summaries in id order; *out is malloc'd. */
int cuco_summary_all(cuco_txn *txn, cuco_summary **out, size_t *n);
int cuco_summary_get(cuco_txn *txn, uint64_t id, cuco_summary *out);
/* Children ids of a candidate, ascending; *out malloc'd (NULL when none). */
int cuco_children(cuco_txn *txn, uint64_t parent, uint64_t **out, size_t *n);
/* The run's best. Once the engine has started a chain of crowns (meta
 * "best", docs/trust.md): the latest crowned candidate that is done, not
 * rejected and whose crown has not lapsed, else the baseline. In a store
 * without the chain (written by an older cuco, or by no engine): the best
 * done, non-rejected candidate by score (ties: lower id). */
int cuco_best(cuco_txn *txn, cuco_summary *out);
/* Append id to the chain of crowns (crown.c); the baseline starts the
 * chain (another baseline starts it again), so that from then on nothing
 * is the best without being crowned. A crown that lapsed is refused. */
int cuco_crown(cuco_txn *txn, uint64_t id);

/* A crown looked at again (docs/trust.md, "Verdicts"): measured again in
 * later paired rounds, or refused or failing there. lapsed: it is no
 * longer the best, and never crowned again; why: what was found, one line. */
typedef struct cuco_revisit {
	uint64_t id;
	bool lapsed;
	char why[448];
} cuco_revisit;
/* Keep a revisit of a crowned candidate with the chain (a candidate never
 * crowned is refused). */
int cuco_crown_revisit(cuco_txn *txn, const cuco_revisit *r);
/* The revisits of the chain, oldest first; *out malloc'd (NULL when none). */
int cuco_crown_revisits(cuco_txn *txn, cuco_revisit **out, size_t *n);

/* How a session's end-of-run confirmation ended (docs/trust.md):
 * X(enum, name in meta "confirmation", what it means). */
#define CUCO_CONFIRM_STATES(X) \
	X(DONE, "done", "the contenders were confirmed") \
	X(STOPPED, "stopped", "stopped before confirmation; run the same command to confirm") \
	X(ERROR, "error", "the run ended with an error before confirmation; run the same command, " \
		"once it is fixed, to confirm") \
	X(OFF, "off", "--rebench 0: nothing is confirmed; run the same command with --rebench N " \
		"to confirm")

typedef enum cuco_confirm_state {
#define X(e, name, help) CUCO_CONFIRM_##e,
	CUCO_CONFIRM_STATES(X)
#undef X
	CUCO_CONFIRM_STATE_COUNT
} cuco_confirm_state;
const char *cuco_confirm_state_name(cuco_confirm_state s);
const char *cuco_confirm_state_help(cuco_confirm_state s);

#define CUCO_UNJUDGED_MAX 16  /* contenders without a verdict kept, each with why */

/* A session's confirmation (meta "confirmation"): written by the engine as
 * the session ends, read by `cuco run`'s summary and `cuco report`. */
typedef struct cuco_confirmation {
	uint64_t session;        /* its run-start event's seq */
	cuco_confirm_state state;
	int contenders;          /* confirmations started */
	int judged;              /* of them, ended with a verdict */
	int crowned;             /* of them, crowned */
	int nunjudged;           /* ended without a verdict, and why (not a stop) */
	struct { uint64_t id; char why[448]; } unjudged[CUCO_UNJUDGED_MAX];
} cuco_confirmation;
int cuco_confirmation_put(cuco_txn *txn, const cuco_confirmation *c);
/* CUCO_ENOTFOUND when no session of this cuco has ended. */
int cuco_confirmation_get(cuco_txn *txn, cuco_confirmation *c);

/* Content-addressed text (sources, prompts, replies): deduplicated. */
int cuco_source_put(cuco_txn *txn, const char *text, size_t len, char hash[CUCO_HASH_LEN + 1]);
/* Keep a prompt and its reply (deduplicated) and link them from c. */
int cuco_source_keep(cuco_txn *txn, const char *prompt, const char *reply, cuco_candidate *c);
int cuco_source_get(cuco_txn *txn, const char *hash, char **text, size_t *len);
/* The same in a read transaction of its own, for callers holding none. */
int cuco_source_read(cuco_store *st, const char *hash, char **text, size_t *len, cuco_err *err);

/* Stores an event of ev->kind (CUCO_EVENT_UNKNOWN is refused), setting its
 * name from the table; assigns seq, and time when 0. */
int cuco_event_add(cuco_txn *txn, cuco_event *ev);
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

int cuco_call_add(cuco_txn *txn, cuco_call *c);  /* assigns id; time when 0 */
int cuco_call_each(cuco_txn *txn, uint64_t from, int (*fn)(const cuco_call *, void *), void *arg);
uint64_t cuco_call_last_id(cuco_txn *txn);  /* 0 when none */
/* Every call of the run, summed: its tokens and cost as every view counts
 * them (cuco report, the screen's header, --max-tokens and --max-cost),
 * refused, failed and cancelled calls included. A run from before call
 * records has none; its views count its candidates' tokens instead. */
int cuco_call_sum(cuco_txn *txn, cuco_call_totals *out);
int cuco_refusal_add(cuco_txn *txn, cuco_refusal *r);  /* assigns id; time when 0 */
int cuco_refusal_get(cuco_txn *txn, uint64_t id, cuco_refusal *out);
int cuco_refusal_each(cuco_txn *txn, int (*fn)(const cuco_refusal *, void *), void *arg);

/* meta: string key → JSON text (schema, workload, strategy, config, hardware). */
int cuco_meta_put(cuco_txn *txn, const char *key, const char *json);
int cuco_meta_get(cuco_txn *txn, const char *key, char **json);  /* malloc'd */

/* ---- meta records (meta.c) -----------------------------------------------
 * The meta records the views read, each a struct with one encoder (its
 * writer's) and one decoder (every reader's). A get returns CUCO_ENOTFOUND
 * for an absent record, leaving the defaults; a record that does not
 * parse, or an older cuco's, reads as far as it goes. meta "best" and
 * "confirmation" are crown.c's; "workload", "config", "hardware" and
 * "peak" are whole documents their own modules write (cuco_meta_put),
 * of which these decoders read what the views show. */

/* meta "strategy": {"name", "hints"} (an older run kept a bare string). */
typedef struct cuco_meta_strategy {
	char name[64];
	bool hints;            /* a hint reaches its prompts; true when the run does not say */
} cuco_meta_strategy;
int cuco_meta_strategy_put(cuco_txn *txn, const cuco_meta_strategy *s);
int cuco_meta_strategy_get(cuco_txn *txn, cuco_meta_strategy *s);

/* meta "workload": its name (the record, or a bare string) and its own
 * words for the directive's dimensions (design_space.DIM.help). */
typedef struct cuco_meta_workload {
	char name[128];
	char dim_help[CUCO_DIRDIM_COUNT][256];  /* "" when the workload gives none */
} cuco_meta_workload;
int cuco_meta_workload_get(cuco_txn *txn, cuco_meta_workload *w);

/* meta "config": the run's budgets (0: none stated). */
typedef struct cuco_meta_config {
	double budget_usd;
	int64_t budget_tokens;
} cuco_meta_config;
int cuco_meta_config_get(cuco_txn *txn, cuco_meta_config *c);

/* meta "noise": {"reason"}, why the run found the machine noisy. */
int cuco_meta_noise_put(cuco_txn *txn, const char *reason);
int cuco_meta_noise_get(cuco_txn *txn, char *reason, size_t size);

/* meta "slots": every slot's state as the engine last wrote it
 * (docs/cluster.md): {"slots": [{name, state, failures, holds,
 * baseline_us}], "idle", "busy", "resting", "retired"} (counts). */
#define CUCO_META_SLOTS 64
typedef struct cuco_meta_slot {
	char name[64];
	char state[16];        /* idle, busy, resting, retired */
	int failures, holds;
	double baseline_us;    /* NAN when none: not written */
} cuco_meta_slot;
typedef struct cuco_meta_slots {
	int nslots;
	cuco_meta_slot slot[CUCO_META_SLOTS];
	int idle, busy, resting, retired;
} cuco_meta_slots;
int cuco_meta_slots_put(cuco_txn *txn, const cuco_meta_slots *s);
int cuco_meta_slots_get(cuco_txn *txn, cuco_meta_slots *s);

/* The JSON form of a confirmation, as meta keeps it. */
struct cJSON *cuco_confirmation_to_json(const cuco_confirmation *c);

/* ---- lineage ------------------------------------------------------------ */
/* Order summaries depth-first from the roots (children by id), as a tree
 * view shows them: order[i] indexes into sums, depth[i] is its depth.
 * Both arrays hold n entries; a candidate whose parent is missing is a root. */
void cuco_lineage_order(const cuco_summary *sums, size_t n, size_t *order, int *depth);

#endif
