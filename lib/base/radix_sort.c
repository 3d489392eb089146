/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stable sort by a leading 64-bit key, least significant byte first:
 * line rows and symbols are sorted by address, millions of them in a big
 * library, and a merge sort through a comparison function was a tenth of a
 * symbols-only conversion and 3% of a DWARF one. A byte that is the same in
 * every key (the high bytes of addresses) is no pass at all. The records
 * move whole, pass by pass, between base and one array as large.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "radix_sort.h"

#define KEY_BYTES 8

static uint64_t key_of(const unsigned char *rec)
{
	uint64_t k;

	memcpy(&k, rec, sizeof(k));
	return k;
}

/* Every pass's counts of each byte value, in one read of the keys. */
static void count_all(const unsigned char *v, size_t n, size_t size, size_t (*count)[256])
{
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_of(v + i * size);

		for (int p = 0; p < KEY_BYTES; p++)
			count[p][(k >> (8 * p)) & 0xff]++;
	}
}

/*
 * One stable pass on byte p, src into dst. Inline with a constant size,
 * each record's copy is a few moves rather than a call.
 */
static inline void pass(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int p,
			const size_t *count)
{
	size_t at[256], sum = 0;

	for (int b = 0; b < 256; b++) {
		at[b] = sum;
		sum += count[b];
	}
	for (size_t i = 0; i < n; i++) {
		const unsigned char *r = src + i * size;

		memcpy(dst + at[(key_of(r) >> (8 * p)) & 0xff]++ * size, r, size);
	}
}

static void pass_any(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int p,
		     const size_t *count)
{
	if (size == 24)
		pass(src, dst, n, 24, p, count);
	else if (size == 48)
		pass(src, dst, n, 48, p, count);
	else
		pass(src, dst, n, size, p, count);
}

void *radix_sort_u64(void *base, size_t n, size_t size)
{
	size_t(*count)[256];
	unsigned char *src = base, *dst, *other;

	if (n < 2)
		return base;
	count = calloc(KEY_BYTES, sizeof(*count));
	other = malloc(n * size);
	if (!count || !other) {
		free(count);
		free(other);
		return NULL;
	}
	dst = other;
	count_all(src, n, size, count);
	for (int p = 0; p < KEY_BYTES; p++) {
		unsigned char *t;

		if (count[p][(key_of(src) >> (8 * p)) & 0xff] == n)
			continue; /* every key has the same byte here */
		pass_any(src, dst, n, size, p, count[p]);
		t = src;
		src = dst;
		dst = t;
	}
	free(count);
	free(dst); /* whichever of the two is not the result */
	return src;
}
