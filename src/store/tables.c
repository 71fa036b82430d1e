/* tables.c — typed access to the store's tables inside a transaction. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

/* ---- keys ----------------------------------------------------------------- */

void store_be64(uint64_t v, unsigned char out[8])
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		out[i] = (unsigned char)v;
}

uint64_t store_from_be64(const void *p)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* Map a score to a key that sorts best first: higher scores, then lower ids. */
static void score_key(double score, uint64_t id, unsigned char out[16])
{
	uint64_t bits;
	memcpy(&bits, &score, sizeof bits);
	bits = (bits >> 63) ? ~bits : bits | (1ull << 63);  /* ascending order */
	store_be64(~bits, out);                                    /* descending */
	store_be64(id, out + 8);
}

static bool scored(const cuco_summary *s)
{
	return s->status == CUCO_STATUS_DONE && isfinite(s->score);
}

/* ---- JSON values ---------------------------------------------------------- */

int store_put_json(cuco_txn *txn, int table, MDB_val *key, cJSON *j, unsigned flags, const char *what)
{
	char *text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!text)
		return cuco_txn_fail(txn, CUCO_EENV, "%s: cannot encode %s", txn->st->dir, what);
	MDB_val v = { strlen(text), text };
	int rc = mdb_put(txn->t, store_dbi(txn, table), key, &v, flags);
	free(text);
	return rc ? store_mdb_error(txn, what, rc) : CUCO_OK;
}

static cJSON *get_json(cuco_txn *txn, const MDB_val *v, const char *what)
{
	cJSON *j = cJSON_ParseWithLength(v->mv_data, v->mv_size);
	if (!j)
		cuco_txn_fail(txn, CUCO_EDATA, "%s: %s: record is not valid JSON", txn->st->dir, what);
	return j;
}

/* A record whose own id differs from the key it is stored under is a
 * damaged store (a flipped bit, a copied record): refused, not read as
 * some other candidate. */
static int wrong_key(cuco_txn *txn, const char *what, uint64_t key, uint64_t id)
{
	return cuco_txn_fail(txn, CUCO_EDATA, "%s: %s %llu: the record says %llu; the store is corrupt",
		txn->st->dir, what, (unsigned long long)key, (unsigned long long)id);
}

static uint64_t last_key(cuco_txn *txn, int table)
{
	MDB_cursor *c;
	MDB_val k, v;
	uint64_t last = 0;
	if (mdb_cursor_open(txn->t, store_dbi(txn, table), &c))
		return 0;
	if (mdb_cursor_get(c, &k, &v, MDB_LAST) == 0 && k.mv_size == 8)
		last = store_from_be64(k.mv_data);
	mdb_cursor_close(c);
	return last;
}

/* ---- candidates ----------------------------------------------------------- */

static int unlink_old(cuco_txn *txn, const cuco_summary *old)
{
	unsigned char ck[8], sk[16];
	store_be64(old->id, ck);
	for (int i = 0; i < CUCO_MAX_PARENTS; i++) {
		if (!old->parents[i])
			continue;
		unsigned char pk[8];
		store_be64(old->parents[i], pk);
		MDB_val k = { 8, pk }, v = { 8, ck };
		int rc = mdb_del(txn->t, store_dbi(txn, T_CHILDREN), &k, &v);
		if (rc && rc != MDB_NOTFOUND)
			return store_mdb_error(txn, "children", rc);
	}
	if (scored(old)) {
		score_key(old->score, old->id, sk);
		MDB_val k = { 16, sk };
		int rc = mdb_del(txn->t, store_dbi(txn, T_BY_SCORE), &k, NULL);
		if (rc && rc != MDB_NOTFOUND)
			return store_mdb_error(txn, "by_score", rc);
	}
	return CUCO_OK;
}

static int link_new(cuco_txn *txn, const cuco_summary *s)
{
	unsigned char ck[8], sk[16];
	store_be64(s->id, ck);
	for (int i = 0; i < CUCO_MAX_PARENTS; i++) {
		if (!s->parents[i])
			continue;
		unsigned char pk[8];
		store_be64(s->parents[i], pk);
		MDB_val k = { 8, pk }, v = { 8, ck };
		int rc = mdb_put(txn->t, store_dbi(txn, T_CHILDREN), &k, &v, MDB_NODUPDATA);
		if (rc && rc != MDB_KEYEXIST)
			return store_mdb_error(txn, "children", rc);
	}
	if (scored(s)) {
		score_key(s->score, s->id, sk);
		MDB_val k = { 16, sk }, v = { 0, "" };
		int rc = mdb_put(txn->t, store_dbi(txn, T_BY_SCORE), &k, &v, 0);
		if (rc)
			return store_mdb_error(txn, "by_score", rc);
	}
	return CUCO_OK;
}

