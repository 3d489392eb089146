/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_RADIX_SORT_H
#define LIDIA_RADIX_SORT_H

#include <stddef.h>

/*
 * base's n records of size bytes (24 or 48), each starting with a uint64_t
 * key, sorted by that key; records with equal keys keep their order, as
 * with sort_array() (glibc's qsort merges). Returns the sorted array: base,
 * or a new one of n records (base then freed); NULL when there was no
 * memory for the second array, base untouched. threads >= 2: a big sort
 * shares its passes with a second thread (the same order).
 */
void *radix_sort_u64(void *base, size_t n, size_t size, unsigned threads);

#endif
