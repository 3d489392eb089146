/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test shim (LD_PRELOAD): a run that stops while a temporary file is live,
 * so that a test can kill it there. rename() or renameat() of a temporary
 * file (".NAME.lidiagen.tmp.XXXXXX", or ".NAME.tmp.XXXXXX" of earlier
 * versions) to a path that contains SLOW_RENAME_TO (any path when unset;
 * renameat's path is its directory's, /proc/self/fd/N, and its name) first
 * creates the file SLOW_RENAME_READY, then sleeps 30 seconds before
 * renaming, in every thread that gets there.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);

/* Stop there when from is a temporary file and to the path wanted. */
static void maybe_stop(const char *from, const char *to)
{
	const char *want = getenv("SLOW_RENAME_TO");
	const char *ready = getenv("SLOW_RENAME_READY");
	const char *base = strrchr(from, '/');

	base = base ? base + 1 : from;
	if (base[0] == '.' && strstr(base, ".tmp.") && (!want || strstr(to, want))) {
		if (ready)
			close(open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		sleep(30);
	}
}

int rename(const char *from, const char *to)
{
	static rename_fn real;

	if (!real)
		real = (rename_fn)dlsym(RTLD_NEXT, "rename");
	maybe_stop(from, to);
	return real(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	static renameat_fn real;
	char link[64], dir[PATH_MAX], path[PATH_MAX + 256];
	ssize_t n;

	if (!real)
		real = (renameat_fn)dlsym(RTLD_NEXT, "renameat");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", tofd);
	n = tofd == AT_FDCWD ? -1 : readlink(link, dir, sizeof(dir) - 1);
	dir[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, to);
	maybe_stop(from, path);
	return real(fromfd, from, tofd, to);
}