int cuco_cand_put(cuco_txn *txn, cuco_candidate *c)
{
	if (c->nparents < 0 || c->nparents > CUCO_MAX_PARENTS)
		return cuco_txn_fail(txn, CUCO_EDATA, "candidate: parents: %d is out of 0..2", c->nparents);
	if (c->id == 0)
		c->id = last_key(txn, T_CANDIDATES) + 1;
	double now = cuco_now();
	if (c->created == 0)
		c->created = now;
	c->updated = now;

	unsigned char key[8];
	store_be64(c->id, key);
	MDB_val k = { 8, key }, v;
	int rc = mdb_get(txn->t, store_dbi(txn, T_SUMMARIES), &k, &v);
	if (rc == 0 && v.mv_size == sizeof(cuco_summary)) {
		cuco_summary old;
		memcpy(&old, v.mv_data, sizeof old);
		/* Only a failure in force fails a done record (cuco_measure_add). */
		if (old.status == CUCO_STATUS_DONE && c->status != CUCO_STATUS_DONE
				&& c->status != CUCO_STATUS_REJECTED
				&& !(c->status == CUCO_STATUS_FAILED && c->failure.error_class[0]))
			return cuco_txn_fail(txn, CUCO_EDATA, "candidate %llu: done, it cannot become %s "
				"(a new measurement is appended instead)", (unsigned long long)c->id,
				cuco_status_name(c->status));
		if (unlink_old(txn, &old) != CUCO_OK)
			return txn->code;
	} else if (rc && rc != MDB_NOTFOUND) {
		return store_mdb_error(txn, "summaries", rc);
	}

	if (store_put_json(txn, T_CANDIDATES, &k, cuco_candidate_to_json(c), 0, "candidates") != CUCO_OK)
		return txn->code;
	cuco_summary s;
	cuco_summary_of(c, &s);
	MDB_val sv = { sizeof s, &s };
	rc = mdb_put(txn->t, store_dbi(txn, T_SUMMARIES), &k, &sv, 0);
	if (rc)
		return store_mdb_error(txn, "summaries", rc);
	return link_new(txn, &s);
}

int cuco_cand_get(cuco_txn *txn, uint64_t id, cuco_candidate *out)
{
	unsigned char key[8];
	store_be64(id, key);
	MDB_val k = { 8, key }, v;
	int rc = mdb_get(txn->t, store_dbi(txn, T_CANDIDATES), &k, &v);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "%s: candidate %llu: no such candidate", txn->st->dir,
			(unsigned long long)id);
	if (rc)
		return store_mdb_error(txn, "candidates", rc);
	cJSON *j = get_json(txn, &v, "candidates");
	if (!j)
		return txn->code;
	cuco_err err;
	rc = cuco_candidate_from_json(j, out, &err);
	cJSON_Delete(j);
	if (rc)
		return cuco_txn_fail(txn, CUCO_EDATA, "%s: candidate %llu: %s", txn->st->dir,
			(unsigned long long)id, err.msg);
	return out->id == id ? CUCO_OK : wrong_key(txn, "candidate", id, out->id);
}

uint64_t cuco_cand_last_id(cuco_txn *txn)
{
	return last_key(txn, T_CANDIDATES);
}

