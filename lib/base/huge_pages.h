/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_HUGE_PAGES_H
#define LIDIA_HUGE_PAGES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Transparent huge pages for the big buffers we fill whole (an inflated
 * image, a file read into memory): their first touches then fault 2 MiB at
 * a time where the kernel allows it (THP in "madvise" mode, Debian's
 * default), so a 100 MiB image takes 50 faults instead of 25,600, each of
 * which costs about as much as the copy it makes room for.
 */

/*
 * Anonymous read-write memory of len bytes (mmap's flags added to
 * MAP_PRIVATE | MAP_ANONYMOUS) that starts on a huge-page boundary when it
 * is big enough to gain from one, or MAP_FAILED; whole: all of it is about
 * to be written, huge_advise() it all (else the caller advises the parts
 * it fills). munmap(p, len) releases it.
 */
void *huge_map(size_t len, int flags, bool whole);

/*
 * Ask for huge pages on the whole huge pages inside [p, p + len), a part of
 * a mapping of ours about to be written whole; the pages at either end stay
 * small, so nothing outside it is made resident. Never memory from malloc():
 * the advice would outlive the buffer, on memory handed out again. Advice
 * only: without THP the buffer works as before.
 */
void huge_advise(void *p, size_t len);

/*
 * The size to ask malloc() for, at least bytes, so that glibc maps it whole
 * on huge pages: a request of 2 MiB or more is rounded up to what makes
 * glibc's own mapping of it a whole number of huge pages, which the kernel
 * (Linux 6.7 and later) places on a huge-page boundary and which glibc
 * advises when its tunable glibc.malloc.hugetlb is 1
 * (cmd/lidiagen/util/huge_heap.c). whole: the buffer is written whole and
 * freed soon after (a sort's scratch), so from 1 MiB on: one huge page
 * costs less than 256 faults, and only for a while. Smaller requests are
 * returned as they are. Elsewhere only address space is added: pages never
 * touched take no memory.
 */
size_t huge_fit(size_t bytes, bool whole);

#endif
