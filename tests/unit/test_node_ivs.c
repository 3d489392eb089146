/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_ivs_sort (lib/dwarf/node_ivs.c) checked by what its result must be,
 * not by another sort: every interval once, unchanged, each after the one
 * before by (lo, depth, node), and equal ones in the order they came (each
 * interval's hi records its place in the input). Counts around the runs
 * it sorts by insertion (8) and their merges, few distinct keys (ties) and
 * many, sorted input and reversed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node_ivs.h"
#include "unit.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	return unit_next_random(&rng);
}

/* -1, 0, 1 as a is before, tied with or after b by the sort's key. */
static int order(const struct node_iv *a, const struct node_iv *b)
{
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* Whether got is v's intervals, each once, in order, ties as they came. */
static int sorted_whole(const struct node_iv *v, const struct node_iv *got, size_t n)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	int ok = seen != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		uint64_t at = got[i].hi;

		ok = at < n && !seen[at] && !memcmp(&got[i], &v[at], sizeof(*got));
		if (ok && i) {
			int o = order(&got[i - 1], &got[i]);

			ok = o < 0 || (o == 0 && got[i - 1].hi < got[i].hi);
		}
		if (ok)
			seen[at] = 1;
	}
	free(seen);
	return ok;
}

enum shape { RANDOM, TIES, ASCENDING, DESCENDING };

static int agrees(size_t n, enum shape shape)
{
	struct node_iv *v = calloc(n ? n : 1, sizeof(*v));
	struct node_iv *got = calloc(n ? n : 1, sizeof(*got));
	struct node_iv *tmp = calloc(n ? n : 1, sizeof(*tmp));
	int ok;

	for (size_t i = 0; i < n; i++) {
		uint64_t k = shape == TIES ? next() % 4 : next() % 1000;

		if (shape == ASCENDING)
			k = i;
		else if (shape == DESCENDING)
			k = n - i;
		v[i] = (struct node_iv){ .lo = 0x401000 + k * 16,
					 .hi = i, /* its place in the input */
					 .node = (int32_t)(shape == TIES ? next() % 3
									 : next() % 50),
					 .depth = (int32_t)(next() % 3) };
	}
	if (n)
		memcpy(got, v, n * sizeof(*v));
	node_ivs_sort(got, n, tmp);
	ok = sorted_whole(v, got, n);
	free(v);
	free(got);
	free(tmp);
	return ok;
}

int main(void)
{
	static const size_t counts[] = { 0, 1, 2, 7, 8, 9, 15, 16, 17, 33, 100, 1000, 4099 };

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		size_t n = counts[i];

		CHECK(agrees(n, RANDOM), "%zu intervals: (lo, depth, node), ties in input order",
		      n);
		CHECK(agrees(n, TIES), "%zu intervals of few keys: ties in input order", n);
		CHECK(agrees(n, ASCENDING), "%zu intervals already sorted", n);
		CHECK(agrees(n, DESCENDING), "%zu intervals reversed", n);
	}
	return unit_exit();
}
