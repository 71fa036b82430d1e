/* edit.h — one edit: prompt → reply → patch, retried in the chat (edit.c).
 *
 * A reply that does not parse or apply is answered in the same
 * conversation with the precise error, up to `attempts` replies: a
 * refused directive with the directive as cuco read it and the values
 * allowed. Only the first request is fitted to the context; the retries
 * keep its text, so the server's cache of the prompt holds. A reply the
 * chat had already, byte for byte, is asked again at a higher temperature,
 * and a second such repeat ends the chat.
 *
 * A reply whose edits are refused but whose directive is new and of the
 * design space is not thrown away: its directive makes a directive-only
 * child (the parent's code), where code is not required, and the refusal
 * of its edits is kept with it (edits_refused, the transcript, the call's
 * record), counted apart from the children whose edits applied.
 */
#ifndef CUCO_MODELS_EDIT_H
#define CUCO_MODELS_EDIT_H

#include "core.h"
#include "eval/eval.h"
#include "models/llm.h"
#include "models/prompt.h"
#include "models/reply.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a request is sent: cuco_llm_complete, or a caller's function that
 * counts, stores or throttles calls on the way. */
typedef int (*cuco_llm_sender)(void *hook, const cuco_llm_request *req, cuco_llm_reply *out,
	cuco_err *err);

typedef struct cuco_edit {
	cuco_llm *llm;
	const cuco_model *model;
	const cuco_workload *wl;
	const char *system;          /* from cuco_prompt_build */
	const char *user;
	const cuco_prompt_map *map;  /* what of them may be cut to fit the context; may be NULL */
	const char *parent;          /* the parent's source */
	size_t parent_len;
	const char *view;            /* the parent as a lean prompt shows it (cuco_prompt_lean_code):
	                                replies are applied to it, then expanded; NULL: the parent */
	size_t view_len;
	const cuco_directive *base;  /* the parent's directive */
	double temperature;          /* NAN: the model's */
	const char *schema;          /* the reply's JSON schema (structured output); NULL: none */
	bool code_required;          /* a directive alone is no reply (the fast path) */
	int attempts;                /* replies at most; 0 = 1 */
	bool stream;
	/* As in cuco_llm_request; (NULL, 0) also starts each new reply. */
	void (*on_delta)(const char *text, size_t len, void *arg);
	void *arg;
	const atomic_bool *cancel;
	/* How each reply is asked for (NULL: cuco_llm_complete on llm) and
	 * told what became of it (NULL: nobody): used or refused, and why;
	 * used with a reason: a directive-only child, its edits refused for
	 * that reason. A caller that counts, stores or throttles calls hooks
	 * in here. */
	cuco_llm_sender complete;
	void (*judged)(void *hook, bool used, const char *why);
	void *hook;
} cuco_edit;

typedef struct cuco_edit_result {
	char *source;                /* the child's source; NULL when every reply failed */
	size_t len;
	cuco_directive directive;
	char name[64];
	char note[512];              /* the reply's description */
	cuco_match loosest;          /* how loosely its hunks matched */
	cuco_reply_kind kind;        /* what the reply was: hunks or a whole file */
	char edits_refused[256];     /* a directive-only child made of a reply whose edits were
	                                refused (its directive new): why they were; "" else */
	char *prompt;                /* system + user text as sent, and how it was fitted, for
	                                cuco_source_keep */
	char *transcript;            /* every reply and every error answered */
	int replies;
	bool schema_refused;         /* the server refused the JSON schema: replies came as text */
	int64_t tokens_in;
	int64_t tokens_out;
	double cost_usd;
} cuco_edit_result;

/* One call with its prompt (req->system and req->msgs[0]) fitted to the
 * model's context (cuco_prompt_fit, map may be NULL), sent by send(hook, …)
 * or, when send is NULL, by cuco_llm_complete on c; a request the server
 * still finds too long is cut to the length it names and sent again, twice
 * at most. sent holds what went out (free it); CUCO_EENV when no cut
 * makes the prompt fit. */
int cuco_llm_ask_fitted(cuco_llm *c, cuco_llm_sender send, void *hook,
	const cuco_llm_request *req, const cuco_prompt_map *map, cuco_fitted *sent,
	cuco_llm_reply *out, cuco_err *err);

/* CUCO_OK with a child; CUCO_EDATA when every reply was refused (err holds
 * the last refusal); CUCO_EENV when the model could not be reached or the
 * prompt cannot fit its context. The tokens, cost and transcript are
 * filled in every case. */
int cuco_llm_edit(const cuco_edit *e, cuco_edit_result *out, cuco_err *err);
/* Whether a finish reason says the reply was cut by the output limit: such
 * a reply is refused whatever it holds, since a parser could mistake a
 * complete-looking prefix for the whole. */
bool cuco_edit_cut_off(const char *finish);
/* The temperature to ask again at after a reply repeated one before: t
 * raised by 0.4 (0.7 where t is NAN, unset), at most 1.2; t where the
 * model's temperature is fixed or it takes none. */
double cuco_edit_hotter(const cuco_model *m, double t);
void cuco_edit_result_free(cuco_edit_result *r);

#endif
