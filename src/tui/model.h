/* model.h — what the screen knows of the store: a snapshot of summaries in
 * lineage order, islands, recent events and run totals, plus the tree's
 * folds and filters. Reloaded (in one short read transaction) only when
 * the store's last event sequence moved. No curses here. */
#ifndef CUCO_TUI_MODEL_H
#define CUCO_TUI_MODEL_H

#include "core.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

#define TUI_LOG_KEEP 256   /* events the log pane keeps */
#define TUI_MAX_ISLANDS 64

typedef struct tui_filter {
	int island;            /* -2: any */
	int status;            /* -1: any, else a cuco_status */
	int origin;            /* -1: any, else a cuco_origin */
} tui_filter;

typedef struct tui_model {
	cuco_summary *sums;    /* id order */
	size_t n;
	size_t *order;         /* lineage order: indexes into sums */
	int *depth;            /* by sums index */
	size_t *pos;           /* by sums index: its place in order */
	uint8_t *folded;       /* by sums index: subtree hidden */
	size_t *rows;          /* visible rows: indexes into sums */
	size_t nrows;
	tui_filter filter;

	cuco_island islands[TUI_MAX_ISLANDS];
	int nislands;

	cuco_event log[TUI_LOG_KEEP];  /* ring, oldest first from log_start */
	int log_start, log_count;
	uint64_t last_seq;

	int count[CUCO_STATUS_COUNT];
	uint64_t best_id, baseline_id;
	double best_speedup;
	bool paused;           /* the last pause/resume event was a pause */
	double started;        /* time of the first event */

	/* Tokens and cost, summed over candidates a chunk at a time so a
	 * large store does not delay the first frame. */
	int64_t tokens;
	double cost_usd;
	uint64_t summed_upto;  /* ids <= this are in the totals */

	/* From meta: names for the status line, help for dimensions. */
	char workload[64];
	char strategy[64];
	double budget_usd;     /* 0: none stated */
	int64_t budget_tokens;
	char dim_help[CUCO_DIRDIM_COUNT][256];  /* "" when the workload gives none */
	char slots[64];        /* "slots 1/2 busy, 1 resting", "" with one slot */
} tui_model;

void tui_model_init(tui_model *m);
void tui_model_free(tui_model *m);
/* Reload everything from the store when its last event moved (or force).
 * *changed says whether anything was reloaded. */
int tui_model_refresh(tui_model *m, cuco_store *st, bool force, bool *changed, cuco_err *err);
/* Add up tokens and cost of up to `budget` more candidates; true while
 * some remain. */
bool tui_model_sum_step(tui_model *m, cuco_store *st, size_t budget);
/* Rebuild the visible rows after a fold or filter change. */
void tui_model_rows(tui_model *m);
/* Index into sums of an id, or -1. */
long tui_model_find(const tui_model *m, uint64_t id);
/* Visible row of an id, or -1. */
long tui_model_row_of(const tui_model *m, uint64_t id);
bool tui_model_has_children(const tui_model *m, size_t sum_index);
const cuco_event *tui_model_event(const tui_model *m, int i);  /* 0 = oldest kept */

#endif
