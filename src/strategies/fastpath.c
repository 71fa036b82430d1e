/* fastpath.c — CUCo's fast path: from the workload's host-orchestrated
 * baseline to a correct device-initiated seed, in two stages.
 *
 * Stage A adds the device infrastructure (windows, registration, the
 * device communicator) and keeps the host collectives; stage B replaces
 * them with device-initiated communication, barrier-separated phases,
 * EVOLVE-BLOCK markers and a warm-up. Each attempt is a full candidate
 * the engine compiles, runs and verifies; a failure goes back to the
 * model with its stage and error, and the next attempt edits the failed
 * code. Caps: stage_a_max and stage_b_max attempts. Attempts have origin
 * `fastpath`; stage A's stay outside the islands, stage B's are on island
 * 0, where the passing one seeds the slow path. Without a model, or when
 * a cap is reached, the workload's shipped seed stays the starting point
 * (a workload without one has nothing to search from: search_start), and
 * the log and the event log say so.
 *
 * One attempt is in flight at a time, from its model call to its result,
 * which decides the next prompt; meanwhile other proposals go to the
 * islands. A call cancelled by a stop or a pause ends nothing: the stage
 * asks again when the run goes on.
 */
#include "strategies/search_int.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

enum { STAGE_A, STAGE_B, STAGE_DONE };

struct fastpath {
	cuco_strategy_env env;
	search_llm *llm;
	cuco_fastpath_config c;
	int stage;
	int tries[2];
	uint64_t input;           /* the stage's starting program */
	uint64_t last;            /* the stage's last failed attempt, 0 when none */
	uint64_t seen;            /* highest fast-path candidate handled */
	bool in_flight;           /* an attempt is being evaluated */
	bool calling;             /* an attempt is being asked of the model */
	bool live;                /* proposing: observations are no longer a replay */
	cuco_hardware hw;         /* for the prompt's hardware section and its API's backend */
	char feedback[2600];      /* why the last attempt failed, "" when none */
	uint64_t result;
};

static const char *const stage_name[] = { "A", "B" };

/* What each stage asks for, by workload family. A refereed CPU program
 * has no main(): the frame calls its cuco_setup, cuco_step and
 * cuco_teardown, and the referee times and checks every step. */
static const char *stage_task(const cuco_workload *wl, int stage)
{
	static const char *const gpu[2] = {
		"Stage A: add the device infrastructure the NCCL Device API needs and keep every host "
		"collective as it is. Allocate the buffers the ranks exchange with ncclMemAlloc, "
		"register them as windows (ncclCommWindowRegister), build the device communicator "
		"with ncclDevCommCreate from ncclDevCommRequirements (enough LSA barriers for the "
		"CTAs that will synchronize), and launch cooperatively where the kernel will need it. "
		"The program must stay correct and keep its timing and verification.",
		"Stage B: replace the host collectives with device-initiated communication: LSA "
		"loads and stores through peer pointers with LSA barriers (or GIN puts, flushes and "
		"signal waits where the network offers GIN). Split the kernel into barrier-separated "
		"phases, wrap the code a search may change in EVOLVE-BLOCK-START / EVOLVE-BLOCK-END "
		"comment lines (never main(), communicator setup, timing or verification), and add "
		"two warm-up rounds of communication before the timed loop.",
	};
	static const char *const cpu[2] = {
		"Stage A: add the one-sided infrastructure and keep the collective as it is. "
		"Allocate the rows the ranks exchange in an MPI window (MPI_Win_allocate, or "
		"MPI_Win_allocate_shared with MPI_Win_shared_query for ranks of one node), free it at "
		"the end, and keep the program correct with its timing and verification.",
		"Stage B: replace the collective with rank-initiated communication: MPI_Put into the "
		"peers' windows (the GIN analogue) or loads from the shared window (the LSA "
		"analogue), synchronized by fences or per-chunk flags, in barrier-separated phases. "
		"Wrap the code a search may change in EVOLVE-BLOCK-START / EVOLVE-BLOCK-END comment "
		"lines (never main(), MPI setup, timing or verification) and add warm-up rounds "
		"before the timed loop. The built program may keep no collective that moves data "
		"(MPI_Barrier moves none): a binary that links one is refused.",
	};
	static const char *const stepped[2] = {
		"Stage A: add the one-sided infrastructure and keep the collective as it is. The "
		"program has no main(): a trusted frame calls its cuco_setup once, cuco_step for "
		"every step and cuco_teardown at the end, and a referee draws the inputs, times each "
		"step and checks the outputs. In cuco_setup allocate the rows the ranks exchange in "
		"an MPI window (MPI_Win_allocate, or MPI_Win_allocate_shared with "
		"MPI_Win_shared_query for ranks of one node) and keep it in the state; free it in "
		"cuco_teardown. Keep every step correct.",
		"Stage B: replace the collective in cuco_step with rank-initiated communication: "
		"MPI_Put into the peers' windows (the GIN analogue) or loads from the shared window "
		"(the LSA analogue), synchronized by fences or per-chunk flags, in barrier-separated "
		"phases. Wrap the code a search may change in EVOLVE-BLOCK-START / EVOLVE-BLOCK-END "
		"comment lines (the step's communication and compute and the helpers they call; never "
		"the three functions' signatures, which the frame calls). The built program may keep "
		"no collective that moves data (MPI_Barrier moves none): a binary that links one is "
		"refused.",
	};
	if (wl->family != CUCO_FAMILY_CPU_MPI)
		return gpu[stage];
	return wl->protocol == CUCO_PROTO_REFEREE ? stepped[stage] : cpu[stage];
}

