/* start.c — where a search starts: the workload's seed, or, for a
 * workload without one, the program the fast path makes.
 *
 * DESIGN: above both the fast path and the model gateway (search.c), so
 * the fast path calls the gateway and nothing it calls calls it back.
 */
#include "strategies/search_int.h"

#include <string.h>

int search_start_init(search_start *st, const cuco_strategy_env *env, const search_llm *l,
	bool fastpath_on, const char *strategy, cuco_err *err)
{
	memset(st, 0, sizeof *st);
	st->id = env->seed_id;
	cuco_strlcpy(st->hash, env->seed_hash, sizeof st->hash);
	st->directive = *env->seed_directive;
	if (st->id)
		return CUCO_OK;
	if (!l->llm)
		return cuco_errf(err, CUCO_EUSAGE, "%s has no seed: strategy %s starts from the program "
			"the fast path makes, which needs a model (--llm, or a [model] section: "
			"docs/configuration.md)", env->wl->name, strategy);
	if (!fastpath_on)
		return cuco_errf(err, CUCO_EUSAGE, "%s has no seed: strategy %s starts from the program "
			"the fast path makes, and evolve.fastpath is off", env->wl->name, strategy);
	return CUCO_OK;
}

void search_start_observe(search_start *st, const fastpath *fp, const cuco_candidate *c)
{
	if (st->id || !fp || !fastpath_finished(fp) || fastpath_result(fp) != c->id)
		return;
	st->id = c->id;
	cuco_strlcpy(st->hash, c->source_hash, sizeof st->hash);
	st->directive = c->directive;
}

int search_start_ready(const search_start *st, const fastpath *fp, const cuco_workload *wl,
	cuco_err *err)
{
	if (st->id)
		return CUCO_OK;
	if (fp && !fastpath_finished(fp))
		return CUCO_EBUSY;
	return cuco_errf(err, CUCO_EDATA, "%s has no seed and the fast path made no device-initiated "
		"program (its event says why): there is nothing to search from", wl->name);
}
