/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, a DIE's range list read without libdw's dwarf_ranges(),
 * which costs 200 instructions an entry (it looks up the unit's section
 * and checks the position again at each call): the inlined subroutines of
 * a C++ program are a list each. The entries and what each means are
 * DWARF 5 section 2.17.3 (DW_RLE_*) and DWARF 4 section 2.17.3 (address
 * pairs, a base address selection led by the largest address); what is
 * not read here is left to libdw from where it begins (see the header).
 */
#include <dwarf.h>

#include "dwarf_cursor.h"
#include "range_lists.h"

/* One DWARF 5 entry at c: 0 a range, 1 a base address, 2 the end; -1: libdw's. */
static int rnglists_entry(struct cursor *c, Dwarf_Addr *base, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	uint64_t a, b;

	switch (cursor_u(c, 1)) {
	case DW_RLE_end_of_list:
		return c->bad ? -1 : 2;
	case DW_RLE_offset_pair:
		a = cursor_uleb10(c);
		b = cursor_uleb10(c);
		*lo = a + *base;
		*hi = b + *base;
		return c->bad ? -1 : 0;
	case DW_RLE_base_address:
		a = cursor_u(c, 8);
		if (c->bad)
			return -1;
		*base = a;
		return 1;
	case DW_RLE_start_end:
		*lo = cursor_u(c, 8);
		*hi = cursor_u(c, 8);
		return c->bad ? -1 : 0;
	case DW_RLE_start_length:
		a = cursor_u(c, 8);
		b = cursor_uleb10(c);
		*lo = a;
		*hi = a + b;
		return c->bad ? -1 : 0;
	default: /* an address index (base_addressx, startx_*), or no entry */
		return -1;
	}
}

/* One DWARF 4 entry at c, as rnglists_entry(). */
static int ranges_entry(struct cursor *c, Dwarf_Addr *base, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	uint64_t a = cursor_u(c, 8), b = cursor_u(c, 8);

	if (c->bad || (a == UINT64_MAX && b == UINT64_MAX))
		return -1; /* libdw's error */
	if (a == UINT64_MAX) {
		*base = b;
		return 1;
	}
	if (a == 0 && b == 0)
		return 2;
	*lo = a + *base;
	*hi = b + *base;
	return 0;
}

ptrdiff_t range_list_next(const struct dwarf_sections *s, unsigned version, unsigned address_size,
			  ptrdiff_t off, Dwarf_Addr *base, Dwarf_Addr *lo, Dwarf_Addr *hi,
			  ptrdiff_t *resume)
{
	const unsigned char *sec = version >= 5 ? s->rnglists : s->ranges;
	size_t size = version >= 5 ? s->rnglists_size : s->ranges_size;
	struct cursor c;

	*resume = off;
	if (!sec || address_size != 8 || off < 0 || (size_t)off >= size)
		return RANGE_LIST_LIBDW;
	c = (struct cursor){ sec + off, sec + size, false };
	for (;;) {
		Dwarf_Addr l, h;
		int kind = version >= 5 ? rnglists_entry(&c, base, &l, &h)
					: ranges_entry(&c, base, &l, &h);

		if (kind < 0)
			return RANGE_LIST_LIBDW;
		if (kind == 2)
			return 0;
		*resume = c.p - sec;
		if (kind == 0) {
			*lo = l;
			*hi = h;
			return *resume;
		}
	}
}
