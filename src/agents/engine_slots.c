/* engine_slots.c — the run's slots (eval.h) as the store shows them: a
 * slot's environment failures, rests and retirements as "slot" events,
 * and every slot's state in meta "slots", which the screen's status line
 * and `cuco report` read:
 *
 *   {"slots": [{"name": "n1", "state": "busy", "failures": 0, "holds": 12}, …],
 *    "busy": 1, "idle": 1, "resting": 0, "retired": 0}
 */
#include "agents/engine_int.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static char *slots_json(cuco_engine *e)
{
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
		cJSON_AddItemToArray(arr, s);
		count[info[i].state]++;
	}
	for (int k = 0; k <= CUCO_SLOT_RETIRED; k++)
		cJSON_AddNumberToObject(o, cuco_slot_state_name((cuco_slot_state)k), count[k]);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* The state is read inside the write, so that of two threads' writes the
 * later one holds the later state. The pool's lock is never held around a
 * store write, so taking it here cannot deadlock. */
static int slots_txn(cuco_txn *txn, void *arg)
{
	char *json = slots_json(arg);
	int rc = cuco_meta_put(txn, "slots", json);
	free(json);
	return rc;
}

void engine_slots_write(cuco_engine *e)
{
	cuco_err err = { 0 };
	if (cuco_store_write(e->st, slots_txn, e, &err) != CUCO_OK)
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
