/* SPDX-License-Identifier: Apache-2.0 */
/* Support: big buffers on transparent huge pages, fewer page faults to fill them. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "huge_pages.h"

#define HUGE_SIZE ((size_t)2 << 20) /* x86-64's and arm64's (4 KiB granule) PMD size */

/* Smaller buffers are left to the kernel: a few faults, no rounding to think about. */
#define HUGE_MIN HUGE_SIZE

void huge_advise(void *p, size_t len)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(HUGE_SIZE - 1);

	if (len >= HUGE_MIN && hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/*
 * glibc maps a request of n bytes as a chunk: n plus its 8-byte size field,
 * rounded up to 16, plus 8 more, rounded up to a page. n = k huge pages - 24
 * makes that exactly k huge pages (checked by tests/unit/test_huge_heap.c).
 */
#define GLIBC_CHUNK_OVERHEAD 24

size_t huge_fit(size_t bytes, bool whole)
{
	size_t mapped;

	if (bytes < (whole ? HUGE_SIZE / 2 : HUGE_MIN) || bytes > SIZE_MAX - 2 * HUGE_SIZE)
		return bytes;
	mapped = (bytes + GLIBC_CHUNK_OVERHEAD + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
	return mapped - GLIBC_CHUNK_OVERHEAD;
}

void *huge_map(size_t len, int flags, bool whole)
{
	int prot = PROT_READ | PROT_WRITE;
	unsigned char *p, *start;
	size_t page, span;

	flags |= MAP_PRIVATE | MAP_ANONYMOUS;
	if (len < HUGE_MIN || len > SIZE_MAX - HUGE_SIZE)
		return mmap(NULL, len, prot, flags, -1, 0); /* too small to advise */
	/*
	 * Not every kernel places a mapping on a huge-page boundary: take one
	 * huge page more and give back what lies before the boundary and after
	 * the end, so that munmap(start, len) later undoes the whole of it.
	 */
	p = mmap(NULL, len + HUGE_SIZE, prot, flags, -1, 0);
	if (p == MAP_FAILED)
		return p;
	start = (unsigned char *)(((uintptr_t)p + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1));
	page = (size_t)sysconf(_SC_PAGESIZE);
	span = (len + page - 1) & ~(page - 1);
	if (start > p)
		munmap(p, (size_t)(start - p));
	/* The mapping ends at p + span + HUGE_SIZE, at least span past start. */
	if (p + HUGE_SIZE > start)
		munmap(start + span, (size_t)(p + HUGE_SIZE - start));
	if (whole)
		huge_advise(start, len);
	return start;
}
