/* prompt.h — prompts (prompt.c). */
#ifndef CUCO_MODELS_PROMPT_H
#define CUCO_MODELS_PROMPT_H

#include "core.h"
#include "eval/eval.h"
#include "vocab/vocab.h"

#include <stdbool.h>
#include <stdint.h>

/* What a prompt asks for: X(enum, name in `cuco analyze --prompt`, what it
 * asks). */
#define CUCO_PROMPT_KIND_TABLE(X) \
	X(DIFF, "diff", "SEARCH/REPLACE edits of the parent") \
	X(FULL, "full", "a full rewrite") \
	X(CROSS, "cross", "combine the parent with a second parent") \
	X(FIX, "fix", "the island has no correct candidate: make it correct") \
	X(DIRECTIVE, "directive", "a new directive for the parent's code, no code asked for") \
	X(REPAIR, "repair", "the parent failed: mend it, told its first error")

typedef enum cuco_prompt_kind {
#define X(e, name, help) CUCO_PROMPT_##e,
	CUCO_PROMPT_KIND_TABLE(X)
#undef X
	CUCO_PROMPT_KINDS
} cuco_prompt_kind;

/* How much a prompt carries (docs/replies.md, "Prompt profiles"):
 * X(enum, name in `cuco analyze --profile` and the fast path's prompt
 * event, what it carries). */
#define CUCO_PROFILE_TABLE(X) \
	X(FULL, "full", "everything a prompt may carry") \
	X(LEAN, "lean", "for a model whose context is a few thousand tokens: no hardware " \
		"section, context documents or other programs, one recent failure, the parent's " \
		"code as lean.c shows it (the frame's function bodies and the branches other " \
		"directives build summarised), and a rewrite asked for as each EVOLVE-BLOCK's new text")

typedef enum cuco_prompt_profile {
#define X(e, name, help) CUCO_PROFILE_##e,
	CUCO_PROFILE_TABLE(X)
#undef X
	CUCO_PROFILES
} cuco_prompt_profile;

/* The profiles' names as an option's argument, "full|lean", from the table. */
#define CUCO_PROFILE_ARG_X(e, name, help) "|" name
#define CUCO_PROFILE_ARG (CUCO_PROFILE_TABLE(CUCO_PROFILE_ARG_X) + 1)

const char *cuco_prompt_kind_name(cuco_prompt_kind k);        /* "diff", …; "?" out of range */
const char *cuco_prompt_profile_name(cuco_prompt_profile p);  /* "full", "lean" */
/* CUCO_OK, or CUCO_EDATA for a name not in the table. */
int cuco_prompt_profile_parse(const char *name, cuco_prompt_profile *out);

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
	cuco_prompt_profile profile;
	bool json;                   /* the reply comes as structured output's JSON */
	struct cuco_prompt_map *map; /* out: the parts that may be cut (below); may be NULL */
} cuco_prompt_spec;

/* Build the system and user messages from the records r reads (one
 * snapshot: a read transaction of the store's, vocab.h). */
int cuco_prompt_build(const cuco_reader *r, const cuco_prompt_spec *spec, cuco_buf *system,
	cuco_buf *user);

/* What the reply's form shows where a SEARCH and its REPLACE go: a reply
 * that sends it back as its SEARCH is told so (patch.c); one that sends
 * the form's whole edit back has it set aside (reply.c). */
#define CUCO_SEARCH_PLACEHOLDER "lines copied exactly from the current program"
#define CUCO_REPLACE_PLACEHOLDER "the lines that replace them"

/* The workload's forbidden combinations, a line each after a heading;
 * nothing when it has none. */
void cuco_prompt_put_constraints(cuco_buf *b, const cuco_workload *wl);
/* The reply's skeleton that ends every prompt: the directive d filled in,
 * then the form the kind asks for, as text or (json) as the JSON object;
 * nblocks: the parent's EVOLVE-BLOCKs, for a lean rewrite. */
void cuco_prompt_put_skeleton(cuco_buf *b, const cuco_workload *wl, const cuco_directive *d,
	cuco_prompt_kind kind, cuco_prompt_profile profile, int nblocks, bool json);
/* The JSON schema of a reply to a prompt of that kind and profile (malloc'd
 * JSON text), for a server's structured output: the directive as an
 * object of the design space's values, then the edits (search/replace, or
 * a function of src's blocks and its new text), the blocks' new text (as
 * many as src has; src may be NULL) or the whole file; none for a
 * directive alone. Lean: an edit's new text names only src's names and
 * C's (prompt.c, names_pattern).
 * The directive breaks no forbidden combination, and for a directive
 * alone (CUCO_PROMPT_DIRECTIVE) differs from parent's (NULL: any), where
 * the schema can say it (prompt.c). */
char *cuco_reply_schema(const cuco_workload *wl, cuco_prompt_kind kind,
	cuco_prompt_profile profile, const char *src, size_t len, const cuco_directive *parent);
/* The program as the lean profile shows it (lean.c): every line a reply
 * may quote, the frame's function bodies and the branches that the
 * directive d does not build each replaced by one line saying so. */
void cuco_prompt_lean_code(const cuco_workload *wl, const cuco_directive *d, const char *text,
	size_t len, cuco_buf *out);
/* A text written over a lean view (an edit of it) with each note line
 * "[… lines A-B not shown: …]" back as the parent's lines A to B; a note
 * naming lines the parent has not is refused (CUCO_EDATA). */
int cuco_lean_expand(const char *view, size_t vlen, const char *parent, size_t plen,
	cuco_buf *out, cuco_err *err);
