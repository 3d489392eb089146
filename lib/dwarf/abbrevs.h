/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ABBREVS_H
#define LIDIA_ABBREVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwarf_cursor.h"
#include "dwarf_sections.h"

/*
 * What lidiagen's own DIE readers (unit_scan.c, die_reader.c) share: the
 * abbreviation tables, a unit's header, and the size of a value by its form.
 */

/* One attribute specification of an abbreviation, decoded. */
struct attr_spec {
	uint16_t attr, form;
	uint32_t implicit; /* DW_FORM_implicit_const: where its value is in .debug_abbrev */
	bool noted;	   /* die_reader.c keeps its value (set by its plan) */
};

/* One abbreviation. */
struct abbrev {
	uint64_t code;
	uint32_t first_spec,
		nspecs; /* its (attribute, form) pairs: c->specs[first_spec, + nspecs) */
	unsigned tag;
	bool children;
	/* die_reader.c's plan for it, in units of the sizes plan_key stands for (0: none yet). */
	uint16_t plan_key;
	bool named;	    /* it has DW_AT_name, DW_AT_linkage_name or DW_AT_MIPS_linkage_name */
	bool noted;	    /* it has an attribute whose value the reader keeps */
	int32_t fixed_size; /* the bytes of its values when each has one size; else -1 */
};

/* A table: c->abbrevs[first, first + n), sorted by code. */
struct abbrev_table {
	uint64_t offset;
	size_t first, n;
	bool ok; /* read to its end without fault, each code once, as libdw reads it */
};

/*
 * Tables are kept for the units that share them (dwz's partial units share
 * a few); past this many abbreviations, a new table makes the cache forget
 * the others: a compiler gives each unit a table of its own, and keeping
 * every one was 12 MiB more on libc's 2,000 units.
 */
#define ABBREVS_KEPT 4096

/* The abbreviation tables read so far, each once, by offset in .debug_abbrev. */
struct abbrev_cache {
	struct abbrev *abbrevs; /* of every table, one table after another */
	size_t nabbrevs, cap_abbrevs;
	struct attr_spec *specs; /* of every abbreviation, one after another */
	size_t nspecs, cap_specs;
	struct abbrev_table *tables;
	size_t ntables, cap_tables;
	uint32_t *slots; /* open addressing by offset: table index + 1, 0 when free */
	size_t cap_slots;
	size_t kept; /* abbreviations kept before the cache forgets; 0: ABBREVS_KEPT */
};

/*
 * The table at offset in s->abbrev, read now if it is new; NULL when it
 * cannot be had. Reading a new one may forget the others: a table is good
 * until the next call.
 */
const struct abbrev_table *abbrev_table_at(struct abbrev_cache *c, const struct dwarf_sections *s,
					   uint64_t offset);

/* The abbreviation of code in t, or NULL. */
struct abbrev *abbrev_find(struct abbrev_cache *c, const struct abbrev_table *t, uint64_t code);

void abbrev_cache_release(struct abbrev_cache *c);

/* A unit's header: where its DIEs are, and what sizes their values. */
struct unit_hdr {
	struct cursor dies; /* from the unit DIE to the unit's end */
	uint64_t abbrev_offset;
	unsigned version, address_size, offset_size;
};

/*
 * The header of the compile or partial unit at offset in s->info (DWARF 2
 * to 5, section 7.5.1); false when it is another kind, or malformed.
 */
bool unit_hdr_read(const struct dwarf_sections *s, uint64_t offset, struct unit_hdr *h);

/* Skip one value of form (DWARF 5 section 7.5.6, and GNU's); false when it cannot be sized. */
bool skip_value(struct cursor *c, const struct unit_hdr *h, uint64_t form);

#endif