int cuco_cand_each(cuco_txn *txn, uint64_t from, int (*fn)(const cuco_candidate *, void *), void *arg)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn->t, store_dbi(txn, T_CANDIDATES), &cur);
	if (rc)
		return store_mdb_error(txn, "candidates", rc);
	unsigned char key[8];
	store_be64(from, key);
	MDB_val k = { 8, key }, v;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int ret = CUCO_OK;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		cJSON *j = get_json(txn, &v, "candidates");
		cuco_err err;
		if (!j) {
			ret = txn->code;
			break;
		}
		int prc = cuco_candidate_from_json(j, c, &err);
		cJSON_Delete(j);
		uint64_t key = k.mv_size == 8 ? store_from_be64(k.mv_data) : 0;
		if (prc) {
			ret = cuco_txn_fail(txn, CUCO_EDATA, "%s: candidate %llu: %s", txn->st->dir,
				(unsigned long long)key, err.msg);
			break;
		}
		if (c->id != key || k.mv_size != 8) {
			ret = wrong_key(txn, "candidate", key, c->id);
			break;
		}
		if ((ret = fn(c, arg)) != 0)
			break;
	}
	if (rc && rc != MDB_NOTFOUND)
		ret = store_mdb_error(txn, "candidates", rc);
	free(c);
	mdb_cursor_close(cur);
	return ret;
}

/* A summary of the wrong size or under another id's key: the store is
 * damaged (each schema has one layout). */
static bool summary_bad(cuco_txn *txn, const MDB_val *k, const MDB_val *v)
{
	uint64_t key = k->mv_size == 8 ? store_from_be64(k->mv_data) : 0, id;
	if (v->mv_size != sizeof(cuco_summary)) {
		cuco_txn_fail(txn, CUCO_EDATA, "%s: summary %llu: %zu bytes, not %zu; the store is corrupt",
			txn->st->dir, (unsigned long long)key, v->mv_size, sizeof(cuco_summary));
		return true;
	}
	memcpy(&id, v->mv_data, sizeof id);  /* id is the summary's first field */
	if (id != key || k->mv_size != 8) {
		wrong_key(txn, "summary", key, id);
		return true;
	}
	return false;
}

int cuco_summary_all(cuco_txn *txn, cuco_summary **out, size_t *n)
{
	MDB_stat ms;
	int rc = mdb_stat(txn->t, store_dbi(txn, T_SUMMARIES), &ms);
	if (rc)
		return store_mdb_error(txn, "summaries", rc);
	cuco_summary *sums = cuco_xmalloc((ms.ms_entries ? ms.ms_entries : 1) * sizeof *sums);
	size_t count = 0;
	MDB_cursor *cur;
	if ((rc = mdb_cursor_open(txn->t, store_dbi(txn, T_SUMMARIES), &cur))) {
		free(sums);
		return store_mdb_error(txn, "summaries", rc);
	}
	MDB_val k, v;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && count < ms.ms_entries;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (summary_bad(txn, &k, &v))
			break;
		memcpy(&sums[count++], v.mv_data, sizeof *sums);
	}
	mdb_cursor_close(cur);
	if (txn->code != CUCO_OK) {
		free(sums);
		return txn->code;
	}
	if (rc && rc != MDB_NOTFOUND) {
		free(sums);
		return store_mdb_error(txn, "summaries", rc);
	}
	*out = sums;
	*n = count;
	return CUCO_OK;
}

int cuco_summary_get(cuco_txn *txn, uint64_t id, cuco_summary *out)
{
	unsigned char key[8];
	store_be64(id, key);
	MDB_val k = { 8, key }, v;
	int rc = mdb_get(txn->t, store_dbi(txn, T_SUMMARIES), &k, &v);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "%s: candidate %llu: no such candidate", txn->st->dir,
			(unsigned long long)id);
	if (rc)
		return store_mdb_error(txn, "summaries", rc);
	if (summary_bad(txn, &k, &v))
		return txn->code;
	memcpy(out, v.mv_data, sizeof *out);
	return CUCO_OK;
}

int cuco_children(cuco_txn *txn, uint64_t parent, uint64_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn->t, store_dbi(txn, T_CHILDREN), &cur);
	if (rc)
		return store_mdb_error(txn, "children", rc);
	unsigned char key[8];
	store_be64(parent, key);
	MDB_val k = { 8, key }, v;
	size_t cap = 0;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*out = cuco_xrealloc(*out, cap * sizeof **out);
		}
		(*out)[(*n)++] = store_from_be64(v.mv_data);
	}
	mdb_cursor_close(cur);
	if (rc && rc != MDB_NOTFOUND) {
		free(*out);
		*out = NULL;
		*n = 0;
		return store_mdb_error(txn, "children", rc);
	}
	return CUCO_OK;
}

/* ---- sources -------------------------------------------------------------- */

