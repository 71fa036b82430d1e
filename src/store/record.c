/* record.c — the JSON form of every record: what LMDB holds, what
 * `cuco show --json` prints, and what docs/store.md documents. Decoding
 * is strict about types (a string where a number belongs is an error
 * naming the field) and lenient about absence (a missing field takes its
 * default), so older records stay readable. NAN is written as null. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"

static const char *const origin_names[CUCO_ORIGIN_COUNT] = {
	"baseline", "seed", "fastpath", "llm-diff", "llm-full", "llm-cross", "tune", "human", "beam-plan",
};
static const char *const status_names[CUCO_STATUS_COUNT] = {
	"queued", "compiling", "running", "benchmarking", "done", "failed", "rejected",
};
static const char *const command_names[CUCO_CMD_COUNT] = {
	"pin", "unpin", "reject", "edit", "hint", "pause", "resume", "stop",
};

static const char *const fail_names[CUCO_FAIL_COUNT] = {
#define X(e, name, help) name,
	CUCO_FAIL_CLASSES(X)
#undef X
};
static const char *const fail_help[CUCO_FAIL_COUNT] = {
#define X(e, name, help) help,
	CUCO_FAIL_CLASSES(X)
#undef X
};

const char *cuco_fail_name(cuco_fail_class f)
{
	return (unsigned)f < CUCO_FAIL_COUNT ? fail_names[f] : "?";
}

const char *cuco_fail_help(cuco_fail_class f)
{
	return (unsigned)f < CUCO_FAIL_COUNT ? fail_help[f] : "";
}

const char *cuco_origin_name(cuco_origin o)
{
	return (unsigned)o < CUCO_ORIGIN_COUNT ? origin_names[o] : "?";
}

const char *cuco_status_name(cuco_status s)
{
	return (unsigned)s < CUCO_STATUS_COUNT ? status_names[s] : "?";
}

const char *cuco_command_name(cuco_command_kind k)
{
	return (unsigned)k < CUCO_CMD_COUNT ? command_names[k] : "?";
}

static int parse_name(const char *const *names, int count, const char *name)
{
	for (int i = 0; i < count; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int cuco_origin_parse(const char *name, cuco_origin *out)
{
	int i = parse_name(origin_names, CUCO_ORIGIN_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_origin)i;
	return CUCO_OK;
}

int cuco_fail_parse(const char *name, cuco_fail_class *out)
{
	int i = parse_name(fail_names, CUCO_FAIL_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_fail_class)i;
	return CUCO_OK;
}

int cuco_status_parse(const char *name, cuco_status *out)
{
	int i = parse_name(status_names, CUCO_STATUS_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_status)i;
	return CUCO_OK;
}

int cuco_command_parse(const char *name, cuco_command_kind *out)
{
	int i = parse_name(command_names, CUCO_CMD_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_command_kind)i;
	return CUCO_OK;
}

/* ---- field helpers ---------------------------------------------------------- */

static void add_num(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* u64 ids above 2^53 would lose precision as JSON numbers; ids never get
 * there (one per evaluation), so plain numbers keep the records readable. */
static void add_id(cJSON *o, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(o, key, (double)v);
}

typedef struct decoder {
	const cJSON *obj;
	cuco_err *err;
	int rc;
} decoder;

static const cJSON *field(decoder *d, const char *key)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(d->obj, key);
	return (f && !cJSON_IsNull(f)) ? f : NULL;
}

static void bad(decoder *d, const char *key, const char *want)
{
	if (d->rc == CUCO_OK)
		d->rc = cuco_errf(d->err, CUCO_EDATA, "field %s: expected %s", key, want);
}

static void get_str(decoder *d, const char *key, char *dst, size_t size)
{
	const cJSON *f = field(d, key);
	if (!f)
		return;
	if (!cJSON_IsString(f))
		bad(d, key, "a string");
	else
		cuco_strlcpy(dst, f->valuestring, size);
}

static void get_num(decoder *d, const char *key, double *dst, double absent)
{
	const cJSON *f = field(d, key);
	*dst = absent;
	if (!f)
		return;
	if (!cJSON_IsNumber(f))
		bad(d, key, "a number");
	else
		*dst = f->valuedouble;
}

