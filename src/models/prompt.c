/* prompt.c — what a model is told: the task, the directive it must state
 * and the values allowed, the parent with its measurements and feedback,
 * the best programs so far, recent failures and rejections, the meta
 * recommendations, a person's hints, and the optimization memory.
 *
 * Everything comes from the workload and from one snapshot of the store,
 * read through the vocabulary's reader (vocab.h); the summaries make
 * choosing inspirations cheap with many thousands of candidates, and only
 * the few shown are read in full.
 */
#include "models/models.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CONTEXT_BYTES (24u << 10)  /* per context document */
#define MAX_SHOWN_SOURCE (16u << 10)   /* per inspiration's source */
#define MAX_REJECTIONS 3
#define MAX_MEMORY 16


/* ---- the system message: task, context, directive, reply format ---------- */

void cuco_prompt_put_hardware(cuco_buf *b, const cuco_hardware *hw)
{
	cuco_buf_printf(b, "\n## Hardware\n- CPU: %s, %d cores, %ld MiB\n", hw->cpu_model, hw->cpus,
		hw->mem_mb);
	if (hw->ngpus > 0)
		cuco_buf_printf(b, "- GPUs: %d x %s, %d SMs, %ld MiB, %.0f GB/s HBM, %.0f TFLOP/s bf16\n"
			"- NVLink: %s; GIN (GPU-initiated networking): %s; NCCL %s, CUDA %s\n",
			hw->ngpus, hw->gpu_model, hw->sm_count, hw->gpu_mem_mb, hw->hbm_gbs,
			hw->tensor_tflops, hw->nvlink[0] ? hw->nvlink : "none",
			hw->gin ? "available" : "not available", hw->nccl_version, hw->cuda_version);
}

void cuco_prompt_mark(cuco_prompt_map *map, cuco_cut_kind kind, bool user, const cuco_buf *b,
	size_t start)
{
	if (!map || map->ncuts == CUCO_PROMPT_CUTS || b->len <= start)
		return;
	map->cuts[map->ncuts++] = (struct cuco_cut){ kind, user, start, b->len };
}

int cuco_prompt_put_documents(cuco_buf *b, const cuco_workload *wl, cuco_prompt_map *map,
	cuco_err *err)
{
	for (int i = 0; i < wl->ncontext; i++) {
		char path[1280], *text;
		size_t len, start = b->len;
		snprintf(path, sizeof path, "%s/%s", wl->dir, wl->context[i]);
		int rc = cuco_read_file(path, 4u << 20, &text, &len, err);
		if (rc != CUCO_OK)
			return cuco_errf(err, CUCO_EENV, "%s", err->msg);
		cuco_buf_printf(b, "\n## %s\n", wl->context[i]);
		cuco_buf_append(b, text, len < MAX_CONTEXT_BYTES ? len : MAX_CONTEXT_BYTES);
		if (len > MAX_CONTEXT_BYTES)
			cuco_buf_printf(b, "\n[… %zu more bytes not shown]", len - MAX_CONTEXT_BYTES);
		cuco_buf_puts(b, "\n");
		cuco_prompt_mark(map, CUCO_CUT_DOCUMENT, false, b, start);
		free(text);
	}
	return CUCO_OK;
}

/* A dimension's allowed values as a list line: not in the `name: value`
 * form, which a model copies whole (issue 26: schema lines were sent back
 * as the directive). */
static void put_dim(cuco_buf *b, const cuco_dim *d, bool help)
{
	cuco_buf_printf(b, "- %s: ", d->name);
	if (d->nvalues > 0) {
		cuco_buf_puts(b, "one of ");
		for (int v = 0; v < d->nvalues; v++)
			cuco_buf_printf(b, "%s%s", v ? ", " : "", d->values[v]);
	} else {
		cuco_buf_printf(b, "an integer in [%ld, %ld]", d->min, d->max);
		if (d->pow2)
			cuco_buf_puts(b, ", a power of two");
		else if (d->step > 1)
			cuco_buf_printf(b, ", in steps of %ld", d->step);
	}
	/* The define the value reaches the code as: a small model set a
	 * directive's value as a struct member in code (`l->io.tile = 512`,
	 * issue 26). */
	if (d->define[0])
		cuco_buf_printf(b, "; the code sees %s%s", d->define, d->kind == CUCO_DIM_ENUM ? "_<VALUE>" : "");
	if (d->help[0] && help)
		cuco_buf_printf(b, " (%s)", d->help);
	cuco_buf_puts(b, "\n");
}

void cuco_prompt_put_constraints(cuco_buf *b, const cuco_workload *wl)
{
	if (wl->nconstraints > 0)
		cuco_buf_puts(b, "\nForbidden combinations:\n");
	for (int i = 0; i < wl->nconstraints; i++) {
		const cuco_constraint *c = &wl->constraints[i];
		cuco_buf_puts(b, "- ");
		for (int t = 0; t < c->nterms; t++) {
			cuco_buf_printf(b, "%s%s in {", t ? " with " : "", c->terms[t].dim);
			for (int v = 0; v < c->terms[t].nvalues; v++)
				cuco_buf_printf(b, "%s%s", v ? ", " : "", c->terms[t].values[v]);
			cuco_buf_puts(b, "}");
		}
		cuco_buf_printf(b, ": %s\n", c->why);
	}
}

/* The design space; the lean profile leaves out each dimension's help
 * and the words around it. */
static void put_directive_schema(cuco_buf *b, const cuco_workload *wl, bool full)
{
	cuco_buf_puts(b, full ? "\n# The directive\n"
		"Before any code, state your program's optimization directive: a line `DIRECTIVE:` "
		"then one `name: value` line per dimension, then a blank line, as the end of this "
		"prompt shows. The values allowed:\n" : "\n# The directive\nSet a value here, never in "
		"the code. The values allowed:\n");
	for (int i = 0; i < wl->ndims; i++)
		put_dim(b, &wl->dims[i], full);
	cuco_prompt_put_constraints(b, wl);
	if (full)
		cuco_buf_puts(b, "\nThe directive reaches the build as defines, so the program must "
			"implement what it states. A value outside this list, or a forbidden combination, "
			"is refused without being run.\n");
}

/* The kind of reply a prompt asks for, by kind and profile: hunks, each
 * block's new text, the whole file, or none (a directive alone). A lean
 * fix asks for hunks: a failed program is mended, not rewritten. */
static cuco_reply_kind asked(cuco_prompt_kind kind, cuco_prompt_profile profile)
{
	bool lean = profile == CUCO_PROFILE_LEAN;
	if (kind == CUCO_PROMPT_DIRECTIVE)
		return CUCO_REPLY_DIRECTIVE;
	if (kind == CUCO_PROMPT_DIFF || kind == CUCO_PROMPT_REPAIR || (lean && kind == CUCO_PROMPT_FIX))
		return CUCO_REPLY_DIFF;
	return lean ? CUCO_REPLY_BLOCKS : CUCO_REPLY_FULL;
}

static const char diff_format[] =
	"\n# Reply format\n"
	"After the directive:\n\n"
	"<NAME>short_snake_case_name</NAME>\n"
	"<DESCRIPTION>what you change and why it should be faster</DESCRIPTION>\n"
	"<DIFF>\n"
	"<<<<<<< SEARCH\n"
	CUCO_SEARCH_PLACEHOLDER "\n"
	"=======\n"
	CUCO_REPLACE_PLACEHOLDER "\n"
	">>>>>>> REPLACE\n"
	"</DIFF>\n\n"
	"Rules: each SEARCH must match exactly one place in the current program as shown (hunks "
	"never see each other's edits), so quote enough lines to be unique; hunks must not "
	"overlap; to insert, quote the lines around the insertion point; only code between "
	"EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change; a reply applies all or nothing.\n";

