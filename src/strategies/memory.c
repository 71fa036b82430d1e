/* memory.c — AccelOpt's optimization memory: which rewrites of a beam
 * iteration become lessons, which old lessons make room for them, and the
 * lessons as the planner reads them. The entries live in the store's
 * memory table, so a reviewer sees them and a resumed run keeps them.
 */
#include "strategies/search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_speedup_desc(const void *a, const void *b)
{
	double x = ((const cuco_beam_sample *)a)->speedup, y = ((const cuco_beam_sample *)b)->speedup;
	return (x < y) - (x > y);
}

/* Per plan, the sample that speaks for it: the best one when any beat its
 * parent, else the worst (AccelOpt's rewrites_selection). */
static size_t representatives(const cuco_beam_sample *s, size_t n, cuco_beam_sample *out)
{
	size_t nout = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(s[i].speedup))
			continue;
		size_t k = 0;
		while (k < nout && !(out[k].plan == s[i].plan && out[k].parent == s[i].parent))
			k++;
		if (k == nout) {
			out[nout++] = s[i];
			continue;
		}
		bool any_better = out[k].speedup > 1.0 || s[i].speedup > 1.0;
		if (any_better ? s[i].speedup > out[k].speedup : s[i].speedup < out[k].speedup)
			out[k] = s[i];
	}
	return nout;
}

size_t cuco_memory_pairs(const cuco_beam_sample *s, size_t n, const cuco_beam_config *c,
	cuco_memory_pair *out)
{
	cuco_beam_sample *rep = cuco_xmalloc((n ? n : 1) * sizeof *rep);
	size_t nrep = representatives(s, n, rep);
	qsort(rep, nrep, sizeof *rep, by_speedup_desc);
	size_t npos = 0, nout = 0, max_pos = (size_t)c->max_new / 2;
	for (size_t i = 0; i < nrep && npos < max_pos; i++)
		if (rep[i].speedup > c->positive) {
			out[nout++] = (cuco_memory_pair){ rep[i].parent, rep[i].id, rep[i].speedup, false };
			npos++;
		}
	/* Most harmful first: from the end of the descending order. */
	for (size_t i = nrep; i-- > 0 && nout < (size_t)c->max_new;)
		if (rep[i].speedup < 1.0 / c->negative && rep[i].speedup > 0)
			out[nout++] = (cuco_memory_pair){ rep[i].id, rep[i].parent, 1.0 / rep[i].speedup,
				true };
	free(rep);
	return nout;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

size_t cuco_memory_survivors(size_t nold, size_t nnew, size_t capacity, uint64_t *rng,
	size_t *keep)
{
	size_t room = capacity > nnew ? capacity - nnew : 0;
	size_t k = room < nold ? room : nold;
	size_t *all = cuco_xmalloc((nold ? nold : 1) * sizeof *all);
	for (size_t i = 0; i < nold; i++)
		all[i] = i;
	for (size_t i = 0; i < k; i++) {
		size_t j = i + cuco_rng_next(rng) % (nold - i);
		size_t t = all[i];
		all[i] = all[j];
		all[j] = t;
	}
	memcpy(keep, all, k * sizeof *keep);
	qsort(keep, k, sizeof *keep, cmp_size);
	free(all);
	return k;
}

/* ---- the store, through the port ----------------------------------------- */

typedef struct old_arg {
	const char *workload;
	bool shared;
	uint64_t *id;
	size_t n, cap;
} old_arg;

static bool in_scope(const cuco_memory *m, const char *workload, bool shared)
{
	return shared || !workload[0] || strcmp(m->workload, workload) == 0;
}

static int collect_old(const cuco_memory *m, void *arg)
{
	old_arg *a = arg;
	if (!in_scope(m, a->workload, a->shared))
		return 0;
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 32;
		a->id = cuco_xrealloc(a->id, a->cap * sizeof *a->id);
	}
	a->id[a->n++] = m->id;
	return 0;
}

static int old_read(const cuco_reader *r, void *arg)
{
	return r->memories(r->ctx, collect_old, arg);
}

/* The old entries that do not survive next to nnew fresh ones, moved to
 * the front of a->id; returns how many. */
static size_t dropped(old_arg *a, size_t nnew, size_t capacity, uint64_t *rng)
{
	size_t *keep = cuco_xmalloc((a->n ? a->n : 1) * sizeof *keep);
	size_t nkeep = cuco_memory_survivors(a->n, nnew, capacity, rng, keep), ndrop = 0;
	for (size_t i = 0, k = 0; i < a->n; i++) {
		if (k < nkeep && keep[k] == i)
			k++;
		else
			a->id[ndrop++] = a->id[i];
	}
	free(keep);
	return ndrop;
}

int cuco_memory_update(const cuco_port *port, const char *workload, bool shared, cuco_memory *fresh,
	size_t nfresh, size_t capacity, uint64_t *rng, cuco_err *err)
{
	old_arg old = { .workload = workload, .shared = shared };
	int rc = port->read(port->ctx, old_read, &old, err);
	size_t nnew = nfresh < capacity ? nfresh : capacity;
	uint64_t draw = *rng;
	if (rc == CUCO_OK)
		rc = port->memory(port->ctx, old.id, dropped(&old, nnew, capacity, &draw), fresh, nnew,
			err);
	free(old.id);
	if (rc == CUCO_OK)
		*rng = draw;
	return rc;
}

typedef struct render_arg {
	const char *workload;
	bool shared;
	cuco_buf *out;
	int shown;
} render_arg;

static int render_one(const cuco_memory *m, void *arg)
{
	render_arg *a = arg;
	if (!in_scope(m, a->workload, a->shared))
		return 0;
	if (a->shown++ == 0)
		cuco_buf_puts(a->out, "# Experiences (lessons from earlier rewrites)\n");
	if (m->negative)
		cuco_buf_printf(a->out, "\n## Undo this (it made a program %.2fx slower)%s%s\n%s\n",
			m->speedup, a->shared ? " — from " : "", a->shared ? m->workload : "", m->summary);
	else
		cuco_buf_printf(a->out, "\n## %.2fx faster%s%s\n%s\n", m->speedup,
			a->shared ? " — from " : "", a->shared ? m->workload : "", m->summary);
	return 0;
}

int cuco_memory_render(const cuco_reader *r, const char *workload, bool shared, cuco_buf *out)
{
	render_arg a = { workload, shared, out, 0 };
	return r->memories(r->ctx, render_one, &a);
}
