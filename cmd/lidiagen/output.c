/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a group's output goes (batch_internal.h): a tree on disk, the
 * bucket (publish.h), or stdout. What is already there is probed once,
 * before the images are read; writing fills the group's counts, level,
 * size and sha256 from the bytes that went out, as `info` would count
 * them. An output with the very bytes already there is not written again:
 * in the tree it keeps its date, in the bucket no byte is sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_internal.h"
#include "publish.h"
#include "sha256.h"

/* Comparing what the builder writes with a file, chunk by chunk (same_bytes). */
struct compare {
	int fd;
	unsigned char buf[65536];
};

static int compare_sink(void *ctx, const void *data, size_t len)
{
	struct compare *c = ctx;
	const unsigned char *p = data;

	while (len) {
		size_t want = len < sizeof(c->buf) ? len : sizeof(c->buf), got = 0;

		while (got < want) {
			ssize_t n = read(c->fd, c->buf + got, want - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -ECANCELED;
			got += (size_t)n;
		}
		if (memcmp(c->buf, p, want))
			return -ECANCELED; /* they differ: stop there */
		p += want;
		len -= want;
	}
	return 0;
}

/* Whether the file at path holds the very bytes the builder would write. */
static bool same_bytes(const char *path, struct lidia_builder *bld)
{
	struct compare *c = malloc(sizeof(*c));
	struct stat st;
	bool same = false;

	if (!c)
		return false;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd >= 0 && !fstat(c->fd, &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size == lidia_builder_file_size(bld))
		same = !lidia_builder_write(bld, compare_sink, c);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	return same;
}

/*
 * The one output to stdout, streamed. With a manifest, its counts and
 * sha256 come from its bytes, made in memory first.
 */
int output_write_stdout(struct batch *b, struct group *g, struct lidia_builder *bld)
{
	struct lidia_reader *r;
	void *buf = NULL;
	size_t size;
	int err = 0;

	g->out_size = lidia_builder_file_size(bld);
	if (b->o->manifest && !(err = lidia_builder_write_mem(bld, &buf, &size)) &&
	    !(err = lidia_reader_open_mem(&r, buf, size, NULL))) {
		counts_read(r, &g->counts);
		lidia_reader_close(r);
		g->level = counts_level(&g->counts);
		sha256_hex(buf, size, g->sha);
	}
	free(buf);
	if (!err)
		err = lidia_builder_write_fd(bld, STDOUT_FILENO);
	if (err)
		group_message(g, true, "%s: %s", b->state.parts[g->main].path, lidia_strerror(err));
	return err;
}

/*
 * Write the output, streamed to the file, not built in memory first; then
 * read what the tree holds (counts, level, size, sha256), as `info` would.
 */
static int write_file_output(struct batch *b, struct group *g, struct lidia_builder *bld,
			     const char *path)
{
	const char *input = b->state.parts[g->main].path;
	struct existing now;
	int err;

	if ((err = lidia_store_write(bld, b->o->out_dir, g->out_key))) {
		group_message(g, true, "%s: cannot write '%s': %s", input, path,
			      lidia_strerror(err));
		return err;
	}
	existing_read(path, b->o->manifest != NULL, &now);
	if (!now.valid) {
		group_message(g, true, "%s: '%s' is not the file just written (another run?)",
			      input, path);
		return -EIO;
	}
	g->counts = now.counts;
	g->level = now.level;
	g->out_size = now.size;
	memcpy(g->sha, now.sha, sizeof(g->sha));
	return 0;
}

/* The bucket: built in memory (one PUT), sent unless the bucket has these bytes already. */
static int publish_output(struct batch *b, struct group *g, struct lidia_builder *bld,
			  const struct existing *ex, bool *same)
{
	struct existing now;
	char err[1024];
	void *buf = NULL;
	size_t size;
	int ret;

	if ((ret = lidia_builder_write_mem(bld, &buf, &size))) {
		group_message(g, true, "%s: %s", b->state.parts[g->main].path, lidia_strerror(ret));
		return ret;
	}
	existing_read_mem(buf, size, &now);
	/*
	 * The same bytes by our metadata are not sent again (--force sends them
	 * anyway). A copy another tool made, without our metadata, is sent once
	 * more, so that later runs know from a HEAD what it holds.
	 */
	*same = !b->o->force && ex->valid && !strcmp(ex->sha, now.sha);
	if (!*same &&
	    (ret = publish_put(b->o->bucket, g->out_key, buf, size, &now, err, sizeof(err)))) {
		group_message(g, true, "%s: cannot upload: %s", b->state.parts[g->main].path, err);
		g->said = ret == -ECANCELED; /* not sent: print_summary says why, once */
	}
	free(buf);
	if (ret)
		return ret;
	g->counts = now.counts;
	g->level = now.level;
	g->out_size = now.size;
	memcpy(g->sha, now.sha, sizeof(g->sha));
	return 0;
}

int output_write(struct batch *b, struct group *g, struct lidia_builder *bld,
		 const struct existing *ex, bool *same)
{
	char path[PATH_MAX];

	if (b->o->bucket)
		return publish_output(b, g, bld, ex, same);
	snprintf(path, sizeof(path), "%s/%s", b->o->out_dir, g->out_key);
	*same = ex->valid && same_bytes(path, bld);
	if (*same) {
		g->counts = ex->counts;
		g->level = ex->level;
		g->out_size = ex->size;
		memcpy(g->sha, ex->sha, sizeof(g->sha));
		return 0;
	}
	return write_file_output(b, g, bld, path);
}

/* What the tree holds at the group's key. */
static void probe_tree(struct batch *b, struct group *g)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", b->o->out_dir, g->out_key);
	existing_read(path, b->o->manifest != NULL, &g->there);
	g->there_exists = g->there.valid || !lstat(path, &st);
}

int output_probe(struct batch *b, struct group *g)
{
	char err[1024];
	int ret;

	if (g->probed)
		return 0;
	if ((ret = lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &b->o->store))) {
		group_message(g, true, "%s: %s", b->state.parts[g->main].path, lidia_strerror(ret));
		return ret;
	}
	if (!b->o->bucket) {
		probe_tree(b, g);
	} else if ((ret = publish_probe(b->o->bucket, g->out_key, &g->there, &g->there_exists, err,
					sizeof(err)))) {
		group_message(g, true, "%s: %s", b->state.parts[g->main].path, err);
		g->said = ret == -ECANCELED; /* not sent: print_summary says why, once */
		return ret;
	}
	g->probed = true;
	return 0;
}

void output_survey(struct batch *b)
{
	const char **keys = malloc((b->ngroups + 1) * sizeof(*keys));
	size_t n = 0;

	if (!keys)
		return;
	for (size_t i = 0; i < b->ngroups; i++) {
		struct group *g = &b->groups[i];

		if (!g->done &&
		    !lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &b->o->store))
			keys[n++] = g->out_key;
	}
	publish_survey(b->o->bucket, keys, n);
	free(keys);
}
