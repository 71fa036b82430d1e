/* survey.c — how long a workload's prompts are, each kind in each
 * profile: what `cuco analyze --prompt` shows, so a person can tell which
 * context a model needs before a run refuses to start.
 *
 * The prompts are built as a run's first ones are: from a store holding
 * the baseline and the seed (a second copy of the seed stands in for a
 * crossover's second parent), with no measurements, failures or lessons
 * yet; a run's later prompts grow by what may be cut. That store is three
 * records in memory, read through the vocabulary's reader (vocab.h).
 */
#include "strategies/strategies.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct survey {
	const cuco_workload *wl;
	const char *texts[3];     /* baseline, seed (or the baseline), the second parent */
	size_t lens[3];
	cuco_candidate cands[3];  /* #1, #2, #3 */
} survey;

static void fill(survey *s)
{
	static const cuco_origin origin[3] = { CUCO_ORIGIN_BASELINE, CUCO_ORIGIN_SEED, CUCO_ORIGIN_TUNE };
	for (int i = 0; i < 3; i++) {
		cuco_candidate *c = &s->cands[i];
		memset(c, 0, sizeof *c);
		c->id = (uint64_t)i + 1;
		c->origin = origin[i];
		cuco_cand_queued(c);
		c->status = CUCO_STATUS_DONE;
		c->island = i ? 0 : -1;
		cuco_directive_default(s->wl, &c->directive);
		cuco_source_hash(s->texts[i], s->lens[i], c->source_hash);
	}
}

/* ---- the reader over the three (vocab.h); a prompt reads no events or calls */

static int candidate(void *ctx, uint64_t id, cuco_candidate *out)
{
	const survey *s = ctx;
	if (id < 1 || id > 3)
		return CUCO_ENOTFOUND;
	*out = s->cands[id - 1];
	return CUCO_OK;
}

static int candidates(void *ctx, uint64_t from, int (*fn)(const cuco_candidate *, void *),
	void *arg)
{
	const survey *s = ctx;
	int rc = 0;
	for (uint64_t id = from ? from : 1; id <= 3 && rc == 0; id++)
		rc = fn(&s->cands[id - 1], arg);
	return rc;
}

static int summaries(void *ctx, cuco_summary **out, size_t *n)
{
	const survey *s = ctx;
	*out = cuco_xcalloc(3, sizeof **out);
	for (int i = 0; i < 3; i++)
		cuco_summary_of(&s->cands[i], &(*out)[i]);
	*n = 3;
	return CUCO_OK;
}

static int source(void *ctx, const char *hash, char **text, size_t *len)
{
	const survey *s = ctx;
	for (int i = 0; i < 3; i++)
		if (strcmp(s->cands[i].source_hash, hash) == 0) {
			*text = cuco_xmalloc(s->lens[i] + 1);
			memcpy(*text, s->texts[i], s->lens[i]);
			(*text)[s->lens[i]] = '\0';
			*len = s->lens[i];
			return CUCO_OK;
		}
	return CUCO_ENOTFOUND;
}

static int memories(void *ctx, int (*fn)(const cuco_memory *, void *), void *arg)
{
	(void)ctx, (void)fn, (void)arg;
	return CUCO_OK;
}

static void sizes(const char *system, const char *user, const cuco_prompt_map *map,
	cuco_prompt_size *row, cuco_prompt_profile p)
{
	row->floor[p] = cuco_prompt_floor(system, user, map, 0);
	row->whole[p] = cuco_prompt_floor(system, user, NULL, 0);
}

static int island_rows(survey *s, const cuco_hardware *hw, bool json, cuco_prompt_size *rows,
	int *n, cuco_err *err)
{
	const cuco_reader r = { .ctx = s, .err = err, .candidate = candidate,
		.candidates = candidates, .summaries = summaries, .source = source,
		.memories = memories };
	int rc = CUCO_OK;
	for (int k = 0; k < CUCO_PROMPT_KINDS && rc == CUCO_OK; k++) {
		cuco_prompt_size *row = &rows[(*n)++];
		memset(row, 0, sizeof *row);
		cuco_strlcpy(row->kind, cuco_prompt_kind_name((cuco_prompt_kind)k), sizeof row->kind);
		for (int p = 0; p < CUCO_PROFILES && rc == CUCO_OK; p++) {
			cuco_prompt_map map;
			cuco_prompt_spec spec = { .wl = s->wl, .hw = hw, .kind = (cuco_prompt_kind)k,
				.parent = 2, .other = 3, .island = 0, .inspirations = 3, .failures = 3,
				.memory = true, .profile = (cuco_prompt_profile)p, .json = json, .map = &map };
			cuco_buf system = { 0 }, user = { 0 };
			rc = cuco_prompt_build(&r, &spec, &system, &user);
			if (rc == CUCO_OK)
				sizes(system.data, user.data, &map, row, (cuco_prompt_profile)p);
			cuco_buf_free(&system);
			cuco_buf_free(&user);
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
	survey s = { wl, { base, seed, other }, { blen, slen, slen + 1 }, { { 0 } } };
	fill(&s);
	rc = island_rows(&s, hw, json, rows, n, err);
	if (rc == CUCO_OK)
		rc = fastpath_rows(&s, hw, json, rows, n, err);
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
