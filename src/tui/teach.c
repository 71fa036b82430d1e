/* teach.c — one or two sentences on every directive dimension, phase,
 * failure class, status and origin, reachable with `t` where they appear.
 * The dimensions', failure classes', statuses' and origins' words are the
 * vocabulary's tables (CUCO_DIRECTIVE_DIMS, CUCO_FAIL_CLASSES,
 * CUCO_STATUSES, CUCO_ORIGINS: cuco_status_help and cuco_origin_help are
 * called where they are shown); a workload's own `help` strings
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
