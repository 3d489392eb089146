/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test shim (LD_PRELOAD): a run that stops while a temporary file is live,
 * so that a test can kill it there. rename() of a temporary file
 * (".NAME.tmp.XXXXXX") to a path that contains SLOW_RENAME_TO (any path when
 * unset) first creates the file SLOW_RENAME_READY, then sleeps 30 seconds
 * before renaming, in every thread that gets there.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*rename_fn)(const char *, const char *);

int rename(const char *from, const char *to)
{
	static rename_fn real;
	const char *want = getenv("SLOW_RENAME_TO");
	const char *ready = getenv("SLOW_RENAME_READY");
	const char *base = strrchr(from, '/');

	if (!real)
		real = (rename_fn)dlsym(RTLD_NEXT, "rename");
	base = base ? base + 1 : from;
	if (base[0] == '.' && strstr(base, ".tmp.") && (!want || strstr(to, want))) {
		if (ready)
			close(open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		sleep(30);
	}
	return real(from, to);
}