/* Whether a line (n bytes) is a lean view's note "[… lines A-B not shown: …]". */
bool cuco_lean_note(const char *s, size_t n);
/* Which lines of text the directive d builds, by the lean view's reader
 * of #if conditions (lean.c): per line, false for one inside a branch of
 * #if/#elif/#else that d surely does not build, true for any other (a
 * condition the reader cannot decide is built), and true for every
 * conditional line itself (#if … #endif), which the preprocessor reads
 * in every branch. A malloc'd array of *n (the lines of text: a last
 * line without '\n' counts). */
bool *cuco_lean_built(const cuco_workload *wl, const cuco_directive *d, const char *text,
	size_t len, size_t *n);

/* ---- fitting a prompt to a model's context --------------------------------
 * A builder notes where it wrote each part a prompt can do without; when
 * the prompt is longer than the model's context allows, parts are cut in
 * the order of the table below, the least useful first: older failures,
 * the extra top programs (the last shown first), the optimization memory,
 * the context documents, then the fast path's reference sections — the
 * helper headers, the verified examples, the API reference, the hardware
 * and last the communication analysis. A kind that halves loses half of
 * its longest part at a time before a part goes. The parent, the second
 * parent, the directive schema, the reply format and the task are never
 * cut: a prompt that needs more than the context even without every part
 * is an error.
 *
 * X(kind, name in the note, halves); docs/replies.md, "Fitted to the
 * context", lists them in this order (test_llm_prompt.c holds it to this). */
#define CUCO_CUT_TABLE(X) \
	X(FAILURE, "failures", false) \
	X(TOP, "top programs", false) \
	X(MEMORY, "lessons", false) \
	X(DOCUMENT, "document halvings", true) \
	X(HEADER, "helper header halvings", true) \
	X(EXAMPLE, "example halvings", true) \
	X(API, "API reference halvings", true) \
	X(HARDWARE, "hardware", false) \
	X(ANALYSIS, "analysis halvings", true)

typedef enum cuco_cut_kind {
#define X(kind, name, halves) CUCO_CUT_##kind,
	CUCO_CUT_TABLE(X)
#undef X
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


/* The hardware profile as a prompt's "## Hardware" section. */
void cuco_prompt_put_hardware(cuco_buf *b, const cuco_hardware *hw);
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
	int cut[CUCO_CUT_KINDS];/* parts cut (a halving kind: times halved or dropped) */
	char note[256];         /* "fitted to N tokens: …", "" when nothing was cut */
} cuco_fitted;

/* Fit system and user (map may be NULL: nothing to cut) into fit's context,
 * leaving the reply max_tokens, or a quarter of the context when that is
 * less. CUCO_EDATA naming the sizes when even the uncuttable parts are too
 * long. */
int cuco_prompt_fit(const char *system, const char *user, const cuco_prompt_map *map,
	const cuco_fit *fit, cuco_fitted *out, cuco_err *err);
/* Tokens of what no fitting can cut (bytes_per_token 0: the default). */
int64_t cuco_prompt_floor(const char *system, const char *user, const cuco_prompt_map *map,
	double bytes_per_token);
/* Tokens a context keeps for the reply and as the estimate's margin: the
 * model's max_tokens or a quarter of the context, whichever is less, and
 * 1/32 of the context. */
int64_t cuco_prompt_reserve(int64_t context, int max_tokens);
void cuco_fitted_free(cuco_fitted *f);
/* ---- the fast path's prompt (fastpath.c, reference.c) ----------------------
 * Stage A's or B's: the task, the design space, the last attempt's failure
 * and the program in the user message; in the system message the
 * workload, the hardware, the program's communication analysis, the API
 * reference from the installed headers, the helper headers it includes,
 * verified examples and the workload's context documents, each marked for
 * fitting. The sections and their names, X(section, name): */
#define CUCO_FP_SECTIONS(X) \
	X(TASK, "task") X(PROGRAM, "program") X(HARDWARE, "hardware") X(ANALYSIS, "analysis") \
	X(API, "API reference") X(HEADERS, "helper headers") X(EXAMPLES, "examples") \
	X(DOCUMENTS, "documents")

typedef enum cuco_fp_section {
#define X(sec, name) CUCO_FP_##sec,
	CUCO_FP_SECTIONS(X)
#undef X
	CUCO_FP_NSECTIONS
} cuco_fp_section;

typedef struct cuco_fp_prompt {
	cuco_buf system, user;
	cuco_prompt_map map;
	size_t bytes[CUCO_FP_NSECTIONS];  /* each section's size before fitting */
	char api_from[512];               /* the headers the API reference read, or why none */
} cuco_fp_prompt;

typedef struct cuco_fp_spec {
	const cuco_workload *wl;
	const cuco_hardware *hw;          /* may be NULL */
	int stage;                        /* 0: A, 1: B */
	const char *program;              /* the stage's parent */
	size_t len;
	const char *feedback;             /* why the last attempt failed; may be NULL */
	const cuco_directive *directive;  /* the skeleton's; NULL: the design space's first point */
	cuco_prompt_profile profile;      /* LEAN: no API reference, helper headers, examples or
	                                     documents */
	bool json;                        /* the reply comes as structured output's JSON */
} cuco_fp_spec;

/* Stage A's or B's prompt for a program. CUCO_EENV when a context
 * document cannot be read. */
int cuco_fastpath_prompt(const cuco_fp_spec *spec, cuco_fp_prompt *out, cuco_err *err);
void cuco_fp_prompt_free(cuco_fp_prompt *p);
const char *cuco_fp_section_name(cuco_fp_section s);  /* "task", …; "?" out of range */

#endif
