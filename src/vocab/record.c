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
#include <xxhash.h>

#include "vocab/vocab.h"

static const char *const origin_names[CUCO_ORIGIN_COUNT] = {
#define X(e, name, help) name,
	CUCO_ORIGINS(X)
#undef X
};
static const char *const origin_help[CUCO_ORIGIN_COUNT] = {
#define X(e, name, help) help,
	CUCO_ORIGINS(X)
#undef X
};
static const char *const status_names[CUCO_STATUS_COUNT] = {
#define X(e, name, help) name,
	CUCO_STATUSES(X)
#undef X
};
static const char *const status_help[CUCO_STATUS_COUNT] = {
#define X(e, name, help) help,
	CUCO_STATUSES(X)
#undef X
};
static const char *const command_names[CUCO_CMD_COUNT] = {
#define X(e, name, past) name,
	CUCO_COMMAND_KINDS(X)
#undef X
};
static const char *const command_past[CUCO_CMD_COUNT] = {
#define X(e, name, past) past,
	CUCO_COMMAND_KINDS(X)
#undef X
};

static const char *const event_names[CUCO_EVENT_KIND_COUNT] = {
	"unknown",
#define X(e, name, help) name,
	CUCO_EVENT_KINDS(X)
#undef X
};
static const char *const event_help[CUCO_EVENT_KIND_COUNT] = {
	"a kind this cuco does not know (an older or a newer cuco's)",
#define X(e, name, help) help,
	CUCO_EVENT_KINDS(X)
#undef X
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

const char *cuco_origin_help(cuco_origin o)
{
	return (unsigned)o < CUCO_ORIGIN_COUNT ? origin_help[o] : "";
}

const char *cuco_status_name(cuco_status s)
{
	return (unsigned)s < CUCO_STATUS_COUNT ? status_names[s] : "?";
}

const char *cuco_status_help(cuco_status s)
{
	return (unsigned)s < CUCO_STATUS_COUNT ? status_help[s] : "";
}

const char *cuco_command_name(cuco_command_kind k)
{
	return (unsigned)k < CUCO_CMD_COUNT ? command_names[k] : "?";
}

const char *cuco_command_past(cuco_command_kind k)
{
	return (unsigned)k < CUCO_CMD_COUNT ? command_past[k] : "?";
}

const char *cuco_event_kind_name(cuco_event_kind k)
{
	return (unsigned)k < CUCO_EVENT_KIND_COUNT ? event_names[k] : event_names[0];
}

const char *cuco_event_kind_help(cuco_event_kind k)
{
	return (unsigned)k < CUCO_EVENT_KIND_COUNT ? event_help[k] : event_help[0];
}

cuco_event_kind cuco_event_kind_of(const char *name)
{
	int i = cuco_name_index(event_names + 1, CUCO_EVENT_KIND_COUNT - 1, name);
	return i < 0 ? CUCO_EVENT_UNKNOWN : (cuco_event_kind)(i + 1);
}

cuco_event_kind cuco_command_event(cuco_command_kind k)
{
	return cuco_event_kind_of(cuco_command_name(k));
}

int cuco_origin_parse(const char *name, cuco_origin *out)
{
	int i = cuco_name_index(origin_names, CUCO_ORIGIN_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_origin)i;
	return CUCO_OK;
}

bool cuco_cand_suspect(const cuco_candidate *c)
{
	return c->status == CUCO_STATUS_FAILED
		&& strcmp(c->failure.error_class, fail_names[CUCO_FAIL_SUSPECT]) == 0;
}

void cuco_failure_line(const cuco_failure *f, char *buf, size_t size)
{
	const char *p = f->excerpt;
	while (*p == '\n' || *p == ' ')
		p++;
	/* A refusal repeats its stage: "bench: spot check: …". */
	size_t st = strlen(f->stage);
	if (st && strncmp(p, f->stage, st) == 0 && p[st] == ':' && p[st + 1] == ' ')
		p += st + 2;
	int n = (int)strcspn(p, "\n");
	snprintf(buf, size, "%s: %s%s%.*s", *f->stage ? f->stage : "-",
		*f->error_class ? f->error_class : "-", n ? ": " : "", n, p);
}

void cuco_measurement_line(const cuco_measurement *m, char *buf, size_t size)
{
	int n = snprintf(buf, size, "session %-4llu %-10s ", (unsigned long long)m->session, m->kind);
	if (n < 0 || (size_t)n >= size)
		return;
	if (m->ok)
		snprintf(buf + n, size - (size_t)n, "%.4g us  %.4gx", m->timing.median_us, m->speedup);
	else {
		snprintf(buf + n, size - (size_t)n, "failed at ");
		n += 10;
		if ((size_t)n < size)
			cuco_failure_line(&m->failure, buf + n,
				size - (size_t)n);
	}
}

int cuco_fail_parse(const char *name, cuco_fail_class *out)
{
	int i = cuco_name_index(fail_names, CUCO_FAIL_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_fail_class)i;
	return CUCO_OK;
}

int cuco_status_parse(const char *name, cuco_status *out)
{
	int i = cuco_name_index(status_names, CUCO_STATUS_COUNT, name);
	if (i < 0)
		return CUCO_EDATA;
	*out = (cuco_status)i;
	return CUCO_OK;
}

int cuco_command_parse(const char *name, cuco_command_kind *out)
{
	int i = cuco_name_index(command_names, CUCO_CMD_COUNT, name);
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
	const char *name, *abbrev, *help;
	size_t offset;
} dirdims[CUCO_DIRDIM_COUNT] = {
#define X(e, field, abbrev, text) { #field, abbrev, text, offsetof(cuco_directive, field) },
	CUCO_DIRECTIVE_DIMS(X)
#undef X
};

const char *cuco_dirdim_name(cuco_dirdim d)
{
	return (unsigned)d < CUCO_DIRDIM_COUNT ? dirdims[d].name : "?";
}

const char *cuco_dirdim_abbrev(cuco_dirdim d)
{
	return (unsigned)d < CUCO_DIRDIM_COUNT ? dirdims[d].abbrev : "?";
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

/* A knob's value; NULL when the directive has none of that name. */
static const char *knob_get(const cuco_directive *dv, const char *name)
{
	for (int i = 0; i < dv->nknobs && i < CUCO_MAX_KNOBS; i++)
		if (strcmp(dv->knobs[i].name, name) == 0)
			return dv->knobs[i].value;
	return NULL;
}

const char *cuco_directive_value(const cuco_directive *d, const char *name)
{
	int dim = cuco_dirdim_find(name);
	if (dim >= 0)
		return cuco_directive_get(d, (cuco_dirdim)dim);
	const char *v = knob_get(d, name);
	return v ? v : "";
}

int cuco_directive_diff(const cuco_directive *a, const cuco_directive *b,
	void (*fn)(int dim, const char *name, const char *before, const char *after, void *arg),
	void *arg)
{
	int n = 0;
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++) {
		const char *x = cuco_directive_get(a, (cuco_dirdim)i), *y = cuco_directive_get(b, (cuco_dirdim)i);
		if (strcmp(x, y) != 0 && ++n && fn)
			fn(i, dirdims[i].name, x, y, arg);
	}
	for (int i = 0; i < b->nknobs && i < CUCO_MAX_KNOBS; i++) {
		const char *x = knob_get(a, b->knobs[i].name);
		if ((!x || strcmp(x, b->knobs[i].value) != 0) && ++n && fn)
			fn(-1, b->knobs[i].name, x ? x : "", b->knobs[i].value, arg);
	}
	for (int i = 0; i < a->nknobs && i < CUCO_MAX_KNOBS; i++)
		if (!knob_get(b, a->knobs[i].name) && ++n && fn)
			fn(-1, a->knobs[i].name, a->knobs[i].value, "", arg);
	return n;
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

/* ---- the timing and failure blocks: a candidate's and a measurement's ------- */

/* A record's timing block: latency_us {min, median, p90, samples, spread},
 * phases_us {name: us}, max_error, peak_fraction, and host_calls when
 * counted. The candidate and the measurement share this one encoding; its
 * last keys stand apart in each (peak_fraction, the host calls), so that
 * their records keep the key order they always had and a malformed record
 * the error it always had. */
static void add_timing(cJSON *o, const cuco_timing *t)
{
	cJSON *lat = cJSON_AddObjectToObject(o, "latency_us");
	add_num(lat, "min", t->min_us);
	add_num(lat, "median", t->median_us);
	add_num(lat, "p90", t->p90_us);
	cJSON_AddNumberToObject(lat, "samples", t->samples);
	add_num(lat, "spread", t->spread);
	cJSON *ph = cJSON_AddObjectToObject(o, "phases_us");
	for (int i = 0; i < t->nphases && i < CUCO_MAX_PHASES; i++)
		add_num(ph, t->phases[i].name, t->phases[i].us);
	add_num(o, "max_error", t->max_error);
}

static void add_host_calls(cJSON *o, const cuco_timing *t)
{
	if (t->host_counted)
		cJSON_AddNumberToObject(o, "host_calls", (double)t->host_calls);
}

static void add_failure(cJSON *o, const cuco_failure *f)
{
	cJSON_AddStringToObject(o, "failed_stage", f->stage);
	cJSON_AddStringToObject(o, "error_class", f->error_class);
	cJSON_AddStringToObject(o, "error_excerpt", f->excerpt);
}

static void get_failure(decoder *d, cuco_failure *f)
{
	get_str(d, "failed_stage", f->stage, sizeof f->stage);
	get_str(d, "error_class", f->error_class, sizeof f->error_class);
	get_str(d, "error_excerpt", f->excerpt, sizeof f->excerpt);
}

/* A nested object's failure, named by its field: "latency_us: field …". */
static void nested_fail(decoder *d, const char *key, int rc)
{
	if (rc == CUCO_OK || d->rc != CUCO_OK)
		return;
	char why[sizeof d->err->msg];  /* not err->msg itself: vsnprintf would read what it writes */
	cuco_strlcpy(why, d->err->msg, sizeof why);
	d->rc = cuco_errf(d->err, CUCO_EDATA, "%s: %s", key, why);
}

static void get_phases(decoder *d, cuco_timing *t)
{
	const cJSON *ph = field(d, "phases_us"), *e;
	if (ph && !cJSON_IsObject(ph)) {
		bad(d, "phases_us", "an object");
		return;
	}
	cJSON_ArrayForEach(e, ph) {
		if (t->nphases == CUCO_MAX_PHASES)
			break;
		if (!cJSON_IsNumber(e) && !cJSON_IsNull(e)) {
			bad(d, "phases_us", "numbers");
			return;
		}
		cuco_phase *p = &t->phases[t->nphases++];
		cuco_strlcpy(p->name, e->string, sizeof p->name);
		p->us = cJSON_IsNumber(e) ? e->valuedouble : NAN;
	}
}

static void get_timing(decoder *d, cuco_timing *t, cuco_err *err)
{
	cuco_timing_init(t);
	const cJSON *lat = field(d, "latency_us");
	if (lat && !cJSON_IsObject(lat))
		bad(d, "latency_us", "an object");
	else if (lat) {
		decoder ld = { lat, err, CUCO_OK };
		get_num(&ld, "min", &t->min_us, NAN);
		get_num(&ld, "median", &t->median_us, NAN);
		get_num(&ld, "p90", &t->p90_us, NAN);
		get_int(&ld, "samples", &t->samples);
		get_num(&ld, "spread", &t->spread, NAN);
		nested_fail(d, "latency_us", ld.rc);
	}
	get_phases(d, t);
	get_num(d, "max_error", &t->max_error, NAN);
}

static void get_host_calls(decoder *d, cuco_timing *t)
{
	t->host_counted = field(d, "host_calls") != NULL;
	get_i64(d, "host_calls", &t->host_calls);
}

void cuco_timing_init(cuco_timing *t)
{
	memset(t, 0, sizeof *t);
	t->min_us = t->median_us = t->p90_us = t->spread = t->max_error = t->peak_fraction = NAN;
}

cuco_timing cuco_timing_failed(const cuco_timing *t)
{
	cuco_timing f;
	cuco_timing_init(&f);
	f.host_counted = t->host_counted;
	f.host_calls = t->host_calls;
	return f;
}

int cuco_phases_view(const cuco_candidate *c, cuco_phase out[CUCO_MAX_PHASES],
	double measured[CUCO_MAX_PHASES])
{
	int n = c->timing.nphases < CUCO_MAX_PHASES ? c->timing.nphases : CUCO_MAX_PHASES;
	double comm = NAN, lat = c->timing.median_us;
	for (int i = 0; i < n; i++)
		if (strcmp(c->timing.phases[i].name, "comm") == 0)
			comm = c->timing.phases[i].us;
	for (int i = 0; i < n; i++) {
		out[i] = c->timing.phases[i];
		if (measured)
			measured[i] = c->timing.phases[i].us;
		if (isfinite(lat) && out[i].us > lat)
			out[i].us = lat;
		if (strcmp(out[i].name, "exposed_comm") == 0 && isfinite(comm) && out[i].us > comm)
			out[i].us = comm;
	}
	return n;
}

/* ---- candidate ------------------------------------------------------------- */

void cuco_cand_queued(cuco_candidate *c)
{
	c->status = CUCO_STATUS_QUEUED;
	c->score = c->speedup = NAN;
	cuco_timing_init(&c->timing);
}

void cuco_summary_of(const cuco_candidate *c, cuco_summary *s)
{
	memset(s, 0, sizeof *s);
	s->id = c->id;
	for (int i = 0; i < c->nparents && i < CUCO_MAX_PARENTS; i++)
		s->parents[i] = c->parents[i];
	s->island = c->island;
	s->generation = c->generation;
	s->origin = (uint8_t)c->origin;
	s->status = (uint8_t)c->status;
	s->pinned = c->pinned;
	s->rounds = (uint8_t)(c->rounds < 0 ? 0 : c->rounds > 255 ? 255 : c->rounds);
	s->score = c->score;
	s->latency_median_us = c->timing.median_us;
	s->speedup = c->speedup;
}

void cuco_source_hash(const char *text, size_t len, char hash[CUCO_HASH_LEN + 1])
{
	XXH128_hash_t h = XXH3_128bits(text, len);
	snprintf(hash, CUCO_HASH_LEN + 1, "%016llx%016llx", (unsigned long long)h.high64,
		(unsigned long long)h.low64);
}

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
	add_failure(o, &c->failure);
	add_num(o, "score", c->score);
	add_timing(o, &c->timing);
	cJSON *sp = cJSON_AddObjectToObject(o, "speedup");
	bool ci = c->rounds >= 2;
	add_num(sp, "value", c->speedup);
	add_num(sp, "lo", ci ? c->speedup_lo : NAN);
	add_num(sp, "hi", ci ? c->speedup_hi : NAN);
	cJSON_AddNumberToObject(sp, "rounds", c->rounds);
	add_num(sp, "confidence", ci ? c->confidence : NAN);
	bool ratios = ci && c->nratios > 0 && c->nratios <= CUCO_PAIRED_MAX;
	for (int i = 0; ratios && i < c->nratios; i++)
		ratios = isfinite(c->ratios[i]) && c->ratios[i] > 0;  /* else none: what is written reads */
	if (ratios) {
		cJSON *r = cJSON_AddArrayToObject(sp, "ratios");
		for (int i = 0; i < c->nratios; i++)
			cJSON_AddItemToArray(r, cJSON_CreateNumber(c->ratios[i]));
	}
	cJSON_AddStringToObject(o, "verdict", cuco_verdict_name(c->verdict));
	add_num(o, "peak_fraction", c->timing.peak_fraction);
	add_host_calls(o, &c->timing);
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

static int parse_verdict(const char *s, int *v)
{
	cuco_verdict vd;
	int rc = cuco_verdict_parse(s, &vd);
	*v = (int)vd;
	return rc;
}

/* The paired rounds' ratios: at most CUCO_PAIRED_MAX, each above 0. */
static void get_ratios(decoder *d, cuco_candidate *c)
{
	const cJSON *r = field(d, "ratios"), *e;
	if (!r)
		return;
	if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) > CUCO_PAIRED_MAX) {
		bad(d, "ratios", "at most 64 positive numbers");
		return;
	}
	cJSON_ArrayForEach(e, r) {
		if (!cJSON_IsNumber(e) || !(e->valuedouble > 0)) {
			c->nratios = 0;
			bad(d, "ratios", "at most 64 positive numbers");
			return;
		}
		c->ratios[c->nratios++] = e->valuedouble;
	}
}

