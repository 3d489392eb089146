/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --debuginfod (batch_internal.h): a build ID whose inputs give no DWARF,
 * and for which none was found on disk, asks the servers for its debug
 * file, and reads it as a debug file found beside the binary. The fetch
 * runs on the worker converting the group, so at most -j fetches are under
 * way at once. A server that cannot be reached is said once: the rest of
 * the run asks no more, and goes on with what the inputs give. A dwz file
 * the debug file names is fetched too, and linked by its build ID under a
 * debug root of the run's own, searched first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"
#include "debuginfod.h"

/* Whether the extraction so far lacks what a debug file would bring. */
static bool lacks_dwarf(const struct group *g)
{
	return !g->st.dwarf_functions && !g->st.found_debug_file && !g->st.go_functions;
}

static bool servers_down(struct batch *b)
{
	bool down;

	pthread_mutex_lock(&b->lock);
	down = b->debuginfod_down;
	pthread_mutex_unlock(&b->lock);
	return down;
}

/* A fetch that failed: one warning for the build ID, or one for the run when no server answered. */
static void fetch_failed(struct batch *b, const char *hex, int err)
{
	pthread_mutex_lock(&b->lock);
	if (err == -ENOENT)
		batch_warning(b, NULL,
			      "%s: no debug information on the debuginfod servers, the symbols of "
			      "the inputs kept",
			      hex);
	else if (!b->debuginfod_down) {
		b->debuginfod_down = true;
		batch_warning(b, NULL,
			      "debuginfod: %s: %s%s; not asked again in this run, the inputs' "
			      "symbols kept",
			      dbgd_urls(), strerror(-err),
			      err == -ETIME || err == -ETIMEDOUT ? " (DEBUGINFOD_TIMEOUT)" : "");
	}
	pthread_mutex_unlock(&b->lock);
}

/* The fetched file, opened; refused (NULL, a warning) when it has another build ID. */
static struct lidia_elf *open_fetched(struct batch *b, const struct dbgd_got *got, const char *hex)
{
	char id[LIDIA_KEY_MAX] = "";
	struct lidia_elf *d;
	int err;

	if ((err = lidia_elf_open(&d, got->path))) {
		pthread_mutex_lock(&b->lock);
		batch_warning(b, NULL, "%s: %s, not used", got->url, lidia_strerror(err));
		pthread_mutex_unlock(&b->lock);
		return NULL;
	}
	if (lidia_elf_build_id(d, id, sizeof(id)) || strcmp(id, hex)) {
		pthread_mutex_lock(&b->lock);
		batch_warning(b, NULL, "%s: build ID '%s' where %s was asked for, not used",
			      got->url, id, hex);
		pthread_mutex_unlock(&b->lock);
		lidia_elf_close(d);
		return NULL;
	}
	return d;
}

/* What the progress line shows while a fetch moves. */
struct fetching {
	struct batch *b;
	const char *hex;
};

static int fetch_moves(void *ctx, long done, long total)
{
	const struct fetching *f = ctx;
	char what[160];

	if (total > 0)
		snprintf(what, sizeof(what), "debuginfod %s: %ld of %ld KiB", f->hex, done >> 10,
			 total >> 10);
	else
		snprintf(what, sizeof(what), "debuginfod %s: %ld KiB", f->hex, done >> 10);
	pthread_mutex_lock(&f->b->lock);
	progress_input(f->b, what);
	pthread_mutex_unlock(&f->b->lock);
	return 0; /* DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXTIME bound it */
}

static int fetch(struct batch *b, const char *hex, struct dbgd_got *got)
{
	struct fetching f = { .b = b, .hex = hex };

	return dbgd_fetch(hex, &(struct dbgd_progress){ .fn = fetch_moves, .ctx = &f }, got);
}

/*
 * The dwz file the fetched debug file at path names, fetched too and linked
 * by its build ID under the run's debug root, where the library's search
 * for it looks first. true when it is there; not found, one warning (the
 * library reads the debug file without it, and says so).
 */
static bool fetch_alt(struct batch *b, struct group *g, const char *path)
{
	char hex[LIDIA_KEY_MAX];
	struct dbgd_got got;
	int err;

	if (!dbgd_altlink_id(path, hex, sizeof(hex)) || servers_down(b))
		return false;
	if ((err = fetch(b, hex, &got))) {
		fetch_failed(b, hex, err);
		return false;
	}
	pthread_mutex_lock(&b->lock);
	err = dwz_pool_link(b, hex, got.path);
	pthread_mutex_unlock(&b->lock);
	if (!err && asprintf(&g->fetched_alt, "debuginfod:%s", got.url) < 0)
		g->fetched_alt = NULL;
	dbgd_got_free(&got);
	return !err;
}

/* The extraction again, with the debug file d after the inputs' images. */
static int extract_with(struct group *g, struct lidia_elf *const *elfs, size_t n,
			struct lidia_elf *d, const struct lidia_extract_opts *opts,
			struct lidia_builder **bld)
{
	struct lidia_elf *all[3] = { NULL, NULL, NULL };
	int err;

	memcpy(all, elfs, n * sizeof(*elfs));
	all[n] = d;
	lidia_builder_free(*bld);
	*bld = NULL;
	memset(&g->st, 0, sizeof(g->st));
	if ((err = lidia_builder_new(bld)))
		return err;
	return lidia_extract(*bld, all, n + 1, opts, &g->st);
}

int extract_fetched(struct batch *b, struct group *g, struct lidia_elf *const *elfs, size_t n,
		    const struct lidia_extract_opts *opts, struct lidia_builder **bld)
{
	char hex[LIDIA_KEY_MAX], dwz_dir[sizeof(b->alt_dir)];
	struct lidia_extract_opts with_alt;
	struct dbgd_got got;
	struct lidia_elf *d;
	int err;

	if (!lacks_dwarf(g) || lidia_elf_build_id(elfs[0], hex, sizeof(hex)) || servers_down(b))
		return 0;
	if ((err = fetch(b, hex, &got))) {
		fetch_failed(b, hex, err);
		return 0;
	}
	if (!(d = open_fetched(b, &got, hex))) {
		dbgd_got_free(&got);
		return 0;
	}
	if (asprintf(&g->fetched_from, "debuginfod:%s", got.url) < 0)
		g->fetched_from = NULL;
	if (fetch_alt(b, g, got.path) && dwz_pool_dir(b, dwz_dir, sizeof(dwz_dir))) {
		with_alt = *opts;
		with_alt.dwz_dir = dwz_dir;
		opts = &with_alt;
	}
	dbgd_got_free(&got);
	err = g->fetched_from ? extract_with(g, elfs, n, d, opts, bld) : -ENOMEM;
	lidia_elf_close(d);
	return err;
}
