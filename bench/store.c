/* bench/store — how the store holds up at 100 000 candidates.
 *
 * Inserts N candidates (4 KiB of source each, one write transaction per
 * 64), closes and reopens the store, lists every candidate in lineage
 * order from the summaries, and looks up 10 000 random full records.
 * Prints the rates and times measured in this one run, and peak RSS.
 * Targets (issue 2): lineage listing < 100 ms, reopen < 20 ms.
 *
 * usage: store [N] [DIR]   (defaults: 100000, a fresh temporary folder)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "store/store.h"

#define BATCH 64
#define SOURCE_BYTES 4096

struct batch {
	uint64_t first, count, total;
	char *source;
};

static void fill_source(char *buf, uint64_t id)
{
	/* Distinct text per candidate so deduplication does not flatter us. */
	int n = snprintf(buf, SOURCE_BYTES, "// candidate %llu\n", (unsigned long long)id);
	uint64_t x = id * 0x9E3779B97F4A7C15ull + 1;
	for (int i = n; i < SOURCE_BYTES - 1; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + x % 26);
	}
	buf[SOURCE_BYTES - 1] = '\n';
}

static int insert_batch(cuco_txn *txn, void *arg)
{
	struct batch *b = arg;
	for (uint64_t i = 0; i < b->count; i++) {
		uint64_t id = b->first + i;
		cuco_candidate c;
		memset(&c, 0, sizeof c);
		c.id = id;
		/* A bushy tree: most children hang off a recent candidate. */
		if (id > 1) {
			c.nparents = 1;
			c.parents[0] = id - 1 - (id * 7919) % (id - 1 < 50 ? id - 1 : 50);
		}
		c.island = (int)(id % 4);
		c.generation = (int)(id / 64);
		c.origin = CUCO_ORIGIN_TUNE;
		c.status = CUCO_STATUS_DONE;
		snprintf(c.directive.backend, sizeof c.directive.backend, "%s", id % 2 ? "LSA" : "GIN");
		snprintf(c.directive.granularity, sizeof c.directive.granularity, "%llu",
			(unsigned long long)(1u << (id % 8)));
		c.score = (double)(id % 1000) / 1000.0;
		c.timing.min_us = c.timing.median_us = c.timing.p90_us = 100.0 + (double)(id % 97);
		c.timing.samples = 15;
		c.speedup = 1.0 + c.score / 4;
		c.timing.spread = c.timing.max_error = c.timing.peak_fraction = 0;
		fill_source(b->source, id);
		int rc = cuco_source_put(txn, b->source, SOURCE_BYTES, c.source_hash);
		if (rc == CUCO_OK)
			rc = cuco_cand_put(txn, &c);
		if (rc)
			return rc;
	}
	return CUCO_OK;
}

struct lineage { double ms; size_t n; int maxdepth; };

static int list_lineage(cuco_txn *txn, void *arg)
{
	struct lineage *l = arg;
	double t0 = cuco_mono();
	cuco_summary *sums;
	size_t n;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc)
		return rc;
	size_t *order = cuco_xmalloc(n * sizeof *order);
	int *depth = cuco_xmalloc(n * sizeof *depth);
	cuco_lineage_order(sums, n, order, depth);
	l->ms = (cuco_mono() - t0) * 1e3;
	l->n = n;
	for (size_t i = 0; i < n; i++)
		if (depth[i] > l->maxdepth)
			l->maxdepth = depth[i];
	free(order);
	free(depth);
	free(sums);
	return CUCO_OK;
}

struct lookups { uint64_t total; int count; double checksum; };

static int random_lookups(cuco_txn *txn, void *arg)
{
	struct lookups *lk = arg;
	cuco_candidate *c = cuco_xmalloc(sizeof *c);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < lk->count; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int rc = cuco_cand_get(txn, 1 + x % lk->total, c);
		if (rc) {
			free(c);
			return rc;
		}
		lk->checksum += c->timing.median_us;
	}
	free(c);
	return CUCO_OK;
}

static int die(const cuco_err *err)
{
	fprintf(stderr, "bench/store: %s\n", err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	char dir[256];
	if (argc > 2)
		snprintf(dir, sizeof dir, "%s", argv[2]);
	else if (!mkdtemp(strcpy(dir, "/tmp/cuco-bench-store-XXXXXX")))
		return perror("mkdtemp"), 1;

	cuco_err err = { 0 };
	cuco_store *st;
	if (cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err))
		return die(&err);
	struct batch b = { 0, 0, total, cuco_xmalloc(SOURCE_BYTES) };
	double t0 = cuco_mono();
	for (uint64_t first = 1; first <= total; first += BATCH) {
		b.first = first;
		b.count = total - first + 1 < BATCH ? total - first + 1 : BATCH;
		if (cuco_store_write(st, insert_batch, &b, &err))
			return die(&err);
	}
	double insert_s = cuco_mono() - t0;
	size_t map, used;
	cuco_store_sizes(st, &map, &used);
	cuco_store_close(st);

	t0 = cuco_mono();
	if (cuco_store_open(dir, 0, &st, &err))
		return die(&err);
	double reopen_ms = (cuco_mono() - t0) * 1e3;

	struct lineage l = { 0 };
	if (cuco_store_read(st, list_lineage, &l, &err))
		return die(&err);
	struct lookups lk = { total, 10000, 0 };
	t0 = cuco_mono();
	if (cuco_store_read(st, random_lookups, &lk, &err))
		return die(&err);
	double lookup_s = cuco_mono() - t0;
	cuco_store_close(st);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("candidates              %llu (4 KiB source each, %d per write transaction)\n",
		(unsigned long long)total, BATCH);
	printf("insert                  %.0f candidates/s (%.2f s)\n", total / insert_s, insert_s);
	printf("store size              %.1f MiB used, map %.0f MiB\n", used / 1048576.0, map / 1048576.0);
	printf("reopen                  %.2f ms (target < 20 ms)\n", reopen_ms);
	printf("list in lineage order   %.2f ms for %zu candidates, depth %d (target < 100 ms)\n", l.ms, l.n,
		l.maxdepth);
	printf("random full lookups     %.0f /s (%d in %.3f s)\n", lk.count / lookup_s, lk.count, lookup_s);
	printf("peak RSS                %.1f MiB\n", ru.ru_maxrss / 1024.0);
	free(b.source);
	if (argc <= 2) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench/store: could not remove %s\n", dir);
	}
	return (reopen_ms < 20 && l.ms < 100) ? 0 : 2;
}
