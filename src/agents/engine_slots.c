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
#include "agents/engine_int.h"

#include <cjson/cJSON.h>
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
	int s = engine_slot_index(e, e->resume_base.slot_name);
	if (s < 0) {
		e->baseline_fresh = false;
		return;
	}
	e->resume_base.slot = s;
	e->slots[s].baseline_us = e->resume_base.latency_median_us;
	e->slots[s].baseline_res = e->resume_base;
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
	if (res->ok) {
		s->baseline_us = res->latency_median_us;
		s->baseline_res = *res;
	}
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

static char *slots_json(const slots_arg *a)
{
	cuco_engine *e = a->e;
	cuco_slot_info info[CUCO_MAX_SLOTS];
	int n = cuco_evaluator_slots(e->ev, info, CUCO_MAX_SLOTS);
	int count[CUCO_SLOT_RETIRED + 1] = { 0 };
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "slots");
	for (int i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", info[i].name);
		cJSON_AddStringToObject(s, "state", cuco_slot_state_name(info[i].state));
		cJSON_AddNumberToObject(s, "failures", info[i].failures);
		cJSON_AddNumberToObject(s, "holds", info[i].holds);
		if (isfinite(a->baseline_us[i]))
			cJSON_AddNumberToObject(s, "baseline_us", a->baseline_us[i]);
		cJSON_AddItemToArray(arr, s);
		count[info[i].state]++;
	}
	for (int k = 0; k <= CUCO_SLOT_RETIRED; k++)
		cJSON_AddNumberToObject(o, cuco_slot_state_name((cuco_slot_state)k), count[k]);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* The slots' states are read inside the write, so that of two threads'
 * writes the later one holds the later states (the pool's lock is never
 * held around a store write, so taking it here cannot deadlock); the
 * baselines, which change seldom, are copied before, outside the
 * engine's lock. */
static int slots_txn(cuco_txn *txn, void *arg)
{
	char *json = slots_json(arg);
	int rc = cuco_meta_put(txn, "slots", json);
	free(json);
	return rc;
}

void engine_slots_write(cuco_engine *e)
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
		engine_event(e, "slot", 0, "%s", text);
	engine_slots_write(e);
}