/* Integers are read from JSON doubles; past 2^53 a double no longer holds
 * every integer, and past 2^63 the conversion is undefined (a corrupt
 * record with "prompt": 5e62 found that, tests/fuzz/fuzz_record), so
 * larger values are refused. */
#define JSON_INT_MAX 9007199254740992.0

static void get_int(decoder *d, const char *key, int *dst)
{
	double v;
	get_num(d, key, &v, *dst);
	if (d->rc == CUCO_OK && (v != floor(v) || v < -2147483648.0 || v > 2147483647.0))
		bad(d, key, "an integer");
	else if (d->rc == CUCO_OK)
		*dst = (int)v;
}

static void get_u64(decoder *d, const char *key, uint64_t *dst)
{
	double v;
	get_num(d, key, &v, (double)*dst);
	if (d->rc == CUCO_OK && (v < 0 || v != floor(v) || v > JSON_INT_MAX))
		bad(d, key, "a non-negative integer");
	else if (d->rc == CUCO_OK)
		*dst = (uint64_t)v;
}

static void get_i64(decoder *d, const char *key, int64_t *dst)
{
	double v;
	get_num(d, key, &v, (double)*dst);
	if (d->rc == CUCO_OK && (v != floor(v) || fabs(v) > JSON_INT_MAX))
		bad(d, key, "an integer");
	else if (d->rc == CUCO_OK)
		*dst = (int64_t)v;
}

static void get_bool(decoder *d, const char *key, bool *dst)
{
	const cJSON *f = field(d, key);
	if (!f)
		return;
	if (!cJSON_IsBool(f))
		bad(d, key, "true or false");
	else
		*dst = cJSON_IsTrue(f);
}

/* ---- directive ------------------------------------------------------------- */

static const struct {
	const char *name, *help;
	size_t offset;
} dirdims[CUCO_DIRDIM_COUNT] = {
#define X(e, field, text) { #field, text, offsetof(cuco_directive, field) },
	CUCO_DIRECTIVE_DIMS(X)
#undef X
};

const char *cuco_dirdim_name(cuco_dirdim d)
{
	return (unsigned)d < CUCO_DIRDIM_COUNT ? dirdims[d].name : "?";
}

const char *cuco_dirdim_help(cuco_dirdim d)
{
	return (unsigned)d < CUCO_DIRDIM_COUNT ? dirdims[d].help : "";
}

int cuco_dirdim_find(const char *name)
{
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		if (strcmp(name, dirdims[i].name) == 0)
			return i;
	return -1;
}

static char *dirdim_field(cuco_directive *d, int dim)
{
	return (char *)d + dirdims[dim].offset;
}

const char *cuco_directive_get(const cuco_directive *d, cuco_dirdim dim)
{
	return (unsigned)dim < CUCO_DIRDIM_COUNT ? dirdim_field((cuco_directive *)d, (int)dim) : "";
}

const char *cuco_directive_value(const cuco_directive *d, const char *name)
{
	int dim = cuco_dirdim_find(name);
	if (dim >= 0)
		return cuco_directive_get(d, (cuco_dirdim)dim);
	const char *v = cuco_knob_get(d, name);
	return v ? v : "";
}

int cuco_directive_set(cuco_directive *d, const char *name, const char *value)
{
	int dim = cuco_dirdim_find(name);
	if (dim >= 0)
		return cuco_strlcpy(dirdim_field(d, dim), value, sizeof d->backend) ? CUCO_OK : CUCO_EDATA;
	int i = 0;
	while (i < d->nknobs && strcmp(d->knobs[i].name, name) != 0)
		i++;
	if (i == d->nknobs) {
		if (d->nknobs == CUCO_MAX_KNOBS || strlen(name) >= sizeof d->knobs[0].name)
			return CUCO_EDATA;
		cuco_strlcpy(d->knobs[i].name, name, sizeof d->knobs[0].name);
		d->nknobs++;
	}
	return cuco_strlcpy(d->knobs[i].value, value, sizeof d->knobs[0].value) ? CUCO_OK : CUCO_EDATA;
}

