/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a group's output goes (batch_internal.h): a tree on disk, the
 * bucket (publish.h), or stdout. What is already there is probed once,
 * before the images are read; writing fills the group's counts, level,
 * size and sha256 from the bytes that went out, as `info` would count
 * them. An output with the very bytes already there is not written again:
 * in the tree it keeps its date, in the bucket no byte is sent. Another
 * run may write the same key at the same time: the decision is made again
 * when writing, with no writer between (in a tree under the key's lock,
 * in a bucket by conditional writes), and an output holding as much that
 * came meanwhile is kept, so the stronger one stays whoever comes last.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_internal.h"
#include "md5.h"
#include "publish.h"
#include "sha256.h"
#include "usage.h"

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

/* Whether the file open as fd (< 0: none) holds the very bytes the builder would write. */
static bool same_bytes(int fd, struct lidia_builder *bld)
{
	struct compare *c;
	struct stat st;
	bool same = false;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != lidia_builder_file_size(bld) || lseek(fd, 0, SEEK_SET) ||
	    !(c = malloc(sizeof(*c))))
		return false;
	c->fd = fd;
	same = !lidia_builder_write(bld, compare_sink, c);
	free(c);
	return same;
}

/*
 * A store error said: a symbolic link in the tree is named (nothing below
 * -o is reached through one, lidia.h), anything else with what was done.
 */
static int store_failed(struct batch *b, struct group *g, const char *doing, const char *path,
			int err)
{
	const char *input = b->state.parts[g->main].path;
	size_t at;

	if (err != LIDIA_E_SYMLINK) {
		group_message(g, true, "%s: cannot %s '%s': %s", input, doing, path,
			      lidia_strerror(err));
		return err;
	}
	at = lidia_store_symlink_at(b->o->out_dir, g->out_key);
	group_message(g, true, "%s: %s/%.*s: %s", input, b->o->out_dir,
		      (int)(at ? at : strlen(g->out_key)), g->out_key, lidia_strerror(err));
	return err;
}