static const char full_format[] =
	"\n# Reply format\n"
	"After the directive:\n\n"
	"<NAME>short_snake_case_name</NAME>\n"
	"<DESCRIPTION>what you change and why it should be faster</DESCRIPTION>\n"
	"<CODE>\n"
	"```\n"
	"the whole program\n"
	"```\n"
	"</CODE>\n\n"
	"Rules: give the whole file, not an excerpt; keep the EVOLVE-BLOCK-START and "
	"EVOLVE-BLOCK-END markers and every line outside them exactly as they are; only the code "
	"between the markers may change.\n";

static const char blocks_format[] =
	"\n# Reply format\n"
	"After the directive:\n\n"
	"<NAME>short_snake_case_name</NAME>\n"
	"<DESCRIPTION>what you change and why it should be faster</DESCRIPTION>\n"
	"<BLOCK>\n"
	"the new text of the first EVOLVE-BLOCK: every line between its markers\n"
	"</BLOCK>\n\n"
	"Rules: one <BLOCK> per EVOLVE-BLOCK of the program, in order; write only the lines "
	"between the markers, never the markers or the code outside them, which stay as they "
	"are. Lines shown as `[… N lines not shown: …]` are not part of the program.\n";

static const char directive_format[] =
	"\n# Reply format\n"
	"After the directive:\n\n"
	"<NAME>short_snake_case_name</NAME>\n"
	"<DESCRIPTION>why this directive should be faster</DESCRIPTION>\n\n"
	"No code: the program stays as it is and is built with the new directive.\n";

static const char json_format[] =
	"\n# Reply format\n"
	"Reply with one JSON object and nothing else, as the end of this prompt shows: "
	"`directive` holds one value for each dimension, from the lists above; `name` is a "
	"short_snake_case name; `description` says what you change and why it should be "
	"faster; then the change as the prompt asks for it. In an edit, `search` holds lines "
	"copied exactly from the current program (each must match one place; edits never see "
	"each other's changes), `replace` the lines that replace them; or an edit names a "
	"`function` defined inside the blocks and gives its whole new definition as `text`; only "
	"code between EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change.\n";

/* The rules of a lean prompt's edit: fewer words, and what its notes mean. */
static const char lean_rules[] =
	" Each SEARCH quotes lines of the program as shown, matching one place; hunks must not "
	"overlap; only lines between the EVOLVE-BLOCK markers may change. A line "
	"`[… lines A-B not shown: …]` stands for those lines of the program (a comment, code "
	"outside the blocks, code other directives build): quote it whole, keep it in the "
	"REPLACE to keep them, or leave it out to drop them.";

/* The reply format section for a prompt. */
static const char *reply_format(const cuco_prompt_spec *spec)
{
	static const char *const formats[CUCO_REPLY_KIND_COUNT] = {
		[CUCO_REPLY_DIFF] = diff_format, [CUCO_REPLY_BLOCKS] = blocks_format,
		[CUCO_REPLY_FULL] = full_format, [CUCO_REPLY_DIRECTIVE] = directive_format,
	};
	return spec->json ? json_format : formats[asked(spec->kind, spec->profile)];
}

/* ---- the directive as a reply states it, the skeleton, the schema ---------- */

static const char *const kind_names[CUCO_PROMPT_KINDS] = {
#define X(e, name, help) name,
	CUCO_PROMPT_KIND_TABLE(X)
#undef X
};
static const char *const profile_names[CUCO_PROFILES] = {
#define X(e, name, help) name,
	CUCO_PROFILE_TABLE(X)
#undef X
};

const char *cuco_prompt_kind_name(cuco_prompt_kind k)
{
	return (unsigned)k < CUCO_PROMPT_KINDS ? kind_names[k] : "?";
}

const char *cuco_prompt_profile_name(cuco_prompt_profile p)
{
	return (unsigned)p < CUCO_PROFILES ? profile_names[p] : "?";
}

int cuco_prompt_profile_parse(const char *name, cuco_prompt_profile *out)
{
	int i = cuco_name_index(profile_names, CUCO_PROFILES, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_prompt_profile)i;
	return CUCO_OK;
}

/* The directive as a reply states it: `DIRECTIVE:`, then one `name: value`
 * line per dimension of the workload. */
static void put_directive(cuco_buf *b, const cuco_workload *wl, const cuco_directive *d)
{
	cuco_buf_puts(b, "DIRECTIVE:\n");
	for (int i = 0; i < wl->ndims; i++)
		cuco_buf_printf(b, "%s: %s\n", wl->dims[i].name,
			cuco_directive_value(d, wl->dims[i].name));
}

/* The directive as the JSON object of a reply. */
static cJSON *directive_json(const cuco_workload *wl, const cuco_directive *d)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; i < wl->ndims; i++) {
		const cuco_dim *dim = &wl->dims[i];
		const char *v = cuco_directive_value(d, dim->name);
		if (dim->kind == CUCO_DIM_INT)
			cJSON_AddNumberToObject(o, dim->name, strtod(v, NULL));
		else
			cJSON_AddStringToObject(o, dim->name, v);
	}
	return o;
}

void cuco_prompt_put_skeleton(cuco_buf *b, const cuco_workload *wl, const cuco_directive *d,
	cuco_prompt_kind kind, cuco_prompt_profile profile, int nblocks, bool json)
{
	cuco_buf_puts(b, "\n# Your reply\n");
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "directive", directive_json(wl, d));
		cJSON_AddStringToObject(o, "name", "short_snake_case_name");
		cJSON_AddStringToObject(o, "description", "what you change and why it should be faster");
		cuco_reply_kind want = asked(kind, profile);
		const char *key = cuco_reply_json_key(want);
		if (want == CUCO_REPLY_DIFF) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "search", CUCO_SEARCH_PLACEHOLDER);
			cJSON_AddStringToObject(e, "replace", CUCO_REPLACE_PLACEHOLDER);
			cJSON_AddItemToArray(cJSON_AddArrayToObject(o, key), e);
		} else if (want == CUCO_REPLY_BLOCKS) {
			cJSON *a = cJSON_AddArrayToObject(o, key);
			for (int i = 0; i < (nblocks > 0 ? nblocks : 1); i++)
				cJSON_AddItemToArray(a, cJSON_CreateString("the block's new text"));
		} else if (want == CUCO_REPLY_FULL) {
			cJSON_AddStringToObject(o, key, "the whole program");
		}
		char *text = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		/* cJSON writes no spaces; a reader's eye wants them after , and :. */
		bool lean_diff = want == CUCO_REPLY_DIFF && profile == CUCO_PROFILE_LEAN;
		/* Lean: edits keep the directive (cuco_reply_schema says why). */
		cuco_buf_puts(b, lean_diff ? "One JSON object: edits under the current program's directive "
			"as it stands, or no edit and the directive with a value changed" :
			"One JSON object, the directive's values the current program's until you change them");
		/* Its edit's two placeholders are no lines of the program: say
		 * what goes there, and how a reply changes the directive alone. */
		if (lean_diff)
			cuco_buf_puts(b, "; each edit's `search` is one line copied from the program above, "
				"inside the EVOLVE-BLOCKs, and its `replace` its new text (lines added around "
				"it included)");
		else if (want == CUCO_REPLY_DIFF)
			cuco_buf_puts(b, "; each edit's `search` is lines copied from the program above and "
				"its `replace` their new text");
		if (want == CUCO_REPLY_DIFF)
			cuco_buf_puts(b, " (or an edit is `{\"function\": NAME, \"text\": "
				"its whole new definition}` for a function inside the EVOLVE-BLOCKs), or "
				"`\"edits\": []` to change the directive alone");
		cuco_buf_puts(b, ":\n");
		bool quoted = false;
		for (const char *p = text; *p; p++) {
			cuco_buf_append(b, p, 1);
			if (*p == '"' && (p == text || p[-1] != '\\'))
				quoted = !quoted;
			if (!quoted && (*p == ',' || *p == ':'))
				cuco_buf_puts(b, " ");
		}
		cuco_buf_puts(b, "\n");
		free(text);
		return;
	}
	cuco_buf_puts(b, "Reply in this form, starting with the directive (the current program's "
		"values; change those you mean to change):\n\n");
	put_directive(b, wl, d);
	cuco_buf_puts(b, "\n<NAME>short_snake_case_name</NAME>\n<DESCRIPTION>");
	if (kind == CUCO_PROMPT_DIRECTIVE) {
		cuco_buf_puts(b, "why this directive should be faster</DESCRIPTION>\n");
		return;
	}
	cuco_buf_puts(b, "what you change and why it should be faster</DESCRIPTION>\n");
	cuco_reply_kind want = asked(kind, profile);
	if (want == CUCO_REPLY_DIFF)
		cuco_buf_puts(b, "<DIFF>\n<<<<<<< SEARCH\n" CUCO_SEARCH_PLACEHOLDER "\n"
			"=======\n" CUCO_REPLACE_PLACEHOLDER "\n>>>>>>> REPLACE\n</DIFF>\n");
	else if (want == CUCO_REPLY_BLOCKS)
		for (int i = 0; i < (nblocks > 0 ? nblocks : 1); i++)
			cuco_buf_printf(b, "<BLOCK>\nblock %d's new text\n</BLOCK>\n", i + 1);
	else
		cuco_buf_puts(b, "<CODE>\n```\nthe whole program\n```\n</CODE>\n");
}

