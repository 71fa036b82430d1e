/* crown.c — the run's chain of crowns (docs/trust.md, docs/store.md), and
 * how its last session's confirmation ended (meta "confirmation", below).
 * The chain is meta "best":
 *
 *   {"crowned": [BASELINE, ID, …], "revisits": [{"id", "lapsed", "why"}, …]}
 *
 * the baseline the run measures against, every candidate crowned the best
 * in order, and every crown looked at again since. The best is the latest
 * crown still standing: done (a program refused when measured again is
 * not, measure.c), not rejected, not lapsed. Another baseline starts the
 * chain again: what was crowned against the old one lapses with it. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

#define CROWNS_MAX 4096     /* crowns, and revisits, a chain holds at most */

typedef struct chain {
	uint64_t *ids;
	size_t n;
	cuco_revisit *rev;
	size_t nrev;
} chain;

static void chain_free(chain *c)
{
	free(c->ids);
	free(c->rev);
	memset(c, 0, sizeof *c);
}

static int chain_bad(cuco_txn *txn, const char *what)
{
	return cuco_txn_fail(txn, CUCO_EDATA, "%s: meta best: %s", txn->st->dir, what);
}

static int read_revisit(const cJSON *e, cuco_revisit *r)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
	const cJSON *lapsed = cJSON_GetObjectItemCaseSensitive(e, "lapsed");
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "why");
	if (!cJSON_IsNumber(id) || id->valuedouble < 1 || !cJSON_IsBool(lapsed) || !cJSON_IsString(why))
		return CUCO_EDATA;
	r->id = (uint64_t)id->valuedouble;
	r->lapsed = cJSON_IsTrue(lapsed);
	cuco_strlcpy(r->why, why->valuestring, sizeof r->why);
	return CUCO_OK;
}

/* The chain, with room for one more crown and one more revisit;
 * CUCO_ENOTFOUND when the store has none. */
static int chain_read(cuco_txn *txn, chain *c)
{
	memset(c, 0, sizeof *c);
	char *json = NULL;
	int rc = cuco_meta_get(txn, "best", &json);
	if (rc != CUCO_OK)
		return rc;
	cJSON *j = cJSON_Parse(json);
	free(json);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "crowned");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "revisits"), *e;
	if (!cJSON_IsArray(a) || (r && !cJSON_IsArray(r)))
		rc = chain_bad(txn, "crowned and revisits: expected arrays");
	else if (cJSON_GetArraySize(a) > CROWNS_MAX || cJSON_GetArraySize(r) > CROWNS_MAX)
		rc = chain_bad(txn, "expected at most 4096 crowns and 4096 revisits");
	if (rc == CUCO_OK) {
		c->ids = cuco_xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *c->ids);
		c->rev = cuco_xcalloc((size_t)cJSON_GetArraySize(r) + 1, sizeof *c->rev);
		cJSON_ArrayForEach(e, a) {
			if (!cJSON_IsNumber(e) || e->valuedouble < 1) {
				rc = chain_bad(txn, "crowned: expected candidate ids");
				break;
			}
			c->ids[c->n++] = (uint64_t)e->valuedouble;
		}
		cJSON_ArrayForEach(e, r) {
			if (rc != CUCO_OK || read_revisit(e, &c->rev[c->nrev++]) == CUCO_OK)
				continue;
			rc = chain_bad(txn, "revisits: expected {id, lapsed, why}");
		}
	}
	cJSON_Delete(j);
	if (rc != CUCO_OK)
		chain_free(c);
	return rc;
}

static int chain_write(cuco_txn *txn, const chain *c)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "crowned");
	for (size_t i = 0; i < c->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)c->ids[i]));
	cJSON *r = cJSON_AddArrayToObject(o, "revisits");
	for (size_t i = 0; i < c->nrev; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "id", (double)c->rev[i].id);
		cJSON_AddBoolToObject(e, "lapsed", c->rev[i].lapsed);
		cJSON_AddStringToObject(e, "why", c->rev[i].why);
		cJSON_AddItemToArray(r, e);
	}
	MDB_val k = { 4, "best" };
	return store_put_json(txn, T_META, &k, o, 0, "meta");
}

