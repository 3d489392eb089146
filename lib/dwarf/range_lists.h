/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_RANGE_LISTS_H
#define LIDIA_RANGE_LISTS_H

#include <stddef.h>

#include <elfutils/libdw.h>

#include "dwarf_sections.h"

/* range_list_next(): libdw is to read on from *resume (see there). */
#define RANGE_LIST_LIBDW (-2)

/*
 * The next address range of a range list read from off (a position in
 * .debug_rnglists for a DWARF 5 unit, in .debug_ranges for an older one),
 * as dwarf_ranges() of elfutils 0.188 reads it when given a position: the
 * position after the entry, with *lo and *hi; 0 at the list's end; *base
 * changed by base address entries on the way. Only the entries producers
 * write outside split units with 8-byte addresses are read here; at any
 * other (an address index, another size, a fault, a position outside the
 * section) it gives RANGE_LIST_LIBDW and *resume, where dwarf_ranges()
 * reads on with *base as it is and decides, its errors included.
 */
ptrdiff_t range_list_next(const struct dwarf_sections *s, unsigned version, unsigned address_size,
			  ptrdiff_t off, Dwarf_Addr *base, Dwarf_Addr *lo, Dwarf_Addr *hi,
			  ptrdiff_t *resume);

#endif
