/* SPDX-License-Identifier: Apache-2.0 */
/*
 * radix_sort_u64 (lib/base/radix_sort.c) against an insertion sort written
 * here, stable by construction (and, past the size from which two threads
 * share the passes, against qsort() by key and first place): records of 24
 * and 48 bytes (and another size) with keys that share their high bytes,
 * that differ only there, that repeat (equal keys must keep their order),
 * and none or one of them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "radix_sort.h"
#include "unit.h"

struct rec24 {
	uint64_t key;
	uint64_t seq; /* its place before the sort */
	uint64_t pad;
};

struct rec48 {
	uint64_t key;
	uint64_t seq;
	uint64_t pad[4];
};

struct rec16 {
	uint64_t key;
	uint64_t seq;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	return unit_next_random(&rng);
}

/* The expected order: a stable insertion sort of (key, seq) records. */
static void insertion(void *v, size_t n, size_t size)
{
	unsigned char *b = v, tmp[64];

	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		uint64_t k;

		memcpy(tmp, b + i * size, size);
		memcpy(&k, tmp, 8);
		for (; j > 0; j--) {
			uint64_t kj;

			memcpy(&kj, b + (j - 1) * size, 8);
			if (kj <= k)
				break;
			memcpy(b + j * size, b + (j - 1) * size, size);
		}
		memcpy(b + j * size, tmp, size);
	}
}

/* By key, then by the record's place before the sort: the one stable order. */
static int cmp_key_seq(const void *x, const void *y)
{
	uint64_t kx, ky, sx, sy;

	memcpy(&kx, x, 8);
	memcpy(&ky, y, 8);
	memcpy(&sx, (const char *)x + 8, 8);
	memcpy(&sy, (const char *)y + 8, 8);
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return sx < sy ? -1 : sx > sy;
}

/*
 * n records of size bytes keyed by keyf(i), sorted both ways: whether they
 * agree. The expected order is the insertion sort's, or for as many records
 * as two threads share the passes of (radix_sort.c's SHARED_MIN and more),
 * too many for it, qsort()'s by key and first place.
 */
static int agrees(size_t n, size_t size, uint64_t (*keyf)(size_t), unsigned threads)
{
	unsigned char *a = calloc(n ? n : 1, size), *b = calloc(n ? n : 1, size), *got;
	int same;

	for (size_t i = 0; i < n; i++) {
		uint64_t k = keyf(i), seq = i;

		memcpy(a + i * size, &k, 8);
		memcpy(a + i * size + 8, &seq, 8);
	}
	memcpy(b, a, n * size);
	if (n <= 10000)
		insertion(b, n, size);
	else
		qsort(b, n, size, cmp_key_seq);
	got = radix_sort_u64(a, n, size, threads);
	same = got && !memcmp(got, b, n * size);
	free(got);
	free(b);
	return same;
}

static uint64_t addresses(size_t i) /* a library's: the high bytes shared */
{
	(void)i;
	return 0x7f0000400000ull + (next() & 0xfffff);
}

static uint64_t repeated(size_t i) /* few distinct keys: order among equals */
{
	(void)i;
	return 0x400000 + (next() % 7) * 16;
}

static uint64_t high_only(size_t i) /* differing only in the top byte */
{
	(void)i;
	return (next() & 0xff00000000000000ull) | 0x1234;
}

static uint64_t any(size_t i)
{
	(void)i;
	return next();
}

static uint64_t same(size_t i)
{
	(void)i;
	return 42;
}

/* A case: n records of size bytes keyed by keyf, sorted on threads. */
static const struct {
	size_t n, size;
	uint64_t (*keyf)(size_t);
	unsigned threads;
	const char *what;
} cases[] = {
	{ 3000, sizeof(struct rec24), addresses, 1, "24-byte records, addresses" },
	{ 3000, sizeof(struct rec48), addresses, 1, "48-byte records, addresses" },
	{ 3000, sizeof(struct rec16), addresses, 1, "16-byte records, addresses" },
	{ 3000, sizeof(struct rec24), repeated, 1, "equal keys keep their order" },
	{ 3000, sizeof(struct rec48), repeated, 1, "equal keys keep their order (48)" },
	{ 2000, sizeof(struct rec24), high_only, 1, "keys differing in the top byte only" },
	{ 2000, sizeof(struct rec24), any, 1, "any 64-bit keys" },
	{ 500, sizeof(struct rec24), same, 1, "every key the same: no pass" },
	{ 1, sizeof(struct rec24), any, 1, "one record" },
	{ 0, sizeof(struct rec24), any, 1, "no record" },
	{ 200000, sizeof(struct rec24), addresses, 2, "two threads: 24-byte records, addresses" },
	{ 131073, sizeof(struct rec48), repeated, 2,
	  "two threads: equal keys keep their order, an odd count" },
	{ 150000, sizeof(struct rec16), high_only, 2,
	  "two threads: keys differing in the top byte only" },
	{ 140000, sizeof(struct rec24), any, 2, "two threads: any 64-bit keys" },
	{ 140000, sizeof(struct rec24), same, 2, "two threads: every key the same, no pass" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(agrees(cases[i].n, cases[i].size, cases[i].keyf, cases[i].threads), "%s",
		      cases[i].what);
	return unit_exit();
}