static bool lapsed(const chain *c, uint64_t id)
{
	for (size_t i = 0; i < c->nrev; i++)
		if (c->rev[i].id == id && c->rev[i].lapsed)
			return true;
	return false;
}

static bool crowned(const chain *c, uint64_t id)
{
	for (size_t i = 1; i < c->n; i++)  /* ids[0] is the baseline */
		if (c->ids[i] == id)
			return true;
	return false;
}

static int best_by_score(cuco_txn *txn, cuco_summary *out)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn->t, store_dbi(txn, T_BY_SCORE), &cur);
	if (rc)
		return store_mdb_error(txn, "by_score", rc);
	MDB_val k, v;
	rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return store_notfound(txn, "%s: no finished candidate yet", txn->st->dir);
	if (rc)
		return store_mdb_error(txn, "by_score", rc);
	return cuco_summary_get(txn, store_from_be64((const unsigned char *)k.mv_data + 8), out);
}

int cuco_best(cuco_txn *txn, cuco_summary *out)
{
	chain c;
	int rc = chain_read(txn, &c);
	if (rc == CUCO_ENOTFOUND)
		return best_by_score(txn, out);
	/* The latest crown still standing: a rejected, failed or lapsed one
	 * steps down. */
	bool found = false;
	for (size_t i = c.n; rc == CUCO_OK && !found && i-- > 0;) {
		rc = cuco_summary_get(txn, c.ids[i], out);
		found = rc == CUCO_OK && out->status == CUCO_STATUS_DONE && !lapsed(&c, c.ids[i]);
		if (rc == CUCO_ENOTFOUND)
			rc = CUCO_OK;
	}
	chain_free(&c);
	if (rc == CUCO_OK && !found)
		rc = store_notfound(txn, "%s: no finished candidate yet", txn->st->dir);
	return rc;
}

int cuco_crown(cuco_txn *txn, uint64_t id)
{
	cuco_summary s;
	int rc = cuco_summary_get(txn, id, &s);
	if (rc != CUCO_OK)
		return rc;
	chain c;
	rc = chain_read(txn, &c);
	if (rc == CUCO_ENOTFOUND)
		rc = CUCO_OK;
	if (rc != CUCO_OK)
		return rc;
	bool baseline = s.origin == CUCO_ORIGIN_BASELINE;
	if (baseline && c.n > 0 && c.ids[0] == id) {
		chain_free(&c);
		return CUCO_OK;  /* this baseline's chain goes on */
	}
	if (baseline) {
		chain_free(&c);  /* another baseline: crowns against the old one lapse */
		c.ids = cuco_xcalloc(1, sizeof *c.ids);
	} else if (c.n == 0) {
		rc = cuco_txn_fail(txn, CUCO_EDATA, "%s: crown #%llu: no chain of crowns yet",
			txn->st->dir, (unsigned long long)id);
	} else if (c.n == CROWNS_MAX) {
		rc = cuco_txn_fail(txn, CUCO_EDATA, "%s: crown #%llu: %d crowns already",
			txn->st->dir, (unsigned long long)id, CROWNS_MAX);
	} else if (lapsed(&c, id)) {
		rc = cuco_txn_fail(txn, CUCO_EDATA, "%s: crown #%llu: its crown lapsed; it is not "
			"crowned again", txn->st->dir, (unsigned long long)id);
	}
	if (rc == CUCO_OK) {
		c.ids[c.n++] = id;
		rc = chain_write(txn, &c);
	}
	chain_free(&c);
	return rc;
}

int cuco_crown_revisit(cuco_txn *txn, const cuco_revisit *r)
{
	chain c;
	int rc = chain_read(txn, &c);
	if (rc == CUCO_OK && !crowned(&c, r->id))
		rc = cuco_txn_fail(txn, CUCO_EDATA, "%s: revisit #%llu: never crowned", txn->st->dir,
			(unsigned long long)r->id);
	else if (rc == CUCO_OK && c.nrev == CROWNS_MAX)
		rc = cuco_txn_fail(txn, CUCO_EDATA, "%s: revisit #%llu: %d revisits already",
			txn->st->dir, (unsigned long long)r->id, CROWNS_MAX);
	if (rc == CUCO_OK) {
		c.rev[c.nrev++] = *r;
		rc = chain_write(txn, &c);
	}
	chain_free(&c);
	return rc;
}

