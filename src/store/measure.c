/* measure.c — every measurement of a candidate, appended, never
 * overwritten (issue 18: a resumed session rewrote measured records, and a
 * failed re-measure of the baseline overwrote the good one).
 *
 * The measurements table is keyed by candidate id ‖ seq (big-endian u64 ‖
 * u32), so one candidate's measurements lie together, oldest first. The
 * candidate's record shows the one in force; cuco_measure_add is the one
 * place that decides which that is. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

#define KEY_BYTES 12

static void measure_key(uint64_t id, uint32_t seq, unsigned char out[KEY_BYTES])
{
	store_be64(id, out);
	for (int i = 0; i < 4; i++)
		out[8 + i] = (unsigned char)(seq >> (24 - 8 * i));
}

static uint32_t key_seq(const unsigned char *k)
{
	return (uint32_t)k[8] << 24 | (uint32_t)k[9] << 16 | (uint32_t)k[10] << 8 | k[11];
}

/* The seq of the candidate's newest measurement, 0 when it has none. */
static int last_seq(cuco_txn *txn, uint64_t id, uint32_t *seq)
{
	*seq = 0;
	if (txn->st->absent[T_MEASUREMENTS])
		return CUCO_OK;
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn->t, store_dbi(txn, T_MEASUREMENTS), &cur);
	if (rc)
		return store_mdb_error(txn, "measurements", rc);
	unsigned char key[KEY_BYTES];
	measure_key(id + 1, 0, key);
	MDB_val k = { KEY_BYTES, key }, v;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	rc = mdb_cursor_get(cur, &k, &v, rc == MDB_NOTFOUND ? MDB_LAST : MDB_PREV);
	if (rc == 0 && k.mv_size == KEY_BYTES && store_from_be64(k.mv_data) == id)
		*seq = key_seq(k.mv_data);
	mdb_cursor_close(cur);
	return rc == 0 || rc == MDB_NOTFOUND ? CUCO_OK : store_mdb_error(txn, "measurements", rc);
}

/* Whether a failed measurement leaves the one in force as it is: the
 * baseline's (every speedup's reference; issue 18), and anyone's when the
 * environment failed it. Any other failure is the program's own — a
 * wrong answer, a crash, a defence's refusal — and an earlier pass does
 * not make it good: a best refused when measured again is no longer done,
 * so it is no longer the best (cuco_best). */
static bool keeps_earlier(const cuco_candidate *c, const cuco_measurement *m)
{
	return c->origin == CUCO_ORIGIN_BASELINE ||
		strcmp(m->failure.error_class, cuco_fail_name(CUCO_FAIL_ENVIRONMENT)) == 0;
}

/* The rule: an ok measurement is in force; a failed one is too, unless
 * keeps_earlier; so kept, it changes nothing of a record that has a
 * measurement in force, and fails one that has none. A rejected record
 * stays rejected. */
static void apply(cuco_candidate *c, const cuco_measurement *m)
{
	bool in_force = c->status != CUCO_STATUS_FAILED && isfinite(c->timing.median_us);
	if (m->slot[0])  /* where its latest measurement ran, a failed one too */
		cuco_strlcpy(c->slot, m->slot, sizeof c->slot);
	if (!m->ok && in_force && keeps_earlier(c, m)) {
		if (c->status < CUCO_STATUS_DONE)  /* a row an older cuco left mid-measure */
			c->status = CUCO_STATUS_DONE;
		return;
	}
	/* A measurement in force is one screening: no interval, no verdict
	 * (a confirmation writes those over it, docs/trust.md). */
	c->speedup_lo = c->speedup_hi = c->confidence = NAN;
	c->rounds = m->ok ? 1 : 0;
	c->nratios = 0;
	c->verdict = CUCO_VERDICT_NONE;
	if (c->status != CUCO_STATUS_REJECTED)
		c->status = m->ok ? CUCO_STATUS_DONE : CUCO_STATUS_FAILED;
	if (!m->ok) {  /* in force: the record's numbers are its, none */
		c->failure = m->failure;
		c->timing = cuco_timing_failed(&m->timing);
		c->score = c->speedup = NAN;
		return;
	}
	memset(&c->failure, 0, sizeof c->failure);
	c->timing = m->timing;
	c->speedup = m->speedup;
	c->score = m->score;
}

int cuco_measure_add(cuco_txn *txn, cuco_measurement *m, cuco_candidate *out)
{
	if (txn->st->absent[T_MEASUREMENTS])
		return cuco_txn_fail(txn, CUCO_EENV, "%s: measurements: the store is read-only", txn->st->dir);
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	uint32_t seq = 0;
	int rc = cuco_cand_get(txn, m->candidate, c);
	if (rc == CUCO_OK)
		rc = last_seq(txn, m->candidate, &seq);
	if (rc == CUCO_OK && seq == UINT32_MAX)
		rc = cuco_txn_fail(txn, CUCO_EDATA, "candidate %llu: too many measurements",
			(unsigned long long)m->candidate);
	if (rc == CUCO_OK) {
		m->seq = seq + 1;
		if (m->time == 0)
			m->time = cuco_now();
		unsigned char key[KEY_BYTES];
		measure_key(m->candidate, m->seq, key);
		MDB_val k = { KEY_BYTES, key };
		rc = store_put_json(txn, T_MEASUREMENTS, &k, cuco_measurement_to_json(m), MDB_NOOVERWRITE,
			"measurements");
	}
	if (rc == CUCO_OK) {
		apply(c, m);
		rc = cuco_cand_put(txn, c);
	}
	if (rc == CUCO_OK && out)
		*out = *c;
	free(c);
	return rc;
}

int cuco_measure_each(cuco_txn *txn, uint64_t candidate,
	int (*fn)(const cuco_measurement *, void *), void *arg)
{
	if (txn->st->absent[T_MEASUREMENTS])
		return CUCO_OK;
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn->t, store_dbi(txn, T_MEASUREMENTS), &cur);
	if (rc)
		return store_mdb_error(txn, "measurements", rc);
	unsigned char key[KEY_BYTES];
	measure_key(candidate, 0, key);
	MDB_val k = { KEY_BYTES, key }, v;
	cuco_measurement *m = cuco_xmalloc(sizeof *m);
	int ret = CUCO_OK;
	for (rc = mdb_cursor_get(cur, &k, &v, candidate ? MDB_SET_RANGE : MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		uint64_t owner = k.mv_size == KEY_BYTES ? store_from_be64(k.mv_data) : 0;
		if (candidate && owner != candidate)
			break;
		cJSON *j = cJSON_ParseWithLength(v.mv_data, v.mv_size);
		cuco_err err;
		int drc = j ? cuco_measurement_from_json(j, m, &err) : CUCO_EDATA;
		cJSON_Delete(j);
		if (drc || !owner || m->candidate != owner || m->seq != key_seq(k.mv_data)) {
			ret = cuco_txn_fail(txn, CUCO_EDATA, "%s: measurement %u of candidate %llu: %s",
				txn->st->dir, owner ? key_seq(k.mv_data) : 0, (unsigned long long)owner,
				drc ? "malformed record" : "stored under another key; the store is corrupt");
			break;
		}
		if ((ret = fn(m, arg)) != 0)
			break;
	}
	if (rc && rc != MDB_NOTFOUND && ret == CUCO_OK)
		ret = store_mdb_error(txn, "measurements", rc);
	free(m);
	mdb_cursor_close(cur);
	return ret;
}

int cuco_measure_count(cuco_txn *txn, uint64_t candidate, uint32_t *n)
{
	return last_seq(txn, candidate, n);
}
