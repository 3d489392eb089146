/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: the functions of a Go pclntab (pclntab.c) into the builder, as
 * the runtime's own traceback sees them: every function with its name and
 * extent, its inline tree as depth > 0 ranges and its pc→file and pc→line
 * tables as line tables.
 */
#include <stdio.h>

#include "builder.h"
#include "frames.h"
#include "go_extract.h"
#include "name_blocks.h"

/*
 * A function name as the runtime prints it (funcNameForPrint, Go 1.21+):
 * instantiation shapes between the first '[' and the last ']' become
 * "[...]". Go 1.18-1.20 linkers already wrote names so; this makes every
 * version's names agree with the runtime's frames and pprof's profiles.
 */
static const char *print_name(struct name_block **blocks, const char *name)
{
	const char *open = strchr(name, '['), *close;
	char buf[512];

	if (!open || !(close = strrchr(name, ']')) || close < open ||
	    (close - open == 4 && !strncmp(open, "[...]", 5)))
		return name;
	if ((size_t)(open - name) + 5 + strlen(close + 1) + 1 > sizeof(buf))
		return name;
	snprintf(buf, sizeof(buf), "%.*s[...]%s", (int)(open - name), name, close + 1);
	return name_blocks_str(blocks, buf, NULL) ?: name;
}

struct scratch {
	struct pc_runs file, line, inl;
	uint64_t budget; /* pc-value steps and inline nodes left to decode (see gotab_pcvalue) */
	struct frame_node *nodes;
	size_t cap_nodes;
	struct frames fr;
	struct name_block *names; /* names as printed, for the current function */
};

/*
 * Cut the parents that the runtime's inline unwinder would follow forever.
 * A parent is the node at parentPc, and Go 1.20+ keeps no other: where the
 * compiler set no parentPc (a frameless leaf whose inline marks all folded
 * away, such as an init that stores constants through inlined constructors:
 * Go 1.22-1.25), it is 0, and the node at the entry may be the node itself
 * or another whose parent is again that one. The runtime would repeat such
 * a frame to the end of its buffer; here a node whose chain never reaches
 * the function keeps its own frame and is called from the function, at an
 * unknown line. Chains that end keep exactly the runtime's parents. O(n):
 * depth marks 0 unseen, -1 on the walk, 1 ends, 2 loops.
 */
static void cut_loops(struct frame_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		nodes[i].depth = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t k = (int32_t)i, fate;

		for (; k >= 0 && nodes[k].depth == 0; k = nodes[k].parent)
			nodes[k].depth = -1;
		fate = k < 0 || nodes[k].depth == 1 ? 1 : 2; /* met on this walk: a loop */
		for (k = (int32_t)i; k >= 0 && nodes[k].depth == -1; k = nodes[k].parent)
			nodes[k].depth = fate;
	}
	for (size_t i = 0; i < n; i++)
		if (nodes[i].depth == 2)
			nodes[i] = (struct frame_node){ .name = nodes[i].name, .parent = -1 };
}

/*
 * The inline nodes of f: names from the tree, and parent, call file and call
 * line from the tables at parentPc, as the runtime's inline unwinder finds them.
 */
static int read_nodes(const struct gotab *t, const struct gofunc *f, struct scratch *s,
		      size_t *nnodes)
{
	int32_t max = -1;
	uint64_t tree;
	int err;

	*nnodes = 0;
	s->inl.n = 0;
	if (!gotab_inltree(t, f, &tree))
		return 0;
	if ((err = gotab_pcvalue(t, gotab_pcdata(t, f, t->inl_pcdata), f->entry, f->end, &s->inl,
				 &s->budget)))
		return err;
	for (size_t i = 0; i < s->inl.n; i++)
		if (s->inl.v[i].val > max)
			max = s->inl.v[i].val;
	if (max < 0)
		return 0;
	/*
	 * Every node is a run's own or an ancestor of one: more nodes than
	 * FRAMES_MAX_DEPTH a run is a bad table. (Not one node a byte: calls
	 * folded into their callee's code keep a node and cover no pc.)
	 */
	if ((uint64_t)max >= (uint64_t)s->inl.n * FRAMES_MAX_DEPTH || (uint64_t)max >= s->budget)
		return LIDIA_E_GO;
	s->budget -= (uint64_t)max + 1;
	/* The last entry must be readable before room is made for all of them. */
	if (!t->read_va ||
	    !t->read_va(t->ctx, tree + (uint64_t)max * gotab_inl_size(t), gotab_inl_size(t)))
		return LIDIA_E_GO;
	if ((err = LIDIA_GROW(s->nodes, (size_t)max + 1, s->cap_nodes)))
		return err;
	for (int32_t i = 0; i <= max; i++) {
		struct frame_node *n = &s->nodes[i];
		uint32_t parent_pc;
		uint64_t pc;
		int32_t ln;

		if (!gotab_inl(t, tree, i, &n->name, &parent_pc))
			return LIDIA_E_GO;
		n->name = print_name(&s->names, n->name);
		pc = f->entry + parent_pc;
		n->parent = pc_runs_value(&s->inl, pc);
		if (n->parent < -1)
			return LIDIA_E_GO;
		ln = pc_runs_value(&s->line, pc);
		n->call_line = ln > 0 ? (uint32_t)ln : 0;
		n->call_file = gotab_file(t, f, pc_runs_value(&s->file, pc));
	}
	cut_loops(s->nodes, (size_t)max + 1);
	if (!frames_set_depths(s->nodes, (size_t)max + 1))
		return LIDIA_E_GO;
	*nnodes = (size_t)max + 1;
	return 0;
}