static cJSON *string_schema(int max_length)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "string");
	if (max_length > 0)
		cJSON_AddNumberToObject(o, "maxLength", max_length);
	return o;
}

static cJSON *required(const char *const *names, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(names[i]));
	return a;
}

/* The directive's schema as alternatives (anyOf), each allowing per
 * dimension a set of its listed values: what a schema can say of the
 * forbidden combinations (a point is allowed when one term of each
 * combination misses it), and, for a directive alone, "another directive
 * than the parent's" (one dimension differs). A dimension whose values
 * are too many to list (an integer range) is a range in every
 * alternative; a combination or a change naming one is left to the
 * refusal, as is any past MAX_ALTS alternatives: never a schema stricter
 * than the design space. */
#define MAX_ALTS 32

typedef struct dir_alts {
	const cuco_workload *wl;
	char (*vals)[CUCO_DIM_LISTED][32];  /* each dimension's listed values */
	int nvals[CUCO_MAX_DIMS];
	bool cut[CUCO_MAX_DIMS];            /* an integer range too long to list */
	uint64_t alt[MAX_ALTS][CUCO_MAX_DIMS];  /* a bit per listed value */
	int n;
} dir_alts;

/* The bit of a dimension's listed value v; 0 when v is not listed. */
static uint64_t value_bit(const dir_alts *a, int dim, const char *v)
{
	for (int k = 0; k < a->nvals[dim]; k++)
		if (strcmp(a->vals[dim][k], v) == 0)
			return (uint64_t)1 << k;
	return 0;
}

/* Each alternative narrowed by one of the choices (dimension dims[c]
 * without the values drop[c]), those left with no value dropped; false,
 * and nothing changed, when a choice names a range or there would be too
 * many. */
static bool narrow(dir_alts *a, const int *dims, const uint64_t *drop, int nchoices)
{
	uint64_t (*next)[CUCO_MAX_DIMS] = cuco_xmalloc(sizeof a->alt);
	int n = 0;
	bool ok = true;
	for (int c = 0; c < nchoices && ok; c++)
		ok = !a->cut[dims[c]];
	for (int i = 0; i < a->n && ok; i++)
		for (int c = 0; c < nchoices && ok; c++) {
			uint64_t left = a->alt[i][dims[c]] & ~drop[c];
			if (!left)
				continue;
			ok = n < MAX_ALTS;
			if (ok) {
				memcpy(next[n], a->alt[i], sizeof next[n]);
				next[n++][dims[c]] = left;
			}
		}
	if (ok && n > 0) {
		memcpy(a->alt, next, (size_t)n * sizeof *next);
		a->n = n;
	}
	free(next);
	return ok && n > 0;
}

static void alts_make(dir_alts *a, const cuco_workload *wl, const cuco_directive *other_than)
{
	a->wl = wl;
	a->vals = cuco_xmalloc((size_t)wl->ndims * sizeof *a->vals);
	a->n = 1;
	for (int d = 0; d < wl->ndims; d++) {
		const cuco_dim *dim = &wl->dims[d];
		a->nvals[d] = cuco_dim_values(dim, a->vals[d]);
		a->cut[d] = dim->kind == CUCO_DIM_INT && dim->nvalues == 0 && a->nvals[d] == CUCO_DIM_LISTED;
		a->alt[0][d] = a->nvals[d] == 64 ? ~(uint64_t)0 : ((uint64_t)1 << a->nvals[d]) - 1;
		_Static_assert(CUCO_DIM_LISTED <= 64, "a bit per listed value");
	}
	int dims[CUCO_MAX_DIMS];
	uint64_t drop[CUCO_MAX_DIMS];
	for (int i = 0; i < wl->nconstraints; i++) {
		const cuco_constraint *c = &wl->constraints[i];
		int t = 0;
		for (; t < c->nterms; t++) {
			const cuco_dim *dim = cuco_workload_dim(wl, c->terms[t].dim);
			if (!dim)
				break;
			dims[t] = (int)(dim - wl->dims);
			drop[t] = 0;
			for (int v = 0; v < c->terms[t].nvalues; v++)
				drop[t] |= value_bit(a, dims[t], c->terms[t].values[v]);
		}
		if (t == c->nterms)
			narrow(a, dims, drop, t);
	}
	int n = 0;
	for (int d = 0; other_than && d < wl->ndims; d++) {
		if (a->cut[d])
			continue;
		dims[n] = d;
		drop[n++] = value_bit(a, d, cuco_directive_value(other_than, wl->dims[d].name));
	}
	if (n > 0)
		narrow(a, dims, drop, n);
}

/* One alternative's values of a dimension: an enum (numbers for an
 * integer dimension), or the integer range too long to list. */
static cJSON *dim_schema(const dir_alts *a, int alt, int d)
{
	const cuco_dim *dim = &a->wl->dims[d];
	cJSON *o = cJSON_CreateObject();
	if (a->cut[d]) {
		cJSON_AddStringToObject(o, "type", "integer");
		cJSON_AddNumberToObject(o, "minimum", (double)dim->min);
		cJSON_AddNumberToObject(o, "maximum", (double)dim->max);
		return o;
	}
	cJSON *e = cJSON_AddArrayToObject(o, "enum");
	for (int k = 0; k < a->nvals[d]; k++)
		if (a->alt[alt][d] >> k & 1)
			cJSON_AddItemToArray(e, dim->kind == CUCO_DIM_INT
				? cJSON_CreateNumber(strtod(a->vals[d][k], NULL))
				: cJSON_CreateString(a->vals[d][k]));
	return o;
}

/* Schemas as alternatives: the one alone, else `anyOf` them. Takes any. */
static cJSON *any_of(cJSON *any)
{
	if (cJSON_GetArraySize(any) == 1) {
		cJSON *one = cJSON_DetachItemFromArray(any, 0);
		cJSON_Delete(any);
		return one;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "anyOf", any);
	return o;
}

/* The schema of the directives a's alternatives allow. Frees a. */
static cJSON *alts_schema(dir_alts *a)
{
	const cuco_workload *wl = a->wl;
	cJSON *any = cJSON_CreateArray();
	for (int i = 0; i < a->n; i++) {
		cJSON *dir = cJSON_CreateObject(), *dprops = cJSON_CreateObject(), *dreq = cJSON_CreateArray();
		cJSON_AddStringToObject(dir, "type", "object");
		for (int d = 0; d < wl->ndims; d++) {
			cJSON_AddItemToObject(dprops, wl->dims[d].name, dim_schema(a, i, d));
			cJSON_AddItemToArray(dreq, cJSON_CreateString(wl->dims[d].name));
		}
		cJSON_AddItemToObject(dir, "properties", dprops);
		cJSON_AddItemToObject(dir, "required", dreq);
		cJSON_AddBoolToObject(dir, "additionalProperties", false);
		cJSON_AddItemToArray(any, dir);
	}
	free(a->vals);
	free(a);
	return any_of(any);
}