cJSON *cuco_directive_to_json(const cuco_directive *dv)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		cJSON_AddStringToObject(o, dirdims[i].name, cuco_directive_get(dv, (cuco_dirdim)i));
	cJSON *knobs = cJSON_AddObjectToObject(o, "knobs");
	for (int i = 0; i < dv->nknobs && i < CUCO_MAX_KNOBS; i++)
		cJSON_AddStringToObject(knobs, dv->knobs[i].name, dv->knobs[i].value);
	return o;
}

int cuco_directive_from_json(const cJSON *j, cuco_directive *out, cuco_err *err)
{
	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(j))
		return cuco_errf(err, CUCO_EDATA, "directive: expected an object");
	decoder d = { j, err, CUCO_OK };
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++)
		get_str(&d, dirdims[i].name, dirdim_field(out, i), sizeof out->backend);
	const cJSON *knobs = field(&d, "knobs");
	if (knobs && !cJSON_IsObject(knobs))
		bad(&d, "knobs", "an object");
	const cJSON *k;
	cJSON_ArrayForEach(k, knobs) {
		if (d.rc != CUCO_OK)
			break;
		if (out->nknobs == CUCO_MAX_KNOBS) {
			d.rc = cuco_errf(err, CUCO_EDATA, "field knobs: more than %d knobs", CUCO_MAX_KNOBS);
			break;
		}
		cuco_knob *kn = &out->knobs[out->nknobs++];
		cuco_strlcpy(kn->name, k->string, sizeof kn->name);
		if (cJSON_IsString(k))
			cuco_strlcpy(kn->value, k->valuestring, sizeof kn->value);
		else if (cJSON_IsNumber(k))
			snprintf(kn->value, sizeof kn->value, "%.17g", k->valuedouble);
		else
			bad(&d, "knobs", "string or number values");
	}
	return d.rc;
}

const char *cuco_knob_get(const cuco_directive *dv, const char *name)
{
	for (int i = 0; i < dv->nknobs && i < CUCO_MAX_KNOBS; i++)
		if (strcmp(dv->knobs[i].name, name) == 0)
			return dv->knobs[i].value;
	return NULL;
}

void cuco_directive_short(const cuco_directive *dv, char *buf, size_t size)
{
	int n = 0;
	buf[0] = '\0';
	for (int i = 0; i < CUCO_DIRDIM_COUNT && n >= 0 && (size_t)n < size; i++) {
		const char *v = cuco_directive_get(dv, (cuco_dirdim)i);
		n += snprintf(buf + n, size - (size_t)n, "%s%s", i ? "/" : "", *v ? v : "-");
	}
	for (int i = 0; i < dv->nknobs && n >= 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - (size_t)n, " %s=%s", dv->knobs[i].name, dv->knobs[i].value);
}

/* ---- candidate ------------------------------------------------------------- */

cJSON *cuco_candidate_to_json(const cuco_candidate *c)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "id", c->id);
	cJSON *parents = cJSON_AddArrayToObject(o, "parents");
	for (int i = 0; i < c->nparents && i < CUCO_MAX_PARENTS; i++)
		cJSON_AddItemToArray(parents, cJSON_CreateNumber((double)c->parents[i]));
	cJSON_AddNumberToObject(o, "island", c->island);
	cJSON_AddNumberToObject(o, "generation", c->generation);
	cJSON_AddStringToObject(o, "origin", cuco_origin_name(c->origin));
	cJSON_AddStringToObject(o, "status", cuco_status_name(c->status));
	cJSON_AddItemToObject(o, "directive", cuco_directive_to_json(&c->directive));
	cJSON_AddStringToObject(o, "source_hash", c->source_hash);
	cJSON_AddStringToObject(o, "prompt_hash", c->prompt_hash);
	cJSON_AddStringToObject(o, "reply_hash", c->reply_hash);
	cJSON_AddStringToObject(o, "failed_stage", c->failed_stage);
	cJSON_AddStringToObject(o, "error_class", c->error_class);
	cJSON_AddStringToObject(o, "error_excerpt", c->error_excerpt);
	add_num(o, "score", c->score);
	cJSON *lat = cJSON_AddObjectToObject(o, "latency_us");
	add_num(lat, "min", c->latency_min_us);
	add_num(lat, "median", c->latency_median_us);
	add_num(lat, "p90", c->latency_p90_us);
	cJSON_AddNumberToObject(lat, "samples", c->samples);
	add_num(lat, "spread", c->spread);
	cJSON *ph = cJSON_AddObjectToObject(o, "phases_us");
	for (int i = 0; i < c->nphases && i < CUCO_MAX_PHASES; i++)
		add_num(ph, c->phases[i].name, c->phases[i].us);
	add_num(o, "max_error", c->max_error);
	add_num(o, "speedup", c->speedup);
	add_num(o, "peak_fraction", c->peak_fraction);
	cJSON_AddBoolToObject(o, "pinned", c->pinned);
	cJSON_AddStringToObject(o, "reject_reason", c->reject_reason);
	cJSON_AddStringToObject(o, "model", c->model);
	cJSON *tok = cJSON_AddObjectToObject(o, "tokens");
	cJSON_AddNumberToObject(tok, "prompt", (double)c->tokens_prompt);
	cJSON_AddNumberToObject(tok, "completion", (double)c->tokens_completion);
	cJSON_AddNumberToObject(o, "cost_usd", c->cost_usd);
	cJSON_AddNumberToObject(o, "created", c->created);
	cJSON_AddNumberToObject(o, "updated", c->updated);
	cJSON_AddStringToObject(o, "note", c->note);
	cJSON_AddStringToObject(o, "slot", c->slot);
	return o;
}

