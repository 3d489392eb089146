/* SPDX-License-Identifier: Apache-2.0 */
/*
 * code_owners.c: which unit describes each address, as LLVM 16's
 * DWARFDebugAranges decides it. .debug_aranges sections written here byte by
 * byte (DWARF 5 section 6.1.2), each case's expected sets worked out by hand
 * from the format and from what LLVM 16 stops at; then ranges that meet, the
 * spans worked out by hand from LLVM's sweep (the span before goes on while
 * its unit covers the address, else the first unit); then random ranges,
 * whose spans must be in order, disjoint, each inside a range of its unit,
 * and together cover exactly what the ranges cover.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "code_owners.h"
#include "unit.h"

/* A section being written: little-endian fields. */
struct bytes {
	unsigned char v[512];
	size_t n;
};

static void put(struct bytes *b, uint64_t x, unsigned size)
{
	/* Sizes past 8 (odd address sizes under test) pad with zeros. */
	for (unsigned i = 0; i < size; i++)
		b->v[b->n++] = i < 8 ? (unsigned char)(x >> (8 * i)) : 0;
}

/*
 * One set: DWARF 32 (or 64), version 2, unit_off, address size asz, segment
 * selector size seg, the tuples of pairs (lo, length), npairs of them, then
 * the terminator unless !terminate. The tuples start at the first multiple
 * of 2 * asz past the header.
 */
static void put_set(struct bytes *b, bool dwarf64, uint64_t unit_off, unsigned asz, unsigned seg,
		    const uint64_t *pairs, size_t npairs, bool terminate)
{
	size_t start = b->n, len_at, header, first;
	unsigned osz = dwarf64 ? 8 : 4;

	if (dwarf64)
		put(b, 0xffffffff, 4);
	len_at = b->n;
	put(b, 0, osz); /* the length, set below */
	put(b, 2, 2);
	put(b, unit_off, osz);
	put(b, asz, 1);
	put(b, seg, 1);
	header = b->n - start;
	first = (header + 2 * asz - 1) / (2 * asz) * (2 * asz);
	while (b->n - start < first)
		put(b, 0, 1);
	for (size_t i = 0; i < 2 * npairs; i++)
		put(b, pairs[i], asz);
	if (terminate)
		put(b, 0, 2 * asz);
	for (unsigned i = 0; i < osz; i++)
		b->v[len_at + i] = (unsigned char)((b->n - len_at - osz) >> (8 * i));
}

static bool has_range(const struct code_owners *o, uint64_t unit, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].unit_off == unit && o->v[i].lo == lo && o->v[i].hi == hi)
			return true;
	return false;
}

static void test_aranges(void)
{
	const uint64_t a[] = { 0x1000, 0x10, 0x2000, 8 }, b32[] = { 0x3000, 0x20 };
	const uint64_t early[] = { 0x5000, 4, 0, 0, 0x5010, 4 }, c[] = { 0x6000, 8 };
	const uint64_t small[] = { 0x10, 8 };
	struct code_owners o = { 0 };
	struct bytes s = { .n = 0 };

	put_set(&s, false, 0, 8, 0, a, 2, true);
	put_set(&s, true, 0x40, 8, 0, b32, 1, true);	/* DWARF 64 */
	put_set(&s, false, 0x80, 4, 0, b32, 1, true);	/* 4-byte addresses, tuples at 16 */
	put_set(&s, false, 0xc0, 8, 0, early, 3, true); /* a terminator before the end */
	put_set(&s, false, 0x100, 8, 1, c, 1, true);	/* a segment selector: LLVM stops */
	put_set(&s, false, 0x140, 8, 0, c, 1, true);	/* never read */
	CHECK(!code_owners_read_aranges(&o, s.v, s.n), "aranges: read");
	CHECK(o.n == 6 && has_range(&o, 0, 0x1000, 0x1010) && has_range(&o, 0, 0x2000, 0x2008) &&
		      has_range(&o, 0x40, 0x3000, 0x3020) && has_range(&o, 0x80, 0x3000, 0x3020) &&
		      has_range(&o, 0xc0, 0x5000, 0x5004) && has_range(&o, 0xc0, 0x5010, 0x5014),
	      "aranges: each set's ranges, DWARF 64 and 4-byte addresses too, read past an "
	      "early terminator, none from a set with a segment selector on (%zu)",
	      o.n);
	CHECK(code_owners_listed(&o, 0) && code_owners_listed(&o, 0x40) &&
		      code_owners_listed(&o, 0x80) && code_owners_listed(&o, 0xc0) &&
		      !code_owners_listed(&o, 0x100) && !code_owners_listed(&o, 0x140),
	      "aranges: the units of the sets read are listed, none after the one that stops");
	code_owners_release(&o);

	s.n = 0;
	put_set(&s, false, 0, 8, 0, a, 2, true);
	put_set(&s, false, 0x40, 8, 0, c, 1, false); /* no terminator: LLVM takes none of it */
	CHECK(!code_owners_read_aranges(&o, s.v, s.n) && o.n == 2 && !code_owners_listed(&o, 0x40),
	      "aranges: a set without its terminator gives nothing (%zu ranges)", o.n);
	code_owners_release(&o);

	s.n = 0;
	put_set(&s, false, 0, 8, 0, a, 2, true);
	s.v[0] += 16; /* the length past the section */
	CHECK(!code_owners_read_aranges(&o, s.v, s.n) && o.n == 0 && !o.nlisted,
	      "aranges: a set longer than the section gives nothing");
	code_owners_release(&o);
	s.n = 0;
	for (unsigned asz = 1; asz <= 3; asz += 2) {
		s.n = 0;
		put_set(&s, false, 0, asz, 0, small, 1, true);
		CHECK(!code_owners_read_aranges(&o, s.v, s.n) && o.n == 0 && !o.nlisted,
		      "aranges: %u-byte addresses, which LLVM 16 does not read, give nothing", asz);
		code_owners_release(&o);
	}
	for (size_t cut = 0; cut < 40; cut++) {
		s.n = 0;
		put_set(&s, false, 0, 8, 0, a, 2, true);
		CHECK(!code_owners_read_aranges(&o, s.v, cut) && o.n == 0,
		      "aranges: cut to %zu bytes, nothing read", cut);
		code_owners_release(&o);
	}
}