static cJSON *directive_schema(const cuco_workload *wl, const cuco_directive *other_than)
{
	dir_alts *a = cuco_xmalloc(sizeof *a);
	alts_make(a, wl, other_than);
	return alts_schema(a);
}

/* The directive d and no other: each listed dimension its one value (a
 * range too long to list stays a range, a value not listed its list). */
static cJSON *directive_only_schema(const cuco_workload *wl, const cuco_directive *d)
{
	dir_alts *a = cuco_xmalloc(sizeof *a);
	alts_make(a, wl, NULL);
	a->n = 1;
	for (int i = 0; i < wl->ndims; i++) {
		uint64_t bit = value_bit(a, i, cuco_directive_value(d, wl->dims[i].name));
		if (bit && !a->cut[i])
			a->alt[0][i] = bit;
	}
	return alts_schema(a);
}

/* ---- the names a lean edit may write ---------------------------------------
 *
 * DESIGN: with the lean profile, an edit's new text (`replace`, and a
 * function's `text`) may name only what the program has: its own words
 * outside comments and quotes, C's keywords, the preprocessor's
 * directives and the standard types.
 * 13 of 51 replies of Qwen2.5-Coder 1.5B did not compile for a name it
 * made up (`l->io.tile`, `MPI_RMA_Send`, `rma_set`: issue 26, stop 32 of
 * bench/results/agents.md); under a server's grammar it cannot write one.
 *
 * The pattern holds under two readings: JSON Schema's, over the decoded
 * value, and llama.cpp's, over the JSON string's characters (its grammar
 * puts the pattern between the quotes). So a separator is any character
 * but a letter, a digit, '_', '"' and '\', or one of the escapes \n \t
 * \" \\ \/ as written in JSON; a word is one of the names, or a number
 * ([0-9] then letters, digits, '_' and '.': 0x1Fu, 2.5e, 3f); and a word
 * follows a separator, never another word (t then ile is not tile):
 * ^SEP*(WORD SEP+)*WORD?$. A name is only letters, digits and '_', none
 * of them special in a pattern. A '"' of the decoded value is refused
 * (under the other reading it would end the string): no string literals
 * but through llama.cpp's \". The names are sorted, each once. */
#define CODE_SEP "([^A-Za-z0-9_\"\\\\]|\\\\[nt\"\\\\/])"
#define CODE_NUMBER "[0-9][0-9A-Za-z_.]*"

static const char *const c_words[] = {
	"_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Noreturn",
	"_Static_assert", "_Thread_local", "auto", "bool", "break", "case", "char", "const",
	"continue", "default", "define", "defined", "do", "double", "elif", "else", "endif", "enum",
	"error", "extern", "false", "float", "for", "goto", "if", "ifdef", "ifndef", "include",
	"inline", "int", "int16_t", "int32_t", "int64_t", "int8_t", "intptr_t", "long", "NULL",
	"pragma", "ptrdiff_t", "register", "restrict", "return", "short", "signed", "size_t",
	"sizeof", "ssize_t", "static", "struct", "switch", "true", "typedef", "uint16_t",
	"uint32_t", "uint64_t", "uint8_t", "uintptr_t", "undef", "union", "unsigned", "void",
	"volatile", "while",
};

typedef struct name {
	const char *s;
	size_t n;
} name;

static int name_cmp(const void *a, const void *b)
{
	const name *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The pattern of an edit's new text over the program src (len bytes). */
static char *names_pattern(const char *src, size_t len)
{
	size_t nk = sizeof c_words / sizeof *c_words, n = 0;
	name *v = cuco_xmalloc((len / 2 + 1 + nk) * sizeof *v);
	for (size_t i = 0; i < nk; i++)
		v[n++] = (name){ c_words[i], strlen(c_words[i]) };
	char *code = cuco_text_strip(src, len, true);
	for (size_t i = 0, j; i < len; i = j > i ? j : i + 1) {
		for (j = i; j < len && name_char(code[j]); j++)
			;
		if (j > i && !isdigit((unsigned char)code[i]))
			v[n++] = (name){ code + i, j - i };
	}
	qsort(v, n, sizeof *v, name_cmp);
	cuco_buf words = { 0 }, b = { 0 };
	for (size_t i = 0; i < n; i++)
		if (i == 0 || name_cmp(&v[i - 1], &v[i]) != 0)
			cuco_buf_printf(&words, "%.*s|", (int)v[i].n, v[i].s);
	cuco_buf_printf(&b, "^" CODE_SEP "*((%s" CODE_NUMBER ")" CODE_SEP "+)*(%s" CODE_NUMBER ")?$",
		words.data, words.data);
	cuco_buf_free(&words);
	free(code);
	free(v);
	return b.data;
}

/* A lean edit's new text: a string of the program's names (names_pattern). */
static cJSON *code_schema(const char *src, size_t len)
{
	cJSON *o = string_schema(0);
	char *pattern = names_pattern(src, len);
	cJSON_AddStringToObject(o, "pattern", pattern);
	free(pattern);
	return o;
}

/* An edit: `search` and `replace`, or, where the parent defines functions
 * inside its blocks, `function` (one of their names) and `text`. Lean: a
 * `search` is one of the lines a SEARCH may be (cuco_patch_search_lines),
 * so that under a server's grammar it matches one place: Qwen2.5-Coder
 * 1.5B's SEARCH text matched nothing in most of its refused replies
 * (issue 26). A line changes into text of the program's names
 * (names_pattern), lines added around it. */
#define SEARCH_LINES_MAX 400

/* The code a schema's edits are to: the prompt's view of the parent and,
 * lean, which of its lines the parent's directive builds. The lean view
 * shows a branch shorter than its note though the directive does not
 * build it, and a hunk there is set aside (cuco_patch_apply): its lines
 * are not offered as a SEARCH (Qwen2.5-Coder 1.5B edited a one-line
 * `cuco_handoff_give` branch of another issuer twice in a row). */
typedef struct schema_code {
	const char *src;
	size_t len;
	bool lean;
	bool *built;  /* NULL: every line */
	size_t nbuilt;
} schema_code;

static cJSON *edit_schema(const schema_code *c)
{
	const char *const keys[2][2] = { { "search", "replace" }, { "function", "text" } };
	char names[32][64], **lines = NULL;
	const char *src = c->src;
	size_t len = c->len;
	bool lean = c->lean;
	int n = src ? cuco_patch_functions(src, len, names, 32) : 0;
	size_t nlines = src && lean ? cuco_patch_search_lines(src, len, c->built, c->nbuilt,
		SEARCH_LINES_MAX, &lines) : 0;
	cJSON *any = cJSON_CreateArray();
	for (int k = 0; k < (n > 0 ? 2 : 1); k++) {
		cJSON *edit = cJSON_CreateObject(), *eprops = cJSON_CreateObject();
		cJSON_AddStringToObject(edit, "type", "object");
		cJSON *first = string_schema(0);
		if (k == 1 || nlines > 0) {
			cJSON_DeleteItemFromObject(first, "type");
			cJSON *e = cJSON_AddArrayToObject(first, "enum");
			for (int i = 0; k == 1 && i < n; i++)
				cJSON_AddItemToArray(e, cJSON_CreateString(names[i]));
			for (size_t i = 0; k == 0 && i < nlines; i++)
				cJSON_AddItemToArray(e, cJSON_CreateString(lines[i]));
		}
		cJSON_AddItemToObject(eprops, keys[k][0], first);
		cJSON_AddItemToObject(eprops, keys[k][1], src && lean ? code_schema(src, len) :
			string_schema(0));
		cJSON_AddItemToObject(edit, "properties", eprops);
		cJSON_AddItemToObject(edit, "required", required(keys[k], 2));
		cJSON_AddBoolToObject(edit, "additionalProperties", false);
		cJSON_AddItemToArray(any, edit);
	}
	cuco_patch_lines_free(lines, nlines);
	return any_of(any);
}

/* The reply object: the directive (as dir's schema), name, description
 * and the change (key, as change's schema; none for a directive alone). */
static cJSON *reply_object(cJSON *dir, const char *key, cJSON *change)
{
	cJSON *o = cJSON_CreateObject(), *props = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "object");
	/* In the order a model writes them: the directive first. */
	cJSON_AddItemToObject(props, "directive", dir);
	cJSON_AddItemToObject(props, "name", string_schema(64));
	cJSON_AddItemToObject(props, "description", string_schema(400));
	if (key)
		cJSON_AddItemToObject(props, key, change);
	cJSON_AddItemToObject(o, "properties", props);
	const char *req[] = { "directive", "name", "description", key };
	cJSON_AddItemToObject(o, "required", required(req, key ? 4 : 3));
	cJSON_AddBoolToObject(o, "additionalProperties", false);
	return o;
}