int cuco_crown_revisits(cuco_txn *txn, cuco_revisit **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	chain c;
	int rc = chain_read(txn, &c);
	if (rc == CUCO_ENOTFOUND)
		return CUCO_OK;
	if (rc == CUCO_OK && c.nrev > 0) {
		*out = c.rev;
		*n = c.nrev;
		c.rev = NULL;
	}
	chain_free(&c);
	return rc;
}

/* ---- the last session's confirmation --------------------------------------------- */

static const char *const confirm_names[CUCO_CONFIRM_STATE_COUNT] = {
#define X(e, name, help) name,
	CUCO_CONFIRM_STATES(X)
#undef X
};

static const char *const confirm_help[CUCO_CONFIRM_STATE_COUNT] = {
#define X(e, name, help) help,
	CUCO_CONFIRM_STATES(X)
#undef X
};

const char *cuco_confirm_state_name(cuco_confirm_state s)
{
	return (unsigned)s < CUCO_CONFIRM_STATE_COUNT ? confirm_names[s] : "?";
}

const char *cuco_confirm_state_help(cuco_confirm_state s)
{
	return (unsigned)s < CUCO_CONFIRM_STATE_COUNT ? confirm_help[s] : "";
}

cJSON *cuco_confirmation_to_json(const cuco_confirmation *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "session", (double)c->session);
	cJSON_AddStringToObject(o, "state", cuco_confirm_state_name(c->state));
	cJSON_AddNumberToObject(o, "contenders", c->contenders);
	cJSON_AddNumberToObject(o, "judged", c->judged);
	cJSON_AddNumberToObject(o, "crowned", c->crowned);
	cJSON *u = cJSON_AddArrayToObject(o, "unjudged");
	for (int i = 0; i < c->nunjudged && i < CUCO_UNJUDGED_MAX; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "id", (double)c->unjudged[i].id);
		cJSON_AddStringToObject(e, "why", c->unjudged[i].why);
		cJSON_AddItemToArray(u, e);
	}
	return o;
}

int cuco_confirmation_put(cuco_txn *txn, const cuco_confirmation *c)
{
	MDB_val k = { 12, "confirmation" };
	return store_put_json(txn, T_META, &k, cuco_confirmation_to_json(c), 0, "meta");
}

static bool count_of(const cJSON *o, const char *key, int *out)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1e9)
		return false;
	*out = (int)n->valuedouble;
	return true;
}

int cuco_confirmation_get(cuco_txn *txn, cuco_confirmation *c)
{
	memset(c, 0, sizeof *c);
	char *json = NULL;
	int rc = cuco_meta_get(txn, "confirmation", &json);
	if (rc != CUCO_OK)
		return rc;
	cJSON *j = cJSON_Parse(json);
	free(json);
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(j, "state");
	const cJSON *session = cJSON_GetObjectItemCaseSensitive(j, "session"), *e;
	bool ok = cJSON_IsNumber(session) && session->valuedouble >= 0 && cJSON_IsString(state) &&
		count_of(j, "contenders", &c->contenders) && count_of(j, "judged", &c->judged) &&
		count_of(j, "crowned", &c->crowned);
	int st = ok ? cuco_name_index(confirm_names, CUCO_CONFIRM_STATE_COUNT, state->valuestring) : -1;
	if ((ok = st >= 0))
		c->state = (cuco_confirm_state)st;
	const cJSON *unjudged = ok ? cJSON_GetObjectItemCaseSensitive(j, "unjudged") : NULL;
	cJSON_ArrayForEach(e, unjudged) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "why");
		if (!cJSON_IsNumber(id) || !cJSON_IsString(why) || c->nunjudged == CUCO_UNJUDGED_MAX) {
			ok = false;
			break;
		}
		c->unjudged[c->nunjudged].id = (uint64_t)id->valuedouble;
		cuco_strlcpy(c->unjudged[c->nunjudged++].why, why->valuestring, sizeof c->unjudged[0].why);
	}
	if (ok)
		c->session = (uint64_t)session->valuedouble;
	cJSON_Delete(j);
	return ok ? CUCO_OK : cuco_txn_fail(txn, CUCO_EDATA, "%s: meta confirmation: expected "
		"{session, state, contenders, judged, crowned, unjudged: [{id, why}]}", txn->st->dir);
}