static void get_enum(decoder *d, const char *key, int *dst, int (*parse)(const char *, int *))
{
	char name[32] = "";
	get_str(d, key, name, sizeof name);
	if (d->rc == CUCO_OK && name[0] && parse(name, dst) != CUCO_OK && d->rc == CUCO_OK)
		d->rc = cuco_errf(d->err, CUCO_EDATA, "field %s: unknown value '%s'", key, name);
}

static int parse_origin(const char *s, int *v)
{
	cuco_origin o;
	int rc = cuco_origin_parse(s, &o);
	*v = (int)o;
	return rc;
}

static int parse_status(const char *s, int *v)
{
	cuco_status st;
	int rc = cuco_status_parse(s, &st);
	*v = (int)st;
	return rc;
}

static void get_parents(decoder *d, cuco_candidate *c)
{
	const cJSON *p = field(d, "parents");
	if (!p)
		return;
	if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) > CUCO_MAX_PARENTS) {
		bad(d, "parents", "an array of at most 2 ids");
		return;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, p) {
		double v = cJSON_IsNumber(e) ? e->valuedouble : 0;
		if (v < 1 || v != floor(v) || v > JSON_INT_MAX) {
			bad(d, "parents", "positive integer ids");
			return;
		}
		c->parents[c->nparents++] = (uint64_t)v;
	}
}

static void get_latency_and_phases(decoder *d, cuco_candidate *c, cuco_err *err)
{
	const cJSON *lat = field(d, "latency_us");
	if (lat && !cJSON_IsObject(lat))
		bad(d, "latency_us", "an object");
	else if (lat) {
		decoder ld = { lat, err, CUCO_OK };
		get_num(&ld, "min", &c->latency_min_us, NAN);
		get_num(&ld, "median", &c->latency_median_us, NAN);
		get_num(&ld, "p90", &c->latency_p90_us, NAN);
		get_int(&ld, "samples", &c->samples);
		get_num(&ld, "spread", &c->spread, NAN);
		if (ld.rc && d->rc == CUCO_OK)
			d->rc = cuco_errf(err, CUCO_EDATA, "latency_us: %s", err->msg);
	}
	const cJSON *ph = field(d, "phases_us");
	if (ph && !cJSON_IsObject(ph)) {
		bad(d, "phases_us", "an object");
		return;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, ph) {
		if (c->nphases == CUCO_MAX_PHASES)
			break;
		if (!cJSON_IsNumber(e) && !cJSON_IsNull(e)) {
			bad(d, "phases_us", "numbers");
			return;
		}
		cuco_phase *p = &c->phases[c->nphases++];
		cuco_strlcpy(p->name, e->string, sizeof p->name);
		p->us = cJSON_IsNumber(e) ? e->valuedouble : NAN;
	}
}

