/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sort on two threads: a big file's ranges and line rows are sorted
 * once all units are walked, with nothing else left to run beside them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sort_halves.h"

/* Fewer elements: one thread sorts them faster than two start. */
#define MIN_HALVES (1u << 16)

struct half {
	void *base;
	size_t n, size;
	int (*cmp)(const void *, const void *);
};

static void *sort_half(void *arg)
{
	struct half *h = arg;

	sort_array(h->base, h->n, h->size, h->cmp);
	return NULL;
}

/* a[0, na) and b[0, nb), each sorted, into out; a's first among equals. */
static void merge(char *out, const char *a, size_t na, const char *b, size_t nb, size_t size,
		  int (*cmp)(const void *, const void *))
{
	const char *a_end = a + na * size, *b_end = b + nb * size;

	while (a < a_end && b < b_end) {
		const char **from = cmp(a, b) <= 0 ? &a : &b;

		memcpy(out, *from, size);
		*from += size;
		out += size;
	}
	memcpy(out, a, (size_t)(a_end - a));
	out += a_end - a;
	memcpy(out, b, (size_t)(b_end - b));
}

void *sort_halves(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
		  unsigned threads)
{
	size_t first = n / 2;
	struct half second;
	pthread_t tid;
	char *out;

	/* base may be NULL when n is 0: no arithmetic on it before this. */
	if (threads < 2 || n < MIN_HALVES || !(out = malloc(n * size))) {
		sort_array(base, n, size, cmp);
		return base;
	}
	second = (struct half){ (char *)base + first * size, n - first, size, cmp };
	if (pthread_create(&tid, NULL, sort_half, &second)) {
		free(out);
		sort_array(base, n, size, cmp);
		return base;
	}
	sort_array(base, first, size, cmp);
	pthread_join(tid, NULL);
	merge(out, base, first, second.base, second.n, size, cmp);
	free(base);
	return out;
}