/* Emit one function: its depth-0 range, its inlined calls, their lines. */
static int extract_func(const struct extract_ctx *x, const struct gotab *t, const struct gofunc *f,
			struct scratch *s)
{
	size_t ifile = 0, iline = 0, iinl = 0, nnodes = 0;
	uint64_t pc = f->entry;
	int err;

	/* Lines and files are needed for call sites even when not kept. */
	if ((err = gotab_pcvalue(t, x->files || x->inlines ? f->pcfile : 0, f->entry, f->end,
				 &s->file, &s->budget)) ||
	    (err = gotab_pcvalue(t, x->lines || x->inlines ? f->pcln : 0, f->entry, f->end,
				 &s->line, &s->budget)))
		return err;
	s->inl.n = 0;
	if (x->inlines && (err = read_nodes(t, f, s, &nnodes)))
		return err;
	if ((err = frames_begin(&s->fr, print_name(&s->names, f->name), s->nodes, nnodes,
				f->entry)))
		return err;
	/* Sweep the three tables together, one elementary run at a time. */
	while (pc < f->end) {
		uint64_t end = f->end;
		int32_t file = -1, line = -1, inl = -1;

		while (ifile < s->file.n && s->file.v[ifile].end <= pc)
			ifile++;
		while (iline < s->line.n && s->line.v[iline].end <= pc)
			iline++;
		while (iinl < s->inl.n && s->inl.v[iinl].end <= pc)
			iinl++;
		if (ifile < s->file.n) {
			file = s->file.v[ifile].val;
			end = s->file.v[ifile].end < end ? s->file.v[ifile].end : end;
		}
		if (iline < s->line.n) {
			line = s->line.v[iline].val;
			end = s->line.v[iline].end < end ? s->line.v[iline].end : end;
		}
		if (iinl < s->inl.n) {
			inl = s->inl.v[iinl].val;
			end = s->inl.v[iinl].end < end ? s->inl.v[iinl].end : end;
		}
		err = frames_segment(&s->fr, pc, inl, x->files ? gotab_file(t, f, file) : NULL,
				     line);
		if (err)
			return err;
		pc = end;
	}
	return frames_end(&s->fr, f->end);
}

int gotab_extract(struct extract_ctx *x, const struct gotab *t)
{
	struct lidia_builder *b = x->b;
	struct scratch s = { 0 };
	int err = 0;

	/*
	 * A real table decodes in about one step per two bytes of it (each
	 * function its own tables, or identical ones); many times that is a
	 * corrupt one, whose later functions keep their names and extents only.
	 */
	s.budget = 16 * t->size + (1u << 20);
	frames_init(&s.fr, b, x->lines, x->files);
	for (uint64_t i = 0; i < t->nfunc && !err; i++) {
		size_t before = lidia_builder_count(b);
		size_t inline_ranges = s.fr.inline_ranges, line_rows = s.fr.line_rows;
		struct gofunc f;

		if (!gotab_func(t, i, &f)) {
			x->st.bad_functions++;
			continue;
		}
		if (f.end == f.entry)
			continue;
		name_blocks_reset(&s.names, false);
		err = extract_func(x, t, &f, &s);
		if (err == LIDIA_E_GO) {
			/*
			 * A malformed function costs its inline frames and lines only:
			 * take back what it added and keep its name and extent.
			 */
			struct lidia_range_desc r = { .va = f.entry,
						      .length = f.end - f.entry,
						      .func = print_name(&s.names, f.name) };

			builder_truncate(b, before);
			/* Its counts too: they feed the keep decision (what the output holds). */
			s.fr.inline_ranges = inline_ranges;
			s.fr.line_rows = line_rows;
			x->st.bad_functions++;
			err = lidia_builder_add(b, &r);
		}
		if (!err)
			err = intervals_add(&x->covered, f.entry, f.end);
		if (!err) {
			x->st.functions++;
			x->st.go_functions++;
		}
	}
	x->st.inline_ranges += s.fr.inline_ranges;
	x->st.line_rows += s.fr.line_rows;
	free(s.file.v);
	free(s.line.v);
	free(s.inl.v);
	free(s.nodes);
	name_blocks_reset(&s.names, true);
	frames_release(&s.fr);
	return err;
}