/* How a program under the compat protocol reports without a collective
 * (the host-call rule allows it none in stage B: trust.c). */
static const char *stage_report(const cuco_workload *wl, int stage)
{
	if (stage == 0 || wl->protocol != CUCO_PROTO_COMPAT)
		return "";
	return " Report without a collective: let every rank print its own time and verification "
		"lines, as the program's lines are read (the slowest rank's time counts, and every "
		"rank must pass), instead of reducing them to one rank.";
}

static void design_space(const cuco_workload *wl, bool json, cuco_buf *b)
{
	cuco_buf_printf(b, "\nState your directive first, one `name: value` line per dimension "
		"after a `DIRECTIVE:` line, then the whole program %s.\n"
		"Dimensions and their allowed values:\n", json ? "as the JSON's `code`" :
		"in one fenced code block");
	for (int i = 0; i < wl->ndims; i++) {
		const cuco_dim *d = &wl->dims[i];
		cuco_buf_printf(b, "- %s:", d->name);
		for (int v = 0; v < d->nvalues; v++)
			cuco_buf_printf(b, " %s", d->values[v]);
		if (d->nvalues == 0)
			cuco_buf_printf(b, " %s from %ld to %ld", d->pow2 ? "powers of two" : "integers",
				d->min, d->max);
		cuco_buf_printf(b, " (%s)\n", d->help);
	}
}

int fastpath_new(const cuco_strategy_env *env, search_llm *llm, const cuco_fastpath_config *c,
	fastpath **out, cuco_err *err)
{
	(void)err;
	fastpath *f = cuco_xcalloc(1, sizeof *f);
	f->env = *env;
	f->llm = llm;
	f->c = *c;
	f->input = env->baseline_id;
	f->hw = *env->hw;
	*out = f;
	return CUCO_OK;
}

void fastpath_free(fastpath *f)
{
	free(f);
}

bool fastpath_finished(const fastpath *f)
{
	return f->stage == STAGE_DONE;
}

uint64_t fastpath_result(const fastpath *f)
{
	return f->result;
}

/* What the search starts from when the fast path makes nothing. */
static const char *fallback(const fastpath *f)
{
	return f->env.seed_id ? "the workload's shipped seed is used" :
		"and the workload has no seed to fall back on";
}

/* End the fast path and say so in the log, and in the event log unless a
 * resumed run is replaying what an earlier session already said (the
 * replay runs inside a read transaction). */
