/* meta.c — the typed meta records: what the engine writes of a run for the
 * views to read (store.h, "meta records"). Each has one encoder, used by
 * its writer, and one decoder, used by every reader, so the screen,
 * `cuco report` and `cuco run` read the same fields the same way.
 *
 * Decoding is lenient, as the views were: a record of an older cuco, or
 * one that does not parse, reads as far as it goes and takes its
 * defaults for the rest; only an absent record is CUCO_ENOTFOUND. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

static int meta_write(cuco_txn *txn, const char *key, cJSON *o)
{
	MDB_val k = { strlen(key), (void *)key };
	return store_put_json(txn, T_META, &k, o, 0, "meta");
}

/* The record parsed (NULL when it does not parse), or CUCO_ENOTFOUND. */
static int meta_read(cuco_txn *txn, const char *key, cJSON **out)
{
	char *json = NULL;
	int rc = cuco_meta_get(txn, key, &json);
	*out = rc == CUCO_OK ? cJSON_Parse(json) : NULL;
	free(json);
	return rc;
}

static void copy_str(const cJSON *o, const char *key, char *dst, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsString(v))
		cuco_strlcpy(dst, v->valuestring, size);
}

/* A count: a number in [0, 1e6), else 0. */
static int count_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e6 ? (int)v->valuedouble : 0;
}

/* A record's name: the value itself when it is a string (as older runs
 * kept it), else its "name". */
static void name_of(const cJSON *j, char *dst, size_t size)
{
	if (cJSON_IsString(j))
		cuco_strlcpy(dst, j->valuestring, size);
	else
		copy_str(j, "name", dst, size);
}

int cuco_meta_strategy_put(cuco_txn *txn, const cuco_meta_strategy *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddBoolToObject(o, "hints", s->hints);
	return meta_write(txn, "strategy", o);
}

int cuco_meta_strategy_get(cuco_txn *txn, cuco_meta_strategy *s)
{
	memset(s, 0, sizeof *s);
	s->hints = true;
	cJSON *j;
	int rc = meta_read(txn, "strategy", &j);
	name_of(j, s->name, sizeof s->name);
	const cJSON *hints = cJSON_GetObjectItemCaseSensitive(j, "hints");
	if (cJSON_IsBool(hints))
		s->hints = cJSON_IsTrue(hints);
	cJSON_Delete(j);
	return rc;
}

int cuco_meta_workload_get(cuco_txn *txn, cuco_meta_workload *w)
{
	memset(w, 0, sizeof *w);
	cJSON *j;
	int rc = meta_read(txn, "workload", &j);
	name_of(j, w->name, sizeof w->name);
	const cJSON *space = cJSON_GetObjectItemCaseSensitive(j, "design_space");
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		copy_str(cJSON_GetObjectItemCaseSensitive(space, cuco_dirdim_name((cuco_dirdim)i)), "help",
			w->dim_help[i], sizeof w->dim_help[i]);
	cJSON_Delete(j);
	return rc;
}

int cuco_meta_config_get(cuco_txn *txn, cuco_meta_config *c)
{
	memset(c, 0, sizeof *c);
	cJSON *j;
	int rc = meta_read(txn, "config", &j);
	const cJSON *usd = cJSON_GetObjectItemCaseSensitive(j, "budget_usd");
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(j, "budget_tokens");
	if (cJSON_IsNumber(usd))
		c->budget_usd = usd->valuedouble;
	if (cJSON_IsNumber(tok))
		c->budget_tokens = (int64_t)tok->valuedouble;
	cJSON_Delete(j);
	return rc;
}

int cuco_meta_noise_put(cuco_txn *txn, const char *reason)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "reason", reason);
	return meta_write(txn, "noise", o);
}

int cuco_meta_noise_get(cuco_txn *txn, char *reason, size_t size)
{
	*reason = '\0';
	cJSON *j;
	int rc = meta_read(txn, "noise", &j);
	copy_str(j, "reason", reason, size);
	cJSON_Delete(j);
	return rc;
}

int cuco_meta_slots_put(cuco_txn *txn, const cuco_meta_slots *s)
{
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "slots");
	for (int i = 0; i < s->nslots && i < CUCO_META_SLOTS; i++) {
		const cuco_meta_slot *r = &s->slot[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", r->name);
		cJSON_AddStringToObject(e, "state", r->state);
		cJSON_AddNumberToObject(e, "failures", r->failures);
		cJSON_AddNumberToObject(e, "holds", r->holds);
		if (isfinite(r->baseline_us))
			cJSON_AddNumberToObject(e, "baseline_us", r->baseline_us);
		cJSON_AddItemToArray(arr, e);
	}
	cJSON_AddNumberToObject(o, "idle", s->idle);
	cJSON_AddNumberToObject(o, "busy", s->busy);
	cJSON_AddNumberToObject(o, "resting", s->resting);
	cJSON_AddNumberToObject(o, "retired", s->retired);
	return meta_write(txn, "slots", o);
}

int cuco_meta_slots_get(cuco_txn *txn, cuco_meta_slots *s)
{
	memset(s, 0, sizeof *s);
	cJSON *j;
	int rc = meta_read(txn, "slots", &j);
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "slots")) {
		cuco_meta_slot *r = &s->slot[s->nslots];
		const cJSON *base = cJSON_GetObjectItemCaseSensitive(e, "baseline_us");
		if (s->nslots == CUCO_META_SLOTS || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name")))
			continue;
		copy_str(e, "name", r->name, sizeof r->name);
		copy_str(e, "state", r->state, sizeof r->state);
		r->failures = count_of(e, "failures");
		r->holds = count_of(e, "holds");
		r->baseline_us = cJSON_IsNumber(base) ? base->valuedouble : NAN;
		s->nslots++;
	}
	s->idle = count_of(j, "idle");
	s->busy = count_of(j, "busy");
	s->resting = count_of(j, "resting");
	s->retired = count_of(j, "retired");
	cJSON_Delete(j);
	return rc;
}
