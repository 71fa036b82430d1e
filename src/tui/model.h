/* model.h — what the screen knows of the store: a snapshot of summaries in
 * lineage order, islands, recent events, the run's state and totals, plus
 * the tree's folds, filters, sort and search. Reloaded (in one short read
 * transaction) only when the store's last event sequence moved. No curses
 * here: every figure a pane shows is read here, so a new field of the
 * store reaches the screen through one place. */
#ifndef CUCO_TUI_MODEL_H
#define CUCO_TUI_MODEL_H

#include "core.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

#define TUI_LOG_KEEP 256   /* events the log pane keeps */
#define TUI_MAX_ISLANDS 64
#define TUI_TREE_LEVELS 32 /* tree lines kept per row; deeper levels draw blank */

typedef struct tui_filter {
	int island;            /* -2: any */
	int status;            /* -1: any, else a cuco_status */
	int origin;            /* -1: any, else a cuco_origin */
} tui_filter;

/* The tree's order: lineage (a tree), or a flat list sorted by a figure. */
#define TUI_SORTS(X) \
	X(LINEAGE, "lineage") \
	X(SPEEDUP, "speedup") \
	X(LATENCY, "latency") \
	X(NEWEST,  "newest")

typedef enum tui_sort {
#define X(e, name) TUI_SORT_##e,
	TUI_SORTS(X)
#undef X
	TUI_SORT_COUNT
} tui_sort;
const char *tui_sort_name(tui_sort s);

/* Where the run stands, from its events (and, for a viewer in another
 * process, whether the session that drove it is still alive). */
typedef enum tui_run_state {
	TUI_RUN_SEARCHING,
	TUI_RUN_PAUSED,
	TUI_RUN_RETIMING,      /* the end-of-run paired re-timing of the best few */
	TUI_RUN_FINISHED,      /* run-end: time limit, budget, design space exhausted */
	TUI_RUN_STOPPED,       /* run-end after a stop or an error, or the engine is gone */
} tui_run_state;

typedef struct tui_model {
	cuco_summary *sums;    /* id order */
	size_t n;
	size_t *order;         /* lineage order: indexes into sums */
	int *depth;            /* by sums index */
	size_t *pos;           /* by sums index: its place in order */
	uint32_t *lines;       /* by sums index: bit k set = draw a vertical line at
	                          tree level k (an ancestor has siblings below);
	                          bit 31 = it is its parent's last child */
	uint8_t *folded;       /* by sums index: subtree hidden */
	uint8_t *match;        /* by sums index: matches the search */
	size_t *rows;          /* visible rows: indexes into sums */
	size_t nrows;
	tui_filter filter;
	tui_sort sort;

	char search[128];      /* "" when none */
	size_t nmatch;         /* candidates shown that match it, among those examined */
	size_t searched;       /* sums[0..searched) examined: a search runs a chunk a turn */

	cuco_island islands[TUI_MAX_ISLANDS];
	int nislands;

	cuco_event log[TUI_LOG_KEEP];  /* ring, oldest first from log_start */
	int log_start, log_count;
	uint64_t last_seq;

	int count[CUCO_STATUS_COUNT];
	int origin_count[CUCO_ORIGIN_COUNT];
	uint64_t best_id, baseline_id;
	double best_speedup, best_lo, best_hi;  /* the crowned best's interval */
	int best_rounds;

	tui_run_state state;
	bool paused;           /* the last pause/resume event was a pause */
	bool noisy;            /* the run found the machine noisy (docs/trust.md) */
	bool in_process;       /* the engine runs in this process */
	double started;        /* the session's run-start (else the first event) */
	double ended;          /* run-end's time: the clock stops there; 0 while running */
	char end_text[128];    /* run-end's words: "budget reached after 40 …" */
	bool model_down;       /* the last model-down/model-back event was a model-down */

	/* Tokens and cost as cuco report counts them (store.h, cuco_call_sum):
	 * every model call's, refused ones too; a run from before call records,
	 * its candidates'. Summed a chunk at a time so a large store does not
	 * delay the first frame. */
	int64_t tokens;
	double cost_usd;
	cuco_call_totals calls;
	uint64_t calls_upto, calls_last;  /* calls with ids <= calls_upto are summed */
	int64_t cand_tokens;
	double cand_cost_usd;
	uint64_t summed_upto;  /* candidates with ids <= this are summed */

	/* From meta: names for the status line, help for dimensions. */
	char workload[64];
	char strategy[64];
	bool hints;            /* the strategy reads hints (its prompts carry them) */
	double budget_usd;     /* 0: none stated */
	int64_t budget_tokens;
	char dim_help[CUCO_DIRDIM_COUNT][256];  /* "" when the workload gives none */
	char slots[64];        /* "slots 1/2 busy, 1 resting", "" with one slot */
	char run_dir[1024];
} tui_model;

void tui_model_init(tui_model *m, bool in_process);
void tui_model_free(tui_model *m);
/* Reload everything from the store when its last event moved (or force).
 * *changed says whether anything was reloaded. */
int tui_model_refresh(tui_model *m, cuco_store *st, bool force, bool *changed, cuco_err *err);
/* A viewer in another process: mark the run stopped when the session that
 * drove it died without a run-end (killed). Cheap; call now and then. */
void tui_model_check_engine(tui_model *m);
/* Whether an engine will act on a command now (searching, paused or
 * re-timing, and alive). */
bool tui_model_engine_live(const tui_model *m);
/* The state in a word or two, for the status line: "re-timing", … */
const char *tui_model_state_text(const tui_model *m);
/* Seconds the session has run: up to now, or to run-end once it ended. */
double tui_model_elapsed(const tui_model *m);
/* Add up tokens and cost of up to `budget` more calls and candidates;
 * true while some remain. */
bool tui_model_sum_step(tui_model *m, cuco_store *st, size_t budget);
/* Whether calls or candidates are left to sum (as far as the model knows:
 * a refresh learns of new ones). */
bool tui_model_summing(const tui_model *m);
/* Rebuild the visible rows after a fold, filter or sort change. */
void tui_model_rows(tui_model *m);
/* The next status (or origin) filter value after `from` that some
 * candidate has, cycling through -1 (any). */
int tui_model_next_status(const tui_model *m, int from);
int tui_model_next_origin(const tui_model *m, int from);
/* Set the search (NULL or "" clears it) and mark the matches among the
 * first `budget` candidates: ids, origins, statuses, directives, notes,
 * models and failure classes. Each record is read once, so a large store
 * is searched a chunk at a time (tui_model_search_step, true while some
 * remain) and the screen stays live meanwhile. */
int tui_model_search(tui_model *m, cuco_store *st, const char *needle, size_t budget, cuco_err *err);
bool tui_model_search_step(tui_model *m, cuco_store *st, size_t budget);
/* The visible row after (dir > 0) or before `from` that matches, wrapping;
 * -1 when none. */
long tui_model_next_match(const tui_model *m, size_t from, int dir);
/* Index into sums of an id, or -1. */
long tui_model_find(const tui_model *m, uint64_t id);
/* Visible row of an id, or -1. */
long tui_model_row_of(const tui_model *m, uint64_t id);
bool tui_model_has_children(const tui_model *m, size_t sum_index);
const cuco_event *tui_model_event(const tui_model *m, int i);  /* 0 = oldest kept */

#endif
