/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Converting one group (batch_internal.h), on a pool worker: read its
 * images into a builder, then write its output into the tree (or to
 * stdout), unless keep.c keeps the output there, the output there has the
 * very bytes (it is not rewritten, and keeps its date), or the images give
 * no function (nothing is written). The group's own fields are this
 * worker's; the state, the counts and printing are under b->lock.
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
#include "guard.h"
#include "sha256.h"

static int open_part(struct batch *b, struct group *g, ssize_t idx, int slot,
		     struct lidia_elf **out)
{
	const struct state_part *p = &b->state.parts[idx];

	if (!p->member)
		return lidia_elf_open(out, p->path);
	if (!g->data[slot])
		return -ENOENT; /* the member was not found again: the archive changed */
	return lidia_elf_open_mem(out, g->data[slot], g->size[slot], p->path);
}

/* Reading a group's images into a builder (under guard_run). */
struct group_read {
	struct batch *b;
	struct group *g;
	struct lidia_builder *bld;
	int err;
};

static void extract_group(void *arg)
{
	struct group_read *gr = arg;
	struct group *g = gr->g;
	struct lidia_elf *elfs[2] = { NULL, NULL };
	size_t n = 0;

	/* The binary first, then the image with the most information. */
	if ((g->bin < 0 || !(gr->err = open_part(gr->b, g, g->bin, 1, &elfs[n++]))) &&
	    !(gr->err = open_part(gr->b, g, g->main, 0, &elfs[n++])) &&
	    !(gr->err = lidia_builder_new(&gr->bld)))
		gr->err = lidia_extract(gr->bld, elfs, n, &gr->b->o->extract, &g->st);
	/* The images are done with: their pages go before the tables are written. */
	lidia_elf_close(elfs[0]);
	lidia_elf_close(elfs[1]);
}

/*
 * The group's images read into a finalized builder (*out), and g->level set.
 * On failure the group's message says why.
 */
static int read_group(struct batch *b, struct group *g, struct lidia_builder **out)
{
	const char *input = b->state.parts[g->main].path;
	struct group_read gr = { .b = b, .g = g };
	int err;

	if (guard_run(extract_group, &gr)) {
		/* What the reading had made is abandoned (guard.h). */
		group_message(g, true,
			      "%s: changed while being read (truncated by another process?)",
			      input);
		return -EFAULT;
	}
	if (gr.err) {
		lidia_builder_free(gr.bld);
		group_message(g, true, "%s: %s", input, lidia_strerror(gr.err));
		return gr.err;
	}
	free(g->data[0]);
	free(g->data[1]);
	g->data[0] = g->data[1] = NULL;
	pthread_mutex_lock(&b->lock);
	b->bytes += b->state.parts[g->main].size + (g->bin >= 0 ? b->state.parts[g->bin].size : 0);
	pthread_mutex_unlock(&b->lock);
	if ((err = lidia_builder_finalize(gr.bld))) {
		lidia_builder_free(gr.bld);
		group_message(g, true, "%s: %s", input, lidia_strerror(err));
		return err;
	}
	g->level = stats_level(&g->st);
	*out = gr.bld;
	return 0;
}

/*
 * Whether the images gave .dynsym's symbols alone: no .symtab, DWARF or Go
 * in them, and none found beside them (a debug file, MiniDebugInfo).
 */
static bool dynsym_only(const struct group *g)
{
	return g->poor && !g->st.dwarf_functions && !g->st.go_functions &&
	       !g->st.used_minidebuginfo && !g->st.found_debug_file;
}

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
static int write_stdout(struct batch *b, struct group *g, struct lidia_builder *bld)
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
static int write_output(struct batch *b, struct group *g, struct lidia_builder *bld,
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

/*
 * An output there, written or found with the same bytes: the state
 * remembers what the inputs gave, and its -v line is "<- binary, debug
 * file" or "<- file", with the output's counts and note.
 */
static void settle_output(struct batch *b, struct group *g, enum status status, bool gave_dynsym,
			  const char *note)
{
	const struct state_part *mp = &b->state.parts[g->main];
	const char *bin = g->bin >= 0 ? b->state.parts[g->bin].path : NULL;

	g->status = status;
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, (int)g->level, gave_dynsym);
	pthread_mutex_unlock(&b->lock);
	warn_dynsym_only(b, g, gave_dynsym);
	if (!strcmp(b->o->out_dir, "-"))
		return;
	group_message(g, false,
		      "%s/%s <- %s%s%s (%zu functions, %zu inline ranges, %zu line rows)%s",
		      b->o->out_dir, g->out_key, bin ? bin : mp->path, bin ? ", " : "",
		      bin ? mp->path : "", g->counts.functions, g->counts.inline_ranges,
		      g->counts.line_rows, note);
}