static bool is_span(const struct code_owners *o, size_t i, uint64_t lo, uint64_t hi, uint64_t unit)
{
	return i < o->n && o->v[i].lo == lo && o->v[i].hi == hi && o->v[i].unit_off == unit;
}

static void test_meeting(void)
{
	struct code_owners o = { 0 };

	/* Unit 0 [0x1000,0x1010) and [0x2000,0x2008); unit 0x40 [0x1008,0x1020). */
	code_owners_add(&o, 0x40, 0x1008, 0x1020);
	code_owners_add(&o, 0, 0x2000, 0x2008);
	code_owners_add(&o, 0, 0x1000, 0x1010);
	code_owners_add(&o, 0, 0x3000, 0x3000); /* empty: passed over */
	CHECK(!code_owners_resolve(&o) && o.n == 3 && is_span(&o, 0, 0x1000, 0x1010, 0) &&
		      is_span(&o, 1, 0x1010, 0x1020, 0x40) && is_span(&o, 2, 0x2000, 0x2008, 0),
	      "spans: where two units meet the first goes on to its end, the second after it");
	code_owners_release(&o);

	/* Unit 0x80 [0x3000,0x3020) and unit 0x40 [0x3010,0x3018) inside it. */
	code_owners_add(&o, 0x80, 0x3000, 0x3020);
	code_owners_add(&o, 0x40, 0x3010, 0x3018);
	CHECK(!code_owners_resolve(&o) && o.n == 1 && is_span(&o, 0, 0x3000, 0x3020, 0x80),
	      "spans: the span before goes on while its unit covers, before a unit that comes "
	      "first");
	code_owners_release(&o);

	/* Unit 0x80 [0x4000,0x4010); units 0xc0 and 0x40 both [0x4010,0x4020). */
	code_owners_add(&o, 0x80, 0x4000, 0x4010);
	code_owners_add(&o, 0xc0, 0x4010, 0x4020);
	code_owners_add(&o, 0x40, 0x4010, 0x4020);
	CHECK(!code_owners_resolve(&o) && o.n == 2 && is_span(&o, 0, 0x4000, 0x4010, 0x80) &&
		      is_span(&o, 1, 0x4010, 0x4020, 0x40),
	      "spans: a span starting anew goes to the unit first in .debug_info");
	code_owners_release(&o);

	CHECK(!code_owners_resolve(&o) && o.n == 0, "spans: none from no ranges");
	code_owners_release(&o);
}

/* Whether addr is in a range of unit (brute force over the ranges as added). */
static bool covers(const struct owned_span *r, size_t n, uint64_t unit, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if ((unit == UINT64_MAX || r[i].unit_off == unit) && r[i].lo <= addr &&
		    addr < r[i].hi)
			return true;
	return false;
}

static void test_random(void)
{
	uint64_t state = 0x9e3779b97f4a7c15ull;
	size_t bad = 0, checked = 0;

	for (int round = 0; round < 50; round++) {
		struct code_owners o = { 0 };
		struct owned_span added[64];
		size_t n = 1 + unit_next_random(&state) % 64;

		for (size_t i = 0; i < n; i++) {
			uint64_t lo = unit_next_random(&state) % 512,
				 len = 1 + unit_next_random(&state) % 64;

			added[i] = (struct owned_span){ lo, lo + len,
							0x40 * (unit_next_random(&state) % 6) };
			code_owners_add(&o, added[i].unit_off, added[i].lo, added[i].hi);
		}
		if (code_owners_resolve(&o)) {
			bad++;
			continue;
		}
		for (size_t i = 0; i < o.n; i++)
			if (o.v[i].lo >= o.v[i].hi || (i && o.v[i].lo < o.v[i - 1].hi))
				bad++;
		for (uint64_t a = 0; a < 600; a++, checked++) {
			size_t k = 0;

			while (k < o.n && o.v[k].hi <= a)
				k++;
			if (k < o.n && o.v[k].lo <= a) {
				if (!covers(added, n, o.v[k].unit_off, a))
					bad++; /* given to a unit that does not cover it */
			} else if (covers(added, n, UINT64_MAX, a)) {
				bad++; /* covered, and given to no unit */
			}
		}
		code_owners_release(&o);
	}
	CHECK(!bad,
	      "spans of 50 random sets of ranges: in order, disjoint, each address covered given "
	      "to a unit that covers it, none other given (%zu addresses, %zu wrong)",
	      checked, bad);
}

int main(void)
{
	test_aranges();
	test_meeting();
	test_random();
	return unit_exit();
}
