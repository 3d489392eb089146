/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_UNIT_SCAN_H
#define LIDIA_UNIT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abbrevs.h"
#include "dwarf_sections.h"

/* What a unit's DIEs hold, for the units that need not be read with libdw. */
struct unit_facts {
	bool code;	       /* a DIE has DW_AT_low_pc, DW_AT_high_pc or DW_AT_ranges */
	bool has_lines;	       /* the unit DIE has DW_AT_stmt_list */
	uint64_t line_offset;  /* its value */
	const char *comp_dir;  /* DW_AT_comp_dir, in s's sections; NULL: none */
	unsigned address_size; /* the unit header's */
};

/*
 * Read the unit at offset in s->info (a compile or partial unit, DWARF 2 to
 * 5) through its abbreviation table in s->abbrev, to the first DIE that may
 * describe code or to its end: true with *out filled, false when the unit is
 * malformed or holds a form or attribute form this reader does not handle
 * (the caller then reads it with libdw). Tables are kept in c for the next
 * units that share them.
 */
bool unit_scan(struct abbrev_cache *c, const struct dwarf_sections *s, uint64_t offset,
	       struct unit_facts *out);

/*
 * The line program offset of the unit at offset in s->info, as libdw reads
 * its DW_AT_stmt_list (dwarf_attr(), then dwarf_formudata()): 1 with
 * *line_offset, 0 when there is none or libdw would not read it, -1 when
 * this reader cannot tell (the caller asks libdw). die_addr: where libdw
 * found the unit DIE, which must be where the header puts it. list_units()
 * asks it of every unit: libdw reads each unit's abbreviations again for
 * it, and a dwz'd file has hundreds of units sharing a few tables.
 */
int unit_stmt_list(struct abbrev_cache *c, const struct dwarf_sections *s, uint64_t offset,
		   const void *die_addr, uint64_t *line_offset);

#endif
