/* vocab.h — cuco's vocabulary: the records every part speaks of (a
 * candidate, its directive, its timing and failure blocks, an event, a
 * command, a model call, a measurement), every enum of them with its names,
 * and their JSON form (record.c), which is what the store holds, what
 * `--json` prints and what docs/store.md documents.
 *
 * DESIGN: the vocabulary sits under the store and beside the evaluator. It
 * needs cJSON, xxHash and the core, never LMDB: the evaluator speaks of
 * directives, timings and failure classes without linking the store, and
 * the store (store.h, which includes this header) is only persistence. An enum's
 * names live in one X-macro table beside it, read by its name, help and
 * parse functions. */
#ifndef CUCO_VOCAB_H
#define CUCO_VOCAB_H

#include "core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CUCO_HASH_LEN 32      /* hex digits of a content hash (XXH3-128) */
#define CUCO_MAX_PARENTS 2
#define CUCO_MAX_KNOBS 16
#define CUCO_MAX_PHASES 8

/* ---- enums ------------------------------------------------------------- */

/* Where a candidate came from: X(enum, name in records, what it means:
 * the words the screen teaches). */
#define CUCO_ORIGINS(X) \
	X(BASELINE, "baseline", "the host-orchestrated reference every speedup is measured against") \
	X(SEED, "seed", "the correct device-initiated starting point of the search") \
	X(FASTPATH, "fastpath", "written by the fast-path agent from the host baseline") \
	X(LLM_DIFF, "llm-diff", "an LLM edit of its parent (search/replace blocks)") \
	X(LLM_FULL, "llm-full", "an LLM rewrite of the whole program") \
	X(LLM_CROSS, "llm-cross", "an LLM crossover of two parents") \
	X(TUNE, "tune", "the directive tuner changed directive values or knobs (no LLM)") \
	X(HUMAN, "human", "edited by a person in the screen or the CLI") \
	X(BEAM_PLAN, "beam-plan", "AccelOpt's planner/executor wrote it from a plan")

typedef enum cuco_origin {
#define X(e, name, help) CUCO_ORIGIN_##e,
	CUCO_ORIGINS(X)
#undef X
	CUCO_ORIGIN_COUNT
} cuco_origin;

/* Where a candidate's evaluation stands: X(enum, name in records, what it
 * means: the words the screen teaches). */
#define CUCO_STATUSES(X) \
	X(QUEUED, "queued", "waiting for the evaluator") \
	X(COMPILING, "compiling", "being compiled") \
	X(RUNNING, "running", "running once to verify its numbers against the reference") \
	X(BENCHMARKING, "benchmarking", "being timed after warm-up") \
	X(DONE, "done", "evaluated: correct and timed") \
	X(FAILED, "failed", "failed a stage of the cascade (compile, run or bench)") \
	X(REJECTED, "rejected", "rejected by a person, with a reason")

typedef enum cuco_status {
#define X(e, name, help) CUCO_STATUS_##e,
	CUCO_STATUSES(X)
#undef X
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
		"the candidate's fault.") \
	X(SUSPECT, "suspect", "a defence of the evaluator refused it (the reason names which): a " \
		"verdict of its own, work skipped or deferred when unchecked, work left running, host " \
		"calls its directive rules out, a time that cannot be. Never a parent.")

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
const char *cuco_origin_help(cuco_origin o);  /* "" out of range */
const char *cuco_status_name(cuco_status s);  /* "queued", … */
const char *cuco_status_help(cuco_status s);
int cuco_origin_parse(const char *name, cuco_origin *out);  /* CUCO_OK or CUCO_EDATA */
int cuco_status_parse(const char *name, cuco_status *out);

/* ---- records ----------------------------------------------------------- */

struct cuco_candidate;
/* Failed as suspect: refused by one of the evaluator's defences. Such a
 * candidate is never any strategy's parent. */
bool cuco_cand_suspect(const struct cuco_candidate *c);

typedef struct cuco_knob {
	char name[32];
	char value[64];
} cuco_knob;

/* The five directive dimensions, the one table every part reads (the
 * record's JSON, manifests' design spaces, the screen, prompts), in the
 * order every view shows them: X(enum, field of cuco_directive, short name
 * for narrow views, what it means — the words the screen teaches when a
 * workload gives none). */
