/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_NODE_IVS_H
#define LIDIA_NODE_IVS_H

#include <stddef.h>
#include <stdint.h>

/* An inlined subroutine's address interval, in the current subprogram (unit_walk.c). */
struct node_iv {
	uint64_t lo, hi;
	int32_t node;
	int32_t depth;
};

/*
 * v's n intervals by start, then depth, then node; equal ones keep their
 * order, as sort_array() (glibc's qsort merges) would leave them. tmp holds
 * n intervals. A subprogram's few dozen intervals are sorted once each:
 * through qsort's calls of a comparison, that was a fortieth of a dwz'd
 * file's instructions.
 */
void node_ivs_sort(struct node_iv *v, size_t n, struct node_iv *tmp);

#endif
