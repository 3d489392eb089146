/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dwz supplementary files of the run (batch_internal.h): every one the
 * inputs hold, a file or an archive member, and every one debuginfod gave,
 * under one debug root of the run's own (<root>/.build-id/xx/yyyy.debug,
 * each named by its own build ID), which every extraction is given
 * (lidia_extract_opts.dwz_dir). A -dbg package holds its debug files under
 * .build-id/ and the dwz files they name under .dwz/, by a path that only
 * the installed package has: read from the package, they are found here.
 * Without it, every name those debug files leave to the dwz file would be
 * missing from their outputs.
 *
 * Two files of one build ID and different bytes (a hostile input, or two
 * builds that clash): neither is used, whichever came first, so that what
 * an output holds does not depend on the order the inputs were read in.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_internal.h"
#include "dwz_file.h"
#include "sha256.h"
#include "tempfile.h"

/* The run's debug root of dwz files, made on first use (under the lock). */
static int dwz_root(struct batch *b)
{
	const char *tmp = getenv("TMPDIR");

	if (b->alt_dir[0])
		return 0;
	snprintf(b->alt_dir, sizeof(b->alt_dir), "%s/lidiagen-dwz-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(b->alt_dir)) {
		b->alt_dir[0] = '\0';
		return -errno;
	}
	remove_on_signal(b->alt_dir);
	return 0;
}

static size_t hash_id(const char *hex)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *hex; hex++)
		h = (h ^ (unsigned char)*hex) * 0x100000001b3ull;
	return (size_t)h;
}

/*
 * The slot of build ID hex in b->dwz_slots: the one holding its place + 1,
 * or the empty one where it goes (a hash table: one input may hold any
 * number of dwz files, and none is looked for by walking them all).
 */
static size_t slot_of(const struct batch *b, const char *hex)
{
	size_t mask = b->dwz_nslots - 1, i = hash_id(hex) & mask;

	while (b->dwz_slots[i] && strcmp(b->dwz[b->dwz_slots[i] - 1].id, hex))
		i = (i + 1) & mask;
	return i;
}

/* The dwz file of build ID hex seen so far, or NULL (under the lock). */
static struct dwz_seen *seen(struct batch *b, const char *hex)
{
	size_t i;

	if (!b->dwz_nslots)
		return NULL;
	i = slot_of(b, hex);
	return b->dwz_slots[i] ? &b->dwz[b->dwz_slots[i] - 1] : NULL;
}

/* Room for one more in the table, at most half full (under the lock). */
static bool slots_room(struct batch *b)
{
	size_t n = b->dwz_nslots ? b->dwz_nslots : 16, *old = b->dwz_slots;

	if (b->dwz_nslots && 2 * (b->ndwz + 1) <= b->dwz_nslots)
		return true;
	while (2 * (b->ndwz + 1) > n)
		n *= 2;
	if (!(b->dwz_slots = calloc(n, sizeof(*b->dwz_slots)))) {
		b->dwz_slots = old;
		return false;
	}
	b->dwz_nslots = n;
	for (size_t k = 0; k < b->ndwz; k++)
		b->dwz_slots[slot_of(b, b->dwz[k].id)] = k + 1;
	free(old);
	return true;
}

/* Where the root keeps the dwz file of build ID hex (its directories made). */
static int pool_path(const struct batch *b, const char *hex, char *path, size_t size)
{
	const char *const fmt[] = { "%s/.build-id", "%s/.build-id/%.2s",
				    "%s/.build-id/%.2s/%s.debug" };

	for (int i = 0; i < 3; i++) {
		if ((size_t)snprintf(path, size, fmt[i], b->alt_dir, hex, hex + 2) >= size)
			return -ENAMETOOLONG;
		if (i == 2)
			break;
		if (!mkdir(path, 0700))
			remove_on_signal(path);
		else if (errno != EEXIST)
			return -errno;
	}
	return 0;
}

struct bytes {
	const void *data;
	size_t size;
};

static int fill_bytes(int fd, void *ctx)
{
	const struct bytes *m = ctx;

	return write_whole(fd, m->data, m->size);
}

/*
 * The file put at path: a member's bytes written there, a file linked to
 * (by its absolute path: the library opens a link only to a regular file).
 */
static int place(const char *path, const char *input, const void *data, size_t size)
{
	char abs[PATH_MAX];

	if (data)
		return lidia_store_write_file(path, fill_bytes, &(struct bytes){ data, size });
	if (!realpath(input, abs))
		return -errno;
	return symlink(abs, path) ? -errno : 0;
}

