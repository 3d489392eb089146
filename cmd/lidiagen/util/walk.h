/* SPDX-License-Identifier: Apache-2.0 */
/* Walk: the files named, and (with --recursive) those under the directories named. */
#ifndef LIDIAGEN_WALK_H
#define LIDIAGEN_WALK_H

#include <stdbool.h>
#include <stddef.h>

struct walk_opts {
	bool recursive, follow_symlinks;
	bool skip_temps; /* under directories, pass over ".*.tmp.*": unfinished writes */
	const char *const *include, *const *exclude;
	size_t ninclude, nexclude;
	/*
	 * A directory never walked (the output, that a tree of inputs may hold),
	 * NULL: none; met, it goes to the walk's skipped() instead.
	 */
	const char *skip_dir;
};

/* True when path passes the --include and --exclude globs. */
bool walk_wanted(const struct walk_opts *o, const char *path);

/*
 * Call file() for every regular file: each path named (explicit = true), and
 * each file under a directory named (explicit = false), in sorted order.
 * Symbolic links under directories are followed only with follow_symlinks,
 * and a directory is never entered twice (no loops), in time linear in the
 * directories. Problems (a missing path, a directory without --recursive,
 * a directory or entry that cannot be read, out of memory: any part of the
 * tree not walked) go to problem(); returns how many.
 */
struct walk_calls {
	void (*file)(void *ctx, const char *path, bool explicit);
	void (*problem)(void *ctx, const char *path, const char *msg);
	void (*skipped)(void *ctx, const char *path); /* o->skip_dir met at path */
	void *ctx;
};

size_t walk_paths(const struct walk_opts *o, char **paths, size_t npaths,
		  const struct walk_calls *calls);

/* qsort's comparison of two char * by strcmp (the walk's order of names). */
int cmp_str_ptrs(const void *a, const void *b);

#endif
