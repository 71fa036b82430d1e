/* memory.c — AccelOpt's optimization memory: which rewrites of a beam
 * iteration become lessons, which old lessons make room for them, and the
 * lessons as the planner reads them. The entries live in the store's
 * memory table, so a reviewer sees them and a resumed run keeps them.
 */
#include "store/store.h"
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

/* ---- the store ---------------------------------------------------------- */

typedef struct update_arg {
	const char *workload;
	bool shared;
	cuco_memory *fresh;
	size_t nfresh, capacity;
	uint64_t rng_in, rng_out;   /* a repeated txn draws the same sample */
	uint64_t *old;
	size_t nold, old_cap;
} update_arg;

static bool in_scope(const cuco_memory *m, const char *workload, bool shared)
{
	return shared || !workload[0] || strcmp(m->workload, workload) == 0;
}

static int collect_old(const cuco_memory *m, void *arg)
{
	update_arg *a = arg;
	if (!in_scope(m, a->workload, a->shared))
		return 0;
	if (a->nold == a->old_cap) {
		a->old_cap = a->old_cap ? 2 * a->old_cap : 32;
		a->old = cuco_xrealloc(a->old, a->old_cap * sizeof *a->old);
	}
	a->old[a->nold++] = m->id;
	return 0;
}

static int update_txn(cuco_txn *txn, void *arg)
{
	update_arg *a = arg;
	a->nold = 0;
	int rc = cuco_memory_each(txn, collect_old, a);
	if (rc != CUCO_OK)
		return rc;
	size_t nnew = a->nfresh < a->capacity ? a->nfresh : a->capacity;
	size_t *keep = cuco_xmalloc((a->nold ? a->nold : 1) * sizeof *keep);
	uint64_t rng = a->rng_in;
	size_t nkeep = cuco_memory_survivors(a->nold, nnew, a->capacity, &rng, keep);
	for (size_t i = 0, k = 0; i < a->nold && rc == CUCO_OK; i++) {
		if (k < nkeep && keep[k] == i)
			k++;
		else
			rc = cuco_memory_del(txn, a->old[i]);
	}
	free(keep);
	for (size_t i = 0; i < nnew && rc == CUCO_OK; i++) {
		cuco_memory m = a->fresh[i];
		m.id = 0;
		if ((rc = cuco_memory_add(txn, &m)) == CUCO_OK)
			a->fresh[i].id = m.id;
	}
	a->rng_out = rng;
	return rc;
}

int cuco_memory_update(const cuco_port *port, const char *workload, bool shared, cuco_memory *fresh,
	size_t nfresh, size_t capacity, uint64_t *rng, cuco_err *err)
{
	update_arg a = { .workload = workload, .shared = shared, .fresh = fresh, .nfresh = nfresh,
		.capacity = capacity, .rng_in = *rng };
	int rc = port->write(port->ctx, update_txn, &a, err);
	free(a.old);
	if (rc == CUCO_OK)
		*rng = a.rng_out;
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
