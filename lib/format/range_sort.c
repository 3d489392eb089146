/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finalize: the ranges sorted by address, then depth, in the order they
 * were added among equals. A radix sort of small keys, then one gather: the
 * 48-byte ranges went through qsort (a merge sort of pointers, then the
 * records moved), a tenth of a big C++ library's conversion on one thread.
 * Least significant byte first, each pass stable, so equal keys keep their
 * order; a byte that is the same in every key is no pass at all.
 *
 * With a second thread and enough ranges, each pass is shared: each thread
 * counts the byte in its half of the keys, then moves its half, the second
 * half's keys placed after the first half's of the same byte (so still
 * stable); making the keys and the gather are shared too. The sort was the
 * longest step of a big file's finalize that ran on one thread.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "huge_pages.h"
#include "range_sort.h"
#include "thread_pair.h"

struct key {
	uint64_t va;
	uint32_t depth;
	uint32_t idx; /* the range's place in v */
};

#define DEPTH_BYTES 4
#define VA_BYTES 8
#define NPASSES (DEPTH_BYTES + VA_BYTES)

/* From this many ranges, with a second thread, the passes are shared. */
#define SHARED_MIN (1u << 17)

/* Byte p of k's sort key: depth's 4 bytes (least significant first), then va's 8. */
static unsigned key_byte(const struct key *k, int p)
{
	return p < DEPTH_BYTES ? (k->depth >> (8 * p)) & 0xff
			       : (unsigned)(k->va >> (8 * (p - DEPTH_BYTES))) & 0xff;
}

/* Every needed pass's counts of each byte value, in one read of the keys. */
static void count_all(const struct key *keys, size_t n, const bool *need, size_t (*count)[256])
{
	int passes[NPASSES], np = 0;

	/* Only those: a library's symbols differ in 3 or 4 bytes of their 12. */
	for (int p = 0; p < NPASSES; p++)
		if (need[p])
			passes[np++] = p;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < np; k++)
			count[passes[k]][key_byte(&keys[i], passes[k])]++;
}

/* src[lo, hi) moved to dst on byte p, the next place for each value in at. */
static void scatter(const struct key *src, struct key *dst, size_t lo, size_t hi, int p, size_t *at)
{
	for (size_t i = lo; i < hi; i++)
		dst[at[key_byte(&src[i], p)]++] = src[i];
}

/* One stable pass on byte p: src into dst, by the counts of that byte. */
static void pass(const struct key *src, struct key *dst, size_t n, int p, const size_t *count)
{
	size_t at[256], sum = 0;

	for (int b = 0; b < 256; b++) {
		at[b] = sum;
		sum += count[b];
	}
	scatter(src, dst, 0, n, p, at);
}

/*
 * The passes that move anything: none where every key has the same byte,
 * as differs tells (the bits in which any key differs from the first: each
 * key XOR the first, ORed). The shared passes count for themselves, and
 * counting every byte first was the longest step left on one thread.
 */
static void passes_needed(const struct key *differs, bool *need)
{
	for (int p = 0; p < NPASSES; p++)
		need[p] = key_byte(differs, p) != 0;
}

/*
 * The keys of v[lo, hi), and in *differs the bits in which any of them
 * differs from v[0]'s (passes_needed()).
 */
static void make_keys(const struct brange *v, struct key *keys, size_t lo, size_t hi,
		      struct key *differs)
{
	*differs = (struct key){ 0 };
	for (size_t i = lo; i < hi; i++) {
		keys[i] = (struct key){ v[i].va, v[i].depth, (uint32_t)i };
		differs->va |= v[i].va ^ v[0].va;
		differs->depth |= v[i].depth ^ v[0].depth;
	}
}

/* ---- Two threads -------------------------------------------------------------- */

struct shared {
	struct key *a, *b;     /* the keys, and as many more */
	struct key differs[2]; /* each thread's half's (make_keys()) */
	const struct brange *v;
	struct brange *out;
	size_t n, mid;	     /* thread 0 takes [0, mid), thread 1 [mid, n) */
	size_t half[2][256]; /* each thread's counts of the pass's byte */
	pthread_barrier_t sync;
	struct key *sorted; /* a or b, where the keys end */
};

