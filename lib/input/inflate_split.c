/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identify: one big zlib stream inflated on two threads (see the header):
 * .debug_info is one stream, and inflating it was the one long step of a
 * big file that no second thread could share (half a second of
 * libceph-common's 1.3 s at -j 2).
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <libdeflate.h>

#include "inflate_split.h"

/*
 * How far past its starting point a boundary is looked for (zlib's blocks
 * are tens of KiB), and how much decoding that may take: blocks tried,
 * the output of each and of all (a hostile stream could offer a likely
 * start at every bit).
 */
#define SEARCH_BYTES (512u << 10)
#define SEARCH_TRIES 1024
#define FIRST_MAX (1u << 20)
#define SEARCH_OUT (8u << 20)
/* The second part's wide output at most: markers that last longer give up the split. */
#define HEAD_MAX (8u << 20)

#define ADLER_BASE 65521u

uint32_t adler32_join(uint32_t sum_a, uint32_t sum_b, uint64_t len_b)
{
	uint64_t n = len_b % ADLER_BASE, a1 = sum_a & 0xffff, b1 = sum_a >> 16;
	uint64_t a2 = sum_b & 0xffff, b2 = sum_b >> 16;
	/* A's sums run on over b: each of b's bytes adds a1 - 1 more to the second sum. */
	uint64_t a = (a1 + a2 + ADLER_BASE - 1) % ADLER_BASE;
	uint64_t b = (b1 + b2 + n * a1 + ADLER_BASE - n) % ADLER_BASE;

	return (uint32_t)(b << 16 | a);
}

/* The zlib header libdeflate takes: deflate, a window of at most 32 KiB, no dictionary. */
static bool zlib_header_ok(const unsigned char *src)
{
	return (src[0] & 15) == 8 && (src[0] >> 4) <= 7 && !(src[1] & 0x20) &&
	       ((unsigned)src[0] << 8 | src[1]) % 31 == 0;
}

static bool part_done(struct inflate_split *s);

static void set_bit(unsigned char *p, uint64_t bit, unsigned v)
{
	unsigned char m = (unsigned char)(1u << (bit % 8));

	p[bit / 8] = (unsigned char)(v ? p[bit / 8] | m : p[bit / 8] & ~m);
}

bool inflate_split_plan(struct inflate_split *s, unsigned char *src, size_t src_len,
			unsigned char *dst, size_t size, double share)
{
	const unsigned char *data = src + 2, *end;
	uint64_t bit, last, out = 0;
	unsigned tries = 0;
	bool found = false;

	memset(s, 0, sizeof(*s));
	atomic_init(&s->parts_done, 0);
	if (src_len < 64 || size < 4 * MARKED_WINDOW || share <= 0 || share >= 1 ||
	    !zlib_header_ok(src))
		return false;
	end = src + src_len - 4; /* the Adler-32 after the deflate data */
	if (!marked_init(&s->m, MARKED_WINDOW + (size < HEAD_MAX ? size : HEAD_MAX),
			 MARKED_WINDOW + size))
		return false;
	bit = (uint64_t)((double)(end - data) * (1 - share)) * 8;
	last = bit + 8ull * SEARCH_BYTES;
	for (; bit < last && bit / 8 + 16 < (uint64_t)(end - data); bit++) {
		if (!marked_could_begin(data, end, bit))
			continue;
		if ((found = marked_begin(&s->m, data, end, bit, FIRST_MAX)))
			break;
		out += s->m.head_len - MARKED_WINDOW;
		if (++tries == SEARCH_TRIES || out > SEARCH_OUT)
			bit = last;
	}
	if (!found) {
		marked_release(&s->m);
		return false;
	}
	s->src = src;
	s->src_len = src_len;
	s->dst = dst;
	s->size = size;
	s->cut_bit = 16 + bit;
	/* The empty last block: BFINAL 1, fixed codes (01), end of block (seven zeros). */
	s->cut = (size_t)((s->cut_bit + 10 + 7) / 8);
	memcpy(s->saved, src + s->cut_bit / 8, s->cut - s->cut_bit / 8);
	return true;
}

/*
 * libdeflate, told that the stream ends at the boundary: an empty last block
 * written over the bits there (the second part has read them already, and
 * never reads them again), put back once it is done. It must end exactly
 * there: then the boundary is one of the stream's, and what it wrote is the
 * first part, to the byte.
 */
bool inflate_split_first(struct inflate_split *s)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	enum libdeflate_result r = LIBDEFLATE_BAD_DATA;
	size_t in = 0, out = 0;

	for (uint64_t b = s->cut_bit; b < 8ull * s->cut; b++)
		set_bit(s->src, b, b < s->cut_bit + 2);
	if (d)
		r = libdeflate_deflate_decompress_ex(d, s->src + 2, s->cut - 2, s->dst, s->size,
						     &in, &out);
	memcpy(s->src + s->cut_bit / 8, s->saved, s->cut - s->cut_bit / 8);
	libdeflate_free_decompressor(d);
	s->first_ok = r == LIBDEFLATE_SUCCESS && in == s->cut - 2;
	s->first_len = out;
	return part_done(s);
}

