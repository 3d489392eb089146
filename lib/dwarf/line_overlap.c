/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: line sequences of one program that cover the same addresses,
 * merged row by row. Identical code folding (gold --icf, lld --icf=all)
 * gives each folded function's sequence the address of the copy kept, and
 * old GCC output for C++ templates has sequences inside others; keeping the
 * first sequence whole and dropping the others left addresses past its end
 * with no line at all. eu-addr2line and llvm-symbolizer both answer there
 * from the sequence that still covers the address.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "line_overlap.h"

static int cmp_addr(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static uint64_t seq_end(const struct line_row *rows, const struct line_seq *s)
{
	return rows[s->first + s->n - 1].addr;
}

/* Every address where a row starts or a sequence ends, below end, sorted, once each. */
static uint64_t *merge_points(const struct line_row *rows, const struct line_seq *seqs, size_t k,
			      uint64_t end, size_t *npoints)
{
	size_t total = 0, n = 0;
	uint64_t *p;

	for (size_t i = 0; i < k; i++)
		total += seqs[i].n;
	p = malloc((total ? total : 1) * sizeof(*p));
	if (!p)
		return NULL;
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < seqs[i].n; j++)
			if (rows[seqs[i].first + j].addr < end)
				p[n++] = rows[seqs[i].first + j].addr;
	qsort(p, n, sizeof(*p), cmp_addr);
	*npoints = 0;
	for (size_t i = 0; i < n; i++)
		if (!*npoints || p[i] != p[*npoints - 1])
			p[(*npoints)++] = p[i];
	return p;
}

/* Whether every sequence's addresses go forward (the merge walks each once). */
static bool all_ascending(const struct line_row *rows, const struct line_seq *seqs, size_t k)
{
	for (size_t i = 0; i < k; i++)
		for (size_t j = 1; j < seqs[i].n; j++)
			if (rows[seqs[i].first + j].addr < rows[seqs[i].first + j - 1].addr)
				return false;
	return true;
}

/*
 * The row in effect at p: of the sequences covering p, the latest row at or
 * before p (cur[i] being sequence i's), an earlier sequence on a tie; SIZE_MAX
 * when none covers p.
 */
static size_t winner(const struct line_row *rows, const struct line_seq *seqs, size_t k,
		     size_t *cur, uint64_t p)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < k; i++) {
		size_t last = seqs[i].first + seqs[i].n - 1; /* the end row */

		if (rows[seqs[i].first].addr > p || rows[last].addr <= p)
			continue;
		while (cur[i] + 1 < last && rows[cur[i] + 1].addr <= p)
			cur[i]++;
		if (best == SIZE_MAX || rows[cur[i]].addr > rows[best].addr)
			best = cur[i];
	}
	return best;
}

int line_overlap_merge(struct line_row *out, size_t *n, const struct line_row *rows,
		       const struct line_seq *seqs, size_t k)
{
	uint64_t end = 0, *points;
	size_t npoints = 0, *cur, last = SIZE_MAX;

	if (!all_ascending(rows, seqs, k))
		return 1;
	for (size_t i = 0; i < k; i++)
		if (seq_end(rows, &seqs[i]) > end)
			end = seq_end(rows, &seqs[i]);
	points = merge_points(rows, seqs, k, end, &npoints);
	cur = malloc((k ? k : 1) * sizeof(*cur));
	if (!points || !cur) {
		free(points);
		free(cur);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++)
		cur[i] = seqs[i].first;
	for (size_t i = 0; i < npoints; i++) {
		uint64_t p = points[i];
		size_t w = winner(rows, seqs, k, cur, p), f = w;

		if (w == SIZE_MAX || w == last)
			continue;
		if (rows[w].addr == p) { /* the winner's own rows here, as they are */
			while (f > 0 && rows[f - 1].addr == p && rows[f - 1].file)
				f--;
			for (; f <= w; f++)
				out[(*n)++] = rows[f];
		} else { /* a row that another sequence's end uncovered, from here on */
			out[(*n)++] = (struct line_row){ p, rows[w].file, rows[w].line };
		}
		last = w;
	}
	out[(*n)++] = (struct line_row){ end, NULL, 0 };
	free(points);
	free(cur);
	return 0;
}