/* {value, lo, hi, rounds, confidence, ratios} and the verdict; a bare
 * number is the speedup of a store written before intervals, one
 * measurement. */
static void get_speedup(decoder *d, cuco_candidate *c, cuco_err *err)
{
	c->speedup = c->speedup_lo = c->speedup_hi = c->confidence = NAN;
	const cJSON *sp = field(d, "speedup");
	if (sp && cJSON_IsNumber(sp)) {
		c->speedup = sp->valuedouble;
		c->rounds = 1;
	} else if (sp && !cJSON_IsObject(sp)) {
		bad(d, "speedup", "an object");
	} else if (sp) {
		decoder sd = { sp, err, CUCO_OK };
		get_num(&sd, "value", &c->speedup, NAN);
		get_num(&sd, "lo", &c->speedup_lo, NAN);
		get_num(&sd, "hi", &c->speedup_hi, NAN);
		get_int(&sd, "rounds", &c->rounds);
		get_num(&sd, "confidence", &c->confidence, NAN);
		get_ratios(&sd, c);
		if (sd.rc == CUCO_OK && (c->rounds < 0 || c->rounds > 1000000))
			sd.rc = cuco_errf(err, CUCO_EDATA, "rounds %d is out of 0..1000000", c->rounds);
		nested_fail(d, "speedup", sd.rc);
	}
	int v = 0;
	get_enum(d, "verdict", &v, parse_verdict);
	c->verdict = (cuco_verdict)v;
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
	get_failure(&d, &c->failure);
	get_num(&d, "score", &c->score, NAN);
	get_timing(&d, &c->timing, err);
	get_speedup(&d, c, err);
	get_num(&d, "peak_fraction", &c->timing.peak_fraction, NAN);
	get_host_calls(&d, &c->timing);
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

cJSON *cuco_event_to_json(const cuco_event *ev)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "seq", ev->seq);
	cJSON_AddNumberToObject(o, "time", ev->time);
	cJSON_AddStringToObject(o, "kind", ev->name);
	add_id(o, "candidate", ev->candidate);
	cJSON_AddStringToObject(o, "author", ev->author);
	cJSON_AddStringToObject(o, "text", ev->text);
	return o;
}

