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

/*
 * Whether v's n ranges are in (va, depth) order already, as range_sort()
 * would leave them (ties are in insertion order by definition).
 */
bool ranges_in_order(const struct brange *v, size_t n);

#endif
