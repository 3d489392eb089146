/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_INFLATE_SPLIT_H
#define LIDIA_INFLATE_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inflate_marked.h"

/*
 * One big zlib stream inflated on two threads at once. A block boundary is
 * found in its second part; inflate_marked.c decodes from there on one
 * thread while libdeflate inflates the first part on the other, told that
 * the stream ends at the boundary: a last, empty block is written over the
 * bits there, and put back once it is done (the stream's bytes must be
 * ours to write, for that while: no other thread may read them). libdeflate
 * must end exactly there, so the boundary is one of the stream's; the
 * second part's markers are then resolved from the first part's last 32
 * KiB, and the whole is held to the stream's size and Adler-32. When
 * anything is in doubt (no boundary found, libdeflate not ending there,
 * data inflate_marked.c refuses, a sum that differs),
 * inflate_split_end() says so and the caller inflates the stream whole, as
 * it would have: the bytes are the same either way.
 */
struct inflate_split {
	unsigned char *src, *dst; /* the zlib stream; where it inflates to */
	size_t src_len, size;	  /* size: what it inflates to, exactly */
	uint64_t cut_bit;	  /* the boundary, in bits from src */
	size_t cut;		  /* the bytes of src the first part reads */
	unsigned char saved[3];	  /* src's bytes under the empty block */
	size_t first_len;	  /* what the first part inflated to */
	bool first_ok, second_ok;
	_Atomic int parts_done; /* the one that makes it 2 joins them */
	bool joined;		/* and says whether dst holds the stream inflated */
	uint32_t body_sum;	/* Adler-32 of the second part's bytes after its wide part */
	struct marked m;	/* the second part */
};

/*
 * Plan s for the zlib stream src of src_len bytes, which inflates to size
 * bytes at dst: the boundary looked for from share (0 to 1) of the stream
 * from its end. False, with nothing held, when there is none to take.
 */
bool inflate_split_plan(struct inflate_split *s, unsigned char *src, size_t src_len,
			unsigned char *dst, size_t size, double share);

/*
 * The first part, with libdeflate; src's bytes put back after. True when it
 * ended second and the stream is whole in dst (src is then read no more).
 */
bool inflate_split_first(struct inflate_split *s);

/* About how much of the output the first part is: from where the boundary is in the stream. */
uint64_t inflate_split_first_size(const struct inflate_split *s);

/* The second part, on another thread than the first's; true as inflate_split_first(). */
bool inflate_split_second(struct inflate_split *s);

/*
 * Once both parts are done (the second to end puts the second part's bytes
 * into place and checks the whole): true when dst holds the stream
 * inflated; s released either way.
 */
bool inflate_split_end(struct inflate_split *s);

/* The Adler-32 of a || b from theirs, b being len_b bytes. */
uint32_t adler32_join(uint32_t sum_a, uint32_t sum_b, uint64_t len_b);

#endif