/* Thread t's share of the keys, every pass, then of the gather (thread_pair_run()'s fn). */
static void share(void *arg, unsigned t)
{
	struct shared *s = arg;
	struct key *src = s->a, *dst = s->b, differs;
	size_t lo = t ? s->mid : 0, hi = t ? s->n : s->mid;
	bool need[NPASSES];

	make_keys(s->v, src, lo, hi, &s->differs[t]);
	pthread_barrier_wait(&s->sync);
	differs.va = s->differs[0].va | s->differs[1].va;
	differs.depth = s->differs[0].depth | s->differs[1].depth;
	passes_needed(&differs, need);
	for (int p = 0; p < NPASSES; p++) {
		size_t at[256], sum = 0;
		struct key *swap;

		if (!need[p])
			continue;
		memset(s->half[t], 0, sizeof(s->half[t]));
		for (size_t i = lo; i < hi; i++)
			s->half[t][key_byte(&src[i], p)]++;
		pthread_barrier_wait(&s->sync);
		for (int v = 0; v < 256; v++) {
			at[v] = sum + (t ? s->half[0][v] : 0);
			sum += s->half[0][v] + s->half[1][v];
		}
		scatter(src, dst, lo, hi, p, at);
		pthread_barrier_wait(&s->sync); /* dst whole before it is read, half counts reset */
		swap = src;
		src = dst;
		dst = swap;
	}
	for (size_t i = lo; i < hi; i++)
		s->out[i] = s->v[src[i].idx];
}

/* The keys, the passes and the gather on two threads; false when the second cannot start. */
static bool sort_shared(struct key *keys, const struct brange *v, size_t n, struct brange *out)
{
	struct shared s = { .a = keys, .b = keys + n, .v = v, .out = out, .n = n, .mid = n / 2 };

	return thread_pair_run(share, &s, &s.sync);
}

/* ---- One thread ----------------------------------------------------------------- */

static void sort_alone(struct key *keys, const size_t (*count)[256], const bool *need,
		       const struct brange *v, size_t n, struct brange *out)
{
	struct key *src = keys, *dst = keys + n;

	for (int p = 0; p < NPASSES; p++) {
		struct key *t;

		if (!need[p])
			continue;
		pass(src, dst, n, p, count[p]);
		t = src;
		src = dst;
		dst = t;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = v[src[i].idx];
}

bool ranges_in_order(const struct brange *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (range_cmp(&v[i - 1], &v[i]) > 0)
			return false;
	return true;
}

struct brange *range_sort(const struct brange *v, size_t n, unsigned threads)
{
	/*
	 * The keys in a mapping of their own, on huge pages: every pass writes
	 * them whole, and they are gone when the sort is (advice on the heap
	 * would stay on memory malloc hands out again).
	 */
	size_t keys_size = 2 * (n ? n : 1) * sizeof(struct key);
	struct key *keys = huge_map(keys_size, 0, true);
	struct brange *out = malloc(huge_fit((n ? n : 1) * sizeof(*out), true));
	size_t(*count)[256] = NULL;
	struct key differs;
	bool need[NPASSES];

	if (keys == MAP_FAILED || !out || n > UINT32_MAX)
		goto fail;
	if (threads >= 2 && n >= SHARED_MIN && sort_shared(keys, v, n, out))
		goto done;
	if (!(count = calloc(NPASSES, sizeof(*count))))
		goto fail;
	make_keys(v, keys, 0, n, &differs);
	passes_needed(&differs, need);
	count_all(keys, n, need, count);
	sort_alone(keys, (const size_t(*)[256])count, need, v, n, out);
done:
	munmap(keys, keys_size);
	free(count);
	return out;
fail:
	if (keys != MAP_FAILED)
		munmap(keys, keys_size);
	free(out);
	return NULL;
}
