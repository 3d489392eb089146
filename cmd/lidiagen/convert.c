/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Converting one group (batch_internal.h), on a pool worker: read its
 * images into a builder, then write its output into the tree (or to
 * stdout), unless keep.c keeps the output there. The group's own fields are
 * this worker's; the state, the counts and printing are under b->lock.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	if ((err = lidia_builder_finalize(gr.bld))) {
		lidia_builder_free(gr.bld);
		group_message(g, true, "%s: %s", input, lidia_strerror(err));
		return err;
	}
	g->level = stats_level(&g->st);
	*out = gr.bld;
	return 0;
}

/* Write the output, streamed to the file (or stdout), not built in memory first. */
static int write_output(struct batch *b, struct group *g, struct lidia_builder *bld,
			const char *path)
{
	const struct batch_opts *o = b->o;
	const char *input = b->state.parts[g->main].path;
	int err;

	g->out_size = lidia_builder_file_size(bld);
	if (!strcmp(o->out_dir, "-")) {
		if ((err = lidia_builder_write_fd(bld, STDOUT_FILENO)))
			group_message(g, true, "%s: %s", input, lidia_strerror(err));
		return err;
	}
	if ((err = lidia_store_write(bld, o->out_dir, g->out_key)) ||
	    (o->manifest && (err = sha256_file(path, g->sha))))
		group_message(g, true, "%s: cannot write '%s': %s", input, path,
			      lidia_strerror(err));
	return err;
}

static void converted(struct batch *b, struct group *g, bool replaced)
{
	const struct state_part *mp = &b->state.parts[g->main];
	const char *bin = g->bin >= 0 ? b->state.parts[g->bin].path : NULL;

	g->status = ST_CONVERTED;
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, (int)g->level);
	pthread_mutex_unlock(&b->lock);
	if (!strcmp(b->o->out_dir, "-"))
		return;
	/* "<- binary, debug file" or "<- file" */
	group_message(g, false,
		      "%s/%s <- %s%s%s (%zu functions, %zu inline ranges, %zu line rows)%s",
		      b->o->out_dir, g->out_key, bin ? bin : mp->path, bin ? ", " : "",
		      bin ? mp->path : "", g->st.functions, g->st.inline_ranges, g->st.line_rows,
		      replaced ? " (replaced: it had less)" : "");
}

/* Converted, kept or failed: counted, and its line (and those after it) printed when due. */
static void group_done(struct batch *b, struct group *g)
{
	pthread_mutex_lock(&b->lock);
	if (g->status == ST_CONVERTED)
		b->converted++;
	else if (g->status == ST_KEPT)
		b->kept++;
	else if (g->status == ST_FAILED)
		b->failed++;
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
	int err;

	if (strcmp(o->out_dir, "-")) {
		err = lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &o->store);
		if (err) {
			group_message(g, true, "%s: %s", b->state.parts[g->main].path,
				      lidia_strerror(err));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, g->out_key);
		if (!o->force)
			existing_read(path, o->manifest != NULL, &ex);
		/* Enough already for what the images can give: they are not even read. */
		if (keep_if_enough(b, g, &ex, false))
			goto out;
	}
	if ((err = read_group(b, g, &bld)))
		goto out;
	/* Enough for what they gave (less than predicted: -O0, say). */
	if (keep_if_enough(b, g, &ex, true))
		goto out;
	if (!(err = write_output(b, g, bld, path)))
		converted(b, g, ex.level != LEVEL_NONE);
out:
	if (err)
		g->status = ST_FAILED;
	lidia_builder_free(bld);
	group_done(b, g);
}
