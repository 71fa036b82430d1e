/* bench/agents — the agents' own overhead per generation with 10 000
 * candidates in the store: everything a generation does besides waiting
 * for the model and the evaluator.
 *
 * Fills a store with N candidates (done, failed and rejected ones, 4 KiB
 * sources with an EVOLVE-BLOCK), then times G generations of: build the
 * prompt in a read transaction (task, context, directive schema, parent,
 * 3 inspirations, 3 failures, rejections, memory), parse a two-hunk reply
 * against the workload's design space, apply it to the parent, and in one
 * write transaction keep the prompt and reply and put the child.
 * Target (issue 5): under 5 ms per generation.
 *
 * usage: agents [N] [G]   (defaults: 10000, 200; workload cpu-gemm-allgather,
 *        found from the source root or through $CUCO_WORKLOADS)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "strategies/strategies.h"

#define SOURCE_BYTES 4096

static void fill_source(char *buf, uint64_t id)
{
	int n = snprintf(buf, SOURCE_BYTES, "#include <mpi.h>\n// EVOLVE-BLOCK-START\n"
		"static int chunks = %llu;\nstatic int tile = 64;\n", (unsigned long long)id);
	uint64_t x = id * 0x9E3779B97F4A7C15ull + 1;
	for (int i = n; i < SOURCE_BYTES - 64; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + x % 26);
	}
	snprintf(buf + SOURCE_BYTES - 64, 64, "\n// EVOLVE-BLOCK-END\nint main(void) { return 0; }\n");
}

typedef struct fill {
	const cuco_workload *wl;
	uint64_t first, count;
} fill;

static int fill_txn(cuco_txn *txn, void *arg)
{
	fill *f = arg;
	char *src = cuco_xmalloc(SOURCE_BYTES);
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	int rc = CUCO_OK;
	for (uint64_t id = f->first; id < f->first + f->count && rc == CUCO_OK; id++) {
		memset(c, 0, sizeof *c);
		c->id = id;
		c->nparents = id > 1;
		c->parents[0] = id > 1 ? id - 1 : 0;
		c->island = (int)(id % 2);
		c->origin = id == 1 ? CUCO_ORIGIN_BASELINE : CUCO_ORIGIN_LLM_DIFF;
		c->status = id % 10 == 3 ? CUCO_STATUS_FAILED : id % 50 == 7 ? CUCO_STATUS_REJECTED
			: CUCO_STATUS_DONE;
		cuco_directive_default(f->wl, &c->directive);
		c->score = c->speedup = 0.5 + (double)(id * 7919 % 1000) / 1000.0;
		c->timing.min_us = c->timing.median_us = c->timing.p90_us = 100.0 + (double)(id % 97);
		c->timing.peak_fraction = 0.3;
		c->timing.nphases = 2;
		c->timing.phases[0] = (cuco_phase){ "compute", 70 };
		c->timing.phases[1] = (cuco_phase){ "comm", 30 };
		if (c->status == CUCO_STATUS_FAILED) {
			snprintf(c->failure.stage, sizeof c->failure.stage, "compile");
			snprintf(c->failure.error_class, sizeof c->failure.error_class, "compile-error");
			snprintf(c->failure.excerpt, sizeof c->failure.excerpt,
				"seed.c:%llu: error: expected ';'",
				(unsigned long long)id);
		}
		if (c->status == CUCO_STATUS_REJECTED)
			snprintf(c->reject_reason, sizeof c->reject_reason, "spins without a fence");
		fill_source(src, id);
		rc = cuco_source_put(txn, src, strlen(src), c->source_hash);
		if (rc == CUCO_OK)
			rc = cuco_cand_put(txn, c);
	}
	free(c);
	free(src);
	return rc;
}

typedef struct gen {
	cuco_prompt_spec spec;
	cuco_buf system, user;
	char *parent;
	size_t parent_len;
	cuco_directive base;
	const char *reply;
	cuco_candidate child;
	char *child_source;
	size_t child_len;
} gen;

static int prompt_read(const cuco_reader *r, void *arg)
{
	gen *g = arg;
	cuco_candidate *p = cuco_xmalloc(sizeof *p);
	int rc = r->candidate(r->ctx, g->spec.parent, p);
	if (rc == CUCO_OK)
		rc = r->source(r->ctx, p->source_hash, &g->parent, &g->parent_len);
	g->base = p->directive;
	free(p);
	return rc == CUCO_OK ? cuco_prompt_build(r, &g->spec, &g->system, &g->user) : rc;
}

static int keep_txn(cuco_txn *txn, void *arg)
{
	gen *g = arg;
	int rc = cuco_source_keep(txn, g->user.data, g->reply, &g->child);
	if (rc == CUCO_OK)
		rc = cuco_source_put(txn, g->child_source, g->child_len, g->child.source_hash);
	g->child.id = 0;
	return rc == CUCO_OK ? cuco_cand_put(txn, &g->child) : rc;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int one_generation(cuco_store *st, const cuco_workload *wl, uint64_t parent, gen *g,
	cuco_err *err)
{
	memset(g, 0, sizeof *g);
	g->spec = (cuco_prompt_spec){ .wl = wl, .kind = CUCO_PROMPT_DIFF, .parent = parent,
		.island = (int)(parent % 2), .inspirations = 3, .failures = 3, .memory = true };
	int rc = cuco_store_view(st, prompt_read, g, err);
	/* Two hunks; the second is indented by the model, so it climbs the
	 * matching ladder to the indent level. */
	char reply[1024];
	snprintf(reply, sizeof reply, "DIRECTIVE:\nbackend: rma\ngranularity: 8\n\n"
		"<NAME>more_chunks</NAME>\n<DESCRIPTION>pipeline deeper</DESCRIPTION>\n<DIFF>\n"
		"<<<<<<< SEARCH\nstatic int tile = 64;\n=======\nstatic int tile = 32;\n>>>>>>> REPLACE\n"
		"<<<<<<< SEARCH\n  static int chunks = %llu;\n=======\n  static int chunks = 8;\n"
		">>>>>>> REPLACE\n</DIFF>\n", (unsigned long long)parent);
	g->reply = reply;
	cuco_reply r;
	if (rc == CUCO_OK)
		rc = cuco_reply_parse(g->reply, wl, &g->base, &r, err);
	cuco_patched p = { 0 };
	if (rc == CUCO_OK) {
		rc = cuco_patch_apply(g->parent, g->parent_len, &r, wl, &p, err);
		cuco_reply_free(&r);
	}
	if (rc == CUCO_OK) {
		g->child.nparents = 1;
		g->child.parents[0] = parent;
		g->child.origin = CUCO_ORIGIN_LLM_DIFF;
		g->child.status = CUCO_STATUS_QUEUED;
		g->child.directive = r.directive;
		g->child_source = p.text;
		g->child_len = p.len;
		rc = cuco_store_write(st, keep_txn, g, err);
	}
	cuco_patched_free(&p);
	cuco_buf_free(&g->system);
	cuco_buf_free(&g->user);
	free(g->parent);
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000;
	int gens = argc > 2 ? atoi(argv[2]) : 200;
	char dir[] = "/tmp/cuco-bench-agents-XXXXXX";
	cuco_err err = { 0 };
	cuco_workload *wl;
	cuco_store *st;
	if (!mkdtemp(dir) || cuco_workload_load("cpu-gemm-allgather", &wl, &err) != CUCO_OK ||
		cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err) != CUCO_OK) {
		fprintf(stderr, "bench/agents: %s\n", err.msg);
		return 1;
	}
	for (uint64_t first = 1; first <= n; first += 256) {
		fill f = { wl, first, first + 256 <= n + 1 ? 256 : n + 1 - first };
		if (cuco_store_write(st, fill_txn, &f, &err) != CUCO_OK) {
			fprintf(stderr, "bench/agents: %s\n", err.msg);
			return 1;
		}
	}
	double *ms = cuco_xcalloc((size_t)gens, sizeof *ms);
	gen g;
	for (int i = 0; i < gens; i++) {
		uint64_t parent = 2 + (uint64_t)i * 37 % (n - 1);
		while (parent % 10 == 3 || parent % 50 == 7)
			parent++;
		double t0 = cuco_mono();
		if (one_generation(st, wl, parent, &g, &err) != CUCO_OK) {
			fprintf(stderr, "bench/agents: generation %d: %s\n", i, err.msg);
			return 1;
		}
		ms[i] = (cuco_mono() - t0) * 1e3;
	}
	qsort(ms, (size_t)gens, sizeof *ms, cmp);
	printf("agents: %llu candidates, %d generations (prompt + parse + patch + store writes)\n"
		"per generation: median %.3f ms, p90 %.3f ms, max %.3f ms (target < 5 ms)\n",
		(unsigned long long)n, gens, ms[gens / 2], ms[gens * 9 / 10], ms[gens - 1]);
	free(ms);
	cuco_store_close(st);
	cuco_workload_free(wl);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