#define CUCO_DIRECTIVE_DIMS(X) \
	X(BACKEND, backend, "back", "how bytes move between ranks. GPU: LSA = load/store into a peer's " \
		"memory over NVLink; GIN = the GPU itself issues network puts. CPU: msg = two-sided " \
		"send/recv, rma = one-sided put (GIN's analogue), shm = direct load/store in a shared " \
		"window (LSA's analogue).") \
	X(ISSUER, issuer, "issuer", "who starts each transfer: one thread, a warp, a whole CTA (GPU), or " \
		"one rank thread versus several (CPU). More issuers spread the work but add " \
		"coordination.") \
	X(PLACEMENT, placement, "place", "where communication sits relative to compute: after it, " \
		"interleaved with it chunk by chunk, or prefetched ahead so it overlaps the next step.") \
	X(SYNC, sync, "sync", "the scope of synchronization that makes data visible: a fence over " \
		"everything, per-chunk flags, or a narrower epoch (e.g. PSCW). Narrow scopes wait less.") \
	X(GRANULARITY, granularity, "gran", "the chunk size (or count) the transfer is cut into. Small " \
		"chunks overlap better but pay more per-message overhead.")

typedef enum cuco_dirdim {
#define X(e, field, abbrev, help) CUCO_DIRDIM_##e,
	CUCO_DIRECTIVE_DIMS(X)
#undef X
	CUCO_DIRDIM_COUNT
} cuco_dirdim;

/* The optimization directive a candidate states before its code. */
typedef struct cuco_directive {
	/* One field per dimension: backend (GIN | LSA on GPUs; msg | rma | shm
	 * on CPUs), issuer, placement, sync, granularity (chunk size as text,
	 * "64KiB", "4"). */
#define X(e, field, abbrev, help) char field[32];
	CUCO_DIRECTIVE_DIMS(X)
#undef X
	int nknobs;
	cuco_knob knobs[CUCO_MAX_KNOBS];  /* free knobs: name = value */
} cuco_directive;

const char *cuco_dirdim_name(cuco_dirdim d);  /* "backend", …; "?" out of range */
const char *cuco_dirdim_abbrev(cuco_dirdim d);  /* "gran", … */
const char *cuco_dirdim_help(cuco_dirdim d);
/* The dimension of that name, or -1 (a knob, or nothing). */
int cuco_dirdim_find(const char *name);
/* A directive's value of one dimension ("" when unset). */
const char *cuco_directive_get(const cuco_directive *d, cuco_dirdim dim);
/* Each dimension, then each knob, whose value differs from a to b: the
 * dimensions in the table's order, then b's knobs, then knobs only a has.
 * fn gets the dimension (-1 for a knob), its name and both values ("" when
 * unset); returns how many differ. fn may be NULL (just count). */
int cuco_directive_diff(const cuco_directive *a, const cuco_directive *b,
	void (*fn)(int dim, const char *name, const char *before, const char *after, void *arg),
	void *arg);
/* Value of a directive field or knob by name ("" if unset). */
const char *cuco_directive_value(const cuco_directive *d, const char *name);
/* Set a field or a knob (added when new); CUCO_EDATA when the value or the
 * name is too long or the knobs are full. */
int cuco_directive_set(cuco_directive *d, const char *name, const char *value);

typedef struct cuco_phase {
	char name[24];  /* compute, comm, sync, exposed_comm, host, … */
	double us;
} cuco_phase;

/* What one evaluation timed of a program: the one block the evaluator's
 * outcome and result, a measurement and a candidate carry (a record
 * encodes it once; docs/store.md). Numbers not measured are NAN. */
typedef struct cuco_timing {
	double min_us;            /* latency of the timed repetitions */
	double median_us;
	double p90_us;
	int samples;
	double spread;            /* (max-min)/min of the timed repetitions */
	int nphases;
	cuco_phase phases[CUCO_MAX_PHASES];
	double max_error;         /* numerical error against the reference */
	double peak_fraction;     /* fraction of the hardware peak; NAN if unknown */
	bool host_counted;        /* host_calls was counted (the interposer ran in its ranks) */
	int64_t host_calls;       /* host communication calls its steps made, all ranks */
} cuco_timing;

/* Nothing timed: every number NAN, no samples, no phases, no host calls. */
void cuco_timing_init(cuco_timing *t);
/* What a failed evaluation keeps of t: its host calls (they may be why it
 * failed, docs/workloads.md, "Host calls"), no numbers. */
