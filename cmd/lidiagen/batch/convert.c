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
#include "part_key.h"
#include "sha256.h"

static int open_part(struct batch *b, struct group *g, ssize_t idx, int slot,
		     struct lidia_elf **out)
{
	const struct state_part *p = &b->state.parts[idx];

	if (!p->member) {
		pthread_mutex_lock(&b->lock);
		input_opened(b, p->input, p->size); /* mapped */
		pthread_mutex_unlock(&b->lock);
		return lidia_elf_open(out, p->path);
	}
	if (!g->data[slot])
		return -ENOENT; /* the member was not found again: the archive changed */
	/* On the heap, or a spilled member's mapping: either is the group's until released. */
	return lidia_elf_open_mem(out, g->data[slot], g->size[slot], p->path);
}

void release_members(struct batch *b, struct group *g)
{
	unsigned char *data[2];
	uint64_t reserved;

	pthread_mutex_lock(&b->lock);
	memcpy(data, g->data, sizeof(data));
	g->data[0] = g->data[1] = NULL;
	reserved = g->reserved;
	g->reserved = 0;
	pthread_mutex_unlock(&b->lock);
	for (int s = 0; s < 2; s++)
		lidia_archive_data_free(data[s], g->size[s], g->mapped[s]);
	budget_release(&b->budget, reserved);
}

/* Reading a group's images into a builder. */
struct group_read {
	struct batch *b;
	struct group *g;
	struct lidia_builder *bld;
	unsigned threads;
	int err;
	ssize_t wrong;	      /* -ESTALE: the part whose image has another key */
	struct image_key got; /* and what that image has */
};

/*
 * The image opened must be the one its part was scheduled for: its key
 * made again, as identify made it. A file or archive changed since, an
 * index or state that names another key (edited, stale, from another tree)
 * would otherwise write one binary's symbols under another's key for good.
 * -ESTALE when it differs (gr->wrong, gr->got say how).
 */
static int check_key(struct group_read *gr, struct lidia_elf *e, ssize_t idx, int slot)
{
	const struct state_part *p = &gr->b->state.parts[idx];
	struct lidia_elf_info info;

	lidia_elf_info(e, &info);
	image_key(gr->b->o->fallback, e, &info, p->at ? gr->g->data[slot] : NULL,
		  p->at ? gr->g->size[slot] : 0, p->at ? NULL : p->path, &gr->got);
	if (gr->got.has_key && !strcmp(gr->got.key, gr->g->key))
		return 0;
	gr->wrong = idx;
	return -ESTALE;
}

/*
 * The threads a group's extraction may use: the workers free when it
 * starts (this one among them), so that many files do not oversubscribe
 * the cores and the last big one gets them all. Counted until done.
 */
static unsigned extraction_starts(struct batch *b)
{
	unsigned workers = b->pool.nthreads ? b->pool.nthreads : 1, threads;

	pthread_mutex_lock(&b->lock);
	threads = b->extracting < workers ? workers - b->extracting : 1;
	b->extracting++;
	pthread_mutex_unlock(&b->lock);
	return threads;
}

static void extraction_ends(struct batch *b)
{
	pthread_mutex_lock(&b->lock);
	b->extracting--;
	pthread_mutex_unlock(&b->lock);
}

static void extract_group(struct group_read *gr)
{
	struct group *g = gr->g;
	struct lidia_elf *elfs[2] = { NULL, NULL };
	struct lidia_extract_opts opts = gr->b->o->extract;
	char dwz_dir[sizeof(gr->b->alt_dir)];
	size_t n = 0;

	opts.threads = gr->threads;
	/* The dwz files of the inputs, wherever they were (dwz_pool.c). */
	if (dwz_pool_dir(gr->b, dwz_dir, sizeof(dwz_dir)))
		opts.dwz_dir = dwz_dir;

	/* The binary first, then the image with the most information. */
	if ((g->bin < 0 || (!(gr->err = open_part(gr->b, g, g->bin, 1, &elfs[n++])) &&
			    !(gr->err = check_key(gr, elfs[0], g->bin, 1)))) &&
	    !(gr->err = open_part(gr->b, g, g->main, 0, &elfs[n++])) &&
	    !(gr->err = check_key(gr, elfs[n - 1], g->main, 0)) &&
	    !(gr->err = lidia_builder_new(&gr->bld)) &&
	    !(gr->err = lidia_extract(gr->bld, elfs, n, &opts, &g->st)) && g->ask_debuginfod)
		gr->err = extract_fetched(gr->b, g, elfs, n, &opts, &gr->bld);
	/* The images are done with: their pages go before the tables are written. */
	lidia_elf_close(elfs[0]);
	lidia_elf_close(elfs[1]);
}

/* The one line of a group whose image has another key than it was scheduled for. */
static void wrong_key(struct batch *b, struct group *g, const struct group_read *gr)
{
	const char *path = b->state.parts[gr->wrong].path;
	const struct image_key *k = &gr->got;

	if (k->has_key)
		group_message(g, true,
			      "%s: build ID %s where %s was expected (the input or the index "
			      "changed?), nothing written",
			      path, k->key, g->key);
	else
		group_message(g, true,
			      "%s: %s%s where %s was expected (the input or the index changed?), "
			      "nothing written",
			      path, k->build_id[0] ? "degenerate build ID " : "no build ID",
			      k->build_id, g->key);
}

/*
 * The group's images read into a finalized builder (*out), and g->level set.
 * On failure the group's message says why.
 */
