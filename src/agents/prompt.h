/* prompt.h — prompts (prompt.c). */
#ifndef CUCO_AGENTS_PROMPT_H
#define CUCO_AGENTS_PROMPT_H

#include "core.h"
#include "eval/eval.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum cuco_prompt_kind {
	CUCO_PROMPT_DIFF,    /* SEARCH/REPLACE edits of the parent */
	CUCO_PROMPT_FULL,    /* a full rewrite */
	CUCO_PROMPT_CROSS,   /* combine the parent with a second parent */
	CUCO_PROMPT_FIX,     /* the island has no correct candidate: make it correct */
} cuco_prompt_kind;

typedef struct cuco_prompt_spec {
	const cuco_workload *wl;
	const cuco_hardware *hw;     /* may be NULL */
	cuco_prompt_kind kind;
	uint64_t parent;             /* candidate ids in the store */
	uint64_t other;              /* CROSS: the second parent */
	int island;                  /* inspirations from this island; -1 any */
	int inspirations;            /* top candidates shown, besides the parent */
	int failures;                /* recent failures shown */
	const char *meta;            /* meta recommendations; may be NULL */
	const char *hints;           /* human hints for this island; may be NULL */
	bool memory;                 /* include the optimization memory */
} cuco_prompt_spec;

/* Build the system and user messages inside a read (or write) txn. */
int cuco_prompt_build(cuco_txn *txn, const cuco_prompt_spec *spec, cuco_buf *system,
	cuco_buf *user);
/* Keep a prompt and its reply (deduplicated) and link them from c. */
int cuco_prompt_keep(cuco_txn *txn, const char *prompt, const char *reply, cuco_candidate *c);

#endif