int cuco_event_from_json(const cJSON *j, cuco_event *ev)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(ev, 0, sizeof *ev);
	get_u64(&d, "seq", &ev->seq);
	get_num(&d, "time", &ev->time, 0);
	get_str(&d, "kind", ev->name, sizeof ev->name);
	ev->kind = cuco_event_kind_of(ev->name);
	get_u64(&d, "candidate", &ev->candidate);
	get_str(&d, "author", ev->author, sizeof ev->author);
	get_str(&d, "text", ev->text, sizeof ev->text);
	return d.rc;
}

cJSON *cuco_command_to_json(const cuco_command *c)
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
	if (c->next_session)
		cJSON_AddBoolToObject(o, "next_session", true);
	cJSON_AddBoolToObject(o, "acked", c->acked);
	cJSON_AddNumberToObject(o, "ack_time", c->ack_time);
	cJSON_AddStringToObject(o, "ack_result", c->ack_result);
	return o;
}

int cuco_command_from_json(const cJSON *j, cuco_command *c)
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
	get_bool(&d, "next_session", &c->next_session);
	get_bool(&d, "acked", &c->acked);
	get_num(&d, "ack_time", &c->ack_time, 0);
	get_str(&d, "ack_result", c->ack_result, sizeof c->ack_result);
	return d.rc;
}