int cuco_source_put(cuco_txn *txn, const char *text, size_t len, char hash[CUCO_HASH_LEN + 1])
{
	cuco_source_hash(text, len, hash);
	MDB_val k = { CUCO_HASH_LEN, hash }, v = { len, (void *)text };
	int rc = mdb_put(txn->t, store_dbi(txn, T_SOURCES), &k, &v, MDB_NOOVERWRITE);
	if (rc && rc != MDB_KEYEXIST)
		return store_mdb_error(txn, "sources", rc);
	return CUCO_OK;
}

int cuco_source_keep(cuco_txn *txn, const char *prompt, const char *reply, cuco_candidate *c)
{
	int rc = cuco_source_put(txn, prompt, strlen(prompt), c->prompt_hash);
	return rc == CUCO_OK ? cuco_source_put(txn, reply, strlen(reply), c->reply_hash) : rc;
}

int cuco_source_get(cuco_txn *txn, const char *hash, char **text, size_t *len)
{
	MDB_val k = { strlen(hash), (void *)hash }, v;
	int rc = mdb_get(txn->t, store_dbi(txn, T_SOURCES), &k, &v);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "%s: source %s: not in the store", txn->st->dir, hash);
	if (rc)
		return store_mdb_error(txn, "sources", rc);
	char check[CUCO_HASH_LEN + 1];
	cuco_source_hash(v.mv_data, v.mv_size, check);
	if (strcmp(check, hash) != 0)
		return cuco_txn_fail(txn, CUCO_EDATA, "%s: source %s: its text hashes to %s; the store is "
			"corrupt", txn->st->dir, hash, check);
	*text = cuco_xmalloc(v.mv_size + 1);
	memcpy(*text, v.mv_data, v.mv_size);
	(*text)[v.mv_size] = '\0';
	if (len)
		*len = v.mv_size;
	return CUCO_OK;
}

typedef struct source_read_arg {
	const char *hash;
	char *text;
	size_t len;
} source_read_arg;

static int source_read_txn(cuco_txn *txn, void *arg)
{
	source_read_arg *a = arg;
	free(a->text);  /* a retried read */
	a->text = NULL;
	return cuco_source_get(txn, a->hash, &a->text, &a->len);
}

int cuco_source_read(cuco_store *st, const char *hash, char **text, size_t *len, cuco_err *err)
{
	source_read_arg a = { .hash = hash };
	int rc = cuco_store_read(st, source_read_txn, &a, err);
	*text = a.text;
	if (len)
		*len = a.len;
	return rc;
}

/* ---- sequenced JSON tables (events, commands, memory, islands) ------------- */

static int seq_put(cuco_txn *txn, int table, uint64_t key64, cJSON *j, const char *what)
{
	unsigned char key[8];
	store_be64(key64, key);
	MDB_val k = { 8, key };
	return store_put_json(txn, table, &k, j, 0, what);
}

/* Decodes one record into rec and says which key it claims. */
typedef int (*decode_fn)(const cJSON *, void *rec, uint64_t *id);

/* Decode a value stored under key; an error in the txn when it is not
 * JSON, not this kind of record, or another key's record. */
static int seq_decode(cuco_txn *txn, const MDB_val *v, uint64_t key, const char *what, void *rec,
	decode_fn decode)
{
	cJSON *j = get_json(txn, v, what);
	if (!j)
		return txn->code;
	uint64_t id = 0;
	int rc = decode(j, rec, &id);
	cJSON_Delete(j);
	if (rc)
		return cuco_txn_fail(txn, CUCO_EDATA, "%s: %s %llu: malformed record", txn->st->dir, what,
			(unsigned long long)key);
	return id == key ? CUCO_OK : wrong_key(txn, what, key, id);
}

/* Walk a table from key `from`, decoding each value with `decode` into rec. */
static int seq_each(cuco_txn *txn, int table, uint64_t from, const char *what, void *rec,
	decode_fn decode, int (*fn)(const void *, void *), void *arg)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn->t, store_dbi(txn, table), &cur);
	if (rc)
		return store_mdb_error(txn, what, rc);
	unsigned char key[8];
	store_be64(from, key);
	MDB_val k = { 8, key }, v;
	int ret = CUCO_OK;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		uint64_t key = k.mv_size == 8 ? store_from_be64(k.mv_data) : 0;
		if ((ret = seq_decode(txn, &v, key, what, rec, decode)) != CUCO_OK)
			break;
		if ((ret = fn(rec, arg)) != 0)
			break;
	}
	if (rc && rc != MDB_NOTFOUND && ret == CUCO_OK)
		ret = store_mdb_error(txn, what, rc);
	mdb_cursor_close(cur);
	return ret;
}

