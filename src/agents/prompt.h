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
	struct cuco_prompt_map *map; /* out: the parts that may be cut (below); may be NULL */
} cuco_prompt_spec;

/* Build the system and user messages inside a read (or write) txn. */
int cuco_prompt_build(cuco_txn *txn, const cuco_prompt_spec *spec, cuco_buf *system,
	cuco_buf *user);

/* ---- fitting a prompt to a model's context --------------------------------
 * A builder notes where it wrote each part a prompt can do without; when
 * the prompt is longer than the model's context allows, parts are cut in a
 * fixed order of least use: older failures first, then the extra top
 * programs (the last shown first), the optimization memory, and last the
 * context documents, halved (the longest first) before they go. The
 * parent, the second parent, the directive schema, the reply format and
 * the task are never cut: a prompt that needs more than the context even
 * without every part is an error. */

typedef enum cuco_cut_kind {
	CUCO_CUT_FAILURE,    /* one recent failure */
	CUCO_CUT_TOP,        /* one top program besides the parent */
	CUCO_CUT_MEMORY,     /* one lesson of the optimization memory */
	CUCO_CUT_DOCUMENT,   /* one context document: halved, then dropped */
	CUCO_CUT_KINDS
} cuco_cut_kind;

#define CUCO_PROMPT_CUTS 48

typedef struct cuco_prompt_map {
	struct cuco_cut {
		cuco_cut_kind kind;
		bool user;           /* in the user message, else the system message */
		size_t start, end;   /* bytes of that message */
	} cuts[CUCO_PROMPT_CUTS];
	int ncuts;
} cuco_prompt_map;

/* Note that b[start, b->len) may be cut (a full map keeps what it has). */
void cuco_prompt_mark(cuco_prompt_map *map, cuco_cut_kind kind, bool user, const cuco_buf *b,
	size_t start);
/* The workload's context documents under `## NAME` headers, each up to
 * 24 KiB, marked as documents. CUCO_EENV when one cannot be read. */
int cuco_prompt_put_documents(cuco_buf *b, const cuco_workload *wl, cuco_prompt_map *map,
	cuco_err *err);

/* Bytes per token when fitting: lower than any tokenizer gives for code
 * and prose (2.9 for Gemma 3 on cuco's prompts), so the first request
 * rarely overshoots; a server that says the real count corrects it. */
#define CUCO_BYTES_PER_TOKEN 2.6

typedef struct cuco_fit {
	int64_t context;        /* the model's window in tokens; 0: nothing is fitted */
	int max_tokens;         /* the model's completion limit */
	double bytes_per_token; /* 0: CUCO_BYTES_PER_TOKEN */
	size_t extra;           /* bytes of the conversation after the first user message */
} cuco_fit;

typedef struct cuco_fitted {
	char *system, *user;    /* malloc'd: the messages as they are sent */
	int64_t tokens;         /* the prompt's estimate, extra included */
	int max_tokens;         /* the completion limit to ask for: what the context leaves */
	int cut[CUCO_CUT_KINDS];/* parts cut (documents: times halved or dropped) */
	char note[256];         /* "fitted to N tokens: …", "" when nothing was cut */
} cuco_fitted;

/* Fit system and user (map may be NULL: nothing to cut) into fit's context,
 * leaving the reply max_tokens, or a quarter of the context when that is
 * less. CUCO_EDATA naming the sizes when even the uncuttable parts are too
 * long. */
int cuco_prompt_fit(const char *system, const char *user, const cuco_prompt_map *map,
	const cuco_fit *fit, cuco_fitted *out, cuco_err *err);
void cuco_fitted_free(cuco_fitted *f);
/* Keep a prompt and its reply (deduplicated) and link them from c. */
int cuco_prompt_keep(cuco_txn *txn, const char *prompt, const char *reply, cuco_candidate *c);

#endif