cJSON *cuco_island_to_json(const cuco_island *isl)
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

int cuco_island_from_json(const cJSON *j, cuco_island *isl)
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

cJSON *cuco_memory_to_json(const cuco_memory *m)
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

int cuco_memory_from_json(const cJSON *j, cuco_memory *m)
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

/* ---- model calls and refusals ------------------------------------------------ */

static const char *const call_kind_names[CUCO_CALL_KIND_COUNT] = {
#define X(e, name, help) name,
	CUCO_CALL_KINDS(X)
#undef X
};
static const char *const call_outcome_names[CUCO_CALL_OUTCOME_COUNT] = {
#define X(e, name) name,
	CUCO_CALL_OUTCOMES(X)
#undef X
};

const char *cuco_call_kind_name(cuco_call_kind k)
{
	return (unsigned)k < CUCO_CALL_KIND_COUNT ? call_kind_names[k] : "?";
}

const char *cuco_call_outcome_name(cuco_call_outcome o)
{
	return (unsigned)o < CUCO_CALL_OUTCOME_COUNT ? call_outcome_names[o] : "?";
}

/* A name field that must be one of a table's: absent keeps the default. */
static void get_name(decoder *d, const char *key, int (*parse)(const char *, int *), int *dst)
{
	char name[24] = "";
	get_str(d, key, name, sizeof name);
	if (d->rc == CUCO_OK && name[0] && parse(name, dst) != CUCO_OK)
		bad(d, key, "a known name");
}

