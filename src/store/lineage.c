/* lineage.c — depth-first order of the candidate tree, as a tree view
 * shows it. Linear in the number of candidates: children lists are built
 * with a counting sort over the (id-sorted) summaries, then walked with an
 * explicit stack, so a deep lineage cannot overflow the C stack. */
#include <stdlib.h>

#include "store/store.h"

/* Index of id in sums (sorted by id), or n. */
static size_t find(const cuco_summary *sums, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sums[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < n && sums[lo].id == id) ? lo : n;
}

void cuco_lineage_order(const cuco_summary *sums, size_t n, size_t *order, int *depth)
{
	if (n == 0)
		return;
	size_t *parent = cuco_xmalloc(n * sizeof *parent);
	size_t *first = cuco_xcalloc(n + 2, sizeof *first);  /* CSR offsets, slot n = roots */
	size_t *kids = cuco_xmalloc(n * sizeof *kids);
	for (size_t i = 0; i < n; i++) {
		size_t p = sums[i].parents[0] ? find(sums, n, sums[i].parents[0]) : n;
		/* A parent newer than its child cannot be: treat it as a root. */
		parent[i] = (p < i) ? p : n;
		first[parent[i] + 1]++;
	}
	for (size_t i = 1; i <= n + 1; i++)
		first[i] += first[i - 1];
	size_t *fill = cuco_xmalloc((n + 1) * sizeof *fill);
	for (size_t i = 0; i <= n; i++)
		fill[i] = first[i];
	for (size_t i = 0; i < n; i++)  /* ascending i keeps children in id order */
		kids[fill[parent[i]]++] = i;

	/* Stack of (node, depth); push children in reverse to visit in order. */
	size_t *stack = cuco_xmalloc(n * sizeof *stack);
	int *sdepth = cuco_xmalloc(n * sizeof *sdepth);
	size_t top = 0, out = 0;
	for (size_t k = first[n + 1]; k-- > first[n];) {
		stack[top] = kids[k];
		sdepth[top++] = 0;
	}
	while (top > 0) {
		size_t node = stack[--top];
		int d = sdepth[top];
		order[out] = node;
		depth[out++] = d;
		for (size_t k = first[node + 1]; k-- > first[node];) {
			stack[top] = kids[k];
			sdepth[top++] = d + 1;
		}
	}
	free(stack);
	free(sdepth);
	free(fill);
	free(kids);
	free(first);
	free(parent);
}
