/* survey.c — how long a workload's prompts are, each kind in each
 * profile: what `cuco analyze --prompt` shows, so a person can tell which
 * context a model needs before a run refuses to start.
 *
 * The prompts are built as a run's first ones are: in a scratch store
 * holding the baseline and the seed (a second copy of the seed stands in
 * for a crossover's second parent), with no measurements, failures or
 * lessons yet; a run's later prompts grow by what may be cut.
 */
#include "store/store.h"
#include "strategies/strategies.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct survey {
	const cuco_workload *wl;
	const char *texts[3];     /* baseline, seed (or the baseline), the second parent */
	size_t lens[3];
	uint64_t ids[3];
} survey;

static int fill_txn(cuco_txn *txn, void *arg)
{
	survey *s = arg;
	static const cuco_origin origin[3] = { CUCO_ORIGIN_BASELINE, CUCO_ORIGIN_SEED, CUCO_ORIGIN_TUNE };
	int rc = CUCO_OK;
	for (int i = 0; i < 3 && rc == CUCO_OK; i++) {
		cuco_candidate *c = cuco_xcalloc(1, sizeof *c);
		c->origin = origin[i];
		cuco_cand_queued(c);
		c->status = CUCO_STATUS_DONE;
		c->island = i ? 0 : -1;
		cuco_directive_default(s->wl, &c->directive);
		rc = cuco_source_put(txn, s->texts[i], s->lens[i], c->source_hash);
		if (rc == CUCO_OK)
			rc = cuco_cand_put(txn, c);
		s->ids[i] = c->id;
		free(c);
	}
	return rc;
}

typedef struct island_arg {
	cuco_prompt_spec spec;
	cuco_buf system, user;
} island_arg;

static int island_read(const cuco_reader *r, void *arg)
{
	island_arg *a = arg;
	a->system.len = a->user.len = 0;
	return cuco_prompt_build(r, &a->spec, &a->system, &a->user);
}

static void sizes(const char *system, const char *user, const cuco_prompt_map *map,
	cuco_prompt_size *row, cuco_prompt_profile p)
{
	row->floor[p] = cuco_prompt_floor(system, user, map, 0);
	row->whole[p] = cuco_prompt_floor(system, user, NULL, 0);
}

static int island_rows(cuco_store *st, const survey *s, const cuco_hardware *hw, bool json,
	cuco_prompt_size *rows, int *n, cuco_err *err)
{
	int rc = CUCO_OK;
	for (int k = 0; k < CUCO_PROMPT_KINDS && rc == CUCO_OK; k++) {
		cuco_prompt_size *row = &rows[(*n)++];
		memset(row, 0, sizeof *row);
		cuco_strlcpy(row->kind, cuco_prompt_kind_name((cuco_prompt_kind)k), sizeof row->kind);
		for (int p = 0; p < CUCO_PROFILES && rc == CUCO_OK; p++) {
			cuco_prompt_map map;
			island_arg a = { .spec = { .wl = s->wl, .hw = hw, .kind = (cuco_prompt_kind)k,
				.parent = s->ids[1], .other = s->ids[2], .island = 0, .inspirations = 3,
				.failures = 3, .memory = true, .profile = (cuco_prompt_profile)p, .json = json,
				.map = &map } };
			rc = cuco_store_view(st, island_read, &a, err);
			if (rc == CUCO_OK)
				sizes(a.system.data, a.user.data, &map, row, (cuco_prompt_profile)p);
			cuco_buf_free(&a.system);
			cuco_buf_free(&a.user);
		}
	}
	return rc;
}

static int fastpath_rows(const survey *s, const cuco_hardware *hw, bool json,
	cuco_prompt_size *rows, int *n, cuco_err *err)
{
	int rc = CUCO_OK;
	for (int stage = 0; stage < 2 && rc == CUCO_OK; stage++) {
		cuco_prompt_size *row = &rows[(*n)++];
		memset(row, 0, sizeof *row);
		snprintf(row->kind, sizeof row->kind, "fastpath-%c", stage ? 'b' : 'a');
		for (int p = 0; p < CUCO_PROFILES && rc == CUCO_OK; p++) {
			cuco_fp_spec spec = { .wl = s->wl, .hw = hw, .stage = stage, .program = s->texts[0],
				.len = s->lens[0], .profile = (cuco_prompt_profile)p, .json = json };
			cuco_fp_prompt fp = { 0 };
			rc = cuco_fastpath_prompt(&spec, &fp, err);
			if (rc == CUCO_OK)
				sizes(fp.system.data, fp.user.data, &fp.map, row, (cuco_prompt_profile)p);
			cuco_fp_prompt_free(&fp);
		}
	}
	return rc;
}

int cuco_prompt_survey(const cuco_workload *wl, const cuco_hardware *hw, bool json,
	cuco_prompt_size *rows, int *n, cuco_err *err)
{
	*n = 0;
	char *base = NULL, *seed = NULL, *other = NULL;
	size_t blen = 0, slen = 0;
	int rc = cuco_workload_file(wl, wl->baseline_file, &base, &blen, err);
	if (rc == CUCO_OK && wl->seed_file[0])
		rc = cuco_workload_file(wl, wl->seed_file, &seed, &slen, err);
	if (rc != CUCO_OK) {
		free(base);
		return rc;
	}
	if (!seed) {
		seed = cuco_xstrdup(base);
		slen = blen;
	}
	/* Its own source: a crossover's second parent is shown whole. */
	other = cuco_xmalloc(slen + 2);
	memcpy(other, seed, slen);
	memcpy(other + slen, "\n", 2);
	survey s = { wl, { base, seed, other }, { blen, slen, slen + 1 }, { 0 } };
	char dir[] = "/tmp/cuco-survey-XXXXXX";
	cuco_store *st = NULL;
	if (!mkdtemp(dir))
		rc = cuco_errf(err, CUCO_EENV, "cannot make a scratch folder in /tmp");
	if (rc == CUCO_OK && (rc = cuco_store_open(dir, CUCO_STORE_CREATE, &st, err)) == CUCO_OK) {
		rc = cuco_store_write(st, fill_txn, &s, err);
		if (rc == CUCO_OK)
			rc = island_rows(st, &s, hw, json, rows, n, err);
		if (rc == CUCO_OK)
			rc = fastpath_rows(&s, hw, json, rows, n, err);
		cuco_store_close(st);
	}
	if (dir[strlen(dir) - 1] != 'X')
		cuco_remove_tree(dir);
	free(base);
	free(seed);
	free(other);
	return rc;
}

int64_t cuco_prompt_min_context(int64_t floor, int max_tokens)
{
	for (int64_t c = 256; c < ((int64_t)1 << 24); c += 256)
		if (floor + cuco_prompt_reserve(c, max_tokens) <= c)
			return c;
	return 0;
}
