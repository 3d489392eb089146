/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finalize: the ranges sorted by address, then depth, in the order they
 * were added among equals. A radix sort of small keys, then one gather: the
 * 48-byte ranges went through qsort (a merge sort of pointers, then the
 * records moved), a tenth of a big C++ library's conversion on one thread.
 * Least significant byte first, each pass stable, so equal keys keep their
 * order; a byte that is the same in every key is no pass at all.
 */
#include <stdint.h>
#include <stdlib.h>

#include "range_sort.h"

struct key {
	uint64_t va;
	uint32_t depth;
	uint32_t idx; /* the range's place in v */
};

#define DEPTH_BYTES 4
#define VA_BYTES 8
#define NPASSES (DEPTH_BYTES + VA_BYTES)

/* Byte p of k's sort key: depth's 4 bytes (least significant first), then va's 8. */
static unsigned key_byte(const struct key *k, int p)
{
	return p < DEPTH_BYTES ? (k->depth >> (8 * p)) & 0xff
			       : (unsigned)(k->va >> (8 * (p - DEPTH_BYTES))) & 0xff;
}

/* Every pass's counts of each byte value, in one read of the keys. */
static void count_all(const struct key *keys, size_t n, size_t (*count)[256])
{
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < NPASSES; p++)
			count[p][key_byte(&keys[i], p)]++;
}

/* One stable pass on byte p: src into dst, by the counts of that byte. */
static void pass(const struct key *src, struct key *dst, size_t n, int p, const size_t *count)
{
	size_t at[256], sum = 0;

	for (int b = 0; b < 256; b++) {
		at[b] = sum;
		sum += count[b];
	}
	for (size_t i = 0; i < n; i++)
		dst[at[key_byte(&src[i], p)]++] = src[i];
}

struct brange *range_sort(const struct brange *v, size_t n)
{
	struct key *keys = malloc(2 * (n ? n : 1) * sizeof(*keys)), *src = keys, *dst;
	size_t(*count)[256] = calloc(NPASSES, sizeof(*count));
	struct brange *out = malloc((n ? n : 1) * sizeof(*out));

	if (!keys || !count || !out || n > UINT32_MAX) {
		free(keys);
		free(count);
		free(out);
		return NULL;
	}
	dst = keys + n;
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct key){ v[i].va, v[i].depth, (uint32_t)i };
	count_all(keys, n, count);
	for (int p = 0; p < NPASSES; p++) {
		struct key *t;

		if (n == 0 || count[p][key_byte(&keys[0], p)] == n)
			continue; /* every key has the same byte here */
		pass(src, dst, n, p, count[p]);
		t = src;
		src = dst;
		dst = t;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = v[src[i].idx];
	free(keys);
	free(count);
	return out;
}
