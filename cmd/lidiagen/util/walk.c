/* SPDX-License-Identifier: Apache-2.0 */
/* Walk: directories, in sorted order, without loops (see walk.h). */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
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
	const struct walk_calls *c;
	struct dir_id skip;	/* o->skip_dir's, (0, 0): none */
	bool skip_said;		/* skipped() was called: once is enough */
	struct dir_id *seen;	/* an open-addressing hash set of the directories entered */
	size_t nseen, cap_seen; /* cap_seen: a power of two, or 0 */
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
	if (w->c->problem)
		w->c->problem(w->c->ctx, path, msg);
}

static size_t dir_slot(const struct dir_id *id, size_t cap)
{
	uint64_t h = ((uint64_t)id->dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)id->ino;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (size_t)h & (cap - 1);
}

/* Insert id (known absent) into a table of cap slots, an empty slot being ino 0 and dev 0. */
static void dir_put(struct dir_id *table, size_t cap, const struct dir_id *id)
{
	size_t i = dir_slot(id, cap);

	while (table[i].ino || table[i].dev)
		i = (i + 1) & (cap - 1);
	table[i] = *id;
}

static bool dir_seen(const struct walker *w, const struct dir_id *id)
{
	if (!w->cap_seen)
		return false;
	for (size_t i = dir_slot(id, w->cap_seen); w->seen[i].ino || w->seen[i].dev;
	     i = (i + 1) & (w->cap_seen - 1))
		if (w->seen[i].dev == id->dev && w->seen[i].ino == id->ino)
			return true;
	return false;
}

/* Kept at most half full, so that a lookup stays short: linear in directories overall. */
static int dir_grow(struct walker *w)
{
	size_t cap = w->cap_seen ? w->cap_seen * 2 : 256;
	struct dir_id *table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < w->cap_seen; i++)
		if (w->seen[i].ino || w->seen[i].dev)
			dir_put(table, cap, &w->seen[i]);
	free(w->seen);
	w->seen = table;
	w->cap_seen = cap;
	return 0;
}

/*
 * Whether to enter the directory: not when it was entered before (a loop
 * through a symbolic link, or the same tree named twice). Out of memory, it
 * is said and not entered.
 */
static bool enter_once(struct walker *w, const char *dir, const struct stat *st)
{
	struct dir_id id = { st->st_dev, st->st_ino };

	if (dir_seen(w, &id))
		return false;
	if (2 * (w->nseen + 1) > w->cap_seen && dir_grow(w)) {
		say(w, dir, "out of memory, not walked");
		return false;
	}
	/* (dev 0, ino 0) marks an empty slot: no file system gives a directory inode 0. */
	dir_put(w->seen, w->cap_seen, &id);
	w->nseen++;
	return true;
}

int cmp_str_ptrs(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names in dir but . and .., sorted: the same order on every file
 * system. NULL when it cannot be read (said); an error midway is said and
 * the names read before it are walked.
 */
static char **read_names(struct walker *w, const char *dir, size_t *count)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		say(w, dir, strerror(errno));
		return NULL;
	}
	for (;;) {
		errno = 0;
		if (!(de = readdir(d))) {
			if (errno)
				say(w, dir, strerror(errno));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (w->o->skip_temps && de->d_name[0] == '.' && strstr(de->d_name, ".tmp."))
			continue;
		if (n == cap) {
			size_t grown = cap ? cap * 2 : 64;
			void *p = realloc(names, grown * sizeof(*names));

			if (!p)
				break;
			names = p;
			cap = grown;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	if (de)
		say(w, dir, "out of memory: only part of it is walked");
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str_ptrs);
	*count = n;
	return names;
}

static void walk_dir(struct walker *w, const char *dir, const struct stat *dst);

/* One entry of a directory: a file handed over, a directory walked, anything else passed. */
static void walk_entry(struct walker *w, const char *path)
{
	struct stat st;

	if (lstat(path, &st)) {
		say(w, path, strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!w->o->follow_symlinks)
			return;
		/* A link to nothing holds no file: passed over, as without --follow-symlinks. */
		if (stat(path, &st)) {
			if (errno != ENOENT)
				say(w, path, strerror(errno));
			return;
		}
	}
	if (S_ISDIR(st.st_mode))
		walk_dir(w, path, &st);
	else if (S_ISREG(st.st_mode) && walk_wanted(w->o, path))
		w->c->file(w->c->ctx, path, false);
}

static void walk_dir(struct walker *w, const char *dir, const struct stat *dst)
{
	bool slash = dir[strlen(dir) - 1] == '/';
	size_t n = 0;
	char **names;

	if ((w->skip.dev || w->skip.ino) && dst->st_dev == w->skip.dev &&
	    dst->st_ino == w->skip.ino) {
		if (w->c->skipped && !w->skip_said)
			w->c->skipped(w->c->ctx, dir);
		w->skip_said = true;
		return;
	}
	if (!enter_once(w, dir, dst))
		return; /* a loop through a symbolic link, or the same tree named twice */
	if (!(names = read_names(w, dir, &n)))
		return;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		int len = snprintf(path, sizeof(path), "%s%s%s", dir, slash ? "" : "/", names[i]);

		if (len < 0 || (size_t)len >= sizeof(path))
			say(w, dir, "a path in it is too long");
		else
			walk_entry(w, path);
		free(names[i]);
	}
	free(names);
}

size_t walk_paths(const struct walk_opts *o, char **paths, size_t npaths,
		  const struct walk_calls *calls)
{
	struct walker w = { .o = o, .c = calls };
	struct stat skip;

	if (o->skip_dir && !stat(o->skip_dir, &skip) && S_ISDIR(skip.st_mode))
		w.skip = (struct dir_id){ skip.st_dev, skip.st_ino };

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
			calls->file(calls->ctx, paths[i], true);
		}
	}
	free(w.seen);
	return w.problems;
}
