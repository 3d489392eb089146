/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_INTERVALS_H
#define LIDIA_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Address intervals [lo, hi) that a better source (Go pclntab, DWARF) has
 * described, so that symbols fill only the rest.
 */
struct interval {
	uint64_t lo, hi;
};

struct intervals {
	struct interval *v;
	size_t n, cap;
};

int intervals_add(struct intervals *s, uint64_t lo, uint64_t hi);

/* Sort and merge overlapping or touching intervals. */
void intervals_normalize(struct intervals *s);

#endif
