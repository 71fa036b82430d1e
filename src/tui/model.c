/* model.c — the screen's snapshot of the store, reloaded when events move. */
#include "tui/model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tui_model_init(tui_model *m)
{
	memset(m, 0, sizeof *m);
	m->filter = (tui_filter){ -2, -1, -1 };
	m->best_speedup = NAN;
}

void tui_model_free(tui_model *m)
{
	free(m->sums);
	free(m->order);
	free(m->depth);
	free(m->pos);
	free(m->folded);
	free(m->rows);
	memset(m, 0, sizeof *m);
}

long tui_model_find(const tui_model *m, uint64_t id)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->sums[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->sums[lo].id == id ? (long)lo : -1;
}

long tui_model_row_of(const tui_model *m, uint64_t id)
{
	long idx = tui_model_find(m, id);
	if (idx < 0)
		return -1;
	for (size_t r = 0; r < m->nrows; r++)
		if (m->rows[r] == (size_t)idx)
			return (long)r;
	return -1;
}

bool tui_model_has_children(const tui_model *m, size_t i)
{
	/* In lineage order a node's children follow it directly, deeper. */
	if (i >= m->n)
		return false;
	size_t k = m->pos[i];
	return k + 1 < m->n && m->depth[m->order[k + 1]] > m->depth[i];
}

static bool matches(const tui_filter *f, const cuco_summary *s)
{
	return (f->island == -2 || s->island == f->island)
		&& (f->status < 0 || s->status == f->status)
		&& (f->origin < 0 || s->origin == f->origin);
}

void tui_model_rows(tui_model *m)
{
	m->nrows = 0;
	int hide_below = -1;  /* inside a folded subtree: depth of its root */
	for (size_t k = 0; k < m->n; k++) {
		size_t i = m->order[k];
		int d = m->depth[i];
		if (hide_below >= 0 && d > hide_below)
			continue;
		hide_below = m->folded[i] ? d : -1;
		if (matches(&m->filter, &m->sums[i]))
			m->rows[m->nrows++] = i;
	}
}

const cuco_event *tui_model_event(const tui_model *m, int i)
{
	return &m->log[(m->log_start + i) % TUI_LOG_KEEP];
}

/* ---- reading the store ------------------------------------------------ */

static void log_push(tui_model *m, const cuco_event *ev)
{
	if (m->log_count < TUI_LOG_KEEP)
		m->log[(m->log_start + m->log_count++) % TUI_LOG_KEEP] = *ev;
	else {
		m->log[m->log_start] = *ev;
		m->log_start = (m->log_start + 1) % TUI_LOG_KEEP;
	}
}

static int take_event(const cuco_event *ev, void *arg)
{
	tui_model *m = arg;
	if (!m->started)
		m->started = ev->time;
	if (strcmp(ev->kind, "pause") == 0)
		m->paused = true;
	else if (strcmp(ev->kind, "resume") == 0 || strcmp(ev->kind, "run-start") == 0)
		m->paused = false;
	log_push(m, ev);
	m->last_seq = ev->seq;
	return 0;
}

static int first_event(const cuco_event *ev, void *arg)
{
	*(double *)arg = ev->time;
	return 1;
}

static int take_island(const cuco_island *isl, void *arg)
{
	tui_model *m = arg;
	if (m->nislands < TUI_MAX_ISLANDS)
		m->islands[m->nislands++] = *isl;
	return 0;
}

/* A meta value is a JSON string or an object with a "name". */
static void meta_name(cuco_txn *txn, const char *key, char *out, size_t size, cJSON **keep)
{
	char *json = NULL;
	if (cuco_meta_get(txn, key, &json) != CUCO_OK)
		return;
	cJSON *j = cJSON_Parse(json);
	free(json);
	if (!j)
		return;
	const cJSON *name = cJSON_IsString(j) ? j : cJSON_GetObjectItemCaseSensitive(j, "name");
	if (cJSON_IsString(name))
		cuco_strlcpy(out, name->valuestring, size);
	if (keep)
		*keep = j;
	else
		cJSON_Delete(j);
}

/* meta "slots" (engine_slots.c) in a few words; nothing for one slot. */
static void read_slots(tui_model *m, cuco_txn *txn)
{
	char *json = NULL;
	m->slots[0] = '\0';
	if (cuco_meta_get(txn, "slots", &json) != CUCO_OK)
		return;
	cJSON *j = cJSON_Parse(json);
	free(json);
	int n[4] = { 0 };
	static const char *const keys[4] = { "busy", "idle", "resting", "retired" };
	for (int k = 0; k < 4; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
		n[k] = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e6 ? (int)v->valuedouble : 0;
	}
	cJSON_Delete(j);
	int all = n[0] + n[1] + n[2] + n[3];
	if (all <= 1)
		return;
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "slots %d/%d busy", n[0], all);
	if (n[2])
		cuco_buf_printf(&b, ", %d resting", n[2]);
	if (n[3])
		cuco_buf_printf(&b, ", %d retired", n[3]);
	cuco_strlcpy(m->slots, b.data, sizeof m->slots);
	cuco_buf_free(&b);
}