/* A second file of the build ID with other bytes: neither is used (under the lock). */
static void clash(struct batch *b, struct dwz_seen *d, const char *input)
{
	char path[PATH_MAX];

	if (d->clash)
		return;
	d->clash = true;
	if (d->placed && !pool_path(b, d->id, path, sizeof(path)))
		unlink(path);
	batch_warning(b, input,
		      "a dwz file of build ID %s, and another of other bytes: neither is used",
		      d->id);
}

/* One more dwz file seen, at the end of the list; NULL when out of memory (under the lock). */
static struct dwz_seen *add_seen(struct batch *b, const char *hex, const char *sha)
{
	struct dwz_seen *d;

	if (b->ndwz == b->cap_dwz) {
		size_t cap = b->cap_dwz ? 2 * b->cap_dwz : 8;

		if (!(d = realloc(b->dwz, cap * sizeof(*d))))
			return NULL;
		b->dwz = d;
		b->cap_dwz = cap;
	}
	if (!slots_room(b))
		return NULL;
	d = &b->dwz[b->ndwz++];
	*d = (struct dwz_seen){ 0 };
	snprintf(d->id, sizeof(d->id), "%s", hex);
	memcpy(d->sha, sha, sizeof(d->sha));
	b->dwz_slots[slot_of(b, hex)] = b->ndwz;
	return d;
}

void dwz_pool_add(struct batch *b, const char *input, const void *data, size_t size,
		  const char *hex)
{
	char sha[65], path[PATH_MAX];
	struct dwz_seen *d;
	int err = 0;

	if (!lidia_store_build_id_valid(hex))
		return; /* no key to be found by: no debug file can name it */
	if (data)
		sha256_hex(data, size, sha);
	else if ((err = sha256_file(input, sha)))
		return; /* unreadable now: its part says so */
	pthread_mutex_lock(&b->lock);
	if ((d = seen(b, hex))) {
		if (strcmp(d->sha, sha))
			clash(b, d, input);
		pthread_mutex_unlock(&b->lock);
		return;
	}
	if (!(err = dwz_root(b)) && !(err = pool_path(b, hex, path, sizeof(path))) &&
	    !add_seen(b, hex, sha))
		err = -ENOMEM;
	pthread_mutex_unlock(&b->lock);
	/* Written outside the lock; a clash meanwhile removes it after. */
	if (!err)
		err = place(path, input, data, size);
	if (!err)
		remove_on_signal(path);
	pthread_mutex_lock(&b->lock);
	if ((d = seen(b, hex))) {
		d->placed = !err;
		if (d->clash)
			unlink(path);
	}
	if (err && err != -EEXIST)
		batch_warning(b, input, "dwz file not gathered: %s", strerror(-err));
	pthread_mutex_unlock(&b->lock);
}

void dwz_pool_gather_unread(struct batch *b)
{
	char id[LIDIA_KEY_MAX], *path;

	for (size_t k = 0;; k++) {
		const struct state_input *in;
		bool unread;

		pthread_mutex_lock(&b->lock);
		if (k >= b->state.nskips) {
			pthread_mutex_unlock(&b->lock);
			return;
		}
		in = &b->state.inputs[b->state.skips[k].input];
		unread = b->state.skips[k].dwz && !strcmp(b->state.skips[k].path, in->path) &&
			 (b->o->index || in->from_state) && !in->changed;
		path = unread ? strdup(in->path) : NULL;
		pthread_mutex_unlock(&b->lock);
		if (path && dwz_file_id(path, NULL, 0, id, sizeof(id)))
			dwz_pool_add(b, path, NULL, 0, id);
		free(path);
	}
}

int dwz_pool_link(struct batch *b, const char *hex, const char *target)
{
	char path[PATH_MAX];
	int err = dwz_root(b);

	if (err || (err = pool_path(b, hex, path, sizeof(path))))
		return err;
	if (!symlink(target, path))
		remove_on_signal(path);
	else if (errno != EEXIST) /* there already: one link (or copy) serves all */
		return -errno;
	return 0;
}

bool dwz_pool_dir(struct batch *b, char *dir, size_t size)
{
	bool any;

	pthread_mutex_lock(&b->lock);
	any = b->alt_dir[0] && (size_t)snprintf(dir, size, "%s", b->alt_dir) < size;
	pthread_mutex_unlock(&b->lock);
	return any;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(path);
	return 0;
}

void dwz_pool_release(struct batch *b)
{
	if (b->alt_dir[0])
		nftw(b->alt_dir, remove_one, 8,
		     FTW_DEPTH | FTW_PHYS); /* links, not what they name */
	free(b->dwz);
	free(b->dwz_slots);
}