cuco_timing cuco_timing_failed(const cuco_timing *t);

/* Why an evaluation failed, the same block in the evaluator's result, a
 * measurement and a candidate; all "" unless it failed. */
typedef struct cuco_failure {
	char stage[16];           /* compile | run | bench */
	char error_class[24];     /* a cuco_fail_name */
	char excerpt[2048];       /* tail of the failing stage's output */
} cuco_failure;

/* A failure in one line, as every view writes it (a record's, a
 * measurement's, after "failed at "): "STAGE: CLASS: REASON", the reason
 * the first line of the excerpt, which for a refusal names its defence
 * ("bench: suspect: spot check: …"). */
void cuco_failure_line(const cuco_failure *f, char *buf, size_t size);

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
	cuco_failure failure;     /* the failure in force */
	double score;             /* higher is better; NAN when none */
	cuco_timing timing;       /* the measurement in force */
	double speedup;           /* baseline median / this median, same run; NAN if unknown */
	double speedup_lo;        /* its interval from paired rounds (docs/trust.md); */
	double speedup_hi;        /*   meaningful only when rounds >= 2 */
	double confidence;        /* two-sided coverage of [speedup_lo, speedup_hi] */
	int rounds;               /* measurements behind speedup: 1 = one screening, */
	                          /*   more = paired rounds against the baseline */
	int nratios;              /* those rounds' ratios (baseline / this), in order: */
	double ratios[CUCO_PAIRED_MAX];  /* what a revisit adds to; 0 in a record of an
	                             older cuco, or past CUCO_PAIRED_MAX rounds */
	cuco_verdict verdict;     /* what those rounds said; NONE when only screened */
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

/* A new candidate before its first measurement: queued, no score or
 * speedup, nothing timed (every number null in its record, docs/store.md). */
void cuco_cand_queued(cuco_candidate *c);

/* A candidate's phases as every view shows them (cuco show, the screen,
 * the prompts): no part larger than its whole. A phase is shown at most
 * the median latency; exposed_comm, which harnesses measure as the step's
 * time outside compute, at most comm (the rest of that time is waiting:
 * sync, imbalance, a busy machine; not communication). out[i].us is what
 * is shown, measured[i] (may be NULL) what was measured; returns the
 * count, c->nphases. */
int cuco_phases_view(const cuco_candidate *c, cuco_phase out[CUCO_MAX_PHASES],
	double measured[CUCO_MAX_PHASES]);

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
	uint8_t rounds;      /* the speedup's paired rounds, at most 255: 2 or more, confirmed;
	                        0 or 1, one screening (a store written before this field
	                        reads 0 until the candidate is written again) */
	double score;
	double latency_median_us;
	double speedup;
} cuco_summary;

/* The summary of candidate c, as the store keeps it beside the record. */
void cuco_summary_of(const cuco_candidate *c, cuco_summary *s);

/* The content hash of a text (XXH3-128 in hex): a source's key in the
 * store, and how a text is known without one. */
void cuco_source_hash(const char *text, size_t len, char hash[CUCO_HASH_LEN + 1]);

/* The kinds of event in the run's log, the one list every writer and
 * reader of events takes: X(enum, name in records, what it says). Writers
 * set the enum (cuco_event_add stores the name); readers switch on it. A
 * name not listed (an older or a newer cuco's) reads as
 * CUCO_EVENT_UNKNOWN, its name kept. docs/store.md lists them, and
 * tests/store/test_store.c checks the two lists agree. A person's
 * commands (cuco_command_kind) log under their own names. */