/* Kept because the output there (read as ex) has the very bytes: the manifest describes it. */
static void unchanged(struct batch *b, struct group *g, const struct existing *ex, bool gave_dynsym)
{
	g->counts = ex->counts;
	g->level = ex->level;
	g->out_size = ex->size;
	memcpy(g->sha, ex->sha, sizeof(g->sha));
	settle_output(b, g, ST_KEPT, gave_dynsym, " (unchanged: the same bytes, not rewritten)");
}

/* What the -v line says of an output written over another (ex, if it was readable). */
static const char *replaced_note(const struct existing *ex, const struct group *g)
{
	if (!ex->valid)
		return " (replaced: it was no valid lidia file)";
	return ex->level < g->level ? " (replaced: it had less)" : " (replaced)";
}

/* Converted, kept or failed: counted, and its lines (and those after it) printed when due. */
static void group_done(struct batch *b, struct group *g)
{
	pthread_mutex_lock(&b->lock);
	if (g->status == ST_CONVERTED)
		b->converted++;
	else if (g->status == ST_REPLACED)
		b->replaced++;
	else if (g->status == ST_KEPT)
		b->kept++;
	else if (g->status == ST_NOTHING)
		b->nothing++;
	else if (g->status == ST_FAILED)
		b->failed++;
	b->groups_done++;
	g->done = true;
	print_done(b);
	pthread_mutex_unlock(&b->lock);
}

void convert_group(struct batch *b, struct group *g)
{
	const struct batch_opts *o = b->o;
	struct existing ex = { .level = LEVEL_NONE };
	struct lidia_builder *bld = NULL;
	char path[PATH_MAX] = "";
	bool to_stdout = !strcmp(o->out_dir, "-"), gave_dynsym, existed = false;
	struct stat st;
	int err;

	pthread_mutex_lock(&b->lock);
	progress_input(b, b->state.parts[g->main].path);
	pthread_mutex_unlock(&b->lock);
	if (!to_stdout) {
		err = lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &o->store);
		if (err) {
			group_message(g, true, "%s: %s", b->state.parts[g->main].path,
				      lidia_strerror(err));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, g->out_key);
		existing_read(path, o->manifest != NULL, &ex);
		existed = ex.valid || !lstat(path, &st);
		/* Enough already for what the images can give: they are not even read. */
		if (settle_unread(b, g, &ex))
			goto out;
	}
	if ((err = read_group(b, g, &bld)))
		goto out;
	gave_dynsym = g->known_dynsym = dynsym_only(g);
	/* Enough for what they gave (less than predicted: -O0, say). */
	if (!o->force && keep_if_enough(b, g, &ex, true))
		goto out;
	/* No function: a file would shadow the profiler's other sources for nothing. */
	if (!lidia_builder_count(bld)) {
		settle_nothing(b, g);
		goto out;
	}
	if (to_stdout) {
		snprintf(g->out_key, sizeof(g->out_key), "-"); /* the manifest's output */
		if (!(err = write_stdout(b, g, bld)))
			settle_output(b, g, ST_CONVERTED, gave_dynsym, "");
	} else if (ex.valid && same_bytes(path, bld)) {
		unchanged(b, g, &ex, gave_dynsym);
	} else if (!(err = write_output(b, g, bld, path))) {
		settle_output(b, g, existed ? ST_REPLACED : ST_CONVERTED, gave_dynsym,
			      existed ? replaced_note(&ex, g) : "");
	}
out:
	if (err)
		g->status = ST_FAILED;
	lidia_builder_free(bld);
	group_done(b, g);
}
