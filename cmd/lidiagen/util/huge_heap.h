/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIAGEN_HUGE_HEAP_H
#define LIDIAGEN_HUGE_HEAP_H

/*
 * Before a conversion: glibc's malloc on transparent huge pages
 * (the tunable glibc.malloc.hugetlb=1), which glibc reads only when a
 * process starts. Where it would apply and is not set, the process
 * executes itself again, once, with it added to GLIBC_TUNABLES; in the
 * process executed, GLIBC_TUNABLES is put back as it was. Returns when
 * nothing is to be done, or when executing failed (nothing changed then).
 */
void huge_heap_setup(char **argv);

/*
 * Before threads start, in the process executed again: with threads >= 2,
 * each worker's malloc() arena on huge pages too (huge_heap.c says how).
 */
void huge_heap_threads(unsigned threads);

#endif
