/* engine_setup.c — the run's lock, a run's first write (meta, the baseline
 * and seed rows, a resumed run's budget and backlog) and its replay into
 * the strategy. */
#include "engine/engine_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The workload name of a stored meta value (object with "name"). */
static bool same_workload(const char *json, const char *name)
{
	cJSON *j = cJSON_Parse(json);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "name");
	bool same = cJSON_IsString(n) && strcmp(n->valuestring, name) == 0;
	cJSON_Delete(j);
	return same;
}

/* A baseline measured this long ago, or on other hardware, is measured
 * again before anything is compared with it. */
#define BASELINE_FRESH_S 600.0

typedef struct setup_arg {
	cuco_engine *e;
	char *config_json;
	char *workload_json;
	char *hardware_json;
	char *peak_json;
	char *resumed_from;          /* workload stored in meta, when resuming */
	char baseline_hash[CUCO_HASH_LEN + 1];
	uint64_t baseline_id, seed_id;
	bool seed_done;
	int proposed;
	int confirmations;           /* candidates an earlier session confirmed */
	uint64_t *backlog;
	size_t nbacklog;
	uint64_t *stale;             /* rows a killed session left mid-evaluation */
	size_t nstale;
	bool resumed;
	bool same_hardware;
	cuco_candidate baseline;     /* its row as this session found it */
	double baseline_time;        /* when its measurement in force was taken; 0: none */
	int benched;                 /* good measurements of others since then */
	uint64_t session;
} setup_arg;

static void push_id(uint64_t **ids, size_t *n, uint64_t id)
{
	*ids = cuco_xrealloc(*ids, (*n + 1) * sizeof **ids);
	(*ids)[(*n)++] = id;
}

static int setup_scan(const cuco_candidate *c, void *arg)
{
	setup_arg *a = arg;
	if (c->origin == CUCO_ORIGIN_BASELINE && strcmp(c->source_hash, a->baseline_hash) == 0) {
		a->baseline_id = c->id;
		a->baseline = *c;
	} else if (c->origin == CUCO_ORIGIN_SEED && strcmp(c->source_hash, a->e->seed_hash) == 0) {
		a->seed_id = c->id;
		a->seed_done = c->status == CUCO_STATUS_DONE || c->status == CUCO_STATUS_REJECTED;
	} else if (engine_counts_for_budget(c)
		&& strcmp(c->failure.error_class, cuco_fail_name(CUCO_FAIL_ENVIRONMENT)) != 0) {
		a->proposed++;
	}
	if (c->origin != CUCO_ORIGIN_BASELINE && c->rounds >= 2)
		a->confirmations++;
	/* One session at a time (RUN/run.lock): a row mid-evaluation is one a
	 * killed session left; nobody evaluates it now. */
	if (c->status > CUCO_STATUS_QUEUED && c->status < CUCO_STATUS_DONE)
		push_id(&a->stale, &a->nstale, c->id);
	/* Left unfinished by a session that was killed: evaluate it again. */
	if (c->status < CUCO_STATUS_DONE && c->origin != CUCO_ORIGIN_BASELINE &&
			c->origin != CUCO_ORIGIN_SEED)
		push_id(&a->backlog, &a->nbacklog, c->id);
	return 0;
}

/* A stale row goes back to queued, or to done where an earlier
 * measurement is in force (an older cuco flipped measured rows). */
static int settle_stale(cuco_txn *txn, const setup_arg *a)
{
	for (size_t i = 0; i < a->nstale; i++) {
		cuco_candidate c;
		int rc = cuco_cand_get(txn, a->stale[i], &c);
		if (rc != CUCO_OK)
			return rc;
		c.status = isfinite(c.timing.median_us) ? CUCO_STATUS_DONE : CUCO_STATUS_QUEUED;
		if ((rc = cuco_cand_put(txn, &c)) != CUCO_OK)
			return rc;
	}
	return CUCO_OK;
}

/* When the baseline's measurement in force was taken, and how many good
 * measurements of other candidates came after it. */
static int since_baseline(const cuco_measurement *m, void *arg)
{
	setup_arg *a = arg;
	if (m->candidate == a->baseline_id && m->ok) {
		a->baseline_time = m->time;
		a->benched = 0;
	} else if (m->candidate != a->baseline_id && m->ok && a->baseline_time > 0
			&& m->time >= a->baseline_time) {
		a->benched++;
	}
	return 0;
}

