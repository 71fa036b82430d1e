/* teach.c — one or two sentences on every directive dimension, phase,
 * failure class, status and origin, reachable with `t` where they appear.
 * The dimensions' and failure classes' words are the store's tables
 * (CUCO_DIRECTIVE_DIMS, CUCO_FAIL_CLASSES); a workload's own `help` strings
 * (kept in the run's meta) win for the dimensions: they speak of that
 * workload's values. */
#include "tui/screen.h"

#include <string.h>

const char *tui_teach_dim(const tui_model *m, int dim)
{
	if (dim < 0 || dim >= CUCO_DIRDIM_COUNT)
		return "";
	return m->dim_help[dim][0] ? m->dim_help[dim] : cuco_dirdim_help((cuco_dirdim)dim);
}

static const struct { const char *name, *text; } phases[] = {
	{ "compute", "compute: time spent in the arithmetic itself (GEMM, attention, expert MLPs)." },
	{ "comm", "comm: time the data transfer takes, whether or not compute hides it." },
	{ "sync", "sync: time spent waiting at barriers, fences or flags for data to be visible." },
	{ "exposed_comm", "exposed_comm: the part of communication that compute did not hide: what "
		"overlap is trying to drive to zero." },
	{ "host", "host: launch and orchestration overhead on the CPU side (kernel launches, host "
		"NCCL calls, MPI progress)." },
};

int tui_phase_slot(const char *phase)
{
	for (int i = 0; i < (int)(sizeof phases / sizeof phases[0]); i++)
		if (strcmp(phase, phases[i].name) == 0)
			return i;
	return TUI_FILLS - 1;
}

const char *tui_teach_phase(const char *phase)
{
	int i = tui_phase_slot(phase);
	return i < TUI_FILLS - 1 ? phases[i].text
		: "a phase this workload's harness reports by its own name.";
}

const char *tui_teach_error(const char *error_class)
{
	cuco_fail_class f;
	return cuco_fail_parse(error_class, &f) == CUCO_OK ? cuco_fail_help(f)
		: "a failure class this version does not know.";
}

const char *tui_teach_status(cuco_status s)
{
	static const char *const text[CUCO_STATUS_COUNT] = {
		"waiting for the evaluator",
		"being compiled",
		"running once to verify its numbers against the reference",
		"being timed after warm-up",
		"evaluated: correct and timed",
		"failed a stage of the cascade (compile, run or bench)",
		"rejected by a person, with a reason",
	};
	return s < CUCO_STATUS_COUNT ? text[s] : "";
}

const char *tui_teach_origin(cuco_origin o)
{
	static const char *const text[CUCO_ORIGIN_COUNT] = {
		"the host-orchestrated reference every speedup is measured against",
		"the correct device-initiated starting point of the search",
		"written by the fast-path agent from the host baseline",
		"an LLM edit of its parent (search/replace blocks)",
		"an LLM rewrite of the whole program",
		"an LLM crossover of two parents",
		"the directive tuner changed directive values or knobs (no LLM)",
		"edited by a person in the screen or the CLI",
		"AccelOpt's planner/executor wrote it from a plan",
	};
	return o < CUCO_ORIGIN_COUNT ? text[o] : "";
}