/* What is at the group's key: an fd, or -errno (-ENOENT: nothing) or LIDIA_E_SYMLINK. */
static int open_key(struct batch *b, struct group *g)
{
	return lidia_store_open(b->o->out_dir, g->out_key);
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

/* Threads for reading an output back: a second one when the run has more than one. */
static unsigned read_threads(const struct batch *b)
{
	return b->pool.nthreads > 1 ? 2 : 1;
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
	int err, fd;

	if ((err = lidia_store_write(bld, b->o->out_dir, g->out_key)))
		return store_failed(b, g, "write", path, err);
	fd = open_key(b, g);
	existing_read_fd(fd, b->o->manifest != NULL, read_threads(b), &now);
	if (fd >= 0)
		close(fd);
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

/* g describes the output there (ex), not the one it would have written. */
static void describe_there(struct group *g, const struct existing *ex)
{
	g->counts = ex->counts;
	g->level = ex->level;
	g->out_size = ex->size;
	memcpy(g->sha, ex->sha, sizeof(g->sha));
}

/* An output holding as much that another run put there meanwhile is kept. */
static bool kept_meanwhile(struct group *g, const struct existing *there, enum written *how)
{
	if (!there->valid || !keep_enough(there->level, g->level))
		return false;
	*how = there->level > g->level ? WRITTEN_KEPT_MORE : WRITTEN_KEPT_EQUAL;
	describe_there(g, there);
	return true;
}

/* Once per run: the server ignores conditional writes (publish.c found out). */
static void say_notice(struct batch *b)
{
	char msg[1024], *line, *save;

	if (!publish_notice(b->o->bucket, msg, sizeof(msg)))
		return;
	pthread_mutex_lock(&b->lock);
	end_progress(b);
	for (line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		warning(NULL, "%s", line);
	pthread_mutex_unlock(&b->lock);
}

/* The bucket: built in memory (one PUT), sent unless the bucket has these bytes already. */
static int publish_output(struct batch *b, struct group *g, struct lidia_builder *bld,
			  const struct existing *ex, enum written *how)
{
	struct existing now, there = *ex; /* ex is g->there: a copy, changed by another run */
	enum publish_outcome out = PUBLISH_WRITTEN;
	char err[1024];
	void *buf = NULL;
	size_t size;
	int ret = 0;

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
	*how = !b->o->force && ex->valid && !strcmp(ex->sha, now.sha) ? WRITTEN_SAME : WRITTEN;
	if (*how == WRITTEN) {
		ret = publish_write(b->o->bucket, g->out_key, buf, size, &now, &g->there_exists,
				    &there, &out, err, sizeof(err));
		say_notice(b);
		g->there = there; /* what it went over, for the -v line */
	}
	if (ret) {
		group_message(g, true, "%s: cannot upload: %s", b->state.parts[g->main].path, err);
		g->said = ret == -ECANCELED; /* not sent: print_summary says why, once */
	} else if (out == PUBLISH_WRITTEN && *how == WRITTEN) {
		md5_hex(buf, size, g->put_etag); /* S3's ETag of one PUT: what a listing shows */
	}
	free(buf);
	if (ret)
		return ret;
	if (out != PUBLISH_WRITTEN && kept_meanwhile(g, &there, how))
		return 0;
	describe_there(g, &now);
	return 0;
}

/*
 * The tree, under the key's lock: if another run renamed a file there
 * since the probe, what it holds decides again (and becomes g->there,
 * what the output goes over). ex is g->there.
 */
static int write_tree(struct batch *b, struct group *g, struct lidia_builder *bld,
		      struct existing *ex, enum written *how)
{
	struct lidia_store_lock *lock;
	char path[PATH_MAX];
	bool changed;
	int err = 0, fd;

	snprintf(path, sizeof(path), "%s/%s", b->o->out_dir, g->out_key);
	if ((err = lidia_store_lock(&lock, b->o->out_dir, g->out_key)))
		return store_failed(b, g, "lock", path, err);
	if ((fd = open_key(b, g)) == LIDIA_E_SYMLINK) {
		lidia_store_unlock(lock);
		return store_failed(b, g, "write", path, fd);
	}
	if ((changed = !existing_same_fd(fd, ex))) {
		existing_read_fd(fd, b->o->manifest != NULL, read_threads(b), ex);
		g->there_exists = fd >= 0;
	}
	*how = ex->valid && same_bytes(fd, bld) ? WRITTEN_SAME : WRITTEN;
	if (fd >= 0)
		close(fd);
	if (*how == WRITTEN_SAME)
		describe_there(g, ex);
	else if (!changed || !kept_meanwhile(g, ex, how))
		err = write_file_output(b, g, bld, path);
	lidia_store_unlock(lock);
	return err;
}

int output_write(struct batch *b, struct group *g, struct lidia_builder *bld, enum written *how)
{
	if (b->o->bucket)
		return publish_output(b, g, bld, &g->there, how);
	return write_tree(b, g, bld, &g->there, how);
}
/* What the tree holds at the group's key; a link on the way fails the group. */
static int probe_tree(struct batch *b, struct group *g)
{
	int fd = open_key(b, g);

	if (fd == LIDIA_E_SYMLINK)
		return store_failed(b, g, "read", "", fd);
	existing_read_fd(fd, b->o->manifest != NULL, read_threads(b), &g->there);
	g->there_exists = fd >= 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

/* What --state recorded at the group's key in the bucket, as publish_probe takes it; NULL: nothing. */
static const struct existing *remembered(const struct batch *b, const struct group *g,
					 struct existing *ex)
{
	const struct state_remote *r = state_remote(b->state.saved, g->key);

	if (!r || r->level < LEVEL_NONE || r->level > LEVEL_INLINES)
		return NULL;
	*ex = (struct existing){
		.valid = r->valid,
		.level = (enum level)r->level,
		.counts = { r->functions, r->inline_ranges, r->line_rows },
		.size = r->size,
	};
	snprintf(ex->etag, sizeof(ex->etag), "%s", r->etag);
	snprintf(ex->sha, sizeof(ex->sha), "%s", r->sha);
	return ex;
}

int output_probe(struct batch *b, struct group *g)
{
	struct existing known;
	char err[1024];
	int ret;

	if (g->probed)
		return 0;
	if ((ret = lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &b->o->store))) {
		group_message(g, true, "%s: %s", b->state.parts[g->main].path, lidia_strerror(ret));
		return ret;
	}
	if (!b->o->bucket) {
		if ((ret = probe_tree(b, g)))
			return ret;
	} else if ((ret = publish_probe(b->o->bucket, g->out_key, remembered(b, g, &known),
					&g->there, &g->there_exists, err, sizeof(err)))) {
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

/* What the state keeps of ex, the object whose ETag is etag (quotes or not). */
static void remote_of(const struct existing *ex, const char *etag, struct state_remote *r)
{
	etag += *etag == '"';
	*r = (struct state_remote){
		.valid = ex->valid,
		.level = (int)ex->level,
		.functions = ex->counts.functions,
		.inline_ranges = ex->counts.inline_ranges,
		.line_rows = ex->counts.line_rows,
		.size = ex->size,
	};
	snprintf(r->etag, sizeof(r->etag), "%.*s", (int)strcspn(etag, "\""), etag);
	snprintf(r->sha, sizeof(r->sha), "%s", ex->sha);
}

void output_remember(struct batch *b, struct group *g)
{
	struct state_remote r;

	if (!b->o->bucket || b->o->dry_run || g->status == ST_FAILED || g->status == ST_PENDING)
		return;
	if (g->put_etag[0]) {
		/* Written now: it holds what was made. */
		struct existing made = {
			.valid = true, .level = g->level, .counts = g->counts, .size = g->out_size
		};

		memcpy(made.sha, g->sha, sizeof(made.sha));
		remote_of(&made, g->put_etag, &r);
	} else if (g->there_exists && g->there.etag[0]) {
		remote_of(&g->there, g->there.etag, &r); /* left there: as it was seen */
	} else {
		return;
	}
	pthread_mutex_lock(&b->lock);
	state_set_remote(&b->state, g->key, &r);
	pthread_mutex_unlock(&b->lock);
}