static int put_root(cuco_txn *txn, cuco_origin origin, const char *text, size_t len,
	const cuco_directive *d, int island, uint64_t parent, uint64_t *id)
{
	cuco_candidate c;
	memset(&c, 0, sizeof c);
	c.origin = origin;
	c.island = island;
	c.directive = *d;
	c.nparents = parent ? 1 : 0;
	c.parents[0] = parent;
	cuco_cand_queued(&c);
	snprintf(c.note, sizeof c.note, "the workload's %s",
		origin == CUCO_ORIGIN_BASELINE ? "host-orchestrated baseline" : "seed");
	int rc = cuco_source_put(txn, text, len, c.source_hash);
	if (rc == CUCO_OK)
		rc = cuco_cand_put(txn, &c);
	if (rc != CUCO_OK)
		return rc;
	*id = c.id;
	cuco_event ev;
	engine_event_init(&ev, CUCO_EVENT_CANDIDATE, c.id, NULL);
	snprintf(ev.text, sizeof ev.text, "%s added", cuco_origin_name(origin));
	return cuco_event_add(txn, &ev);
}

static int setup_txn(cuco_txn *txn, void *arg)
{
	setup_arg *a = arg;
	cuco_engine *e = a->e;
	free(a->backlog);
	free(a->stale);
	a->backlog = a->stale = NULL;
	a->nbacklog = a->nstale = 0;
	a->proposed = a->confirmations = 0;
	a->baseline_id = a->seed_id = 0;
	a->seed_done = false;
	free(a->resumed_from);
	a->resumed_from = NULL;
	int rc = cuco_meta_get(txn, "workload", &a->resumed_from);
	if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
		return rc;
	a->resumed = rc == CUCO_OK;
	if (a->resumed && !same_workload(a->resumed_from, e->wl->name))
		return cuco_txn_fail(txn, CUCO_EUSAGE, "%s: holds a run of another workload (%s), not %s",
			cuco_store_dir(e->st), a->resumed_from, e->wl->name);
	if ((rc = cuco_cand_each(txn, 1, setup_scan, a)) != CUCO_OK || (rc = settle_stale(txn, a)) != CUCO_OK)
		return rc;
	char *hardware = NULL;
	rc = cuco_meta_get(txn, "hardware", &hardware);
	a->same_hardware = rc == CUCO_OK && strcmp(hardware, a->hardware_json) == 0;
	free(hardware);
	if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
		return rc;
	a->baseline_time = 0;
	a->benched = 0;
	if (a->baseline_id && (rc = cuco_measure_each(txn, 0, since_baseline, a)) != CUCO_OK)
		return rc;
	if ((rc = cuco_meta_put(txn, "workload", a->workload_json)) != CUCO_OK ||
			(rc = cuco_meta_put(txn, "config", a->config_json)) != CUCO_OK)
		return rc;
	/* Its name, and whether a hint reaches anything (the screen offers
	 * hints only then). */
	cuco_meta_strategy strategy = { .hints = e->strat->hint != NULL };
	cuco_strlcpy(strategy.name, e->strat->name, sizeof strategy.name);
	rc = cuco_meta_strategy_put(txn, &strategy);
	if (rc != CUCO_OK || (rc = cuco_meta_put(txn, "hardware", a->hardware_json)) != CUCO_OK ||
			(rc = cuco_meta_put(txn, "peak", a->peak_json)) != CUCO_OK)
		return rc;
	cuco_island isl;
	if ((rc = cuco_island_get(txn, 0, &isl)) == CUCO_ENOTFOUND) {
		engine_island_new(0, &isl);
		rc = cuco_island_put(txn, &isl);
	}
	if (rc != CUCO_OK)
		return rc;
	cuco_directive base_dir;
	cuco_directive_default(e->wl, &base_dir);
	if (!a->baseline_id && (rc = put_root(txn, CUCO_ORIGIN_BASELINE, e->baseline_src,
			e->baseline_len, &base_dir, -1, 0, &a->baseline_id)) != CUCO_OK)
		return rc;
	/* A workload without a seed starts from the fast path's program. */
	if (e->seed_src && !a->seed_id && (rc = put_root(txn, CUCO_ORIGIN_SEED, e->seed_src,
			e->seed_len, &e->seed_dir, 0, a->baseline_id, &a->seed_id)) != CUCO_OK)
		return rc;
	/* From here on only a crown makes a best (a new baseline starts again). */
	if ((rc = cuco_crown(txn, a->baseline_id)) != CUCO_OK)
		return rc;
	cuco_event ev;
	engine_event_init(&ev, CUCO_EVENT_RUN_START, 0, NULL);
	snprintf(ev.text, sizeof ev.text, "%s %s: strategy %s, tuner %s, budget %d, jobs %d",
		a->resumed ? "resumed" : "started", e->wl->name, e->strat->name, e->cfg.tuner,
		e->cfg.budget, e->cfg.jobs);
	rc = cuco_event_add(txn, &ev);
	a->session = ev.seq;
	return rc;
}

