/* SPDX-License-Identifier: Apache-2.0 */
/* Walk: directories, in sorted order, without loops (see walk.h). */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "walk.h"

struct dir_id {
	dev_t dev;
	ino_t ino;
};

struct walker {
	const struct walk_opts *o;
	void (*fn)(void *ctx, const char *path, bool explicit);
	void (*problem)(void *ctx, const char *path, const char *msg);
	void *ctx;
	struct dir_id *seen;
	size_t nseen, cap_seen;
	size_t problems;
};

static bool glob_match(const char *pattern, const char *path)
{
	const char *base = strrchr(path, '/');

	/* A pattern matches the whole path, or the last element ("*.so"). */
	return !fnmatch(pattern, path, 0) || (base && !fnmatch(pattern, base + 1, 0));
}

bool walk_wanted(const struct walk_opts *o, const char *path)
{
	bool in = o->ninclude == 0;

	for (size_t i = 0; i < o->ninclude && !in; i++)
		in = glob_match(o->include[i], path);
	for (size_t i = 0; i < o->nexclude && in; i++)
		in = !glob_match(o->exclude[i], path);
	return in;
}

static void say(struct walker *w, const char *path, const char *msg)
{
	w->problems++;
	if (w->problem)
		w->problem(w->ctx, path, msg);
}

static bool enter_once(struct walker *w, const struct stat *st)
{
	void *p;

	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return false;
	if (w->nseen == w->cap_seen) {
		size_t cap = w->cap_seen ? w->cap_seen * 2 : 64;

		if (!(p = realloc(w->seen, cap * sizeof(*w->seen))))
			return false;
		w->seen = p;
		w->cap_seen = cap;
	}
	w->seen[w->nseen++] = (struct dir_id){ st->st_dev, st->st_ino };
	return true;
}

int cmp_str_ptrs(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk_dir(struct walker *w, const char *dir, const struct stat *dst)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	if (!enter_once(w, dst))
		return; /* a loop through a symbolic link, or the same tree named twice */
	d = opendir(dir);
	if (!d) {
		say(w, dir, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (w->o->skip_temps && de->d_name[0] == '.' && strstr(de->d_name, ".tmp."))
			continue;
		if (n == cap) {
			void *p;

			cap = cap ? cap * 2 : 64;
			if (!(p = realloc(names, cap * sizeof(*names))))
				break;
			names = p;
		}
		if ((names[n] = strdup(de->d_name)))
			n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names),
		      cmp_str_ptrs); /* the same order on every file system */
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		int len = snprintf(path, sizeof(path), "%s%s%s", dir,
				   dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);

		free(names[i]);
		if (len < 0 || (size_t)len >= sizeof(path)) {
			say(w, dir, "a path in it is too long");
			continue;
		}
		if (lstat(path, &st))
			continue;
		if (S_ISLNK(st.st_mode)) {
			if (!w->o->follow_symlinks || stat(path, &st))
				continue;
		}
		if (S_ISDIR(st.st_mode))
			walk_dir(w, path, &st);
		else if (S_ISREG(st.st_mode) && walk_wanted(w->o, path))
			w->fn(w->ctx, path, false);
	}
	free(names);
}

size_t walk_paths(const struct walk_opts *o, char **paths, size_t npaths,
		  void (*fn)(void *ctx, const char *path, bool explicit),
		  void (*problem)(void *ctx, const char *path, const char *msg), void *ctx)
{
	struct walker w = { .o = o, .fn = fn, .problem = problem, .ctx = ctx };

	for (size_t i = 0; i < npaths; i++) {
		struct stat st;

		if (stat(paths[i], &st)) {
			say(&w, paths[i], strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			if (o->recursive)
				walk_dir(&w, paths[i], &st);
			else
				say(&w, paths[i], "is a directory (use --recursive)");
		} else if (!S_ISREG(st.st_mode)) {
			say(&w, paths[i], "not a regular file");
		} else if (walk_wanted(o, paths[i])) {
			fn(ctx, paths[i], true);
		}
	}
	free(w.seen);
	return w.problems;
}