static int seq_get(cuco_txn *txn, int table, uint64_t key64, const char *what, void *rec,
	decode_fn decode)
{
	unsigned char key[8];
	store_be64(key64, key);
	MDB_val k = { 8, key }, v;
	int rc = mdb_get(txn->t, store_dbi(txn, table), &k, &v);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "%s: %s %llu: not found", txn->st->dir, what, (unsigned long long)key64);
	if (rc)
		return store_mdb_error(txn, what, rc);
	return seq_decode(txn, &v, key64, what, rec, decode);
}

static int decode_event(const cJSON *j, void *rec, uint64_t *id)
{
	cuco_event *ev = rec;
	int rc = cuco_event_from_json(j, ev);
	*id = ev->seq;
	return rc;
}

static int decode_command(const cJSON *j, void *rec, uint64_t *id)
{
	cuco_command *c = rec;
	int rc = cuco_command_from_json(j, c);
	*id = c->seq;
	return rc;
}

static int decode_island(const cJSON *j, void *rec, uint64_t *id)
{
	cuco_island *isl = rec;
	int rc = cuco_island_from_json(j, isl);
	*id = (uint64_t)isl->id;
	return rc;
}

static int decode_memory(const cJSON *j, void *rec, uint64_t *id)
{
	cuco_memory *m = rec;
	int rc = cuco_memory_from_json(j, m);
	*id = m->id;
	return rc;
}

int cuco_event_add(cuco_txn *txn, cuco_event *ev)
{
	if (ev->kind <= CUCO_EVENT_UNKNOWN || ev->kind >= CUCO_EVENT_KIND_COUNT)
		return cuco_txn_fail(txn, CUCO_EDATA, "%s: an event of no known kind (%d)", txn->st->dir,
			(int)ev->kind);
	cuco_strlcpy(ev->name, cuco_event_kind_name(ev->kind), sizeof ev->name);
	ev->seq = last_key(txn, T_EVENTS) + 1;
	if (ev->time == 0)
		ev->time = cuco_now();
	return seq_put(txn, T_EVENTS, ev->seq, cuco_event_to_json(ev), "events");
}

/* Typed walkers hand seq_each's untyped records to the caller's callback. */
struct event_walk { int (*fn)(const cuco_event *, void *); void *arg; };
struct island_walk { int (*fn)(const cuco_island *, void *); void *arg; };
struct memory_walk { int (*fn)(const cuco_memory *, void *); void *arg; };

static int event_step(const void *rec, void *arg)
{
	struct event_walk *w = arg;
	return w->fn(rec, w->arg);
}

static int island_step(const void *rec, void *arg)
{
	struct island_walk *w = arg;
	return w->fn(rec, w->arg);
}

static int memory_step(const void *rec, void *arg)
{
	struct memory_walk *w = arg;
	return w->fn(rec, w->arg);
}

int cuco_event_each(cuco_txn *txn, uint64_t from_seq, int (*fn)(const cuco_event *, void *), void *arg)
{
	cuco_event ev;
	struct event_walk w = { fn, arg };
	return seq_each(txn, T_EVENTS, from_seq, "events", &ev, decode_event, event_step, &w);
}

uint64_t cuco_event_last_seq(cuco_txn *txn)
{
	return last_key(txn, T_EVENTS);
}

int cuco_command_add(cuco_txn *txn, cuco_command *cmd)
{
	cmd->seq = last_key(txn, T_COMMANDS) + 1;
	cmd->time = cuco_now();
	cmd->acked = false;
	return seq_put(txn, T_COMMANDS, cmd->seq, cuco_command_to_json(cmd), "commands");
}

struct command_walk { int (*fn)(const cuco_command *, void *); void *arg; };

static int only_pending(const void *rec, void *arg)
{
	const cuco_command *c = rec;
	struct command_walk *w = arg;
	return c->acked ? 0 : w->fn(c, w->arg);
}

