/* model.c — the screen's snapshot of the store, reloaded when events move. */
#include "tui/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sort_names[TUI_SORT_COUNT] = {
#define X(e, name) name,
	TUI_SORTS(X)
#undef X
};

const char *tui_sort_name(tui_sort s)
{
	return (unsigned)s < TUI_SORT_COUNT ? sort_names[s] : "?";
}

void tui_model_init(tui_model *m, bool in_process)
{
	memset(m, 0, sizeof *m);
	m->filter = (tui_filter){ -2, -1, -1 };
	m->best_speedup = NAN;
	m->in_process = in_process;
	m->hints = true;
}

void tui_model_free(tui_model *m)
{
	free(m->sums);
	free(m->order);
	free(m->depth);
	free(m->pos);
	free(m->lines);
	free(m->folded);
	free(m->match);
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

/* A figure to sort by; NAN sorts last. */
static double sort_key(const cuco_summary *s, tui_sort sort)
{
	switch (sort) {
	case TUI_SORT_SPEEDUP: return isnan(s->speedup) ? NAN : -s->speedup;
	case TUI_SORT_LATENCY: return s->latency_median_us;
	default: return -(double)s->id;
	}
}

static int by_key(const void *a, const void *b, void *arg)
{
	const tui_model *m = arg;
	const cuco_summary *x = &m->sums[*(const size_t *)a], *y = &m->sums[*(const size_t *)b];
	double kx = sort_key(x, m->sort), ky = sort_key(y, m->sort);
	if (isnan(kx) != isnan(ky))
		return isnan(kx) ? 1 : -1;
	if (!isnan(kx) && kx != ky)
		return kx < ky ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void tui_model_rows(tui_model *m)
{
	m->nrows = 0;
	m->nmatch = 0;
	int hide_below = -1;  /* inside a folded subtree: depth of its root */
	bool tree = m->sort == TUI_SORT_LINEAGE;
	for (size_t k = 0; k < m->n; k++) {
		size_t i = m->order[k];
		int d = m->depth[i];
		if (tree && hide_below >= 0 && d > hide_below)
			continue;
		hide_below = m->folded[i] ? d : -1;
		if (!matches(&m->filter, &m->sums[i]))
			continue;
		m->rows[m->nrows++] = i;
		m->nmatch += m->match[i] & 1;
	}
	if (!tree && m->nrows > 1)
		qsort_r(m->rows, m->nrows, sizeof *m->rows, by_key, m);
}

int tui_model_next_status(const tui_model *m, int from)
{
	for (int s = from + 1; s < CUCO_STATUS_COUNT; s++)
		if (m->count[s])
			return s;
	return -1;
}

int tui_model_next_origin(const tui_model *m, int from)
{
	for (int o = from + 1; o < CUCO_ORIGIN_COUNT; o++)
		if (m->origin_count[o])
			return o;
	return -1;
}

long tui_model_next_match(const tui_model *m, size_t from, int dir)
{
	for (size_t k = 1; k <= m->nrows; k++) {
		size_t r = dir > 0 ? (from + k) % m->nrows : (from + m->nrows - k % m->nrows) % m->nrows;
		if (m->match[m->rows[r]] & 1)
			return (long)r;
	}
	return -1;
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

/* A run-end's reason is its first words: "stopped after 12 …", "error …". */
static bool stopped_reason(const char *text)
{
	return strncmp(text, "stopped", 7) == 0 || strncmp(text, "error", 5) == 0;
}

static int take_event(const cuco_event *ev, void *arg)
{
	tui_model *m = arg;
	if (!m->started)
		m->started = ev->time;
	switch (ev->kind) {
	case CUCO_EVENT_RUN_START:
		m->state = TUI_RUN_SEARCHING;
		m->paused = m->model_down = false;
		m->started = ev->time;
		m->ended = 0;
		m->end_text[0] = '\0';
		break;
	case CUCO_EVENT_PAUSE:
	case CUCO_EVENT_RESUME:
		m->paused = ev->kind == CUCO_EVENT_PAUSE;
		break;
	case CUCO_EVENT_RETIME:
		if (!m->ended)
			m->state = TUI_RUN_RETIMING;
		break;
	case CUCO_EVENT_RUN_END:
		m->state = stopped_reason(ev->text) ? TUI_RUN_STOPPED : TUI_RUN_FINISHED;
		m->ended = ev->time;
		cuco_strlcpy(m->end_text, ev->text, sizeof m->end_text);
		break;
	/* The engine waits for a model server that stopped answering. */
	case CUCO_EVENT_MODEL_DOWN:
		m->model_down = true;
		break;
	case CUCO_EVENT_MODEL_BACK:
		m->model_down = false;
		break;
	case CUCO_EVENT_NOISE:
		m->noisy = true;
		break;
	default:
		break;
	}
	log_push(m, ev);
	m->last_seq = ev->seq;
	return 0;
}

void tui_model_check_engine(tui_model *m)
{
	if (m->in_process || m->ended || !m->run_dir[0] || cuco_run_driven(m->run_dir))
		return;
	m->state = TUI_RUN_STOPPED;
	m->ended = m->log_count ? tui_model_event(m, m->log_count - 1)->time : cuco_now();
	cuco_strlcpy(m->end_text, "no session drives it", sizeof m->end_text);
}

bool tui_model_engine_live(const tui_model *m)
{
	return !m->ended;
}

const char *tui_model_state_text(const tui_model *m)
{
	if (m->ended)
		return m->state == TUI_RUN_STOPPED ? "stopped" : "finished";
	if (m->paused)
		return "PAUSED";
	if (m->model_down)
		return "WAITING FOR A MODEL";
	return m->state == TUI_RUN_RETIMING ? "re-timing" : "running";
}

double tui_model_elapsed(const tui_model *m)
{
	if (m->started <= 0)
		return 0;
	double t = (m->ended ? m->ended : cuco_now()) - m->started;
	return t > 0 ? t : 0;
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

/* meta "slots" in a few words; nothing for one slot. */
static void read_slots(tui_model *m, cuco_txn *txn)
{
	cuco_meta_slots *s = cuco_xmalloc(sizeof *s);
	cuco_meta_slots_get(txn, s);
	int all = s->busy + s->idle + s->resting + s->retired;
	m->slots[0] = '\0';
	if (all > 1) {
		cuco_buf b = { 0 };
		cuco_buf_printf(&b, "slots %d/%d busy", s->busy, all);
		if (s->resting)
			cuco_buf_printf(&b, ", %d resting", s->resting);
		if (s->retired)
			cuco_buf_printf(&b, ", %d retired", s->retired);
		cuco_strlcpy(m->slots, b.data, sizeof m->slots);
		cuco_buf_free(&b);
	}
	free(s);
}

static void read_meta(tui_model *m, cuco_txn *txn)
{
	cuco_meta_workload wl;
	cuco_meta_strategy strategy;
	cuco_meta_config cfg;
	char noise[8];
	cuco_meta_workload_get(txn, &wl);
	cuco_strlcpy(m->workload, wl.name, sizeof m->workload);
	/* The workload's own words for its dimensions, when the run kept it. */
	_Static_assert(sizeof m->dim_help == sizeof wl.dim_help, "dim_help as the store reads it");
	memcpy(m->dim_help, wl.dim_help, sizeof m->dim_help);
	cuco_meta_strategy_get(txn, &strategy);
	cuco_strlcpy(m->strategy, strategy.name, sizeof m->strategy);
	/* Whether the strategy's prompts carry hints (the engine's
	 * acknowledgement tells otherwise). */
	m->hints = strategy.hints;
	if (cuco_meta_noise_get(txn, noise, sizeof noise) == CUCO_OK)  /* said before the log's tail */
		m->noisy = true;
	cuco_meta_config_get(txn, &cfg);
	m->budget_usd = cfg.budget_usd;
	m->budget_tokens = cfg.budget_tokens;
}

struct refresh {
	tui_model *m;
	bool force, changed;
};

#define LAST_CHILD (1u << 31)

/* Which tree levels carry a vertical line on each row, and which rows are
 * their parent's last child: a backward pass finds last children (no later
 * sibling before the order climbs above them), a forward pass carries each
 * ancestor's "more siblings below" down its subtree. */
static void tree_lines(tui_model *m)
{
	size_t n = m->n;
	int maxd = 0;
	for (size_t i = 0; i < n; i++)
		maxd = m->depth[i] > maxd ? m->depth[i] : maxd;
	uint8_t *later = cuco_xcalloc((size_t)maxd + 2, 1);  /* a later sibling at that depth */
	int hi = 0;  /* deepest depth with `later` set */
	for (size_t k = n; k-- > 0;) {
		size_t i = m->order[k];
		int d = m->depth[i];
		for (; hi > d; hi--)
			later[hi] = 0;
		m->lines[i] = later[d] ? 0 : LAST_CHILD;
		later[d] = 1;
		hi = d > hi ? d : hi;
	}
	uint32_t open = 0;  /* bit k: the ancestor at depth k+1 has siblings below */
	for (size_t k = 0; k < n; k++) {
		size_t i = m->order[k];
		int d = m->depth[i];
		uint32_t keep = d >= 2 ? (d - 1 >= TUI_TREE_LEVELS ? ~0u : (1u << (d - 1)) - 1) : 0;
		m->lines[i] |= open & keep & ~LAST_CHILD;
		if (d >= 1 && d - 1 < TUI_TREE_LEVELS - 1) {
			open &= (1u << (d - 1)) - 1;
			if (!(m->lines[i] & LAST_CHILD))
				open |= 1u << (d - 1);
		}
	}
	free(later);
}

static void reindex(tui_model *m, cuco_summary *sums, size_t n)
{
	size_t old_n = m->n;
	size_t cap = n ? n : 1;
	free(m->sums);
	m->sums = sums;
	m->n = n;
	m->order = cuco_xrealloc(m->order, sizeof(size_t) * cap);
	m->rows = cuco_xrealloc(m->rows, sizeof(size_t) * cap);
	m->lines = cuco_xrealloc(m->lines, sizeof(uint32_t) * cap);
	m->folded = cuco_xrealloc(m->folded, cap);
	m->match = cuco_xrealloc(m->match, cap);
	if (n > old_n) {
		memset(m->folded + old_n, 0, n - old_n);
		memset(m->match + old_n, 0, n - old_n);
	}
	/* cuco_lineage_order gives depth per row; keep it per candidate. */
	int *row_depth = cuco_xmalloc(sizeof(int) * cap);
	cuco_lineage_order(sums, n, m->order, row_depth);
	m->depth = cuco_xrealloc(m->depth, sizeof(int) * cap);
	m->pos = cuco_xrealloc(m->pos, sizeof(size_t) * cap);
	for (size_t k = 0; k < n; k++) {
		m->depth[m->order[k]] = row_depth[k];
		m->pos[m->order[k]] = k;
	}
	free(row_depth);
	tree_lines(m);
	memset(m->count, 0, sizeof m->count);
	memset(m->origin_count, 0, sizeof m->origin_count);
	m->baseline_id = 0;
	for (size_t i = 0; i < n; i++) {
		if (sums[i].status < CUCO_STATUS_COUNT)
			m->count[sums[i].status]++;
		if (sums[i].origin < CUCO_ORIGIN_COUNT)
			m->origin_count[sums[i].origin]++;
		if (sums[i].origin == CUCO_ORIGIN_BASELINE)
			m->baseline_id = sums[i].id;
	}
}

/* ---- search ------------------------------------------------------------- */

#define MATCH 1     /* match[] bits: it matches */
#define SETTLED 2   /* its status is final: the answer holds */

static bool settled(const cuco_candidate *c)
{
	return c->status == CUCO_STATUS_DONE || c->status == CUCO_STATUS_FAILED ||
		c->status == CUCO_STATUS_REJECTED;
}

static uint8_t match_one(const cuco_candidate *c, const char *needle)
{
	char text[1024], ds[256];
	cuco_directive_short(&c->directive, ds, sizeof ds);
	snprintf(text, sizeof text, "#%llu %s %s %s %s %s %s", (unsigned long long)c->id,
		cuco_origin_name(c->origin), cuco_status_name(c->status), ds, c->note, c->model,
		c->failure.error_class);
	return (uint8_t)((strcasestr(text, needle) ? MATCH : 0) | (settled(c) ? SETTLED : 0));
}

/* Look again at candidates examined before whose status was not final
 * (they may have failed since, or been rejected): few, in a live run. */
static int recheck_txn(cuco_txn *txn, void *arg)
{
	tui_model *m = arg;
	if (!m->search[0])
		return CUCO_OK;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = CUCO_OK;
	for (size_t i = 0; i < m->searched && i < m->n && rc == CUCO_OK; i++)
		if (!(m->match[i] & SETTLED) && (rc = cuco_cand_get(txn, m->sums[i].id, c)) == CUCO_OK)
			m->match[i] = match_one(c, m->search);
	free(c);
	return rc;
}

struct search_step {
	tui_model *m;
	size_t budget;
};

/* The next `budget` candidates not yet examined for this search. */
static int step_txn(cuco_txn *txn, void *arg)
{
	struct search_step *s = arg;
	tui_model *m = s->m;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = CUCO_OK;
	for (size_t k = 0; k < s->budget && m->searched < m->n && rc == CUCO_OK; k++, m->searched++)
		if ((rc = cuco_cand_get(txn, m->sums[m->searched].id, c)) == CUCO_OK)
			m->match[m->searched] = match_one(c, m->search);
	free(c);
	return rc;
}

bool tui_model_search_step(tui_model *m, cuco_store *st, size_t budget)
{
	if (!m->search[0] || m->searched >= m->n)
		return false;
	struct search_step s = { m, budget };
	if (cuco_store_read(st, step_txn, &s, NULL) != CUCO_OK)
		m->searched = m->n;  /* a record that does not read matches nothing */
	tui_model_rows(m);
	return m->searched < m->n;
}

int tui_model_search(tui_model *m, cuco_store *st, const char *needle, size_t budget, cuco_err *err)
{
	cuco_strlcpy(m->search, needle ? needle : "", sizeof m->search);
	if (m->n)
		memset(m->match, 0, m->n);
	m->searched = 0;
	struct search_step s = { m, budget };
	int rc = m->search[0] ? cuco_store_read(st, step_txn, &s, err) : CUCO_OK;
	tui_model_rows(m);
	return rc;
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
	m->calls_last = cuco_call_last_id(txn);  /* tui_model_sum_step adds them up */
	if ((rc = recheck_txn(txn, m)) != CUCO_OK)
		return rc;
	tui_model_rows(m);
	m->nislands = 0;
	if ((rc = cuco_island_each(txn, take_island, m)) != CUCO_OK)
		return rc;
	cuco_summary best;
	cuco_candidate c;
	m->best_id = 0;
	m->best_speedup = NAN;
	m->best_rounds = 0;
	if (cuco_best(txn, &best) == CUCO_OK && cuco_cand_get(txn, best.id, &c) == CUCO_OK) {
		m->best_id = best.id;
		m->best_speedup = c.speedup;
		m->best_lo = c.speedup_lo;
		m->best_hi = c.speedup_hi;
		m->best_rounds = c.rounds;
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
	if (!m->run_dir[0])
		cuco_strlcpy(m->run_dir, cuco_store_dir(st), sizeof m->run_dir);
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

static int add_call(const cuco_call *c, void *arg)
{
	struct sum_step *s = arg;
	cuco_call_totals_add(&s->m->calls, c);
	s->m->calls_upto = c->id;
	s->done = --s->left == 0;
	return s->done;
}

static int add_usage(const cuco_candidate *c, void *arg)
{
	struct sum_step *s = arg;
	s->m->cand_tokens += c->tokens_prompt + c->tokens_completion;
	s->m->cand_cost_usd += c->cost_usd;
	s->m->summed_upto = c->id;
	s->done = --s->left == 0;
	return s->done;
}

static int sum_txn(cuco_txn *txn, void *arg)
{
	struct sum_step *s = arg;
	tui_model *m = s->m;
	m->calls_last = cuco_call_last_id(txn);
	int rc = m->calls_upto < m->calls_last ? cuco_call_each(txn, m->calls_upto + 1, add_call, s)
		: CUCO_OK;
	if (rc == CUCO_OK && !s->done && m->n && m->summed_upto < m->sums[m->n - 1].id)
		rc = cuco_cand_each(txn, m->summed_upto + 1, add_usage, s);
	return s->done ? CUCO_OK : rc;
}

bool tui_model_summing(const tui_model *m)
{
	return m->calls_upto < m->calls_last || (m->n && m->summed_upto < m->sums[m->n - 1].id);
}

bool tui_model_sum_step(tui_model *m, cuco_store *st, size_t budget)
{
	struct sum_step s = { m, budget, false };
	if (cuco_store_read(st, sum_txn, &s, NULL) != CUCO_OK) {
		/* A record that does not read stays out of the totals. */
		m->calls_upto = m->calls_last;
		m->summed_upto = m->n ? m->sums[m->n - 1].id : 0;
	}
	bool calls = m->calls.calls > 0;  /* the rule of store.h's cuco_call_sum */
	m->tokens = calls ? m->calls.tokens_in + m->calls.tokens_out : m->cand_tokens;
	m->cost_usd = calls ? m->calls.cost_usd : m->cand_cost_usd;
	return tui_model_summing(m);
}