static int parse_call_kind(const char *name, int *out)
{
	*out = cuco_name_index(call_kind_names, CUCO_CALL_KIND_COUNT, name);
	return *out < 0 ? CUCO_EDATA : CUCO_OK;
}

static int parse_call_outcome(const char *name, int *out)
{
	*out = cuco_name_index(call_outcome_names, CUCO_CALL_OUTCOME_COUNT, name);
	return *out < 0 ? CUCO_EDATA : CUCO_OK;
}

cJSON *cuco_call_to_json(const cuco_call *c)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "id", c->id);
	cJSON_AddNumberToObject(o, "time", c->time);
	add_num(o, "seconds", c->seconds);
	cJSON_AddStringToObject(o, "kind", cuco_call_kind_name(c->kind));
	cJSON_AddStringToObject(o, "outcome", cuco_call_outcome_name(c->outcome));
	cJSON_AddStringToObject(o, "model", c->model);
	cJSON_AddNumberToObject(o, "tokens_in", (double)c->tokens_in);
	cJSON_AddNumberToObject(o, "tokens_cached", (double)c->tokens_cached);
	cJSON_AddNumberToObject(o, "tokens_out", (double)c->tokens_out);
	cJSON_AddBoolToObject(o, "estimated", c->estimated);
	add_num(o, "cost_usd", c->cost_usd);
	cJSON_AddBoolToObject(o, "priced", c->priced);
	add_id(o, "parent", c->parent);
	add_id(o, "candidate", c->candidate);
	add_id(o, "refusal", c->refusal);
	cJSON_AddStringToObject(o, "reply_hash", c->reply_hash);
	cJSON_AddStringToObject(o, "reason", c->reason);
	return o;
}