int cuco_candidate_from_json(const cJSON *j, cuco_candidate *c, cuco_err *err)
{
	memset(c, 0, sizeof *c);
	if (!cJSON_IsObject(j))
		return cuco_errf(err, CUCO_EDATA, "candidate: expected an object");
	decoder d = { j, err, CUCO_OK };
	c->island = -1;
	get_u64(&d, "id", &c->id);
	get_parents(&d, c);
	get_int(&d, "island", &c->island);
	get_int(&d, "generation", &c->generation);
	int v = 0;
	get_enum(&d, "origin", &v, parse_origin);
	c->origin = (cuco_origin)v;
	v = 0;
	get_enum(&d, "status", &v, parse_status);
	c->status = (cuco_status)v;
	const cJSON *dir = field(&d, "directive");
	if (dir && d.rc == CUCO_OK && cuco_directive_from_json(dir, &c->directive, err) != CUCO_OK)
		d.rc = CUCO_EDATA;
	get_str(&d, "source_hash", c->source_hash, sizeof c->source_hash);
	get_str(&d, "prompt_hash", c->prompt_hash, sizeof c->prompt_hash);
	get_str(&d, "reply_hash", c->reply_hash, sizeof c->reply_hash);
	get_str(&d, "failed_stage", c->failed_stage, sizeof c->failed_stage);
	get_str(&d, "error_class", c->error_class, sizeof c->error_class);
	get_str(&d, "error_excerpt", c->error_excerpt, sizeof c->error_excerpt);
	get_num(&d, "score", &c->score, NAN);
	c->latency_min_us = c->latency_median_us = c->latency_p90_us = c->spread = NAN;
	get_latency_and_phases(&d, c, err);
	get_num(&d, "max_error", &c->max_error, NAN);
	get_num(&d, "speedup", &c->speedup, NAN);
	get_num(&d, "peak_fraction", &c->peak_fraction, NAN);
	get_bool(&d, "pinned", &c->pinned);
	get_str(&d, "reject_reason", c->reject_reason, sizeof c->reject_reason);
	get_str(&d, "model", c->model, sizeof c->model);
	const cJSON *tok = field(&d, "tokens");
	if (tok && cJSON_IsObject(tok)) {
		decoder td = { tok, err, CUCO_OK };
		get_i64(&td, "prompt", &c->tokens_prompt);
		get_i64(&td, "completion", &c->tokens_completion);
		if (td.rc && d.rc == CUCO_OK)
			d.rc = td.rc;
	} else if (tok) {
		bad(&d, "tokens", "an object");
	}
	get_num(&d, "cost_usd", &c->cost_usd, 0);
	get_num(&d, "created", &c->created, 0);
	get_num(&d, "updated", &c->updated, 0);
	get_str(&d, "note", c->note, sizeof c->note);
	get_str(&d, "slot", c->slot, sizeof c->slot);
	return d.rc;
}

/* ---- the other records ------------------------------------------------------ */

int store_parse_schema(const void *data, size_t len, int *version)
{
	cJSON *j = cJSON_ParseWithLength(data, len);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "format");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
	int rc = CUCO_EDATA;
	if (cJSON_IsString(f) && strcmp(f->valuestring, "cuco-store") == 0 && cJSON_IsNumber(v)) {
		*version = v->valueint;
		rc = CUCO_OK;
	}
	cJSON_Delete(j);
	return rc;
}

cJSON *store_event_to_json(const cuco_event *ev)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "seq", ev->seq);
	cJSON_AddNumberToObject(o, "time", ev->time);
	cJSON_AddStringToObject(o, "kind", ev->kind);
	add_id(o, "candidate", ev->candidate);
	cJSON_AddStringToObject(o, "author", ev->author);
	cJSON_AddStringToObject(o, "text", ev->text);
	return o;
}

int store_event_from_json(const cJSON *j, cuco_event *ev)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(ev, 0, sizeof *ev);
	get_u64(&d, "seq", &ev->seq);
	get_num(&d, "time", &ev->time, 0);
	get_str(&d, "kind", ev->kind, sizeof ev->kind);
	get_u64(&d, "candidate", &ev->candidate);
	get_str(&d, "author", ev->author, sizeof ev->author);
	get_str(&d, "text", ev->text, sizeof ev->text);
	return d.rc;
}

