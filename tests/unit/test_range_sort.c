/* SPDX-License-Identifier: Apache-2.0 */
/*
 * range_sort (lib/format/range_sort.c) against qsort with a comparison of
 * (va, depth, place in the input) written here: ranges enough for the
 * two-thread passes, with repeated addresses and depths (order among equals),
 * addresses that differ only in high bytes, and few enough for one thread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "range_sort.h"
#include "unit.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	return unit_next_random(&rng);
}

static int cmp_expected(const void *pa, const void *pb)
{
	const struct brange *a = pa, *b = pb;

	if (a->va != b->va)
		return a->va < b->va ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* n ranges whose va comes from vaf: range_sort with threads agrees with qsort. */
static int agrees(size_t n, unsigned threads, uint64_t (*vaf)(void))
{
	struct brange *v = calloc(n ? n : 1, sizeof(*v)), *want = calloc(n ? n : 1, sizeof(*v));
	struct brange *got;
	int same;

	for (size_t i = 0; i < n; i++) {
		v[i].va = vaf();
		v[i].depth = (uint32_t)(next() % 3 == 0 ? next() % 5 : next() % 300);
		v[i].seq = (uint32_t)i; /* the input's order, which ties keep */
		v[i].func = (uint32_t)next();
	}
	memcpy(want, v, n * sizeof(*v));
	qsort(want, n, sizeof(*want), cmp_expected);
	got = range_sort(v, n, threads);
	same = got && !memcmp(got, want, n * sizeof(*v));
	free(got);
	free(v);
	free(want);
	return same;
}

static uint64_t library(void) /* few distinct addresses: many ties */
{
	return 0x401000 + (next() % 5000) * 16;
}

static uint64_t high(void) /* differing in the high bytes too */
{
	return next() & 0xff0000ff000000ffull;
}

int main(void)
{
	CHECK(agrees(300000, 2, library), "300,000 ranges, two threads: (va, depth, input order)");
	CHECK(agrees(300000, 1, library), "300,000 ranges, one thread");
	CHECK(agrees(200001, 2, high), "an odd count, high address bytes, two threads");
	CHECK(agrees(1000, 2, library), "few ranges (one thread whatever is asked)");
	CHECK(agrees(1, 2, library), "one range");
	CHECK(agrees(0, 2, library), "none");
	return unit_exit();
}