int cuco_call_from_json(const cJSON *j, cuco_call *c)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(c, 0, sizeof *c);
	int kind = 0, outcome = 0;
	get_u64(&d, "id", &c->id);
	get_num(&d, "time", &c->time, 0);
	get_num(&d, "seconds", &c->seconds, 0);
	get_name(&d, "kind", parse_call_kind, &kind);
	get_name(&d, "outcome", parse_call_outcome, &outcome);
	c->kind = (cuco_call_kind)kind;
	c->outcome = (cuco_call_outcome)outcome;
	get_str(&d, "model", c->model, sizeof c->model);
	get_i64(&d, "tokens_in", &c->tokens_in);
	get_i64(&d, "tokens_cached", &c->tokens_cached);
	get_i64(&d, "tokens_out", &c->tokens_out);
	get_bool(&d, "estimated", &c->estimated);
	get_num(&d, "cost_usd", &c->cost_usd, 0);
	get_bool(&d, "priced", &c->priced);
	get_u64(&d, "parent", &c->parent);
	get_u64(&d, "candidate", &c->candidate);
	get_u64(&d, "refusal", &c->refusal);
	get_str(&d, "reply_hash", c->reply_hash, sizeof c->reply_hash);
	get_str(&d, "reason", c->reason, sizeof c->reason);
	return d.rc;
}