cJSON *store_command_to_json(const cuco_command *c)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "seq", c->seq);
	cJSON_AddNumberToObject(o, "time", c->time);
	cJSON_AddStringToObject(o, "kind", cuco_command_name(c->kind));
	add_id(o, "candidate", c->candidate);
	cJSON_AddNumberToObject(o, "island", c->island);
	cJSON_AddStringToObject(o, "author", c->author);
	cJSON_AddStringToObject(o, "text", c->text);
	cJSON_AddStringToObject(o, "source_hash", c->source_hash);
	cJSON_AddBoolToObject(o, "acked", c->acked);
	cJSON_AddNumberToObject(o, "ack_time", c->ack_time);
	cJSON_AddStringToObject(o, "ack_result", c->ack_result);
	return o;
}

int store_command_from_json(const cJSON *j, cuco_command *c)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(c, 0, sizeof *c);
	c->island = -1;
	get_u64(&d, "seq", &c->seq);
	get_num(&d, "time", &c->time, 0);
	char kind[16] = "";
	get_str(&d, "kind", kind, sizeof kind);
	if (d.rc == CUCO_OK && cuco_command_parse(kind, &c->kind) != CUCO_OK)
		d.rc = CUCO_EDATA;
	get_u64(&d, "candidate", &c->candidate);
	get_int(&d, "island", &c->island);
	get_str(&d, "author", c->author, sizeof c->author);
	get_str(&d, "text", c->text, sizeof c->text);
	get_str(&d, "source_hash", c->source_hash, sizeof c->source_hash);
	get_bool(&d, "acked", &c->acked);
	get_num(&d, "ack_time", &c->ack_time, 0);
	get_str(&d, "ack_result", c->ack_result, sizeof c->ack_result);
	return d.rc;
}

cJSON *store_island_to_json(const cuco_island *isl)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", isl->id);
	cJSON_AddStringToObject(o, "phase", isl->phase);
	cJSON_AddNumberToObject(o, "generation", isl->generation);
	cJSON_AddNumberToObject(o, "members", isl->members);
	add_id(o, "champion", isl->champion);
	add_num(o, "best_score", isl->best_score);
	add_num(o, "best_speedup", isl->best_speedup);
	cJSON_AddNumberToObject(o, "last_improvement", isl->last_improvement);
	cJSON_AddNumberToObject(o, "migrations", isl->migrations);
	return o;
}

int store_island_from_json(const cJSON *j, cuco_island *isl)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(isl, 0, sizeof *isl);
	get_int(&d, "id", &isl->id);
	get_str(&d, "phase", isl->phase, sizeof isl->phase);
	get_int(&d, "generation", &isl->generation);
	get_int(&d, "members", &isl->members);
	get_u64(&d, "champion", &isl->champion);
	get_num(&d, "best_score", &isl->best_score, NAN);
	get_num(&d, "best_speedup", &isl->best_speedup, NAN);
	get_num(&d, "last_improvement", &isl->last_improvement, 0);
	get_int(&d, "migrations", &isl->migrations);
	return d.rc;
}

cJSON *store_memory_to_json(const cuco_memory *m)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "id", m->id);
	cJSON_AddStringToObject(o, "workload", m->workload);
	cJSON_AddStringToObject(o, "slow_hash", m->slow_hash);
	cJSON_AddStringToObject(o, "fast_hash", m->fast_hash);
	add_num(o, "speedup", m->speedup);
	cJSON_AddBoolToObject(o, "negative", m->negative);
	cJSON_AddStringToObject(o, "summary", m->summary);
	return o;
}

int store_memory_from_json(const cJSON *j, cuco_memory *m)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(m, 0, sizeof *m);
	get_u64(&d, "id", &m->id);
	get_str(&d, "workload", m->workload, sizeof m->workload);
	get_str(&d, "slow_hash", m->slow_hash, sizeof m->slow_hash);
	get_str(&d, "fast_hash", m->fast_hash, sizeof m->fast_hash);
	get_num(&d, "speedup", &m->speedup, NAN);
	get_bool(&d, "negative", &m->negative);
	get_str(&d, "summary", m->summary, sizeof m->summary);
	return d.rc;
}