static int every_command(const void *rec, void *arg)
{
	struct command_walk *w = arg;
	return w->fn(rec, w->arg);
}

static int command_walk_from(cuco_txn *txn, int (*step)(const void *, void *),
	int (*fn)(const cuco_command *, void *), void *arg)
{
	cuco_command *c = cuco_xmalloc(sizeof *c);
	struct command_walk w = { fn, arg };
	int rc = seq_each(txn, T_COMMANDS, 1, "commands", c, decode_command, step, &w);
	free(c);
	return rc;
}

int cuco_command_each_pending(cuco_txn *txn, int (*fn)(const cuco_command *, void *), void *arg)
{
	return command_walk_from(txn, only_pending, fn, arg);
}

int cuco_command_each(cuco_txn *txn, int (*fn)(const cuco_command *, void *), void *arg)
{
	return command_walk_from(txn, every_command, fn, arg);
}

int cuco_command_get(cuco_txn *txn, uint64_t seq, cuco_command *out)
{
	return seq_get(txn, T_COMMANDS, seq, "commands", out, decode_command);
}

int cuco_command_ack(cuco_txn *txn, uint64_t seq, const char *result)
{
	cuco_command *c = cuco_xmalloc(sizeof *c);
	int rc = cuco_command_get(txn, seq, c);
	if (rc == CUCO_OK) {
		c->acked = true;
		c->ack_time = cuco_now();
		cuco_strlcpy(c->ack_result, result ? result : "", sizeof c->ack_result);
		rc = seq_put(txn, T_COMMANDS, seq, cuco_command_to_json(c), "commands");
	}
	free(c);
	return rc;
}

int cuco_island_put(cuco_txn *txn, const cuco_island *isl)
{
	if (isl->id < 0)
		return cuco_txn_fail(txn, CUCO_EDATA, "island: id: %d is negative", isl->id);
	return seq_put(txn, T_ISLANDS, (uint64_t)isl->id, cuco_island_to_json(isl), "islands");
}

int cuco_island_get(cuco_txn *txn, int id, cuco_island *out)
{
	if (id < 0)
		return store_notfound(txn, "island %d: not found", id);
	return seq_get(txn, T_ISLANDS, (uint64_t)id, "islands", out, decode_island);
}

int cuco_island_each(cuco_txn *txn, int (*fn)(const cuco_island *, void *), void *arg)
{
	cuco_island isl;
	struct island_walk w = { fn, arg };
	return seq_each(txn, T_ISLANDS, 0, "islands", &isl, decode_island, island_step, &w);
}

int cuco_memory_add(cuco_txn *txn, cuco_memory *m)
{
	m->id = last_key(txn, T_MEMORY) + 1;
	return seq_put(txn, T_MEMORY, m->id, cuco_memory_to_json(m), "memory");
}

int cuco_memory_del(cuco_txn *txn, uint64_t id)
{
	unsigned char key[8];
	store_be64(id, key);
	MDB_val k = { 8, key };
	int rc = mdb_del(txn->t, store_dbi(txn, T_MEMORY), &k, NULL);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "memory %llu: not found", (unsigned long long)id);
	return rc ? store_mdb_error(txn, "memory", rc) : CUCO_OK;
}

int cuco_memory_each(cuco_txn *txn, int (*fn)(const cuco_memory *, void *), void *arg)
{
	cuco_memory *m = cuco_xmalloc(sizeof *m);
	struct memory_walk w = { fn, arg };
	int rc = seq_each(txn, T_MEMORY, 0, "memory", m, decode_memory, memory_step, &w);
	free(m);
	return rc;
}

/* ---- meta ----------------------------------------------------------------- */

int cuco_meta_put(cuco_txn *txn, const char *key, const char *json)
{
	if (strcmp(key, "schema") == 0)
		return cuco_txn_fail(txn, CUCO_EDATA, "meta: schema: written only by the store itself");
	cJSON *j = cJSON_Parse(json);
	if (!j)
		return cuco_txn_fail(txn, CUCO_EDATA, "meta: %s: value is not valid JSON", key);
	MDB_val k = { strlen(key), (void *)key };
	return store_put_json(txn, T_META, &k, j, 0, "meta");
}