/* A resumed run goes on with the baseline measurement in force when it is
 * recent and from this hardware: a session killed in its first minutes
 * then loses nothing to measuring it again, and every session gets to new
 * candidates (issue 18: 115 sessions killed every 0.3-8 s never got past
 * the baseline and the seed). It is measured again once baseline_every
 * candidates have been benchmarked against it, counting those of earlier
 * sessions, and at once for a candidate that would be a new best. */
static void take_baseline(cuco_engine *e, const setup_arg *a)
{
	const cuco_candidate *b = &a->baseline;
	bool in_force = b->status == CUCO_STATUS_DONE && isfinite(b->timing.median_us);
	e->baseline_fresh = a->resumed && a->same_hardware && in_force && a->baseline_time > 0
		&& cuco_now() - a->baseline_time < BASELINE_FRESH_S;
	if (!e->baseline_fresh)
		return;
	/* engine_slots_init puts it on its slot, once the evaluator has them. */
	e->resume_us = b->timing.median_us;
	cuco_strlcpy(e->resume_slot, b->slot, sizeof e->resume_slot);
	e->resume_benched = a->benched > 0 ? a->benched : 1;
}

static char *config_json(const cuco_engine_config *cfg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "strategy", cfg->strategy);
	cJSON_AddStringToObject(o, "tuner", cfg->tuner);
	cJSON_AddNumberToObject(o, "budget", cfg->budget);
	cJSON_AddNumberToObject(o, "minutes", cfg->minutes);
	cJSON_AddStringToObject(o, "size", cfg->size);
	cJSON_AddNumberToObject(o, "seed", (double)cfg->seed);
	cJSON_AddNumberToObject(o, "jobs", cfg->jobs);
	cJSON_AddNumberToObject(o, "baseline_every", cfg->baseline_every);
	cJSON_AddNumberToObject(o, "rebench_top", cfg->rebench_top);
	/* The run's model budgets, for a screen's status line (0: none given). */
	cJSON_AddNumberToObject(o, "budget_usd", cfg->max_cost_usd);
	cJSON_AddNumberToObject(o, "budget_tokens", (double)cfg->max_tokens);
	cJSON_AddNumberToObject(o, "llm_jobs", cfg->llm_jobs);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static char *workload_json(const cuco_workload *wl, const char *size)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", wl->name);
	cJSON_AddStringToObject(o, "dir", wl->dir);
	cJSON_AddStringToObject(o, "size", size[0] ? size : wl->default_size);
	cJSON_AddNumberToObject(o, "ranks", wl->ranks);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* What this session's fractions of peak are of, for `cuco show`. */
static char *peak_json(const cuco_peak *pk)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "bandwidth_gbs", pk->bandwidth_gbs);
	cJSON_AddStringToObject(o, "bandwidth_of", pk->bandwidth_of);
	cJSON_AddNumberToObject(o, "gflops", pk->gflops);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

int cuco_workload_file(const cuco_workload *wl, const char *file, char **text, size_t *len,
	cuco_err *err)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	return cuco_read_file(path, 16u << 20, text, len, err);
}

/* ---- the run's lock ---------------------------------------------------------- */

/* RUN/run.lock, flocked without waiting: its fd, or -1 and err naming the
 * session that holds it. */
static int lock_run(const char *dir, cuco_err *err)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", dir, CUCO_RUN_LOCK);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		cuco_errf(err, CUCO_EENV, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	int e = errno;
	char pid[32] = "";
	ssize_t n = read(fd, pid, sizeof pid - 1);
	pid[n > 0 ? n : 0] = '\0';
	close(fd);
	if (e != EWOULDBLOCK)
		cuco_errf(err, CUCO_EENV, "%s: cannot lock: %s", path, strerror(e));
	else
		cuco_errf(err, CUCO_EENV, "%s: another cuco run (pid %s) drives this run; 'cuco tui' "
			"watches it, 'cuco stop' ends it", path, *pid ? cuco_trim(pid) : "?");
	return -1;
}

int cuco_engine_can_drive(const char *run_dir, cuco_err *err)
{
	int fd = lock_run(run_dir, err);
	if (fd < 0)
		return err->code;
	close(fd);
	return CUCO_OK;
}