static void finish(fastpath *f, uint64_t result, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void finish(fastpath *f, uint64_t result, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	f->stage = STAGE_DONE;
	f->result = result;
	cuco_log(result ? CUCO_LOG_INFO : CUCO_LOG_WARN, "fastpath: %s", text);
	if (f->live)
		search_event(f->env.port, CUCO_EVENT_FASTPATH, "fastpath", result, text);
}

/* Count a failed attempt; true when the stage may try again. */
static bool failed(fastpath *f, uint64_t id, const char *why)
{
	int s = f->stage;
	f->tries[s]++;
	if (id)
		f->last = id;
	snprintf(f->feedback, sizeof f->feedback, "Attempt %d of stage %s failed: %s", f->tries[s],
		stage_name[s], why);
	int cap = s == STAGE_A ? f->c.stage_a_max : f->c.stage_b_max;
	if (f->tries[s] < cap)
		return true;
	finish(f, 0, "stage %s failed %d times (last: %.200s); %s", stage_name[s], f->tries[s], why,
		fallback(f));
	return false;
}

static int stage_of(const cuco_candidate *c)
{
	static const char prefix[] = "fast path stage ";
	if (strncmp(c->note, prefix, sizeof prefix - 1) != 0)
		return -1;
	char s = c->note[sizeof prefix - 1];
	return s == 'A' ? STAGE_A : s == 'B' ? STAGE_B : -1;
}

void fastpath_observe(fastpath *f, const cuco_candidate *c)
{
	int stage = stage_of(c);
	if (c->origin != CUCO_ORIGIN_FASTPATH || stage < 0 || c->id <= f->seen ||
			f->stage == STAGE_DONE)
		return;
	if (c->status < CUCO_STATUS_DONE) {
		f->in_flight = true;  /* a resumed run re-evaluates it */
		return;
	}
	f->seen = c->id;
	f->in_flight = false;
	f->stage = stage;
	if (c->status == CUCO_STATUS_DONE) {
		f->tries[stage]++;
		if (stage == STAGE_B) {
			/* The evaluator refused any stage B that links or makes host
			 * collectives (docs/workloads.md, "Host calls"). */
			char calls[64] = "host calls not counted on this runner";
			if (c->timing.host_counted)
				snprintf(calls, sizeof calls, "%lld host calls in its steps",
					(long long)c->timing.host_calls);
			finish(f, c->id, "device-initiated seed #%llu after %d + %d attempts (%s)",
				(unsigned long long)c->id, f->tries[STAGE_A], f->tries[STAGE_B], calls);
			return;
		}
		f->stage = STAGE_B;
		f->input = c->id;
		f->last = 0;
		f->feedback[0] = '\0';
		return;
	}
	char why[2400];
	if (c->status == CUCO_STATUS_REJECTED)
		snprintf(why, sizeof why, "a reviewer rejected it: %s", c->reject_reason);
	else
		snprintf(why, sizeof why, "%s stage, %s:\n%s", c->failure.stage, c->failure.error_class,
			c->failure.excerpt);
	/* A refused attempt (stage B still calling host collectives, say) is
	 * never a parent: the next one starts again from the stage's input,
	 * with the reason. */
	if (cuco_cand_suspect(c))
		f->last = 0;
	failed(f, cuco_cand_suspect(c) ? 0 : c->id, why);
}

int cuco_fastpath_prompt(const cuco_fp_spec *spec, cuco_fp_prompt *out, cuco_err *err)
{
	const cuco_workload *wl = spec->wl;
	bool lean = spec->profile == CUCO_PROFILE_LEAN;
	out->system.len = out->user.len = 0;
	out->map.ncuts = 0;
	memset(out->bytes, 0, sizeof out->bytes);
	out->api_from[0] = '\0';
	cuco_buf_printf(&out->system, "You port programs that overlap computation with communication "
		"from host-orchestrated collectives to device-initiated communication, one stage at a "
		"time, keeping them correct.\n\n# %s\n\n%s\n", wl->title, wl->description);
	size_t intro = out->system.len;
	int rc = fp_reference(wl, spec->hw, spec->program, spec->len, lean, out, err);
	size_t start = out->system.len;
	if (rc == CUCO_OK && !lean)
		rc = cuco_prompt_put_documents(&out->system, wl, &out->map, err);
	out->bytes[CUCO_FP_DOCUMENTS] = out->system.len - start;
	if (rc != CUCO_OK)
		return rc;
	cuco_buf_printf(&out->user, "%s%s\n", stage_task(wl, spec->stage), stage_report(wl, spec->stage));
	design_space(wl, spec->json, &out->user);
	if (spec->feedback && *spec->feedback)
		cuco_buf_printf(&out->user, "\n%s\nFix it in the program below, which is that attempt.\n",
			spec->feedback);
	cuco_buf_puts(&out->user, "\nThe program:\n```c\n");
	cuco_buf_append(&out->user, spec->program, spec->len);
	cuco_buf_puts(&out->user, "```\n");
	cuco_directive first;
	if (!spec->directive)
		cuco_directive_default(wl, &first);
	size_t skeleton = out->user.len;
	/* A stage's reply is the whole program (the baseline has no blocks). */
	cuco_prompt_put_skeleton(&out->user, wl, spec->directive ? spec->directive : &first,
		CUCO_PROMPT_FULL, CUCO_PROFILE_FULL, 0, spec->json);
	out->bytes[CUCO_FP_PROGRAM] = spec->len;
	out->bytes[CUCO_FP_TASK] = intro + skeleton - spec->len + (out->user.len - skeleton);
	return CUCO_OK;
}

void cuco_fp_prompt_free(cuco_fp_prompt *p)
{
	cuco_buf_free(&p->system);
	cuco_buf_free(&p->user);
}

const char *cuco_fp_section_name(cuco_fp_section s)
{
	static const char *const names[CUCO_FP_NSECTIONS] = {
#define X(sec, name) name,
		CUCO_FP_SECTIONS(X)
#undef X
	};
	return (unsigned)s < CUCO_FP_NSECTIONS ? names[s] : "?";
}

/* "task 1.2 KiB, program 2.0 KiB, …: 48.1 KiB in all" */
static void fp_prompt_sizes(const cuco_fp_prompt *p, char *out, size_t size)
{
	size_t n = 0, total = 0;
	out[0] = '\0';
	for (int i = 0; i < CUCO_FP_NSECTIONS && n < size; i++) {
		total += p->bytes[i];
		n += (size_t)snprintf(out + n, size - n, "%s%s %.1f KiB", i ? ", " : "",
			cuco_fp_section_name((cuco_fp_section)i), p->bytes[i] / 1024.0);
	}
	if (n < size)
		snprintf(out + n, size - n, ": %.1f KiB in all", total / 1024.0);
}

typedef struct attempt {
	cuco_fp_prompt p;
	char *parent;
	size_t parent_len;
} attempt;

static int build_attempt(fastpath *f, uint64_t parent, const search_shape *shape, attempt *a,
	cuco_err *err)
{
	int rc = CUCO_OK;
	if (!a->parent)
		rc = f->env.port->candidate(f->env.port->ctx, parent, NULL, &a->parent, &a->parent_len,
			err);
	cuco_fp_spec spec = { .wl = f->env.wl, .hw = &f->hw, .stage = f->stage, .program = a->parent,
		.len = a->parent_len, .feedback = f->feedback, .directive = f->env.seed_directive,
		.profile = shape->profile, .json = shape->json };
	if (rc == CUCO_OK)
		rc = cuco_fastpath_prompt(&spec, &a->p, err);
	if (rc != CUCO_OK)
		return rc;
	/* What the prompt is made of, for the event log and the bench figures. */
	char sizes[400];
	fp_prompt_sizes(&a->p, sizes, sizeof sizes);
	char text[512];
	snprintf(text, sizeof text, "stage %s prompt for #%llu (%s profile): %s", stage_name[f->stage],
		(unsigned long long)parent, cuco_prompt_profile_name(shape->profile), sizes);
	cuco_log(CUCO_LOG_INFO, "fastpath: %s", text);
	if (f->live)
		search_event(f->env.port, CUCO_EVENT_PROMPT, "fastpath", parent, text);
	return CUCO_OK;
}

typedef struct build_arg {
	fastpath *f;
	uint64_t parent;
	attempt *a;
} build_arg;

static int build_shaped(void *arg, const search_shape *shape, const char **system,
	const char **user, const cuco_prompt_map **map, cuco_err *err)
{
	build_arg *b = arg;
	int rc = build_attempt(b->f, b->parent, shape, b->a, err);
	*system = b->a->p.system.data;
	*user = b->a->p.user.data;
	*map = &b->a->p.map;
	return rc;
}

/* One attempt of the current stage: the model's edit of parent, with the
 * lock let go while it answers. CUCO_OK with a proposal, CUCO_EDATA when
 * it was refused (why says so; the attempt counts), another code when no
 * reply came. */
static int attempt_once(fastpath *f, uint64_t parent, attempt *a, cuco_proposal *out,
	cuco_err *why, cuco_err *err)
{
	int model = search_llm_pick(f->llm);
	const cuco_model *m = &f->llm->cfg.models[model];
	search_shape shape;
	int rc = search_build(f->llm, model, build_shaped, &(build_arg){ f, parent, a }, &shape, err);
	if (rc != CUCO_OK)
		return rc;
	/* A stage's reply is the whole program: the baseline has no blocks. */
	char *schema = shape.json
		? cuco_reply_schema(f->env.wl, CUCO_PROMPT_FULL, CUCO_PROFILE_FULL, NULL, 0, NULL)
		: NULL;
	int stage = f->stage;
	search_ledger lg;
	search_ledger_init(&lg, stage == STAGE_A ? CUCO_CALL_FASTPATH_A : CUCO_CALL_FASTPATH_B, parent);
	cuco_edit e = { .model = m, .wl = f->env.wl, .system = a->p.system.data,
		.user = a->p.user.data, .map = &a->p.map, .parent = a->parent, .parent_len = a->parent_len,
		.base = f->env.seed_directive, .schema = schema, .code_required = true,
		.temperature = 0.0, .attempts = f->llm->cfg.patch_attempts };
	cuco_edit_result r;
	memset(&r, 0, sizeof r);
	f->calling = true;
	rc = search_llm_edit(f->llm, &lg, &e, &r, why);
	f->calling = false;
	if (rc == CUCO_OK && stage == STAGE_B) {
		cuco_block *b;
		size_t n;
		rc = cuco_text_blocks(r.source, r.len, "the program", &b, &n, why);
		free(b);
		if (rc == CUCO_OK && n == 0)
			rc = cuco_errf(why, CUCO_EDATA, "the program has no EVOLVE-BLOCK-START / "
				"EVOLVE-BLOCK-END markers");
		if (rc != CUCO_OK)
			search_ledger_refused(&lg, why->msg);
	}
	if (rc == CUCO_EDATA)
		search_refuse(f->llm, &lg, stage == STAGE_B ? 0 : -1, m->name, r.prompt, r.transcript,
			why->msg);
	if (rc == CUCO_OK && (rc = search_fill(f->llm, &lg, m, &r, out, err)) == CUCO_OK) {
		char note[sizeof out->cand.note];
		int cap = stage == STAGE_A ? f->c.stage_a_max : f->c.stage_b_max;
		/* The reply's own description, when it gave one. */
		snprintf(note, sizeof note, "fast path stage %s %d/%d%s%.460s", stage_name[stage],
			f->tries[stage] + 1, cap, *out->cand.note ? ": " : "", out->cand.note);
		cuco_strlcpy(out->cand.note, note, sizeof out->cand.note);
		out->cand.origin = CUCO_ORIGIN_FASTPATH;
		/* Stage A still runs host collectives: no island's parent. */
		out->cand.island = stage == STAGE_B ? 0 : -1;
		out->cand.nparents = 1;
		out->cand.parents[0] = parent;
	} else if (rc != CUCO_OK && rc != CUCO_EDATA) {
		*err = *why;
		if (lg.cancelled)
			rc = CUCO_EBUSY;  /* a stop or a pause: not the model's fault */
	}
	search_ledger_close(f->llm, &lg);
	cuco_edit_result_free(&r);
	free(schema);
	return rc;
}

int fastpath_propose(fastpath *f, cuco_proposal *out, bool *waiting, cuco_err *err)
{
	*waiting = false;
	f->live = true;
	if (f->stage == STAGE_DONE)
		return CUCO_ENOTFOUND;
	if (f->in_flight || f->calling) {
		*waiting = true;
		return CUCO_OK;
	}
	if (!f->llm->llm) {
		finish(f, 0, "no model is configured; %s", fallback(f));
		return CUCO_ENOTFOUND;
	}
	attempt a = { 0 };
	int rc = CUCO_OK;
	while (rc == CUCO_OK && f->stage != STAGE_DONE && !f->in_flight) {
		uint64_t parent = f->last ? f->last : f->input;
		free(a.parent);
		a.parent = NULL;
		cuco_err why = { 0 };
		rc = attempt_once(f, parent, &a, out, &why, err);
		if (rc == CUCO_OK) {
			f->in_flight = true;
		} else if (rc == CUCO_EDATA) {
			failed(f, 0, why.msg);
			rc = CUCO_OK;
		} else if (rc == CUCO_EENV) {
			finish(f, 0, "the model could not be reached (%.200s); %s", why.msg, fallback(f));
			rc = CUCO_OK;
		}
		/* CUCO_EAGAIN: the server failed, not the attempt: the engine asks
		 * again. CUCO_EBUSY: cancelled. CUCO_ENOTFOUND: the budget is spent. */
	}
	free(a.parent);
	cuco_fp_prompt_free(&a.p);
	if (rc == CUCO_EBUSY)
		return CUCO_EENV;  /* the engine knows the run was stopped or paused */
	if (rc != CUCO_OK)
		return rc;
	return f->in_flight ? CUCO_OK : CUCO_ENOTFOUND;
}