#define CUCO_EVENT_KINDS(X) \
	X(RUN_START, "run-start", "a session began; its seq names the session (measurements' " \
		"session, meta confirmation)") \
	X(RUN_END, "run-end", "a session ended; the text starts with why (finished, budget " \
		"reached, stopped, error)") \
	X(CANDIDATE, "candidate", "a strategy's proposal was stored, queued to be evaluated") \
	X(BASELINE, "baseline", "the baseline was measured (first, or again in a later session)") \
	X(STATUS, "status", "a candidate's screening ended: its time and speedup, or its failure") \
	X(RETIME, "retime", "the session's confirmation began: the best screens timed again in " \
		"paired rounds") \
	X(CONFIRM, "confirm", "a contender's confirmation ended: its rounds, or why it has no verdict") \
	X(BEST, "best", "a candidate was crowned the run's best") \
	X(REVISIT, "revisit", "a crown, measured again, holds") \
	X(LAPSE, "lapse", "a crown, measured again, lapsed: no longer the best") \
	X(NOISE, "noise", "the machine was found noisy: confirmations take more rounds (meta " \
		"noise says why)") \
	X(SLOT, "slot", "a slot (docs/cluster.md) changed state: resting, retired, back") \
	X(MODEL_ERROR, "model-error", "model calls failed in a row") \
	X(MODEL_DOWN, "model-down", "no model has answered for a while: the run waits") \
	X(MODEL_BACK, "model-back", "a model answers again: the run goes on") \
	X(REFUSAL, "refusal", "a model's proposal was refused: no candidate came of it") \
	X(PIN, "pin", "a person pinned a candidate (queued, then applied by the engine)") \
	X(UNPIN, "unpin", "a person unpinned a candidate") \
	X(REJECT, "reject", "a person rejected a candidate") \
	X(UNREJECT, "unreject", "a person took a rejection back") \
	X(EDIT, "edit", "a person's edit of a candidate: asked, then stored as a candidate") \
	X(HINT, "hint", "a person's hint for the strategy's prompts") \
	X(PAUSE, "pause", "a person paused the run") \
	X(RESUME, "resume", "a person resumed the run") \
	X(STOP, "stop", "a person stopped the run") \
	X(EXPORT, "export", "a person wrote a candidate's source to a file from the screen") \
	X(PHASE, "phase", "evolve: an island changed phase") \
	X(MIGRATE, "migrate", "evolve: programs migrated between islands") \
	X(META, "meta", "evolve: the meta-prompt summarizer wrote new advice") \
	X(MEMORY, "memory", "beam: an iteration closed, its lessons kept in the memory") \
	X(FASTPATH, "fastpath", "the fast path ended: the candidate it made, or why none") \
	X(PROMPT, "prompt", "the fast path: a stage's prompt and its sizes")

typedef enum cuco_event_kind {
	CUCO_EVENT_UNKNOWN,   /* read from a record: a name not in the table */
#define X(e, name, help) CUCO_EVENT_##e,
	CUCO_EVENT_KINDS(X)
#undef X
	CUCO_EVENT_KIND_COUNT
} cuco_event_kind;
const char *cuco_event_kind_name(cuco_event_kind k);  /* "unknown" for UNKNOWN */
const char *cuco_event_kind_help(cuco_event_kind k);
cuco_event_kind cuco_event_kind_of(const char *name);  /* CUCO_EVENT_UNKNOWN if not listed */

typedef struct cuco_event {
	uint64_t seq;        /* monotonic from 1 */
	double time;
	cuco_event_kind kind;
	char name[24];       /* the kind's name as stored: what the log shows */
	uint64_t candidate;  /* 0 when about none */
	char author[32];     /* "engine", "tuner", or user@host for a person */
	char text[512];
} cuco_event;

/* What a person may ask of a run: X(enum, name in records, done: how the
 * CLI, the screen and the engine's acknowledgement say it happened). */
#define CUCO_COMMAND_KINDS(X) \
	X(PIN, "pin", "pinned") X(UNPIN, "unpin", "unpinned") X(REJECT, "reject", "rejected") \
	X(UNREJECT, "unreject", "un-rejected") X(EDIT, "edit", "edited") X(HINT, "hint", "hinted") \
	X(PAUSE, "pause", "paused") X(RESUME, "resume", "resumed") X(STOP, "stop", "stopped")

typedef enum cuco_command_kind {
#define X(e, name, past) CUCO_CMD_##e,
	CUCO_COMMAND_KINDS(X)
#undef X
	CUCO_CMD_COUNT
} cuco_command_kind;
const char *cuco_command_name(cuco_command_kind k);
const char *cuco_command_past(cuco_command_kind k);  /* "pinned", …; "?" out of range */
cuco_event_kind cuco_command_event(cuco_command_kind k);  /* the kind it logs under */
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
	bool next_session;      /* pause, hint: taken while no session drove the run,
	                           kept on purpose for the next one; a pause, resume or
	                           stop without it that a session finds left from
	                           before it is dropped (cuco_command_drop_stale) */
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

/* A model call, every one a run makes, whether its reply was used or not:
 * X(enum, name in records, what the call was for). */