static int drop_stale_txn(cuco_txn *txn, void *arg)
{
	return cuco_command_drop_stale(txn, arg);
}

int engine_lock(cuco_store *st, const cuco_engine_config *cfg, int *fd, cuco_err *err)
{
	if ((*fd = lock_run(cuco_store_dir(st), err)) < 0)
		return err->code;
	/* The pid only serves the refusal and viewers: a full disk refusing
	 * it leaves the lock whole. */
	if (ftruncate(*fd, 0) == 0)
		dprintf(*fd, "%ld\n", (long)getpid());
	int n = 0;
	int rc = cfg->drop_stale ? cuco_store_write(st, drop_stale_txn, &n, err) : CUCO_OK;
	if (rc != CUCO_OK) {
		close(*fd);
		return rc;
	}
	if (cfg->progress && n > 0)
		fprintf(cfg->progress, "cuco: dropped %d pause/resume/stop command%s sent to an earlier session "
			"that ended before applying %s\n", n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
	return CUCO_OK;
}

void engine_free(cuco_engine *e)
{
	if (e->strat_state)
		e->strat->free(e->strat_state);
	cuco_evaluator_free(e->ev);
	free(e->baseline_src);
	free(e->seed_src);
	free(e->backlog);
	free(e->slots);
	for (int i = 0; i < 2; i++)
		if (e->wake[i] >= 0)
			close(e->wake[i]);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->strat_lock);
	pthread_cond_destroy(&e->cond);
	close(e->run_lock);  /* the last: the run is another's from here */
	free(e);
}

int engine_setup(cuco_engine *e, cuco_err *err)
{
	int rc;
	if ((rc = cuco_workload_file(e->wl, e->wl->baseline_file, &e->baseline_src,
			&e->baseline_len, err)) != CUCO_OK ||
			(*e->wl->seed_file && (rc = cuco_workload_file(e->wl, e->wl->seed_file, &e->seed_src,
			&e->seed_len, err)) != CUCO_OK))
		return rc;
	if (e->seed_src)
		cuco_source_hash(e->seed_src, e->seed_len, e->seed_hash);
	cuco_directive_default(e->wl, &e->seed_dir);
	if (pipe2(e->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		return cuco_errf(err, CUCO_EENV, "engine: pipe: %s", strerror(errno));

	cJSON *hw = cuco_hardware_to_json(&e->hw);
	setup_arg a = { .e = e, .config_json = config_json(&e->cfg),
		.workload_json = workload_json(e->wl, e->cfg.size),
		.hardware_json = cJSON_PrintUnformatted(hw), .peak_json = peak_json(&e->peak) };
	cJSON_Delete(hw);
	cuco_source_hash(e->baseline_src, e->baseline_len, a.baseline_hash);
	rc = cuco_store_write(e->st, setup_txn, &a, err);
	free(a.config_json);
	free(a.workload_json);
	free(a.hardware_json);
	free(a.peak_json);
	free(a.resumed_from);
	free(a.stale);
	e->baseline_id = a.baseline_id;
	e->seed_id = a.seed_id;
	e->seed_done = a.seed_done;
	e->session = a.session;
	if (rc == CUCO_OK)
		take_baseline(e, &a);
	e->proposed = a.proposed;
	e->confirmations = a.confirmations;
	e->backlog = a.backlog;
	e->nbacklog = e->backlog_cap = a.nbacklog;
	return rc;
}

typedef struct replay_arg {
	cuco_engine *e;
} replay_arg;

static int replay_one(const cuco_candidate *c, void *arg)
{
	cuco_engine *e = ((replay_arg *)arg)->e;
	e->strat->observe(e->strat_state, c);
	return 0;
}

/* A person's hint outlives the session that took it: hints an earlier
 * session acknowledged go back into the strategy (pending ones are applied
 * by the command loop as usual). */
static int replay_hint(const cuco_command *cmd, void *arg)
{
	cuco_engine *e = ((replay_arg *)arg)->e;
	if (cmd->kind == CUCO_CMD_HINT && cmd->acked && e->strat->hint)
		e->strat->hint(e->strat_state, cmd->island, cmd->text);
	return 0;
}

static int replay_txn(cuco_txn *txn, void *arg)
{
	int rc = cuco_cand_each(txn, 1, replay_one, arg);
	return rc == CUCO_OK ? cuco_command_each(txn, replay_hint, arg) : rc;
}

int engine_replay(cuco_engine *e, cuco_err *err)
{
	replay_arg ra = { e };
	return cuco_store_read(e->st, replay_txn, &ra, err);
}
