/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: a subprogram's inline intervals sorted (see the header). */
#include <stdbool.h>
#include <string.h>

#include "node_ivs.h"

/* Runs this long are sorted by insertion, then merged. */
#define RUN 8

static inline bool before(const struct node_iv *a, const struct node_iv *b)
{
	if (a->lo != b->lo)
		return a->lo < b->lo;
	if (a->depth != b->depth)
		return a->depth < b->depth;
	return a->node < b->node;
}

static void insertion_sort(struct node_iv *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct node_iv x = v[i];
		size_t j = i;

		for (; j > 0 && before(&x, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* a[0, na) and b[0, nb) into out; a's first among equals. */
static void merge(const struct node_iv *a, size_t na, const struct node_iv *b, size_t nb,
		  struct node_iv *out)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb)
		*out++ = before(&b[j], &a[i]) ? b[j++] : a[i++];
	memcpy(out, a + i, (na - i) * sizeof(*a));
	memcpy(out + (na - i), b + j, (nb - j) * sizeof(*b));
}

void node_ivs_sort(struct node_iv *v, size_t n, struct node_iv *tmp)
{
	struct node_iv *from = v, *to = tmp, *t;

	for (size_t i = 0; i < n; i += RUN)
		insertion_sort(v + i, n - i < RUN ? n - i : RUN);
	for (size_t width = RUN; width < n; width *= 2) {
		for (size_t i = 0; i < n; i += 2 * width) {
			size_t na = n - i < width ? n - i : width;
			size_t nb = n - i - na < width ? n - i - na : width;

			merge(from + i, na, from + i + na, nb, to + i);
		}
		t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}
