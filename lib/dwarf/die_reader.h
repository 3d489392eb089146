/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DIE_READER_H
#define LIDIA_DIE_READER_H

#include <stdbool.h>
#include <stddef.h>

#include <elfutils/libdw.h>

#include "abbrevs.h"
#include "dwarf_sections.h"

/*
 * The DIEs of one unit, one after another, for the two passes over the
 * units (subprog_scan.c, unit_walk.c): the attributes they ask of a DIE are
 * found in one pass over it, where libdw looks for each attribute, and for
 * the sibling, from the DIE's first byte again (a quarter of ld.gold's
 * instructions, with its dwz file). What they then read of an attribute
 * (an address, a reference, a string, a range list) libdw reads, from the
 * same bytes: a found attribute is libdw's Dwarf_Attribute, a DIE is libdw's
 * Dwarf_Die too.
 *
 * A unit that our reader cannot read as libdw would (a split unit, a form
 * it does not size, a table of abbreviations libdw would read otherwise, a
 * fault anywhere) is read through libdw's own calls: the reader says so
 * (die_reader.failed) and its caller reads what it read again that way.
 */

/*
 * What the passes ask of a DIE; an attribute with form 0 is absent. Read
 * by libdw's calls, the attributes are an inlined subroutine's only.
 */
struct die_attrs {
	Dwarf_Die die; /* libdw's handle of it */
	unsigned tag;
	bool children;
	bool named; /* DW_AT_name, DW_AT_linkage_name or DW_AT_MIPS_linkage_name */
	Dwarf_Attribute low_pc, high_pc, ranges, origin, call_file, call_line;
	const unsigned char *next;    /* ours: the byte after its attributes */
	const unsigned char *sibling; /* ours: where DW_AT_sibling points; NULL: none */
};

/* The forms below DW_FORM_addrx4 + 1 are sized by a table (GNU's, above, by skip_value()). */
#define FIXED_FORMS 0x2d
#define VARIABLE 0xff

struct die_reader {
	struct abbrev_cache *abbrevs;
	const struct abbrev_table *table;
	struct unit_hdr hdr;
	Dwarf_Die cudie; /* the unit's DIE */
	Dwarf_Addr base; /* its base address, once base_known */
	bool base_known;
	const unsigned char *unit_start, *unit_end; /* the unit's header to its end */
	const struct dwarf_sections *secs;
	const unsigned char *abbrev_start;
	uint8_t fixed[FIXED_FORMS]; /* the size of a form's value when it has one; else VARIABLE */
	uint16_t plan_key;	    /* what fixed[] is made of (struct abbrev's plan) */
	const unsigned char *list_end; /* after the list the last die_sibling() ended */
	bool ours;		       /* our reader reads the unit; false: libdw's calls do */
	bool failed; /* ours found what it does not read as libdw: read it again with libdw */
};

/*
 * Begin a unit: the one starting at unit_off in s->info, whose DIE libdw
 * read is in_unit. Ours reads it when it can and may (own: false for a
 * unit in another file than s's, a .dwo's).
 */
void die_reader_unit(struct die_reader *r, struct abbrev_cache *c, const struct dwarf_sections *s,
		     const Dwarf_Die *in_unit, uint64_t unit_off, bool own);

/*
 * Where the DIE a reference attribute of a DIE of ours points begins, as
 * dwarf_formref_die() would find it (its Dwarf_Die's addr), without looking
 * for its unit: for a reference within the unit, into its .debug_info
 * (DW_FORM_ref_addr) or its dwz file's (DW_FORM_GNU_ref_alt). NULL for the
 * other forms, and past the end of the section.
 */
const void *die_ref_target(const struct die_reader *r, const Dwarf_Attribute *a);

/* Read libdw's DIE into *d (false: ours could not; r->failed). */
bool die_read(struct die_reader *r, const Dwarf_Die *die, struct die_attrs *d);

/* The attributes that name a DIE, or lead to its name; form 0: absent. */
struct die_names {
	Dwarf_Attribute linkage, mips_linkage, name, origin, specification;
};

/*
 * Ours: the first of each of those attributes of the DIE die (of the unit
 * begun, its cu libdw's), as dwarf_attr() finds them; false when ours
 * cannot read it as libdw would (r->failed is left as it was).
 */
bool die_names_read(struct die_reader *r, const Dwarf_Die *die, struct die_names *out);

/* As dwarf_child(): 0 with *child, 1 when parent has none, -1 on an error. */
int die_child(struct die_reader *r, struct die_attrs *parent, struct die_attrs *child);

/* As dwarf_siblingof() in place: 0 with *d the next sibling, 1 when none, -1 on an error. */
int die_sibling(struct die_reader *r, struct die_attrs *d);

/*
 * d's children were just read, by die_child() and then die_sibling() until
 * it found no more: its next sibling is where they end, as
 * dwarf_siblingof() would find by reading them all again (when d has no
 * DW_AT_sibling, which it would follow).
 */
static inline void die_children_read(const struct die_reader *r, struct die_attrs *d)
{
	if (r->ours && r->list_end && !d->sibling)
		d->sibling = r->list_end;
}

/* As dwarf_ranges() on the DIE d is. */
ptrdiff_t die_ranges(struct die_reader *r, struct die_attrs *d, ptrdiff_t off, Dwarf_Addr *base,
		     Dwarf_Addr *lo, Dwarf_Addr *hi);

/* Read by libdw's calls from now on (after r->failed, to read the unit again). */
static inline void die_reader_by_libdw(struct die_reader *r)
{
	r->ours = false;
	r->failed = false;
}

#endif
