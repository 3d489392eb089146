/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identify: deflate decoded from the middle of a stream, copies from before
 * its start kept as markers (see the header): the second thread's part of
 * one big zlib stream (inflate_split.c). Tables as in RFC 1951; a decode
 * table of the short codes, the long ones (rare) decoded a bit at a time.
 */
#include <endian.h>
#include <string.h>
#include <sys/mman.h>

#include "huge_pages.h"
#include "inflate_marked.h"

enum { OK = 0, BAD = -1, FULL = -2 };

static const uint16_t len_base[29] = { 3,  4,  5,  6,	7,   8,	  9,   10,  11, 13,
				       15, 17, 19, 23,	27,  31,  35,  43,  51, 59,
				       67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
				       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1,    2,    3,	  4,	 5,	7,    9,    13,
					17,   25,   33,	  49,	 65,	97,   129,  193,
					257,  385,  513,  769,	 1025,	1537, 2049, 3073,
					4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,	 3,  3,	 4,  4,	 5,  5,	 6,
					6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
/* The order the code length code's lengths come in. */
static const uint8_t precode_order[19] = { 16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
					   11, 4,  12, 3, 13, 2, 14, 1, 15 };

/* Table bits: codes up to this long are found in one look (longer ones are rare). */
#define LIT_BITS 10
#define DIST_BITS 8
#define PRE_BITS 7

static inline uint64_t load_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/*
 * At least 49 bits in in->bits: a literal/length code, its extra bits, a
 * distance code and its extra bits (15 + 5 + 15 + 13). Eight bytes at a
 * time while there are eight; the bits above nbits are then the next
 * bytes' own, which the next load puts there again. Past the end, zero
 * bytes, counted.
 */
static inline void refill(struct bitin *in)
{
	if (in->end - in->next >= 8) {
		in->bits |= load_le64(in->next) << in->nbits;
		in->next += (63 - in->nbits) >> 3;
		in->nbits |= 56;
		return;
	}
	while (in->nbits <= 48) {
		uint64_t byte = 0;

		if (in->next < in->end)
			byte = *in->next++;
		else
			in->overread++;
		in->bits |= byte << in->nbits;
		in->nbits += 8;
	}
}

static inline void drop(struct bitin *in, unsigned n)
{
	in->bits >>= n;
	in->nbits -= n;
}

static inline unsigned take(struct bitin *in, unsigned n)
{
	unsigned v = (unsigned)(in->bits & ((1ull << n) - 1));

	drop(in, n);
	return v;
}

static unsigned reverse(unsigned code, unsigned n)
{
	unsigned r = 0;

	for (unsigned i = 0; i < n; i++, code >>= 1)
		r = (r << 1) | (code & 1);
	return r;
}

/*
 * h made from the code lengths len[0, n), its table indexed by bits bits.
 * False when the lengths over-subscribe, or leave codes unused, which only
 * a distance code may (one_ok): with one code of one bit, or none, as zlib
 * writes when a block copies from one distance, or from none.
 */
static bool huff_build(struct huff *h, const uint8_t *len, unsigned n, unsigned bits, bool one_ok)
{
	uint16_t offs[16];
	unsigned code = 0, k = 0, used;
	int left = 1;

	memset(h->count, 0, sizeof(h->count));
	for (unsigned s = 0; s < n; s++)
		h->count[len[s]]++;
	for (unsigned l = 1; l < 16; l++) {
		left = 2 * left - h->count[l];
		if (left < 0)
			return false;
	}
	used = n - h->count[0];
	if (left > 0 && !(one_ok && (used == 0 || (used == 1 && h->count[1] == 1))))
		return false;
	offs[1] = 0;
	for (unsigned l = 1; l < 15; l++)
		offs[l + 1] = (uint16_t)(offs[l] + h->count[l]);
	for (unsigned s = 0; s < n; s++)
		if (len[s])
			h->symbol[offs[len[s]]++] = (uint16_t)s;
	memset(h->table, 0, sizeof(h->table[0]) << bits);
	for (unsigned l = 1; l <= bits; l++, code <<= 1)
		for (unsigned c = 0; c < h->count[l]; c++, k++, code++)
			for (unsigned i = reverse(code, l); i < 1u << bits; i += 1u << l)
				h->table[i] = (uint16_t)(h->symbol[k] << 4 | l);
	return true;
}

/*
 * A code longer than the table's, a bit at a time from bits (canonical
 * codes: RFC 1951 3.2.2): (symbol << 4) | length, or -1.
 */
static int huff_slow(uint64_t bits, const struct huff *h)
{
	int code = 0, first = 0, index = 0;

	for (unsigned l = 1; l < 16; l++, bits >>= 1) {
		code |= (int)(bits & 1);
		if (code - h->count[l] < first)
			return h->symbol[index + (code - first)] << 4 | (int)l;
		index += h->count[l];
		first = (first + h->count[l]) << 1;
		code <<= 1;
	}
	return -1;
}

static inline int decode(struct bitin *in, const struct huff *h, unsigned bits)
{
	int e = h->table[in->bits & ((1u << bits) - 1)];

	if (!e && (e = huff_slow(in->bits, h)) < 0)
		return -1;
	drop(in, (unsigned)e & 15);
	return e >> 4;
}

/* The code lengths of a dynamic block, after its three header bits, into its tables. */
static int read_dynamic(struct marked *d)
{
	uint8_t len[286 + 30], pre[19] = { 0 };
	unsigned nlit, ndist, nlen, n = 0;
	struct bitin *in = &d->in;

	refill(in);
	nlit = take(in, 5) + 257;
	ndist = take(in, 5) + 1;
	nlen = take(in, 4) + 4;
	if (nlit > 286 || ndist > 30)
		return BAD;
	for (unsigned i = 0; i < nlen; i++) {
		refill(in);
		pre[precode_order[i]] = (uint8_t)take(in, 3);
	}
	if (!huff_build(&d->lit, pre, 19, PRE_BITS, false))
		return BAD;
	while (n < nlit + ndist) {
		unsigned rep, v = 0;
		int sym;

		refill(in);
		if ((sym = decode(in, &d->lit, PRE_BITS)) < 0)
			return BAD;
		if (sym < 16) {
			len[n++] = (uint8_t)sym;
			continue;
		}
		if (sym == 16) {
			if (!n)
				return BAD;
			v = len[n - 1];
			rep = 3 + take(in, 2);
		} else {
			rep = sym == 17 ? 3 + take(in, 3) : 11 + take(in, 7);
		}
		if (rep > nlit + ndist - n)
			return BAD;
		memset(len + n, (int)v, rep);
		n += rep;
	}
	if (!len[256] || in->overread > 8)
		return BAD;
	if (!huff_build(&d->lit, len, nlit, LIT_BITS, false) ||
	    !huff_build(&d->dist, len + nlit, ndist, DIST_BITS, true))
		return BAD;
	return OK;
}

static int read_fixed(struct marked *d)
{
	uint8_t len[288];

	memset(len, 8, 144);
	memset(len + 144, 9, 112);
	memset(len + 256, 7, 24);
	memset(len + 280, 8, 8);
	if (!huff_build(&d->lit, len, 288, LIT_BITS, false))
		return BAD;
	/* 32 codes of five bits (complete); 30 and 31 are refused when met. */
	memset(len, 5, 32);
	return huff_build(&d->dist, len, 32, DIST_BITS, false) ? OK : BAD;
}

/* A copy of len from dist back (dist <= 32768: never before the window, which comes first). */
static inline void copy_wide(uint16_t *o, unsigned dist, unsigned len, size_t *last_marker,
			     size_t at)
{
	for (unsigned i = 0; i < len; i++) {
		o[i] = o[(ptrdiff_t)i - dist];
		if (o[i] >= 256)
			*last_marker = at + i;
	}
}

/* Eight bytes at a time may write past len: into room that is there (body's slack). */
static inline void copy_narrow(unsigned char *o, unsigned dist, unsigned len)
{
	if (dist >= 8)
		for (unsigned i = 0; i < len; i += 8)
			memcpy(o + i, o + i - dist, 8);
	else
		for (unsigned i = 0; i < len; i++)
			o[i] = o[(ptrdiff_t)i - dist];
}

/*
 * The codes of a block up to its end, after its header, into wide (16-bit,
 * markers) or narrow output; made once for each (always inlined, wide a
 * constant). The input and output state are in locals, so that the bytes
 * written do not make the compiler reload them from d.
 */
static inline __attribute__((always_inline)) int codes(struct marked *d, bool wide)
{
	struct bitin in = d->in;
	uint16_t *w = d->head + d->head_len, *const w_end = d->head + d->head_cap;
	unsigned char *b = d->body + d->body_len, *const b_end = d->body + d->body_cap;
	size_t last_marker = d->last_marker;
	int sym, r = BAD;

	for (;;) {
		unsigned len, dist;

		refill(&in);
		if (in.overread > 8 || (sym = decode(&in, &d->lit, LIT_BITS)) < 0)
			break;
		if (sym < 256) {
			if (wide ? w == w_end : b == b_end) {
				r = FULL;
				break;
			}
			if (wide)
				*w++ = (uint16_t)sym;
			else
				*b++ = (unsigned char)sym;
			continue;
		}
		if (sym == 256) {
			r = OK;
			break;
		}
		if ((sym -= 257) >= 29)
			break;
		len = len_base[sym] + take(&in, len_extra[sym]);
		if ((sym = decode(&in, &d->dist, DIST_BITS)) < 0 || sym >= 30)
			break;
		dist = dist_base[sym] + take(&in, dist_extra[sym]);
		if ((size_t)(wide ? w_end - w : b_end - b) < len) {
			r = FULL;
			break;
		}
		if (wide)
			copy_wide(w, dist, len, &last_marker, (size_t)(w - d->head));
		else
			copy_narrow(b, dist, len);
		w += wide ? len : 0;
		b += wide ? 0 : len;
	}
	d->in = in;
	d->head_len = (size_t)(w - d->head);
	d->body_len = (size_t)(b - d->body);
	d->last_marker = last_marker;
	return r;
}

static int codes_wide(struct marked *d)
{
	return codes(d, true);
}

static int codes_narrow(struct marked *d)
{
	return codes(d, false);
}

static int put_literal(struct marked *d, unsigned v)
{
	if (!d->narrow) {
		if (d->head_len == d->head_cap)
			return FULL;
		d->head[d->head_len++] = (uint16_t)v;
	} else {
		if (d->body_len == d->body_cap)
			return FULL;
		d->body[d->body_len++] = (unsigned char)v;
	}
	return OK;
}

static int stored(struct marked *d)
{
	struct bitin *in = &d->in;
	unsigned n;
	int r;

	drop(in, in->nbits & 7); /* to a byte's start: next is at one */
	refill(in);
	n = take(in, 16);
	if (n != (~take(in, 16) & 0xffff))
		return BAD;
	for (unsigned i = 0; i < n; i++) {
		refill(in);
		if (in->overread > 8)
			return BAD;
		if ((r = put_literal(d, take(in, 8))))
			return r;
	}
	return OK;
}

/* Bytes from here on once the last 32 KiB written hold no marker. */
static void maybe_narrow(struct marked *d)
{
	if (d->narrow || d->head_len - d->last_marker <= MARKED_WINDOW)
		return;
	for (size_t i = 0; i < MARKED_WINDOW; i++)
		d->body[i] = (unsigned char)d->head[d->head_len - MARKED_WINDOW + i];
	d->body_len = MARKED_WINDOW;
	d->narrow = true;
}

static int block(struct marked *d)
{
	unsigned type;
	int r;

	refill(&d->in);
	d->final = take(&d->in, 1);
	type = take(&d->in, 2);
	if (type == 0)
		r = stored(d);
	else if (type == 3)
		return BAD;
	else if ((r = type == 1 ? read_fixed(d) : read_dynamic(d)) == OK)
		r = d->narrow ? codes_narrow(d) : codes_wide(d);
	if (r == OK && d->in.overread * 8 > d->in.nbits)
		return BAD; /* it read into the zeros past the end */
	if (r == OK)
		maybe_narrow(d);
	return r;
}

/* Bits from a byte array, bounds-checked; zeros past end. */
static unsigned peek_bits(const unsigned char *data, const unsigned char *end, uint64_t bit,
			  unsigned n)
{
	unsigned v = 0;

	for (unsigned i = 0; i < n; i++, bit++) {
		const unsigned char *p = data + bit / 8;

		if (p < end)
			v |= (unsigned)((*p >> (bit % 8)) & 1) << i;
	}
	return v;
}

bool marked_could_begin(const unsigned char *data, const unsigned char *end, uint64_t bit)
{
	unsigned hdr = peek_bits(data, end, bit, 17), nlen;
	int left = 128;

	/* Not the last block, dynamic, at most 286 and 30 codes. */
	if ((hdr & 7) != 4 || ((hdr >> 3) & 31) > 29 || ((hdr >> 8) & 31) > 29)
		return false;
	nlen = ((hdr >> 13) & 15) + 4;
	for (unsigned i = 0; i < nlen; i++) {
		unsigned l = peek_bits(data, end, bit + 17 + 3 * i, 3);

		if (l && (left -= 128 >> l) < 0)
			return false;
	}
	return left == 0;
}

bool marked_init(struct marked *d, size_t head_cap, size_t body_cap)
{
	memset(d, 0, sizeof(*d));
	if (head_cap <= 2 * MARKED_WINDOW || body_cap <= MARKED_WINDOW)
		return false;
	d->head = mmap(NULL, head_cap * sizeof(*d->head), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	/* 8 bytes of slack: copies eight bytes at a time may go past the end. */
	/* Filled from its start for as long as the stream goes on: no more than a huge page unused. */
	d->body = huge_map(body_cap + 8, MAP_NORESERVE, true);
	if (d->head == MAP_FAILED || d->body == MAP_FAILED) {
		if (d->head != MAP_FAILED)
			munmap(d->head, head_cap * sizeof(*d->head));
		if (d->body != MAP_FAILED)
			munmap(d->body, body_cap + 8);
		d->head = NULL;
		d->body = NULL;
		return false;
	}
	d->head_cap = head_cap;
	d->body_cap = body_cap;
	for (size_t i = 0; i < MARKED_WINDOW; i++)
		d->head[i] = (uint16_t)(256 + i);
	return true;
}

bool marked_begin(struct marked *d, const unsigned char *data, const unsigned char *end,
		  uint64_t bit, size_t max_out)
{
	size_t cap = d->head_cap;
	bool ok;

	if (bit / 8 >= (uint64_t)(end - data))
		return false;
	d->in.next = data + bit / 8;
	d->in.end = end;
	d->in.bits = 0;
	d->in.nbits = d->in.overread = 0;
	d->head_len = MARKED_WINDOW;
	d->last_marker = MARKED_WINDOW - 1;
	d->body_len = 0;
	d->narrow = d->final = false;
	refill(&d->in);
	drop(&d->in, bit % 8);
	if ((d->in.bits & 7) != 4)
		return false;
	if (cap - MARKED_WINDOW > max_out)
		d->head_cap = MARKED_WINDOW + max_out;
	ok = block(d) == OK;
	d->head_cap = cap;
	refill(&d->in);
	/* Then a block of a known type. */
	return ok && (d->in.bits & 6) != 6 && d->in.overread * 8 <= d->in.nbits;
}

bool marked_finish(struct marked *d)
{
	while (!d->final)
		if (block(d) != OK)
			return false;
	return true;
}

size_t marked_consumed(const struct marked *d, const unsigned char *data)
{
	uint64_t bits = (uint64_t)(d->in.next - data + d->in.overread) * 8 - d->in.nbits;

	return (size_t)((bits + 7) / 8);
}

void marked_release(struct marked *d)
{
	if (d->head)
		munmap(d->head, d->head_cap * sizeof(*d->head));
	if (d->body)
		munmap(d->body, d->body_cap + 8);
	d->head = NULL;
	d->body = NULL;
}
