/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_CURSOR_H
#define LIDIA_DWARF_CURSOR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Reading DWARF bytes that nothing vouches for: every read is bounds-checked;
 * one past the end sets bad, leaves the cursor at the end and gives 0, so a
 * caller checks bad once after a run of reads. Little-endian only: the
 * callers read images of that byte order (dwarf.c checks).
 */
struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

/* An n-byte unsigned field (n <= 8). */
static inline uint64_t cursor_u(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | c->p[i];
	c->p += n;
	return v;
}

static inline uint64_t cursor_uleb(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static inline int64_t cursor_sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0x80;

	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80) {
		c->bad = true;
		return 0;
	}
	if (shift < 64 && (b & 0x40)) /* sign-extend, in unsigned arithmetic */
		v = (int64_t)((uint64_t)v | ~(((uint64_t)1 << shift) - 1));
	return v;
}

/*
 * A LEB128 in DIEs or abbreviations, where libdw reads 10 bytes at most and
 * cuts a longer one short: our DIE readers, which must size a DIE as libdw
 * does, refuse it (bad) and leave such DWARF to libdw.
 */
static inline uint64_t cursor_uleb10(struct cursor *c)
{
	const unsigned char *start = c->p;
	uint64_t v = cursor_uleb(c);

	if (c->p - start > 10)
		c->bad = true;
	return v;
}

/* Skip a LEB128 of either sign as cursor_uleb10() reads one. */
static inline void cursor_leb_skip10(struct cursor *c)
{
	for (unsigned n = 0; n < 10 && c->p < c->end; n++)
		if (!(*c->p++ & 0x80))
			return;
	c->bad = true;
}

/* A NUL-terminated string in place; NULL (and bad) when it runs past the end. */
static inline const char *cursor_cstr(struct cursor *c)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* Move n bytes on, or set bad. */
static inline void cursor_skip(struct cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

#endif
