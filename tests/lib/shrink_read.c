/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test shim (LD_PRELOAD): an input that another process truncates while
 * lidiagen reads it, as a build that rewrites an output being converted
 * does. The file SHRINK_PATH is cut to one page just before a read of the
 * SHRINK_OPEN-th descriptor opened on it (default 1): its SHRINK_READ-th
 * pread (default 2), or with SHRINK_READ=big its first pread of more than
 * two pages (the bulk read of the whole file). SHRINK_TRACE=1 prints every
 * open and pread of it on stderr.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

static int opens, watched_fd = -1, reads;

static bool is_target(int fd)
{
	const char *target = getenv("SHRINK_PATH");
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (fd < 0 || !target)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return !strcmp(path, target);
}

static void opened(int fd)
{
	const char *nth = getenv("SHRINK_OPEN");

	if (fd == watched_fd)
		watched_fd = -1; /* the one watched was closed: its number is another file's now */
	if (!is_target(fd))
		return;
	opens++;
	if (getenv("SHRINK_TRACE"))
		fprintf(stderr, "shrink: open %d (fd %d)\n", opens, fd);
	if (opens == (nth ? atoi(nth) : 1)) {
		watched_fd = fd;
		reads = 0;
	}
}

static void before_read(int fd, size_t len, off_t off)
{
	const char *when = getenv("SHRINK_READ");
	bool cut;

	if (fd != watched_fd || !is_target(fd))
		return;
	reads++;
	if (getenv("SHRINK_TRACE"))
		fprintf(stderr, "shrink: pread %d: %zu bytes at %lld\n", reads, len, (long long)off);
	if (when && !strcmp(when, "big"))
		cut = len > 8192;
	else
		cut = reads == (when ? atoi(when) : 2);
	if (cut) {
		truncate(getenv("SHRINK_PATH"), 4096);
		watched_fd = -1;
	}
}

#define OPEN_WRAPPER(name)                                                          \
	int name(const char *path, int flags, ...)                                  \
	{                                                                           \
		static int (*real)(const char *, int, ...);                         \
		mode_t mode = 0;                                                    \
		int fd;                                                             \
		if (flags & O_CREAT) {                                              \
			va_list ap;                                                 \
			va_start(ap, flags);                                        \
			mode = va_arg(ap, mode_t);                                  \
			va_end(ap);                                                 \
		}                                                                   \
		if (!real)                                                          \
			real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
		fd = real(path, flags, mode);                                       \
		opened(fd);                                                         \
		return fd;                                                          \
	}

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

int openat(int dir, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;
	int fd;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	fd = real(dir, path, flags, mode);
	opened(fd);
	return fd;
}

#define PREAD_WRAPPER(name)                                                   \
	ssize_t name(int fd, void *buf, size_t len, off_t off)                \
	{                                                                     \
		static pread_fn real;                                         \
		if (!real)                                                    \
			real = (pread_fn)dlsym(RTLD_NEXT, #name);             \
		before_read(fd, len, off);                                    \
		return real(fd, buf, len, off);                               \
	}

PREAD_WRAPPER(pread)
PREAD_WRAPPER(pread64)