cJSON *cuco_refusal_to_json(const cuco_refusal *r)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "id", r->id);
	cJSON_AddNumberToObject(o, "time", r->time);
	cJSON_AddStringToObject(o, "kind", cuco_call_kind_name(r->kind));
	add_id(o, "parent", r->parent);
	cJSON_AddNumberToObject(o, "island", r->island);
	cJSON_AddStringToObject(o, "model", r->model);
	cJSON_AddStringToObject(o, "prompt_hash", r->prompt_hash);
	cJSON_AddStringToObject(o, "reply_hash", r->reply_hash);
	cJSON_AddStringToObject(o, "reason", r->reason);
	return o;
}

int cuco_refusal_from_json(const cJSON *j, cuco_refusal *r)
{
	cuco_err err;
	decoder d = { j, &err, CUCO_OK };
	memset(r, 0, sizeof *r);
	r->island = -1;
	int kind = 0;
	get_u64(&d, "id", &r->id);
	get_num(&d, "time", &r->time, 0);
	get_name(&d, "kind", parse_call_kind, &kind);
	r->kind = (cuco_call_kind)kind;
	get_u64(&d, "parent", &r->parent);
	get_int(&d, "island", &r->island);
	get_str(&d, "model", r->model, sizeof r->model);
	get_str(&d, "prompt_hash", r->prompt_hash, sizeof r->prompt_hash);
	get_str(&d, "reply_hash", r->reply_hash, sizeof r->reply_hash);
	get_str(&d, "reason", r->reason, sizeof r->reason);
	return d.rc;
}

void cuco_measurement_init(cuco_measurement *m, uint64_t candidate, const char *kind)
{
	memset(m, 0, sizeof *m);
	m->candidate = candidate;
	cuco_strlcpy(m->kind, kind ? kind : "", sizeof m->kind);
	cuco_timing_init(&m->timing);
	m->baseline_us = m->speedup = m->score = NAN;
}

cJSON *cuco_measurement_to_json(const cuco_measurement *m)
{
	cJSON *o = cJSON_CreateObject();
	add_id(o, "candidate", m->candidate);
	cJSON_AddNumberToObject(o, "seq", m->seq);
	add_id(o, "session", m->session);
	cJSON_AddNumberToObject(o, "time", m->time);
	cJSON_AddStringToObject(o, "kind", m->kind);
	cJSON_AddBoolToObject(o, "ok", m->ok);
	add_failure(o, &m->failure);
	add_timing(o, &m->timing);
	add_num(o, "peak_fraction", m->timing.peak_fraction);
	add_num(o, "baseline_us", m->baseline_us);
	add_num(o, "speedup", m->speedup);
	add_num(o, "score", m->score);
	add_host_calls(o, &m->timing);
	cJSON_AddStringToObject(o, "slot", m->slot);
	return o;
}

int cuco_measurement_from_json(const cJSON *j, cuco_measurement *m, cuco_err *err)
{
	cuco_measurement_init(m, 0, "");
	if (!cJSON_IsObject(j))
		return cuco_errf(err, CUCO_EDATA, "measurement: expected an object");
	decoder d = { j, err, CUCO_OK };
	get_u64(&d, "candidate", &m->candidate);
	uint64_t seq = 0;
	get_u64(&d, "seq", &seq);
	if (d.rc == CUCO_OK && seq > UINT32_MAX)
		bad(&d, "seq", "a 32-bit count");
	m->seq = (uint32_t)seq;
	get_u64(&d, "session", &m->session);
	get_num(&d, "time", &m->time, 0);
	get_str(&d, "kind", m->kind, sizeof m->kind);
	get_bool(&d, "ok", &m->ok);
	get_failure(&d, &m->failure);
	get_timing(&d, &m->timing, err);
	get_num(&d, "peak_fraction", &m->timing.peak_fraction, NAN);
	get_num(&d, "baseline_us", &m->baseline_us, NAN);
	get_num(&d, "speedup", &m->speedup, NAN);
	get_num(&d, "score", &m->score, NAN);
	get_host_calls(&d, &m->timing);
	get_str(&d, "slot", m->slot, sizeof m->slot);
	return d.rc;
}
