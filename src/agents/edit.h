/* edit.h — one edit: prompt → reply → patch, retried in the chat (edit.c).
 *
 * A reply that does not parse or apply is answered in the same
 * conversation with the precise error, up to `attempts` replies.
 */
#ifndef CUCO_AGENTS_EDIT_H
#define CUCO_AGENTS_EDIT_H

#include "agents/llm.h"
#include "agents/reply.h"
#include "core.h"
#include "eval/eval.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cuco_edit {
	cuco_llm *llm;
	const cuco_model *model;
	const cuco_workload *wl;
	const char *system;          /* from cuco_prompt_build */
	const char *user;
	const char *parent;          /* the parent's source */
	size_t parent_len;
	const cuco_directive *base;  /* the parent's directive */
	double temperature;          /* NAN: the model's */
	int attempts;                /* replies at most; 0 = 1 */
	bool stream;
	/* As in cuco_llm_request; (NULL, 0) also starts each new reply. */
	void (*on_delta)(const char *text, size_t len, void *arg);
	void *arg;
	const atomic_bool *cancel;
} cuco_edit;

typedef struct cuco_edit_result {
	char *source;                /* the child's source; NULL when every reply failed */
	size_t len;
	cuco_directive directive;
	char name[64];
	char note[512];              /* the reply's description */
	cuco_match loosest;          /* how loosely its hunks matched */
	char *prompt;                /* system + user text, for cuco_prompt_keep */
	char *transcript;            /* every reply and every error answered */
	int replies;
	int64_t tokens_in;
	int64_t tokens_out;
	double cost_usd;
} cuco_edit_result;

/* CUCO_OK with a child; CUCO_EDATA when every reply was refused (err holds
 * the last refusal); CUCO_EENV when the model could not be reached. The
 * tokens, cost and transcript are filled in every case. */
int cuco_llm_edit(const cuco_edit *e, cuco_edit_result *out, cuco_err *err);
void cuco_edit_result_free(cuco_edit_result *r);

#endif