#define CUCO_CALL_KINDS(X) \
	X(PROPOSE, "propose", "an island's child: a diff, a full rewrite or a crossover") \
	X(FIX, "fix", "a fix of a failed candidate, for an island with no correct one") \
	X(FASTPATH_A, "fastpath-a", "the fast path's stage A: device infrastructure") \
	X(FASTPATH_B, "fastpath-b", "the fast path's stage B: device-initiated communication") \
	X(PLANNER, "planner", "a beam program's plan") \
	X(EXECUTOR, "executor", "a plan implemented as an edit") \
	X(SUMMARIZER, "summarizer", "a slow-fast pair turned into a lesson") \
	X(META, "meta", "recommendations from the recent candidates") \
	X(REPAIR, "repair", "a failed candidate mended, told its first error")

typedef enum cuco_call_kind {
#define X(e, name, help) CUCO_CALL_##e,
	CUCO_CALL_KINDS(X)
#undef X
	CUCO_CALL_KIND_COUNT
} cuco_call_kind;

/* What became of a call's reply: X(enum, name in records). USED: the
 * reply made a candidate, a plan, a lesson, …; REFUSED: it was read and
 * refused (reason says why); FAILED: no reply, the server failed or could
 * not be reached; CANCELLED: stopped mid-call, the run was stopped,
 * paused or out of budget. */
#define CUCO_CALL_OUTCOMES(X) \
	X(USED, "used") X(REFUSED, "refused") X(FAILED, "failed") X(CANCELLED, "cancelled")

typedef enum cuco_call_outcome {
#define X(e, name) CUCO_CALL_##e,
	CUCO_CALL_OUTCOMES(X)
#undef X
	CUCO_CALL_OUTCOME_COUNT
} cuco_call_outcome;

const char *cuco_call_kind_name(cuco_call_kind k);   /* "planner", …; "?" out of range */
const char *cuco_call_outcome_name(cuco_call_outcome o);  /* "used", … */

typedef struct cuco_call {
	uint64_t id;              /* monotonic from 1 */
	double time;              /* wall-clock seconds when it ended */
	double seconds;           /* how long it took, retries included */
	cuco_call_kind kind;
	cuco_call_outcome outcome;
	char model[64];           /* the config's name of the model */
	int64_t tokens_in;        /* prompt tokens, cached ones included */
	int64_t tokens_cached;    /* of those, read from the provider's cache */
	int64_t tokens_out;
	bool estimated;           /* the server gave no usage: counted from the text */
	double cost_usd;
	bool priced;              /* the model's price was known (else cost 0) */
	uint64_t parent;          /* the candidate the call was about; 0 when none */
	uint64_t candidate;       /* the candidate that came of it; 0 when none */
	uint64_t refusal;         /* the refusal record when no candidate came of it */
	char reply_hash[CUCO_HASH_LEN + 1];  /* the reply's text; "" when none */
	char reason[256];         /* why it was refused, failed or cancelled; a used one's:
	                             why its edits were refused, its directive alone used */
} cuco_call;

/* A proposal no candidate came of: the prompt, every reply and every
 * refusal, kept as a candidate's would be. */
typedef struct cuco_refusal {
	uint64_t id;
	double time;
	cuco_call_kind kind;
	uint64_t parent;          /* the candidate it was asked for; 0 when none */
	int island;               /* -1 when none */
	char model[64];
	char prompt_hash[CUCO_HASH_LEN + 1];
	char reply_hash[CUCO_HASH_LEN + 1];  /* the transcript: replies and refusals */
	char reason[512];
} cuco_refusal;

/* Sums over calls. */
typedef struct cuco_call_totals {
	int64_t calls;
	int64_t tokens_in, tokens_cached, tokens_out;
	double cost_usd;
	int64_t estimated;        /* calls whose usage was estimated */
	int64_t unpriced;         /* calls of a model with no known price */
	int64_t refused;          /* calls whose reply was refused */
	int64_t edits_refused;    /* calls used for their directive alone, their edits refused */
} cuco_call_totals;

void cuco_call_totals_add(cuco_call_totals *t, const cuco_call *c);
/* One measurement of a candidate. Every evaluation's result is appended to
 * the candidate's list, never written over an earlier one; the record
 * shows the measurement in force (cuco_measure_add says which that is).
 * Numbers not measured are NAN. */
