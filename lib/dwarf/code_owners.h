/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_CODE_OWNERS_H
#define LIDIA_CODE_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Which unit's line program describes an address: the unit llvm-symbolizer
 * asks (LLVM 16's DWARFDebugAranges). The units .debug_aranges lists are
 * described by their sets there, every other unit by its own DIE's ranges;
 * where the ranges of several units meet, the address goes to the unit of
 * the span before it when that unit still covers it, else to the first unit
 * in .debug_info. An address no unit covers has no line, whatever a line
 * program says of it: a row in effect past a function's end runs over code
 * (a C++ thunk) that no unit claims.
 */

/* [lo, hi) and the unit, by its header's offset in .debug_info. */
struct owned_span {
	uint64_t lo, hi;
	uint64_t unit_off;
};

/* What the ranges of every unit are gathered into. */
struct code_owners {
	struct owned_span *v; /* ranges as added; code_owners_resolve() makes them spans */
	size_t n, cap;
	uint64_t *listed; /* the units .debug_aranges lists, sorted once it is read */
	size_t nlisted, cap_listed;
};

/*
 * The sets of .debug_aranges (p, size bytes, little-endian), read as LLVM 16
 * reads them: each set's ranges, and its unit as listed; at the first set it
 * cannot read (its length past the section, an address size other than 2,
 * 4 or 8, a segment selector, no terminating entry) the rest of the
 * section is passed over. 0 or -ENOMEM.
 */
int code_owners_read_aranges(struct code_owners *o, const unsigned char *p, size_t size);

/* Whether .debug_aranges lists the unit at unit_off: its DIE's ranges are then not asked. */
bool code_owners_listed(const struct code_owners *o, uint64_t unit_off);

/* One range of the unit at unit_off (an empty or wrapping one is passed over). 0 or -ENOMEM. */
int code_owners_add(struct code_owners *o, uint64_t unit_off, uint64_t lo, uint64_t hi);

/*
 * The ranges added, made into spans in address order, none overlapping, each
 * with the unit that owns it (see above); o->v holds them, o->n of them.
 * 0 or -ENOMEM (o then as it was).
 */
int code_owners_resolve(struct code_owners *o);

void code_owners_release(struct code_owners *o);

#endif
