/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test shim (LD_PRELOAD): an input that another process truncates while
 * lidiagen has it mapped. After the Nth mapping (SHRINK_NTH, default 1) of
 * the file SHRINK_PATH, the file is cut to one page, so that reading the
 * rest of the mapping raises SIGBUS, as it does when a build rewrites an
 * output that is being converted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static int maps_of_target;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static mmap_fn real;
	const char *target = getenv("SHRINK_PATH");
	const char *nth = getenv("SHRINK_NTH");
	char link[64], path[PATH_MAX];
	void *p;
	ssize_t n;

	if (!real)
		real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	p = real(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED || fd < 0 || !target || len <= 8192)
		return p;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return p;
	path[n] = '\0';
	if (!strcmp(path, target) && ++maps_of_target == (nth ? atoi(nth) : 1))
		truncate(path, 4096);
	return p;
}