static int read_group(struct batch *b, struct group *g, struct lidia_builder **out)
{
	const char *input = b->state.parts[g->main].path;
	struct group_read gr = { .b = b, .g = g, .wrong = -1 };
	int err;

	gr.threads = extraction_starts(b);
	extract_group(&gr);
	extraction_ends(b);
	if (gr.err == -ESTALE && gr.wrong >= 0) {
		wrong_key(b, g, &gr);
		return gr.err;
	}
	if (gr.err == LIDIA_E_ELF_ADDRESSES) {
		lidia_builder_free(gr.bld);
		settle_mixed(b, g);
		return gr.err;
	}
	if (gr.err) {
		lidia_builder_free(gr.bld);
		group_message(g, true, "%s: %s", input, lidia_strerror(gr.err));
		return gr.err;
	}
	release_members(b, g);
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
	       !g->st.used_minidebuginfo && !g->st.found_debug_file && !g->fetched_from;
}

/*
 * An output there, written or found with the same bytes (or as much, put
 * there meanwhile by another run): the state remembers what the inputs
 * gave, and the verdict says how it got there.
 */
static void settle_output(struct batch *b, struct group *g, enum verdict v, enum level gave,
			  bool gave_dynsym)
{
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, (int)gave, gave_dynsym);
	pthread_mutex_unlock(&b->lock);
	warn_dynsym_only(b, g, gave_dynsym);
	decide(b, g, v, gave);
}

/* --dry-run: what would be written, by what the inputs give (level: read, or predicted). */
static void plan(struct batch *b, struct group *g, enum level level)
{
	g->level = level;
	decide(b, g, g->there_exists ? V_WOULD_REPLACE : V_WOULD_WRITE, level);
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
	else if (g->status == ST_DYNSYM_ONLY)
		b->dynsym_only++;
	else if (g->status == ST_MIXED)
		b->mixed++;
	else if (g->status == ST_FAILED)
		b->failed++;
	else if (g->status == ST_PLANNED) {
		b->planned++;
		b->planned_over += g->there_exists;
	}
	b->groups_done++;
	g->done = true;
	print_done(b);
	pthread_mutex_unlock(&b->lock);
}

/* Write the output read into bld, or find it there already; then settle the group. */
static int write_group(struct batch *b, struct group *g, struct lidia_builder *bld,
		       bool gave_dynsym)
{
	static const enum verdict verdict_of[] = {
		[WRITTEN_SAME] = V_SAME,
		[WRITTEN_KEPT_MORE] = V_RACED_MORE,
		[WRITTEN_KEPT_EQUAL] = V_RACED_EQUAL,
	};
	enum level gave = g->level;
	enum written how;
	int err;

	if (!strcmp(b->o->out_dir, "-")) {
		snprintf(g->out_key, sizeof(g->out_key), "-"); /* the manifest's output */
		if (!(err = output_write_stdout(b, g, bld)))
			settle_output(b, g, V_WRITTEN, gave, gave_dynsym);
		return err;
	}
	if ((err = output_write(b, g, bld, &how)))
		return err;
	if (how != WRITTEN)
		settle_output(b, g, verdict_of[how], gave, gave_dynsym);
	else
		settle_output(b, g, g->there_exists ? V_REPLACED : V_WRITTEN, gave, gave_dynsym);
	return 0;
}

/* --index: an input the group reads is no longer the indexed file (shard_inputs.c said so). */
static int changed_input(struct batch *b, struct group *g)
{
	ssize_t idx[2] = { g->main, g->bin };

	for (int k = 0; k < 2; k++) {
		const struct state_part *p = idx[k] >= 0 ? &b->state.parts[idx[k]] : NULL;

		if (p && b->state.inputs[p->input].changed) {
			group_message(g, true, "%s: changed since the index; index it again",
				      b->state.inputs[p->input].path);
			g->said =
				true; /* one line for the input (shard_inputs.c), not one a build ID */
			return -ESTALE;
		}
	}
	return 0;
}

void convert_group(struct batch *b, struct group *g)
{
	const struct batch_opts *o = b->o;
	struct lidia_builder *bld = NULL;
	bool to_stdout = !strcmp(o->out_dir, "-");
	int err = 0;

	pthread_mutex_lock(&b->lock);
	progress_input(b, b->state.parts[g->main].path);
	pthread_mutex_unlock(&b->lock);
	if ((err = changed_input(b, g)))
		goto out;
	if (!to_stdout) {
		if ((err = output_probe(b, g)))
			goto out;
		/* Enough already for what the images can give: they are not even read. */
		if (settle_unread(b, g, &g->there))
			goto out;
	}
	if ((err = read_group(b, g, &bld))) {
		if (err == LIDIA_E_ELF_ADDRESSES)
			err = 0; /* settled: a warning, nothing written */
		goto out;
	}
	g->known_dynsym = dynsym_only(g);
	/* Enough for what they gave (less than predicted: -O0, say). */
	if (!o->force && keep_if_enough(b, g, &g->there, true))
		goto out;
	/* No function: a file would shadow the profiler's other sources for nothing. */
	if (!lidia_builder_count(bld)) {
		settle_nothing(b, g);
		goto out;
	}
	/* Only exported symbols: the profiler would make as much itself, and look no further. */
	if (g->known_dynsym && !o->allow_dynsym_only) {
		settle_dynsym_only(b, g);
		goto out;
	}
	if (o->dry_run) {
		plan(b, g, g->level);
		goto out;
	}
	err = write_group(b, g, bld, g->known_dynsym);
out:
	if (err)
		g->status = ST_FAILED;
	lidia_builder_free(bld);
	output_remember(b, g);
	group_done(b, g);
}
