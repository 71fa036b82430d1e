/* engine_slots.c — the run's slots (eval.h) as the engine keeps them.
 *
 * Each slot has its own baseline: a candidate's speedup divides the
 * latest baseline median of the slot it was measured on, a slot's first
 * candidate is followed at once by the baseline there, and a slot's
 * baseline is due again after baseline_every benchmarks on it. Nodes of
 * a cluster differ, so no ratio ever mixes two.
 *
 * The store shows them: a slot's environment failures, rests and
 * retirements as "slot" events, and every slot's state in meta "slots",
 * which the screen's status line and `cuco report` read:
 *
 *   {"slots": [{"name": "n1", "state": "busy", "failures": 0, "holds": 12,
 *               "baseline_us": 812.5}, …],
 *    "busy": 1, "idle": 1, "resting": 0, "retired": 0}
 */
#include "engine/engine_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void engine_slots_init(cuco_engine *e)
{
	cuco_slot_info info[CUCO_MAX_SLOTS];
	e->nslots = cuco_evaluator_slots(e->ev, info, CUCO_MAX_SLOTS);
	e->slots = cuco_xcalloc((size_t)(e->nslots > 0 ? e->nslots : 1), sizeof *e->slots);
	for (int i = 0; i < e->nslots; i++)
		e->slots[i].baseline_us = NAN;
	if (!e->baseline_fresh)
		return;
	/* A resumed run's baseline in force holds on the slot it was measured
	 * on, when this session has that slot; else it is measured again. */
	int s = engine_slot_index(e, e->resume_slot);
	if (s < 0) {
		e->baseline_fresh = false;
		return;
	}
	e->slots[s].baseline_us = e->resume_us;
	e->slots[s].benched = e->resume_benched;
	e->slots[s].due = e->resume_benched >= e->cfg.baseline_every;
}

int engine_slot_index(cuco_engine *e, const char *name)
{
	cuco_slot_info info[CUCO_MAX_SLOTS];
	int n = cuco_evaluator_slots(e->ev, info, CUCO_MAX_SLOTS);
	for (int i = 0; i < n; i++)
		if (strcmp(info[i].name, name) == 0)
			return i;
	return -1;
}

bool engine_claim_baseline(cuco_engine *e, int s)
{
	CUCO_ASSERT(engine_locked(e));
	if (s < 0 || s >= e->nslots || e->slots[s].busy)
		return false;
	e->slots[s].busy = true;
	e->slots[s].due = false;
	return true;
}

int engine_claim_due(cuco_engine *e)
{
	for (int s = 0; s < e->nslots; s++)
		if (e->slots[s].due && engine_claim_baseline(e, s))
			return s;
	return -1;
}

void engine_slot_baseline(cuco_engine *e, const cuco_eval_result *res)
{
	if (res->slot < 0 || res->slot >= e->nslots)
		return;
	engine_slot *s = &e->slots[res->slot];
	if (res->ok)
		s->baseline_us = res->timing.median_us;
	s->benched = 0;
	s->busy = false;
}

void engine_slot_benched(cuco_engine *e, int s, bool counts)
{
	if (s < 0 || s >= e->nslots)
		return;
	if (counts && ++e->slots[s].benched >= e->cfg.baseline_every && !e->slots[s].busy)
		e->slots[s].due = true;
}

typedef struct slots_arg {
	cuco_engine *e;
	double baseline_us[CUCO_MAX_SLOTS];
} slots_arg;

static void slots_meta(const slots_arg *a, cuco_meta_slots *m)
{
	_Static_assert(CUCO_MAX_SLOTS <= CUCO_META_SLOTS, "meta slots hold every slot");
	cuco_slot_info info[CUCO_MAX_SLOTS];
	int n = cuco_evaluator_slots(a->e->ev, info, CUCO_MAX_SLOTS);
	int *count[] = { [CUCO_SLOT_IDLE] = &m->idle, [CUCO_SLOT_BUSY] = &m->busy,
		[CUCO_SLOT_RESTING] = &m->resting, [CUCO_SLOT_RETIRED] = &m->retired };
	memset(m, 0, sizeof *m);
	for (int i = 0; i < n; i++) {
		cuco_meta_slot *s = &m->slot[m->nslots++];
		cuco_strlcpy(s->name, info[i].name, sizeof s->name);
		cuco_strlcpy(s->state, cuco_slot_state_name(info[i].state), sizeof s->state);
		s->failures = info[i].failures;
		s->holds = info[i].holds;
		s->baseline_us = a->baseline_us[i];
		(*count[info[i].state])++;
	}
}

/* The slots' states are read inside the write, so that of two threads'
 * writes the later one holds the later states (the pool's lock is never
 * held around a store write, so taking it here cannot deadlock); the
 * baselines, which change seldom, are copied before, outside the
 * engine's lock. */
static int slots_txn(cuco_txn *txn, void *arg)
{
	cuco_meta_slots *m = cuco_xmalloc(sizeof *m);
	slots_meta(arg, m);
	int rc = cuco_meta_slots_put(txn, m);
	free(m);
	return rc;
}

/* Every slot's state to meta "slots". */
static void engine_slots_write(cuco_engine *e)
{
	slots_arg a = { .e = e };
	pthread_mutex_lock(&e->lock);
	for (int i = 0; i < CUCO_MAX_SLOTS; i++)
		a.baseline_us[i] = i < e->nslots ? e->slots[i].baseline_us : NAN;
	pthread_mutex_unlock(&e->lock);
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, slots_txn, &a, &err) != CUCO_OK)
		cuco_log(CUCO_LOG_WARN, "engine: slots: %s", err.msg);
	engine_wake(e);
}

void engine_slot_changed(void *arg, const cuco_slot_info *slot, const char *text)
{
	cuco_engine *e = arg;
	(void)slot;
	if (*text)
		engine_event(e, CUCO_EVENT_SLOT, 0, "%s", text);
	engine_slots_write(e);
}
