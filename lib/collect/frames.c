/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: ranges from chains of inlined frames, for Go and DWARF alike; see frames.h. */
#include "frames.h"
#include "internal.h"

/* One open range of the current chain of frames, and its line rows. */
struct frame_level {
	int32_t node; /* -1 for the function itself */
	uint64_t va;
	const char *file;
	struct lidia_line *rows;
	size_t nrows, cap;
};

void frames_init(struct frames *fr, struct lidia_builder *b, bool lines, bool files)
{
	memset(fr, 0, sizeof(*fr));
	fr->b = b;
	fr->lines = lines;
	fr->files = files;
}

void frames_release(struct frames *fr)
{
	for (size_t i = 0; i < fr->cap_levels; i++)
		free(fr->levels[i].rows);
	free(fr->levels);
	free(fr->chain);
	memset(fr, 0, sizeof(*fr));
}

bool frames_set_depths(struct frame_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].parent >= (int32_t)n || nodes[i].parent == (int32_t)i ||
		    nodes[i].parent < -1)
			return false;
		nodes[i].depth = 0; /* not known yet */
	}
	/*
	 * Each node is walked up to the first one whose depth is known (or the
	 * function), marked -1 on the way, then given its depth on a second walk:
	 * every node is visited a bounded number of times, so a table of n nodes
	 * costs O(n) however its parents chain. Meeting a -1 is a cycle.
	 */
	for (size_t i = 0; i < n; i++) {
		int32_t k = (int32_t)i, base, len = 0;

		for (; k >= 0 && nodes[k].depth == 0; k = nodes[k].parent, len++)
			nodes[k].depth = -1;
		if (k >= 0 && nodes[k].depth < 0)
			return false; /* a cycle */
		base = k < 0 ? 0 : nodes[k].depth;
		if (base + len > FRAMES_MAX_DEPTH)
			return false;
		for (k = (int32_t)i; len > 0; k = nodes[k].parent, len--)
			nodes[k].depth = base + len;
	}
	return true;
}

static int close_level(struct frames *fr, size_t d, uint64_t end)
{
	struct frame_level *l = &fr->levels[d];
	struct lidia_range_desc r = {
		.va = l->va + fr->bias,
		.length = end - l->va,
		.depth = (uint32_t)d,
		.func = d ? fr->nodes[l->node].name : fr->func,
		.file = fr->files ? l->file : NULL,
		.lines = l->rows,
		.line_count = l->nrows,
	};

	if (d) {
		r.call_file = fr->files ? fr->nodes[l->node].call_file : NULL;
		r.call_line = fr->nodes[l->node].call_line;
		fr->inline_ranges++;
	}
	fr->line_rows += l->nrows;
	l->nrows = 0;
	return lidia_builder_add(fr->b, &r);
}

static int open_level(struct frames *fr, size_t d, int32_t node, uint64_t va)
{
	size_t old = fr->cap_levels;
	struct frame_level *l;
	int err;

	if ((err = LIDIA_GROW(fr->levels, d + 1, fr->cap_levels)))
		return err;
	if (fr->cap_levels > old) /* new slots own no rows yet */
		memset(fr->levels + old, 0, (fr->cap_levels - old) * sizeof(*fr->levels));
	l = &fr->levels[d];
	l->node = node;
	l->va = va;
	l->file = NULL;
	l->nrows = 0;
	return 0;
}

static int add_row(struct frame_level *l, uint64_t pc, int32_t line)
{
	uint32_t ln = line > 0 ? (uint32_t)line : 0;
	int err;

	if (l->nrows && l->rows[l->nrows - 1].line == ln)
		return 0; /* the line goes on: no row needed */
	if (l->nrows && l->rows[l->nrows - 1].offset == pc - l->va) {
		l->rows[l->nrows - 1].line = ln;
		return 0;
	}
	if (!l->nrows && !ln)
		return 0; /* nothing known yet: the reader's answer is 0 anyway */
	if ((err = LIDIA_GROW(l->rows, l->nrows + 1, l->cap)))
		return err;
	l->rows[l->nrows++] = (struct lidia_line){ (uint32_t)(pc - l->va), ln };
	return 0;
}

int frames_begin(struct frames *fr, const char *func, const struct frame_node *nodes, size_t nnodes,
		 uint64_t va)
{
	fr->func = func;
	fr->nodes = nodes;
	fr->nnodes = nnodes;
	fr->depth = 0;
	return open_level(fr, 0, -1, va);
}

int frames_segment(struct frames *fr, uint64_t pc, int32_t node, const char *file, int32_t line)
{
	size_t d, same = 0;
	struct frame_level *l;
	int err;

	if (node >= (int32_t)fr->nnodes)
		node = -1;
	d = node < 0 ? 0 : (size_t)fr->nodes[node].depth;
	if ((err = LIDIA_GROW(fr->chain, d + 1, fr->cap_chain)))
		return err;
	for (int32_t k = node, j = (int32_t)d; k >= 0 && j > 0; k = fr->nodes[k].parent, j--)
		fr->chain[j] = k; /* outermost first: chain[1..d] */

	/* Close the levels that leave the chain, open those that join it. */
	while (same < fr->depth && same < d && fr->levels[same + 1].node == fr->chain[same + 1])
		same++;
	while (fr->depth > same) {
		if ((err = close_level(fr, fr->depth, pc)))
			return err;
		fr->depth--;
	}
	while (fr->depth < d) {
		const char *call_file = fr->nodes[fr->chain[fr->depth + 1]].call_file;
		struct frame_level *parent = &fr->levels[fr->depth];

		/*
		 * The frame outside is at the call site, in the call file: where its
		 * range names another file (code from two files in one function), a
		 * new piece starts here, so that its file and call line agree. Nothing
		 * deeper is open, so the pieces still nest.
		 */
		if (call_file && parent->file && pc > parent->va && call_file != parent->file &&
		    strcmp(call_file, parent->file)) {
			int32_t n = parent->node;

			if ((err = close_level(fr, fr->depth, pc)) ||
			    (err = open_level(fr, fr->depth, n, pc)))
				return err;
			parent = &fr->levels[fr->depth];
		}
		/* A frame with no code of its own yet is in its child's call file. */
		if (!parent->file)
			parent->file = call_file;
		fr->depth++;
		if ((err = open_level(fr, fr->depth, fr->chain[fr->depth], pc)))
			return err;
	}

	/* The innermost level owns this segment's file and line. */
	l = &fr->levels[fr->depth];
	/* The same name is mostly the same pointer: strcmp() only for two. */
	if (file && l->file && file != l->file && strcmp(file, l->file) && pc > l->va) {
		/* A new file mid-range (#include of a .c file, //line): a new piece, same frame. */
		int32_t n = l->node;

		if ((err = close_level(fr, fr->depth, pc)) ||
		    (err = open_level(fr, fr->depth, n, pc)))
			return err;
		l = &fr->levels[fr->depth];
	}
	if (file && (!l->file || pc == l->va))
		l->file = file;
	return fr->lines ? add_row(l, pc, line) : 0;
}

int frames_end(struct frames *fr, uint64_t end)
{
	int err;

	while (fr->depth > 0) {
		if ((err = close_level(fr, fr->depth, end)))
			return err;
		fr->depth--;
	}
	return close_level(fr, 0, end);
}
