/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_FRAMES_H
#define LIDIA_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lidia.h"

/*
 * Turning a function's code, described address by address as a chain of
 * inlined frames with a file and line, into lidia ranges (spec sections 4
 * and 5): a depth-0 range for the function, one range per run of addresses
 * that share a frame at each depth (so ranges nest by construction), and
 * line rows in the range that is innermost at each address. Both the Go
 * pclntab and DWARF extractors describe functions this way.
 */

/* An inlined call: a frame of depth >= 1 inside a function. */
struct frame_node {
	const char *name;
	const char *call_file; /* where the frame just outside called it */
	uint32_t call_line;
	int32_t parent; /* index of the enclosing node; -1: the function */
	int32_t depth;	/* 1 + the parent's depth */
};

struct frame_level;

struct frames {
	struct lidia_builder *b;
	bool lines, files;
	const char *func;
	const struct frame_node *nodes;
	size_t nnodes;
	struct frame_level *levels;
	size_t cap_levels, depth;
	int32_t *chain;
	size_t cap_chain;
	size_t inline_ranges, line_rows;
	uint64_t bias; /* added to every range's address (extract_ctx's) */
};

void frames_init(struct frames *fr, struct lidia_builder *b, bool lines, bool files);
void frames_release(struct frames *fr);

/*
 * Inline frames nest at most this deep: deeper trees are corrupt (real ones
 * stay under a few dozen), and each code segment costs its depth to emit.
 */
#define FRAMES_MAX_DEPTH 256

/*
 * Set each node's depth from its parents, in O(n); false when a parent index
 * is out of range, the parents make a cycle or a chain is deeper than
 * FRAMES_MAX_DEPTH (the function's inline tree is bad).
 */
bool frames_set_depths(struct frame_node *nodes, size_t n);

/* Start a function named func at va; nodes (with depths set) stay valid until frames_end. */
int frames_begin(struct frames *fr, const char *func, const struct frame_node *nodes, size_t nnodes,
		 uint64_t va);

/*
 * The code from pc up to the next segment (or the end) has innermost frame
 * node (-1: the function itself), and its own file and line (NULL, <= 0:
 * unknown). Segments come in address order, each starting where the last ended.
 */
int frames_segment(struct frames *fr, uint64_t pc, int32_t node, const char *file, int32_t line);

/* Close the function at end (exclusive). */
int frames_end(struct frames *fr, uint64_t end);

#endif
