/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_SORT_HALVES_H
#define LIDIA_SORT_HALVES_H

#include <stddef.h>

/*
 * base's n elements sorted by cmp, the same order as sort_array() gives
 * (glibc's qsort merges: equal elements keep their order), with threads >= 2
 * and enough of them: each half sorted on a thread of its own, then merged,
 * the first half's first among equals. Returns the sorted array: base, or a
 * new one (base then freed) whose size is n elements.
 */
void *sort_halves(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
		  unsigned threads);

#endif
