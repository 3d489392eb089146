/* SPDX-License-Identifier: Apache-2.0 */
/*
 * range_sort (lib/format/range_sort.c) checked by what its result must be,
 * not by another sort: every input range once, unchanged, and each after
 * the one before in (va, depth, place in the input), the place each input
 * range records in its seq. Ranges enough for the two-thread passes, with
 * repeated addresses and depths (order among equals), addresses that
 * differ only in high bytes, one address for all (no pass on it), and few
 * enough for one thread.
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

/* Whether b comes after a: (va, depth, seq) grows. */
static int after(const struct brange *a, const struct brange *b)
{
	if (a->va != b->va)
		return a->va < b->va;
	if (a->depth != b->depth)
		return a->depth < b->depth;
	return a->seq < b->seq;
}

/* Whether got holds every range of v once, unchanged, each after the one before. */
static int sorted_whole(const struct brange *v, const struct brange *got, size_t n)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	int ok = seen != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		uint32_t at = got[i].seq;

		ok = at < n && !seen[at] && !memcmp(&got[i], &v[at], sizeof(*got)) &&
		     (i == 0 || after(&got[i - 1], &got[i]));
		if (ok)
			seen[at] = 1;
	}
	free(seen);
	return ok;
}

/* n ranges whose va comes from vaf: range_sort with threads gives them in order. */
static int agrees(size_t n, unsigned threads, uint64_t (*vaf)(void))
{
	struct brange *v = calloc(n ? n : 1, sizeof(*v)), *got;
	int ok;

	for (size_t i = 0; i < n; i++) {
		v[i].va = vaf();
		v[i].depth = (uint32_t)(next() % 3 == 0 ? next() % 5 : next() % 300);
		v[i].seq = (uint32_t)i; /* the input's order, which ties keep */
		v[i].func = (uint32_t)next();
	}
	got = range_sort(v, n, threads);
	ok = got && sorted_whole(v, got, n) && ranges_in_order(got, n);
	free(got);
	free(v);
	return ok;
}

static uint64_t library(void) /* few distinct addresses: many ties */
{
	return 0x401000 + (next() % 5000) * 16;
}

static uint64_t high(void) /* differing in the high bytes too */
{
	return next() & 0xff0000ff000000ffull;
}

static uint64_t one_address(void) /* no pass on the address: depths and ties only */
{
	return 0x401000;
}

static uint64_t one_byte(void) /* the address differs in its sixth byte only */
{
	return 0x7f0000401000ull | (next() % 4) << 40;
}

/*
 * ranges_in_order() against the order itself: sorted ranges are, and with
 * any neighbours swapped where their (va, depth) differ, or with a depth
 * raised above its equal-address follower's, they are not.
 */
static int in_order_agrees(void)
{
	enum { N = 20000 };
	struct brange *v = calloc(N, sizeof(*v)), *got, t;
	int ok;

	if (!v)
		return 0;
	for (size_t i = 0; i < N; i++) {
		v[i].va = library();
		v[i].depth = (uint32_t)(next() % 4);
		v[i].seq = (uint32_t)i;
	}
	got = range_sort(v, N, 1);
	ok = got && ranges_in_order(got, N) && ranges_in_order(got, 1) && ranges_in_order(got, 0);
	for (size_t k = 0; ok && k < 200; k++) {
		size_t i = (size_t)(next() % (N - 1));

		if (got[i].va == got[i + 1].va && got[i].depth == got[i + 1].depth)
			continue;
		t = got[i];
		got[i] = got[i + 1];
		got[i + 1] = t;
		ok = !ranges_in_order(got, N);
		got[i + 1] = got[i];
		got[i] = t;
	}
	for (size_t i = 0; ok && i + 1 < N; i++) {
		if (got[i].va != got[i + 1].va)
			continue;
		got[i].depth = got[i + 1].depth + 1;
		ok = !ranges_in_order(got, N);
		break;
	}
	free(got);
	free(v);
	return ok;
}

int main(void)
{
	CHECK(agrees(300000, 2, library), "300,000 ranges, two threads: (va, depth, input order)");
	CHECK(agrees(300000, 1, library), "300,000 ranges, one thread");
	CHECK(agrees(200001, 2, high), "an odd count, high address bytes, two threads");
	CHECK(agrees(200000, 2, one_address), "one address, two threads: by depth, input order");
	CHECK(agrees(200000, 1, one_address), "one address, one thread");
	CHECK(agrees(200000, 2, one_byte), "addresses differing in one high byte, two threads");
	CHECK(agrees(200000, 1, one_byte), "addresses differing in one high byte, one thread");
	CHECK(agrees(1000, 2, library), "few ranges (one thread whatever is asked)");
	CHECK(agrees(1, 2, library), "one range");
	CHECK(agrees(0, 2, library), "none");
	CHECK(in_order_agrees(), "ranges_in_order: sorted ranges are; any two unequal neighbours "
				 "swapped, or a depth above its same-address follower's, are not");
	return unit_exit();
}
