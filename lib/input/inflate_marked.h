/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_INFLATE_MARKED_H
#define LIDIA_INFLATE_MARKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Deflate (RFC 1951) decoded from a block boundary in the middle of a
 * stream, without the output before it: what libdeflate and zlib need, the
 * 32 KiB window a copy may reach back into. Such a copy is written as a
 * marker, the window's byte it stands for (256 + its position in the
 * window), into 16-bit "wide" output; once the last 32 KiB written hold no
 * marker, no later copy can meet one, and the rest goes into bytes.
 * inflate_split.c resolves the markers once the window is known.
 *
 * Stricter than libdeflate (a code must be complete but for the distance
 * code of one symbol zlib writes, or none): a stream it refuses may still
 * be good, and is then inflated whole by libdeflate.
 */

#define MARKED_WINDOW 32768u

struct huff {
	uint16_t table[1u << 10]; /* (symbol << 4) | length, by the next bits; 0: longer code */
	uint16_t count[16];	  /* codes of each length */
	uint16_t symbol[288];	  /* the symbols, by length, then value */
};

/* The input, a bit at a time. */
struct bitin {
	const unsigned char *next, *end; /* bytes not yet in bits; the end of the deflate data */
	uint64_t bits;			 /* the next nbits bits of input, from bit 0 */
	unsigned nbits, overread;	 /* zero bytes past end put into bits */
};

struct marked {
	struct bitin in;
	/*
	 * Wide output: head[0, MARKED_WINDOW) the window's markers, then what
	 * was decoded; last_marker, the index of the last marker in head.
	 */
	uint16_t *head;
	size_t head_len, head_cap, last_marker;
	/* Then bytes: body[0, MARKED_WINDOW) the window, then what was decoded. */
	unsigned char *body;
	size_t body_len, body_cap;
	bool narrow, final;
	struct huff lit, dist;
};

/*
 * d made ready for decoding: head_cap 16-bit values of wide output (the
 * window's markers among them), then body_cap bytes (the window among them),
 * reserved and touched only as written. False, with nothing held, without.
 */
bool marked_init(struct marked *d, size_t head_cap, size_t body_cap);

/*
 * d (made ready, used or not) begun at bit bit of the deflate data [data,
 * end) (a zlib stream's, without its trailer): a dynamic block that is not
 * the last must start there, decode whole to at most max_out values, and
 * be followed by a block header of a known type. False when not; what it
 * decoded is head_len - MARKED_WINDOW values either way.
 */
bool marked_begin(struct marked *d, const unsigned char *data, const unsigned char *end,
		  uint64_t bit, size_t max_out);

/*
 * The rest of the stream decoded, up to the end of its last block; false
 * on bad data, too much output, or input read past end.
 */
bool marked_finish(struct marked *d);

/* The bytes of input d has consumed up to the end of its last block, from data. */
size_t marked_consumed(const struct marked *d, const unsigned char *data);

/* Whether bit bit of data could begin a dynamic block: a quick look at its first bits. */
bool marked_could_begin(const unsigned char *data, const unsigned char *end, uint64_t bit);

void marked_release(struct marked *d);

#endif