typedef struct cuco_measurement {
	uint64_t candidate;
	uint32_t seq;             /* 1, 2, … within the candidate; set by cuco_measure_add */
	uint64_t session;         /* the session that took it: its run-start event's seq */
	double time;              /* wall-clock seconds; 0 asks cuco_measure_add for now */
	char kind[16];            /* the taker's word: measure, baseline, rebench, … */
	bool ok;                  /* passed every stage */
	cuco_failure failure;     /* when !ok */
	cuco_timing timing;       /* when ok; its host calls either way */
	double baseline_us;       /* the baseline median its speedup is against */
	double speedup;
	double score;
	char slot[64];            /* the slot it ran on (docs/cluster.md); "" unknown */
} cuco_measurement;

/* A measurement with every number NAN and nothing else set. */
void cuco_measurement_init(cuco_measurement *m, uint64_t candidate, const char *kind);
/* A measurement in one line, as `cuco show` and the screen list them:
 * "session S KIND  MEDIAN us  SPEEDUPx", or "session S KIND  failed at "
 * and its failure line (cuco_failure_line: a refusal's reason whole). */
void cuco_measurement_line(const cuco_measurement *m, char *buf, size_t size);

/* ---- reading the records ------------------------------------------------
 * The run's records as one read sees them, in one snapshot: a read
 * transaction of the store's (cuco_store_view, store.h), or records a
 * caller holds. The parts above the store read through it and never see
 * LMDB; a test hands them a reader of its own. Each function returns
 * CUCO_OK, CUCO_ENOTFOUND when the record is not there, or another code;
 * a walk calls fn in id order from `from` until fn returns nonzero, which
 * it returns. A reader's user that refuses on a check of its own says why
 * in err (cuco_errf) and returns the code. A reader made for one user may
 * leave NULL what that user never reads. */
typedef struct cuco_reader {
	void *ctx;
	cuco_err *err;
	int (*candidate)(void *ctx, uint64_t id, cuco_candidate *out);
	int (*candidates)(void *ctx, uint64_t from, int (*fn)(const cuco_candidate *, void *),
		void *arg);
	/* Every candidate's summary in id order; *out malloc'd. */
	int (*summaries)(void *ctx, cuco_summary **out, size_t *n);
	/* A text by its hash; *text malloc'd. */
	int (*source)(void *ctx, const char *hash, char **text, size_t *len);
	int (*memories)(void *ctx, int (*fn)(const cuco_memory *, void *), void *arg);
	/* The events from seq `from` on. */
	int (*events)(void *ctx, uint64_t from, int (*fn)(const cuco_event *, void *), void *arg);
	/* Every model call of the run, summed (cuco_call_sum, store.h). */
	int (*calls)(void *ctx, cuco_call_totals *out);
} cuco_reader;

/* ---- JSON forms (the record format; also what `--json` prints) ---------- */
struct cJSON;
struct cJSON *cuco_candidate_to_json(const cuco_candidate *c);
int cuco_candidate_from_json(const struct cJSON *j, cuco_candidate *out, cuco_err *err);
struct cJSON *cuco_call_to_json(const cuco_call *c);
struct cJSON *cuco_refusal_to_json(const cuco_refusal *r);
struct cJSON *cuco_measurement_to_json(const cuco_measurement *m);
struct cJSON *cuco_directive_to_json(const cuco_directive *d);
int cuco_directive_from_json(const struct cJSON *j, cuco_directive *out, cuco_err *err);
/* Directive in short for one-line views: "LSA/warp/interleave/peer/64KiB". */
void cuco_directive_short(const cuco_directive *d, char *buf, size_t size);

/* The other records' forms, as the store's tables hold them. */
struct cJSON *cuco_event_to_json(const cuco_event *ev);
int cuco_event_from_json(const struct cJSON *j, cuco_event *ev);
struct cJSON *cuco_command_to_json(const cuco_command *c);
int cuco_command_from_json(const struct cJSON *j, cuco_command *c);
struct cJSON *cuco_island_to_json(const cuco_island *isl);
int cuco_island_from_json(const struct cJSON *j, cuco_island *isl);
struct cJSON *cuco_memory_to_json(const cuco_memory *m);
int cuco_memory_from_json(const struct cJSON *j, cuco_memory *m);
int cuco_call_from_json(const struct cJSON *j, cuco_call *c);
int cuco_refusal_from_json(const struct cJSON *j, cuco_refusal *r);
int cuco_measurement_from_json(const struct cJSON *j, cuco_measurement *m, cuco_err *err);

#endif