int cuco_meta_get(cuco_txn *txn, const char *key, char **json)
{
	MDB_val k = { strlen(key), (void *)key }, v;
	int rc = mdb_get(txn->t, store_dbi(txn, T_META), &k, &v);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "%s: meta %s: not set", txn->st->dir, key);
	if (rc)
		return store_mdb_error(txn, "meta", rc);
	*json = cuco_xmalloc(v.mv_size + 1);
	memcpy(*json, v.mv_data, v.mv_size);
	(*json)[v.mv_size] = '\0';
	return CUCO_OK;
}

/* ---- model calls and refusals ---------------------------------------------- */

static int decode_call(const cJSON *j, void *rec, uint64_t *id)
{
	int rc = cuco_call_from_json(j, rec);
	*id = ((const cuco_call *)rec)->id;
	return rc;
}

static int decode_refusal(const cJSON *j, void *rec, uint64_t *id)
{
	int rc = cuco_refusal_from_json(j, rec);
	*id = ((const cuco_refusal *)rec)->id;
	return rc;
}

struct call_walk { int (*fn)(const cuco_call *, void *); void *arg; };
struct refusal_walk { int (*fn)(const cuco_refusal *, void *); void *arg; };

static int call_step(const void *rec, void *arg)
{
	struct call_walk *w = arg;
	return w->fn(rec, w->arg);
}

static int refusal_step(const void *rec, void *arg)
{
	struct refusal_walk *w = arg;
	return w->fn(rec, w->arg);
}

int cuco_call_add(cuco_txn *txn, cuco_call *c)
{
	c->id = last_key(txn, T_CALLS) + 1;
	if (c->time == 0)
		c->time = cuco_now();
	return seq_put(txn, T_CALLS, c->id, cuco_call_to_json(c), "calls");
}

uint64_t cuco_call_last_id(cuco_txn *txn)
{
	return txn->st->absent[T_CALLS] ? 0 : last_key(txn, T_CALLS);
}

int cuco_call_each(cuco_txn *txn, uint64_t from, int (*fn)(const cuco_call *, void *), void *arg)
{
	if (txn->st->absent[T_CALLS])
		return CUCO_OK;  /* an older store, read-only: it has none */
	cuco_call c;
	struct call_walk w = { fn, arg };
	return seq_each(txn, T_CALLS, from, "calls", &c, decode_call, call_step, &w);
}

void cuco_call_totals_add(cuco_call_totals *t, const cuco_call *c)
{
	t->calls++;
	t->tokens_in += c->tokens_in;
	t->tokens_cached += c->tokens_cached;
	t->tokens_out += c->tokens_out;
	t->cost_usd += c->cost_usd;
	t->estimated += c->estimated;
	t->unpriced += !c->priced;
	t->refused += c->outcome == CUCO_CALL_REFUSED;
	t->edits_refused += c->outcome == CUCO_CALL_USED && c->reason[0];
}

static int sum_one(const cuco_call *c, void *arg)
{
	cuco_call_totals_add(arg, c);
	return 0;
}

int cuco_call_sum(cuco_txn *txn, cuco_call_totals *out)
{
	memset(out, 0, sizeof *out);
	return cuco_call_each(txn, 1, sum_one, out);
}

int cuco_refusal_add(cuco_txn *txn, cuco_refusal *r)
{
	r->id = last_key(txn, T_REFUSALS) + 1;
	if (r->time == 0)
		r->time = cuco_now();
	return seq_put(txn, T_REFUSALS, r->id, cuco_refusal_to_json(r), "refusals");
}

int cuco_refusal_get(cuco_txn *txn, uint64_t id, cuco_refusal *out)
{
	if (txn->st->absent[T_REFUSALS])
		return store_notfound(txn, "%s: refusal %llu: not found", txn->st->dir,
			(unsigned long long)id);
	return seq_get(txn, T_REFUSALS, id, "refusals", out, decode_refusal);
}

int cuco_refusal_each(cuco_txn *txn, int (*fn)(const cuco_refusal *, void *), void *arg)
{
	if (txn->st->absent[T_REFUSALS])
		return CUCO_OK;
	cuco_refusal *r = cuco_xmalloc(sizeof *r);
	struct refusal_walk w = { fn, arg };
	int rc = seq_each(txn, T_REFUSALS, 0, "refusals", r, decode_refusal, refusal_step, &w);
	free(r);
	return rc;
}