static cJSON *edits_schema(const schema_code *c, const char *bound, int n)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", "array");
	/* An array held empty needs no items: the lean schema's names pattern
	 * would be in it twice more for nothing. */
	if (!bound || n > 0)
		cJSON_AddItemToObject(a, "items", edit_schema(c));
	if (bound)
		cJSON_AddNumberToObject(a, bound, n);
	return a;
}

char *cuco_reply_schema(const cuco_workload *wl, cuco_prompt_kind kind,
	cuco_prompt_profile profile, const char *src, size_t len, const cuco_directive *parent)
{
	int nblocks = src ? (int)cuco_text_nblocks(src, len) : 0;
	bool lean = profile == CUCO_PROFILE_LEAN;
	cJSON *dir = directive_schema(wl, kind == CUCO_PROMPT_DIRECTIVE ? parent : NULL);
	cuco_reply_kind want = asked(kind, profile);
	const char *key = cuco_reply_json_key(want);
	cJSON *change = NULL, *root;
	schema_code code = { .src = src, .len = len, .lean = lean };
	if (src && lean && parent)
		code.built = cuco_lean_built(wl, parent, src, len, &code.nbuilt);
	if (want == CUCO_REPLY_DIFF && lean && parent) {
		/* Lean: edits under the parent's directive, or none and a
		 * directive other than the parent's. No edit beside the parent's
		 * own directive, which changes nothing (Qwen2.5-Coder 1.5B wrote
		 * it again and again, issue 26); no edit beside another
		 * directive: the lean view shows the branches the parent's builds,
		 * and its edits there were never built (stop 32's crown). */
		cJSON *forms = cJSON_CreateArray();
		cJSON_Delete(dir);
		cJSON_AddItemToArray(forms, reply_object(directive_only_schema(wl, parent), key,
			edits_schema(&code, "minItems", 1)));
		cJSON_AddItemToArray(forms, reply_object(directive_schema(wl, parent), key,
			edits_schema(&code, "maxItems", 0)));
		root = cJSON_CreateObject();
		cJSON_AddItemToObject(root, "anyOf", forms);
	} else {
		if (want == CUCO_REPLY_DIFF) {
			change = edits_schema(&code, NULL, 0);
		} else if (want == CUCO_REPLY_BLOCKS) {
			change = cJSON_CreateObject();
			cJSON_AddStringToObject(change, "type", "array");
			cJSON_AddItemToObject(change, "items", string_schema(0));
			cJSON_AddNumberToObject(change, "minItems", nblocks > 0 ? nblocks : 1);
			cJSON_AddNumberToObject(change, "maxItems", nblocks > 0 ? nblocks : 1);
		} else if (want == CUCO_REPLY_FULL) {
			change = string_schema(0);
		}
		root = reply_object(dir, key, change);
	}
	free(code.built);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

static int build_system(const cuco_reader *r, const cuco_prompt_spec *spec, cuco_buf *b)
{
	const cuco_workload *wl = spec->wl;
	bool lean = spec->profile == CUCO_PROFILE_LEAN;
	/* The lean profile: the description's first sentence, which says what
	 * the program computes; the code says the rest. */
	size_t desc = strlen(wl->description);
	const char *stop = lean ? strstr(wl->description, ". ") : NULL;
	if (stop)
		desc = (size_t)(stop - wl->description) + 1;
	cuco_buf_printf(b,
		"You optimize programs that overlap computation with communication. A program is "
		"judged by a cascade: it must compile, run on %d ranks and match the reference within "
		"%g, and is then timed after warm-up; lower latency is better.\n\n"
		"# Task: %s\n%.*s\n- workload: %s; family: %s; ranks: %d; size: %s\n",
		wl->ranks, wl->tolerance, wl->title, (int)desc, wl->description, wl->name,
		cuco_family_name(wl->family), wl->ranks, wl->default_size);
	if (spec->hw && !lean)
		cuco_prompt_put_hardware(b, spec->hw);
	if (wl->ncontext > 0 && !lean)
		cuco_buf_puts(b, "\n# Context documents\n");
	cuco_err err;
	if (!lean && cuco_prompt_put_documents(b, wl, spec->map, &err) != CUCO_OK)
		return cuco_errf(r->err, CUCO_EENV, "%s", err.msg);
	put_directive_schema(b, wl, !lean);
	/* The lean profile's reply form is its skeleton, at the prompt's end:
	 * only the rules here. */
	if (lean)
		cuco_buf_printf(b, "\n# Reply format\nAs the end of this prompt shows.%s\n",
			asked(spec->kind, spec->profile) == CUCO_REPLY_DIRECTIVE || spec->json ? "" :
			lean_rules);
	else
		cuco_buf_puts(b, reply_format(spec));
	return CUCO_OK;
}

/* ---- the user message: parent, inspirations, failures, memory ------------ */

static void put_metrics(cuco_buf *b, const cuco_candidate *c)
{
	char dir[256];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	cuco_buf_printf(b, "- directive: %s\n- status: %s", dir, cuco_status_name(c->status));
	if (!isnan(c->score))
		cuco_buf_printf(b, "; score %.4g", c->score);
	if (!isnan(c->speedup))
		cuco_buf_printf(b, "; speedup over the baseline %.3fx", c->speedup);
	if (!isnan(c->timing.peak_fraction))
		cuco_buf_printf(b, "; %.1f %% of peak", c->timing.peak_fraction * 100);
	cuco_buf_puts(b, "\n");
	if (!isnan(c->timing.median_us))
		cuco_buf_printf(b, "- latency: median %.1f us, min %.1f us, p90 %.1f us over %d runs "
			"(spread %.1f %%); max error %.3g\n", c->timing.median_us, c->timing.min_us,
			c->timing.p90_us, c->timing.samples, c->timing.spread * 100, c->timing.max_error);
	cuco_phase ph[CUCO_MAX_PHASES];
	int nph = cuco_phases_view(c, ph, NULL);  /* no part larger than its whole */
	if (nph > 0) {
		cuco_buf_puts(b, "- phases:");
		for (int i = 0; i < nph; i++)
			cuco_buf_printf(b, "%s %s %.1f us", i ? "," : "", ph[i].name, ph[i].us);
		cuco_buf_puts(b, "\n");
	}
}

/* The line of a failure's output that says what went wrong first: the
 * first holding "error" (a compiler's first error), else its first line
 * that is not blank. */
static void first_error_line(const char *excerpt, char *out, size_t size)
{
	const char *pick = NULL, *first = NULL;
	for (const char *p = excerpt; *p && !pick;) {
		size_t n = strcspn(p, "\n");
		if (!first && strspn(p, " \t") < n)
			first = p;
		for (size_t i = 0; i + 5 <= n && !pick; i++)
			if (strncasecmp(p + i, "error", 5) == 0)
				pick = p;
		p += n + (p[n] == '\n');
	}
	const char *at = pick ? pick : first ? first : "";
	size_t n = strcspn(at, "\n");
	snprintf(out, size, "%.*s", (int)(n < size - 1 ? n : size - 1), at);
}

/* What went wrong with a candidate, in a few lines. */
static void put_feedback(cuco_buf *b, const cuco_candidate *c, size_t excerpt)
{
	if (c->failure.stage[0]) {
		size_t n = strlen(c->failure.excerpt);
		const char *tail = n > excerpt ? c->failure.excerpt + n - excerpt : c->failure.excerpt;
		cuco_buf_printf(b, "- failed at %s (%s):\n```\n%s\n```\n", c->failure.stage,
			c->failure.error_class, tail);
	}
	if (c->reject_reason[0])
		cuco_buf_printf(b, "- rejected by a reviewer: %s\n", c->reject_reason);
	if (c->note[0])
		cuco_buf_printf(b, "- author's note: %s\n", c->note);
}

/* The sources a prompt has shown, so that none is shown twice: a
 * directive-only child has its parent's code byte for byte. */
typedef struct shown_code {
	char hash[4 + 16][CUCO_HASH_LEN + 1];
	uint64_t id[4 + 16];
	int n;
} shown_code;

/* The candidate whose code the prompt already shows as that source; 0. */
static uint64_t shown_as(shown_code *sc, const char *hash, uint64_t id)
{
	for (int i = 0; i < sc->n; i++)
		if (strcmp(sc->hash[i], hash) == 0)
			return sc->id[i];
	if (sc->n < (int)(sizeof sc->id / sizeof sc->id[0])) {
		cuco_strlcpy(sc->hash[sc->n], hash, sizeof sc->hash[0]);
		sc->id[sc->n++] = id;
	}
	return 0;
}

/* How put_program shows a candidate. */
typedef struct show {
	const cuco_prompt_spec *spec;
	bool code;              /* its source */
	size_t max_code;        /* bytes of it at most */
	bool as_reply;          /* its directive as a reply states it */
	int *blocks;            /* out, when not NULL: its EVOLVE-BLOCKs */
	cuco_directive *directive;  /* out, when not NULL */
	char *first_error;      /* out, when not NULL (256 bytes): its failure's first error */
} show;

/* A candidate's source, whole or as the lean profile shows it. */
static void put_code(cuco_buf *b, const show *how, const cuco_candidate *c, const char *text,
	size_t len)
{
	cuco_buf_puts(b, "```\n");
	if (how->spec->profile == CUCO_PROFILE_LEAN) {
		cuco_buf lean = { 0 };
		cuco_prompt_lean_code(how->spec->wl, &c->directive, text, len, &lean);
		cuco_buf_append(b, lean.data, lean.len);
		cuco_buf_free(&lean);
		cuco_buf_puts(b, "```\n");
		return;
	}
	cuco_buf_append(b, text, len < how->max_code ? len : how->max_code);
	if (len > how->max_code)
		cuco_buf_printf(b, "\n[… %zu more bytes not shown]", len - how->max_code);
	cuco_buf_puts(b, len && text[len - 1] == '\n' ? "```\n" : "\n```\n");
}

static int put_program(const cuco_reader *r, cuco_buf *b, const char *title, uint64_t id,
	const show *how, shown_code *sc)
{
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = r->candidate(r->ctx, id, c);
	if (rc != CUCO_OK) {
		free(c);
		return rc == CUCO_ENOTFOUND ? cuco_errf(r->err, CUCO_EDATA, "prompt: no candidate %llu",
			(unsigned long long)id) : rc;
	}
	cuco_buf_printf(b, "\n# %s: candidate #%llu (%s, generation %d)\n", title,
		(unsigned long long)id, cuco_origin_name(c->origin), c->generation);
	put_metrics(b, c);
	if (how->as_reply) {
		cuco_buf_puts(b, "- its directive, as a reply states it:\n");
		put_directive(b, how->spec->wl, &c->directive);
	}
	put_feedback(b, c, 1200);
	if (how->directive)
		*how->directive = c->directive;
	if (how->first_error && c->failure.stage[0])
		first_error_line(c->failure.excerpt, how->first_error, 256);
	uint64_t same = how->code ? shown_as(sc, c->source_hash, id) : 0;
	if (same) {
		cuco_buf_printf(b, "- code: the same as candidate #%llu's above; only the directive "
			"differs\n", (unsigned long long)same);
	}
	char *text = NULL;
	size_t len = 0;
	if ((how->code && !same) || how->blocks)
		rc = r->source(r->ctx, c->source_hash, &text, &len);
	if (rc == CUCO_OK && how->blocks)
		*how->blocks = (int)cuco_text_nblocks(text, len);
	if (rc == CUCO_OK && how->code && !same)
		put_code(b, how, c, text, len);
	free(text);
	free(c);
	return rc;
}

/* The candidates to show besides the parent(s), from the summaries. */
typedef struct picks {
	uint64_t top[16];
	int ntop;
	uint64_t failed[16];
	int nfailed;
	uint64_t rejected[MAX_REJECTIONS];
	int nrejected;
	uint64_t baseline;
} picks;

static bool on_island(const cuco_summary *s, int island)
{
	return island < 0 || s->island == island;
}

/* Keep the k best scores seen so far in top[], best first: one pass over
 * the summaries instead of sorting thousands to show three. */
static void offer(uint64_t *top, double *score, int *n, int k, const cuco_summary *s)
{
	if (k == 0 || (*n == k && s->score <= score[k - 1]))
		return;
	int i = *n < k ? (*n)++ : k - 1;
	while (i > 0 && score[i - 1] < s->score) {
		top[i] = top[i - 1];
		score[i] = score[i - 1];
		i--;
	}
	top[i] = s->id;
	score[i] = s->score;
}

static int choose(const cuco_reader *r, const cuco_prompt_spec *spec, picks *p)
{
	cuco_summary *sums;
	size_t n;
	int rc = r->summaries(r->ctx, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	memset(p, 0, sizeof *p);
	int want_fail = spec->failures < 16 ? spec->failures : 16;
	for (size_t i = n; i-- > 0;) {
		const cuco_summary *s = &sums[i];
		if (s->origin == CUCO_ORIGIN_BASELINE && !p->baseline)
			p->baseline = s->id;
		if (s->status == CUCO_STATUS_FAILED && p->nfailed < want_fail && on_island(s, spec->island))
			p->failed[p->nfailed++] = s->id;
		if (s->status == CUCO_STATUS_REJECTED && p->nrejected < MAX_REJECTIONS)
			p->rejected[p->nrejected++] = s->id;
	}
	int want_top = spec->inspirations < 16 ? spec->inspirations : 16;
	double score[16];
	for (size_t i = 0; i < n; i++)
		if (sums[i].status == CUCO_STATUS_DONE && !isnan(sums[i].score) &&
			sums[i].id != spec->parent && sums[i].id != spec->other &&
			sums[i].origin != CUCO_ORIGIN_BASELINE && on_island(&sums[i], spec->island))
			offer(p->top, score, &p->ntop, want_top, &sums[i]);
	free(sums);
	return CUCO_OK;
}

typedef struct walk {
	cuco_buf *b;
	const cuco_workload *wl;
	cuco_prompt_map *map;
	int shown;
} walk;

static int put_memory_entry(const cuco_memory *m, void *arg)
{
	walk *w = arg;
	if (strcmp(m->workload, w->wl->name) != 0 || w->shown >= MAX_MEMORY)
		return 0;
	size_t start = w->b->len;
	if (w->shown++ == 0)
		cuco_buf_puts(w->b, "\n# Optimization memory (lessons from earlier rewrites)\n");
	if (m->negative)
		cuco_buf_printf(w->b, "- slowed a program down (%.2fx): %s\n", m->speedup, m->summary);
	else
		cuco_buf_printf(w->b, "- sped a program up %.2fx: %s\n", m->speedup, m->summary);
	cuco_prompt_mark(w->map, CUCO_CUT_MEMORY, true, w->b, start);
	return 0;
}

static void put_rejection(cuco_buf *b, const cuco_candidate *c, int *shown)
{
	if (!c->reject_reason[0])
		return;
	char dir[256];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	if ((*shown)++ == 0)
		cuco_buf_puts(b, "\n# Rejected by a reviewer: do not do this again\n");
	cuco_buf_printf(b, "- #%llu (%s): %s\n", (unsigned long long)c->id, dir, c->reject_reason);
}

static const char *const asks[] = {
	[CUCO_PROMPT_DIFF] = "Propose one focused improvement of the current program as "
		"SEARCH/REPLACE hunks.",
	[CUCO_PROMPT_FULL] = "Rewrite the current program's EVOLVE-BLOCKs with a structurally "
		"different design that should be faster (pipelining, overlap, fusion, another "
		"backend), and give the whole file.",
	[CUCO_PROMPT_CROSS] = "Combine the strengths of the current program and the second "
		"parent into one program, and give the whole file.",
	[CUCO_PROMPT_FIX] = "No program of this island is correct yet. Make the current program "
		"correct first (compile, run, match the reference), keeping it fast where you can, "
		"and give the whole file.",
	[CUCO_PROMPT_DIRECTIVE] = "Choose the directive the current program should be built with "
		"to run faster: its code stays as it is, and the directive reaches it as defines. "
		"Pick one not tried yet, from what the measurements say.",
	[CUCO_PROMPT_REPAIR] = "The current program failed; its first error is below. Mend it "
		"with SEARCH/REPLACE hunks: the smallest change that makes it compile, run and match "
		"the reference. Keep its directive unless the error is the directive's.",
};

/* A lean rewrite gives each block's new text instead of the file. */
static const char *ask_of(const cuco_prompt_spec *spec)
{
	static const char *const lean[] = {
		[CUCO_PROMPT_FULL] = "Rewrite the current program's EVOLVE-BLOCKs with a structurally "
			"different design that should be faster (pipelining, overlap, fusion, another "
			"backend), and give each block's new text.",
		[CUCO_PROMPT_CROSS] = "Combine the strengths of the current program and the second "
			"parent into one program, and give each block's new text.",
		[CUCO_PROMPT_FIX] = "No program of this island is correct yet. Make the current program "
			"correct first (compile, run, match the reference), keeping it fast where you can, "
			"with SEARCH/REPLACE hunks.",
	};
	/* lean[] ends before the last kinds: its own length bounds the lookup. */
	if (spec->profile == CUCO_PROFILE_LEAN && (size_t)spec->kind < sizeof lean / sizeof *lean &&
			!spec->json && lean[spec->kind])
		return lean[spec->kind];
	return asks[spec->kind];
}

typedef struct tried_arg {
	cuco_buf *b;
	const char *hash;
	uint64_t parent;
	int shown;
} tried_arg;

static int put_tried(const cuco_candidate *c, void *arg)
{
	tried_arg *a = arg;
	if (c->id == a->parent || strcmp(c->source_hash, a->hash) != 0 || a->shown >= 16 ||
			c->status < CUCO_STATUS_DONE)
		return 0;
	char dir[256];
	cuco_directive_short(&c->directive, dir, sizeof dir);
	if (a->shown++ == 0)
		cuco_buf_puts(a->b, "\n# Directives tried with this code\n");
	if (c->status == CUCO_STATUS_DONE)
		cuco_buf_printf(a->b, "- #%llu %s: %.3fx the baseline\n", (unsigned long long)c->id, dir,
			c->speedup);
	else
		cuco_buf_printf(a->b, "- #%llu %s: %s%s%s\n", (unsigned long long)c->id, dir,
			cuco_status_name(c->status), c->failure.error_class[0] ? ", " : "",
			c->failure.error_class);
	return 0;
}

static int build_user(const cuco_reader *r, const cuco_prompt_spec *spec, cuco_buf *b)
{
	picks p;
	shown_code sc = { .n = 0 };
	bool lean = spec->profile == CUCO_PROFILE_LEAN, directive = spec->kind == CUCO_PROMPT_DIRECTIVE;
	int rc = choose(r, spec, &p);
	/* The lean profile: the speedup says what the baseline would, and
	 * the skeleton shows the parent's directive as a reply states it. */
	if (rc == CUCO_OK && p.baseline && !lean)
		rc = put_program(r, b, "Baseline (the host-driven reference)", p.baseline,
			&(show){ .spec = spec }, &sc);
	cuco_directive parent_dir;
	int blocks = 0;
	char first_error[256] = "";
	show current = { .spec = spec, .code = !directive, .max_code = SIZE_MAX, .as_reply = !lean,
		.blocks = &blocks, .directive = &parent_dir, .first_error = first_error };
	if (rc == CUCO_OK)
		rc = put_program(r, b, "Current program", spec->parent, &current, &sc);
	if (rc == CUCO_OK && spec->kind == CUCO_PROMPT_CROSS)
		rc = put_program(r, b, "Second parent", spec->other,
			&(show){ .spec = spec, .code = true, .max_code = SIZE_MAX }, &sc);
	if (rc == CUCO_OK && directive) {
		char hash[CUCO_HASH_LEN + 1] = "";
		cuco_candidate *c = cuco_xmalloc(sizeof *c);
		if ((rc = r->candidate(r->ctx, spec->parent, c)) == CUCO_OK)
			cuco_strlcpy(hash, c->source_hash, sizeof hash);
		free(c);
		tried_arg ta = { b, hash, spec->parent, 0 };
		if (rc == CUCO_OK)
			rc = r->candidates(r->ctx, 1, put_tried, &ta);
	}
	for (int i = 0; i < p.ntop && rc == CUCO_OK && !lean && !directive; i++) {
		size_t start = b->len;
		rc = put_program(r, b, i == 0 ? "Top programs so far" : "Next top program", p.top[i],
			&(show){ .spec = spec, .code = true, .max_code = MAX_SHOWN_SOURCE }, &sc);
		cuco_prompt_mark(spec->map, CUCO_CUT_TOP, true, b, start);
	}
	int nfailed = lean && p.nfailed > 1 ? 1 : p.nfailed;
	size_t failures = b->len;  /* the first failure's part holds the header */
	if (rc == CUCO_OK && nfailed > 0)
		cuco_buf_puts(b, "\n# Recent failures\n");
	for (int i = 0; i < nfailed && rc == CUCO_OK; i++) {
		size_t start = i == 0 ? failures : b->len;
		cuco_candidate *c = cuco_xmalloc(sizeof *c);
		if ((rc = r->candidate(r->ctx, p.failed[i], c)) == CUCO_OK) {
			char dir[256];
			cuco_directive_short(&c->directive, dir, sizeof dir);
			cuco_buf_printf(b, "## #%llu (%s, %s)\n", (unsigned long long)c->id, dir,
				cuco_origin_name(c->origin));
			put_feedback(b, c, lean ? 300 : 600);
		}
		free(c);
		cuco_prompt_mark(spec->map, CUCO_CUT_FAILURE, true, b, start);
	}
	int shown = 0;
	for (int i = 0; i < p.nrejected && rc == CUCO_OK; i++) {
		cuco_candidate *c = cuco_xmalloc(sizeof *c);
		if ((rc = r->candidate(r->ctx, p.rejected[i], c)) == CUCO_OK)
			put_rejection(b, c, &shown);
		free(c);
	}
	walk w = { b, spec->wl, spec->map, 0 };
	if (rc == CUCO_OK && spec->meta && *spec->meta)
		cuco_buf_printf(b, "\n# Recommendations from the search so far\n%s\n", spec->meta);
	if (rc == CUCO_OK && spec->hints && *spec->hints)
		cuco_buf_printf(b, "\n# Hints from the reviewer\n%s\n", spec->hints);
	if (rc == CUCO_OK && spec->memory)
		rc = r->memories(r->ctx, put_memory_entry, &w);
	if (rc == CUCO_OK) {
		cuco_buf_printf(b, "\n# Your task\n%s State the directive first.\n", ask_of(spec));
		if (spec->kind == CUCO_PROMPT_REPAIR && first_error[0])
			cuco_buf_printf(b, "The first error: %s\n", first_error);
		cuco_prompt_put_skeleton(b, spec->wl, &parent_dir, spec->kind, spec->profile, blocks,
			spec->json);
	}
	return rc;
}

int cuco_prompt_build(const cuco_reader *r, const cuco_prompt_spec *spec, cuco_buf *system,
	cuco_buf *user)
{
	if (spec->map)
		spec->map->ncuts = 0;
	int rc = build_system(r, spec, system);
	return rc == CUCO_OK ? build_user(r, spec, user) : rc;
}

/* ---- fitting to a model's context ------------------------------------------ */

/* The kinds' names in the note, and whether they halve; the enum's order
 * is the table's, the order they are cut in. */
static const char *const cut_names[CUCO_CUT_KINDS] = {
#define X(kind, name, halves) name,
	CUCO_CUT_TABLE(X)
#undef X
};
static const bool cut_halves[CUCO_CUT_KINDS] = {
#define X(kind, name, halves) halves,
	CUCO_CUT_TABLE(X)
#undef X
};

#define DOC_FLOOR 1024   /* a document cut shorter than this goes whole */
#define DOC_NOTE 80      /* bytes the "not shown" line takes */

typedef struct fitting {
	const cuco_prompt_map *map;
	size_t keep[CUCO_PROMPT_CUTS];   /* bytes of each part kept; 0 = dropped */
	size_t total;                    /* bytes of the whole conversation */
} fitting;

static size_t part_len(const fitting *f, int i)
{
	return f->map->cuts[i].end - f->map->cuts[i].start;
}

/* Cut parts of one kind, the last first (a halving kind: halve the
 * longest), until the conversation is within budget or none is left. */
static void cut_kind(fitting *f, cuco_cut_kind kind, size_t budget, int *count)
{
	while (f->total > budget) {
		int pick = -1;
		for (int i = f->map->ncuts - 1; i >= 0; i--) {
			if (f->map->cuts[i].kind != kind || f->keep[i] == 0)
				continue;
			if (pick < 0 || (cut_halves[kind] && f->keep[i] > f->keep[pick]))
				pick = i;
			if (!cut_halves[kind])
				break;
		}
		if (pick < 0)
			return;
		size_t was = f->keep[pick] + (f->keep[pick] < part_len(f, pick) ? DOC_NOTE : 0);
		if (cut_halves[kind] && f->keep[pick] / 2 >= DOC_FLOOR)
			f->keep[pick] /= 2;
		else
			f->keep[pick] = 0;
		size_t now = f->keep[pick] ? f->keep[pick] + DOC_NOTE : 0;
		f->total -= was - now;
		(*count)++;
	}
}

/* Where to end a part cut to n bytes: after a line if one ends near, and
 * never inside a UTF-8 character. */
static size_t cut_point(const char *s, size_t n)
{
	for (size_t k = n; k > 0 && n - k < 400; k--)
		if (s[k - 1] == '\n')
			return k;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static char *assemble(const char *text, bool user, const fitting *f)
{
	cuco_buf b = { 0 };
	size_t at = 0, len = strlen(text);
	for (int i = 0; f->map && i < f->map->ncuts; i++) {
		const struct cuco_cut *c = &f->map->cuts[i];
		if (c->user != user || c->end > len || c->start < at)
			continue;
		size_t n = part_len(f, i);
		if (f->keep[i] == n)
			continue;
		cuco_buf_append(&b, text + at, c->start - at);
		if (f->keep[i] > 0) {
			size_t k = cut_point(text + c->start, f->keep[i]);
			cuco_buf_append(&b, text + c->start, k);
			cuco_buf_printf(&b, "\n[… %zu more bytes not shown: the model's context is short]\n",
				n - k);
		}
		at = c->end;
	}
	cuco_buf_append(&b, text + at, len - at);
	return b.data;
}

static void fit_note(cuco_fitted *out, int64_t context)
{
	cuco_buf cuts = { 0 };
	for (int k = 0; k < CUCO_CUT_KINDS; k++)
		if (out->cut[k] > 0)
			cuco_buf_printf(&cuts, "%s %d %s", cuts.len ? "," : "", out->cut[k], cut_names[k]);
	if (cuts.len > 0)
		snprintf(out->note, sizeof out->note, "fitted to a context of %lld tokens: cut%s",
			(long long)context, cuts.data);
	cuco_buf_free(&cuts);
}

int64_t cuco_prompt_reserve(int64_t context, int max_tokens)
{
	int64_t reply = max_tokens < context / 4 ? max_tokens : context / 4;
	return reply + context / 32;
}

int64_t cuco_prompt_floor(const char *system, const char *user, const cuco_prompt_map *map,
	double bytes_per_token)
{
	size_t total = strlen(system ? system : "") + strlen(user);
	for (int i = 0; map && i < map->ncuts; i++)
		total -= map->cuts[i].end - map->cuts[i].start;
	double bpt = bytes_per_token > 0 ? bytes_per_token : CUCO_BYTES_PER_TOKEN;
	return (int64_t)((double)total / bpt);
}

int cuco_prompt_fit(const char *system, const char *user, const cuco_prompt_map *map,
	const cuco_fit *fit, cuco_fitted *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	system = system ? system : "";
	static const cuco_prompt_map none;
	fitting f = { .map = map ? map : &none, .total = strlen(system) + strlen(user) + fit->extra };
	for (int i = 0; i < f.map->ncuts; i++)
		f.keep[i] = part_len(&f, i);
	double bpt = fit->bytes_per_token > 0 ? fit->bytes_per_token : CUCO_BYTES_PER_TOKEN;
	out->max_tokens = fit->max_tokens;
	if (fit->context > 0) {
		/* The reply keeps its limit, or a quarter of the context when that
		 * is less; a margin of 1/32 absorbs the estimate's error. */
		int64_t margin = fit->context / 32;
		int64_t reserve = cuco_prompt_reserve(fit->context, fit->max_tokens) - margin;
		double room = (double)(fit->context - reserve - margin) * bpt;
		size_t budget = room > 0 ? (size_t)room : 0;
		for (int k = 0; k < CUCO_CUT_KINDS; k++)
			cut_kind(&f, (cuco_cut_kind)k, budget, &out->cut[k]);
		if (f.total > budget)
			return cuco_errf(err, CUCO_EDATA, "the prompt needs about %.0f tokens with every part "
				"that may go cut; a context of %lld tokens leaves it %.0f (%lld for the reply)",
				(double)f.total / bpt, (long long)fit->context, (double)budget / bpt,
				(long long)reserve);
		int64_t left = fit->context - (int64_t)((double)f.total / bpt) - margin;
		if (left < out->max_tokens)
			out->max_tokens = left > 16 ? (int)left : 16;
		fit_note(out, fit->context);
	}
	out->tokens = (int64_t)((double)f.total / bpt);
	out->system = assemble(system, false, &f);
	out->user = assemble(user, true, &f);
	return CUCO_OK;
}

void cuco_fitted_free(cuco_fitted *f)
{
	free(f->system);
	free(f->user);
	f->system = f->user = NULL;
}
