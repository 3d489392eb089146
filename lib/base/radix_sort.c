/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stable sort by a leading 64-bit key, least significant byte first:
 * line rows and symbols are sorted by address, millions of them in a big
 * library, and a merge sort through a comparison function was a tenth of a
 * symbols-only conversion and 3% of a DWARF one. A byte that is the same in
 * every key (the high bytes of addresses) is no pass at all. The records
 * move whole, pass by pass, between base and one array as large.
 *
 * With a second thread and enough records, each pass is shared as
 * range_sort.c shares its own: each thread counts the byte in its half of
 * the records, then moves its half, the second half's records placed after
 * the first half's of the same byte, so the order is the one a single
 * thread gives. A big file's orphan line rows were sorted on one thread
 * while the other had nothing to do.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "huge_pages.h"
#include "radix_sort.h"
#include "thread_pair.h"

#define KEY_BYTES 8

/* From this many records, with a second thread, the passes are shared. */
#define SHARED_MIN (1u << 17)

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
 * Records [lo, hi) of src moved to dst on byte p, the next place for each
 * byte value in at. Inline with a constant size, each record's copy is a
 * few moves rather than a call.
 */
static inline void scatter(const unsigned char *src, unsigned char *dst, size_t lo, size_t hi,
			   size_t size, int p, size_t *at)
{
	for (size_t i = lo; i < hi; i++) {
		const unsigned char *r = src + i * size;

		memcpy(dst + at[(key_of(r) >> (8 * p)) & 0xff]++ * size, r, size);
	}
}

static void scatter_any(const unsigned char *src, unsigned char *dst, size_t lo, size_t hi,
			size_t size, int p, size_t *at)
{
	if (size == 24)
		scatter(src, dst, lo, hi, 24, p, at);
	else if (size == 48)
		scatter(src, dst, lo, hi, 48, p, at);
	else
		scatter(src, dst, lo, hi, size, p, at);
}

/* One stable pass on byte p, src into dst, by the counts of that byte. */
static void pass_any(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int p,
		     const size_t *count)
{
	size_t at[256], sum = 0;

	for (int b = 0; b < 256; b++) {
		at[b] = sum;
		sum += count[b];
	}
	scatter_any(src, dst, 0, n, size, p, at);
}

/* ---- Two threads -------------------------------------------------------------- */

struct shared {
	unsigned char *a, *b; /* the records, and as many more */
	size_t n, size, mid;  /* thread 0 takes [0, mid), thread 1 [mid, n) */
	uint64_t differs[2];  /* the key bits in which each half differs from record 0 */
	size_t half[2][256];  /* each thread's counts of the pass's byte */
	pthread_barrier_t sync;
	unsigned char *sorted; /* a or b, where the records end */
};

/* Thread t's share of every pass (thread_pair_run()'s fn). */
static void share(void *arg, unsigned t)
{
	struct shared *s = arg;
	unsigned char *src = s->a, *dst = s->b, *swap;
	size_t lo = t ? s->mid : 0, hi = t ? s->n : s->mid, size = s->size;
	uint64_t first = key_of(s->a), differs = 0;

	for (size_t i = lo; i < hi; i++)
		differs |= key_of(src + i * size) ^ first;
	s->differs[t] = differs;
	pthread_barrier_wait(&s->sync);
	differs = s->differs[0] | s->differs[1];
	for (int p = 0; p < KEY_BYTES; p++) {
		size_t at[256], sum = 0;

		if (!((differs >> (8 * p)) & 0xff))
			continue; /* every key has the same byte here */
		memset(s->half[t], 0, sizeof(s->half[t]));
		for (size_t i = lo; i < hi; i++)
			s->half[t][(key_of(src + i * size) >> (8 * p)) & 0xff]++;
		pthread_barrier_wait(&s->sync);
		for (int v = 0; v < 256; v++) {
			at[v] = sum + (t ? s->half[0][v] : 0);
			sum += s->half[0][v] + s->half[1][v];
		}
		scatter_any(src, dst, lo, hi, size, p, at);
		pthread_barrier_wait(&s->sync); /* dst whole before it is read, half counts reset */
		swap = src;
		src = dst;
		dst = swap;
	}
	if (!t)
		s->sorted = src;
}

/* The passes on two threads: where the records end, or NULL when the second cannot start. */
static unsigned char *sort_shared(unsigned char *base, unsigned char *other, size_t n, size_t size)
{
	struct shared s = { .a = base, .b = other, .n = n, .size = size, .mid = n / 2 };

	return thread_pair_run(share, &s, &s.sync) ? s.sorted : NULL;
}

/* ---- One thread, or two ------------------------------------------------------- */

void *radix_sort_u64(void *base, size_t n, size_t size, unsigned threads)
{
	size_t(*count)[256];
	unsigned char *src = base, *dst, *other, *sorted;

	if (n < 2)
		return base;
	other = malloc(huge_fit(n * size, true)); /* huge pages: each pass writes it whole */
	if (!other)
		return NULL;
	if (threads >= 2 && n >= SHARED_MIN && (sorted = sort_shared(base, other, n, size))) {
		free(sorted == base ? other : base);
		return sorted;
	}
	if (!(count = calloc(KEY_BYTES, sizeof(*count)))) {
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