uint64_t inflate_split_first_size(const struct inflate_split *s)
{
	return (uint64_t)((double)s->size * (double)s->cut_bit / (8.0 * (double)s->src_len));
}

/* What the second part decoded: its wide part, then its bytes. */
static size_t wide_len(const struct marked *m)
{
	return m->head_len - MARKED_WINDOW;
}

static size_t body_len(const struct marked *m)
{
	return m->narrow ? m->body_len - MARKED_WINDOW : 0;
}

bool inflate_split_second(struct inflate_split *s)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
	size_t n;

	s->second_ok = marked_finish(&s->m) &&
		       2 + marked_consumed(&s->m, s->src + 2) + 4 <= s->src_len &&
		       wide_len(&s->m) + body_len(&s->m) < s->size;
	if (!s->second_ok)
		return part_done(s);
	n = body_len(&s->m);
	s->body_sum = libdeflate_adler32(1, s->m.body + MARKED_WINDOW, n);
	/*
	 * The pages the bytes go to, made while the first part inflates:
	 * page tables only, no byte written (the first part may be writing
	 * into the first of them, if it is not what it should be).
	 */
	lo = ((uintptr_t)s->dst + s->size - n + page - 1) & ~(page - 1);
	hi = ((uintptr_t)s->dst + s->size) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	return part_done(s);
}

/* The wide part into dst after the first part: markers are bytes of the first's last 32 KiB. */
static bool resolve(struct inflate_split *s, size_t first)
{
	const uint16_t *w = s->m.head + MARKED_WINDOW;
	unsigned char *o = s->dst + first;
	size_t n = wide_len(&s->m);

	for (size_t i = 0; i < n; i++) {
		if (w[i] < 256) {
			o[i] = (unsigned char)w[i];
			continue;
		}
		/* Window byte k is MARKED_WINDOW - k before the second part. */
		if (first + (w[i] - 256u) < MARKED_WINDOW)
			return false; /* before the stream's start */
		o[i] = s->dst[first - MARKED_WINDOW + (w[i] - 256u)];
	}
	return true;
}

static uint32_t load_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Both parts done: the second's markers resolved, its bytes into place, the whole summed. */
static bool join(struct inflate_split *s)
{
	size_t wide = wide_len(&s->m), body = body_len(&s->m), first = s->first_len;
	uint32_t sum;

	if (!s->first_ok || !s->second_ok || first + wide + body != s->size || !resolve(s, first))
		return false;
	sum = libdeflate_adler32(1, s->dst, first + wide);
	memcpy(s->dst + first + wide, s->m.body + MARKED_WINDOW, body);
	return adler32_join(sum, s->body_sum, body) ==
	       load_be32(s->src + 2 + marked_consumed(&s->m, s->src + 2));
}

bool inflate_split_end(struct inflate_split *s)
{
	bool ok = s->joined; /* set only by the part that ended second */

	marked_release(&s->m);
	return ok;
}

/*
 * Whichever part ends second joins them, on its thread: beside the other
 * sections the other thread may still be inflating, not after them all.
 */
static bool part_done(struct inflate_split *s)
{
	if (atomic_fetch_add_explicit(&s->parts_done, 1, memory_order_acq_rel) != 1)
		return false;
	s->joined = join(s);
	return s->joined;
}