static void read_meta(tui_model *m, cuco_txn *txn)
{
	cJSON *wl = NULL, *cfg = NULL;
	meta_name(txn, "workload", m->workload, sizeof m->workload, &wl);
	meta_name(txn, "strategy", m->strategy, sizeof m->strategy, NULL);
	/* The workload's own words for its dimensions, when the run kept it. */
	const cJSON *space = cJSON_GetObjectItemCaseSensitive(wl, "design_space");
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++) {
		const cJSON *dim = cJSON_GetObjectItemCaseSensitive(space, cuco_dirdim_name((cuco_dirdim)i));
		const cJSON *help = cJSON_GetObjectItemCaseSensitive(dim, "help");
		if (cJSON_IsString(help))
			cuco_strlcpy(m->dim_help[i], help->valuestring, sizeof m->dim_help[i]);
	}
	cJSON_Delete(wl);
	char *json = NULL;
	if (cuco_meta_get(txn, "config", &json) == CUCO_OK) {
		cfg = cJSON_Parse(json);
		free(json);
		const cJSON *usd = cJSON_GetObjectItemCaseSensitive(cfg, "budget_usd");
		const cJSON *tok = cJSON_GetObjectItemCaseSensitive(cfg, "budget_tokens");
		if (cJSON_IsNumber(usd))
			m->budget_usd = usd->valuedouble;
		if (cJSON_IsNumber(tok))
			m->budget_tokens = (int64_t)tok->valuedouble;
		cJSON_Delete(cfg);
	}
}

struct refresh {
	tui_model *m;
	bool force, changed;
};

static void reindex(tui_model *m, cuco_summary *sums, size_t n)
{
	size_t old_n = m->n;
	free(m->sums);
	m->sums = sums;
	m->n = n;
	m->order = cuco_xrealloc(m->order, sizeof(size_t) * (n ? n : 1));
	m->rows = cuco_xrealloc(m->rows, sizeof(size_t) * (n ? n : 1));
	m->folded = cuco_xrealloc(m->folded, n ? n : 1);
	if (n > old_n)
		memset(m->folded + old_n, 0, n - old_n);
	/* cuco_lineage_order gives depth per row; keep it per candidate. */
	int *row_depth = cuco_xmalloc(sizeof(int) * (n ? n : 1));
	cuco_lineage_order(sums, n, m->order, row_depth);
	m->depth = cuco_xrealloc(m->depth, sizeof(int) * (n ? n : 1));
	m->pos = cuco_xrealloc(m->pos, sizeof(size_t) * (n ? n : 1));
	for (size_t k = 0; k < n; k++) {
		m->depth[m->order[k]] = row_depth[k];
		m->pos[m->order[k]] = k;
	}
	free(row_depth);
	memset(m->count, 0, sizeof m->count);
	m->baseline_id = 0;
	for (size_t i = 0; i < n; i++) {
		if (sums[i].status < CUCO_STATUS_COUNT)
			m->count[sums[i].status]++;
		if (sums[i].origin == CUCO_ORIGIN_BASELINE)
			m->baseline_id = sums[i].id;
	}
	tui_model_rows(m);
}

static int refresh_txn(cuco_txn *txn, void *arg)
{
	struct refresh *r = arg;
	tui_model *m = r->m;
	uint64_t last = cuco_event_last_seq(txn);
	/* The slots change without an event (busy, idle): read each time. */
	char slots[sizeof m->slots];
	cuco_strlcpy(slots, m->slots, sizeof slots);
	read_slots(m, txn);
	r->changed = strcmp(slots, m->slots) != 0;
	if (!r->force && last == m->last_seq)
		return CUCO_OK;
	r->changed = true;
	cuco_summary *sums = NULL;
	size_t n = 0;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	reindex(m, sums, n);
	m->nislands = 0;
	if ((rc = cuco_island_each(txn, take_island, m)) != CUCO_OK)
		return rc;
	cuco_summary best;
	m->best_id = 0;
	m->best_speedup = NAN;
	if (cuco_best(txn, &best) == CUCO_OK) {
		m->best_id = best.id;
		m->best_speedup = best.speedup;
	}
	if (m->last_seq == 0) {
		/* First load: the run's start, then only the tail of the log. */
		cuco_event_each(txn, 1, first_event, &m->started);
		read_meta(m, txn);
	}
	uint64_t from = m->last_seq + 1;
	if (last >= TUI_LOG_KEEP && from < last - TUI_LOG_KEEP + 1)
		from = last - TUI_LOG_KEEP + 1;
	rc = cuco_event_each(txn, from, take_event, m);
	m->last_seq = last;
	return rc;
}

int tui_model_refresh(tui_model *m, cuco_store *st, bool force, bool *changed, cuco_err *err)
{
	struct refresh r = { m, force, false };
	int rc = cuco_store_read(st, refresh_txn, &r, err);
	if (changed)
		*changed = r.changed;
	return rc;
}

struct sum_step {
	tui_model *m;
	size_t left;
	bool done;  /* the chunk is full */
};

static int add_usage(const cuco_candidate *c, void *arg)
{
	struct sum_step *s = arg;
	s->m->tokens += c->tokens_prompt + c->tokens_completion;
	s->m->cost_usd += c->cost_usd;
	s->m->summed_upto = c->id;
	s->done = --s->left == 0;
	return s->done;
}

static int sum_txn(cuco_txn *txn, void *arg)
{
	struct sum_step *s = arg;
	int rc = cuco_cand_each(txn, s->m->summed_upto + 1, add_usage, s);
	return s->done ? CUCO_OK : rc;
}

bool tui_model_sum_step(tui_model *m, cuco_store *st, size_t budget)
{
	if (m->n == 0 || m->summed_upto >= m->sums[m->n - 1].id)
		return false;
	struct sum_step s = { m, budget, false };
	if (cuco_store_read(st, sum_txn, &s, NULL) != CUCO_OK) {
		/* A record that does not read stays out of the totals. */
		m->summed_upto = m->sums[m->n - 1].id;
		return false;
	}
	return m->summed_upto < m->sums[m->n - 1].id;
}
