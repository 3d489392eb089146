/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_RANGE_SORT_H
#define LIDIA_RANGE_SORT_H

#include <stdbool.h>
#include <stddef.h>

#include "tables.h"

/*
 * v's n ranges in (va, depth, insertion) order, where insertion order is
 * v's: a new array of n (v is the caller's still), or NULL when there is no
 * memory for one. threads >= 2: a big sort shares its passes with a second
 * thread (the same order).
 */
struct brange *range_sort(const struct brange *v, size_t n, unsigned threads);

/* The order range_sort() gives: by va, then depth, then insertion (seq). */
static inline int range_cmp(const struct brange *a, const struct brange *b)
{
	if (a->va != b->va)
		return a->va < b->va ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Whether v's n ranges are in range_cmp()'s order already, as range_sort() would leave them. */
bool ranges_in_order(const struct brange *v, size_t n);

#endif
